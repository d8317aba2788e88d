/* LD_PRELOAD shim for test/Runtime/onednn-alone.test: appends a line to
   the file COUNT_FORKS names for every OpenMP team forked with more than
   one thread (GOMP_parallel, which oneDNN's parallel regions and Loom's
   kernels call), then forks it as libgomp would. A file, not a count
   printed at exit: loom-run ends with _Exit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

typedef void (*gomp_parallel_fn)(void (*)(void *), void *, unsigned, unsigned);

void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads,
                   unsigned flags) {
  static gomp_parallel_fn real;
  static int fd = -2;
  if (!real)
    real = (gomp_parallel_fn)dlsym(RTLD_NEXT, "GOMP_parallel");
  if (fd == -2) {
    const char *path = getenv("COUNT_FORKS");
    fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
  }
  if (threads != 1 && fd >= 0)
    (void)!write(fd, "fork\n", 5);
  real(fn, data, threads, flags);
}
