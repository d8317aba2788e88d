/* The stand-ins' log (fake-libcuda.c, fake-libcublasLt.c): one line per
   call of interest, appended to the file the environment variable
   \p variable names (nothing when it is unset). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void fake_note(const char *variable, const char *format,
                      va_list args) {
  const char *path = getenv(variable);
  if (!path)
    return;
  FILE *f = fopen(path, "a");
  if (!f)
    return;
  vfprintf(f, format, args);
  fputc('\n', f);
  fclose(f);
}
