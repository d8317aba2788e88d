/*===- host-memory.c - Inputs and outputs in the context's host memory -----*\
|*                                                                            *|
|* Part of Loom. test/Runtime/host-memory.test (the CPU) and                  *|
|* test/Runtime/Cuda/host-memory.test (the stand-in driver): runs an entry    *|
|* c = a + b of N floats three times with a, b and c in blocks of             *|
|* loom_context_host_alloc, checks c, frees one block and leaves the others   *|
|* to the context; a block of 0 bytes, a null context and a pointer the       *|
|* context did not allocate (ignored by loom_context_host_free).              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "loom-c/Runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  loom_model *model = NULL;
  loom_context *context = NULL;
  if (loom_model_load(argv[1], NULL, &model) != LOOM_OK ||
      loom_context_create(model, &context) != LOOM_OK) {
    printf("error: %s\n", loom_last_error());
    return 1;
  }
  loom_tensor_desc d;
  loom_entry_input(model, 0, 0, &d);
  int64_t n = d.bytes / 4;
  float *a = NULL, *b = NULL, *c = NULL;
  if (loom_context_host_alloc(context, (size_t)d.bytes, (void **)&a) != LOOM_OK ||
      loom_context_host_alloc(context, (size_t)d.bytes, (void **)&b) != LOOM_OK ||
      loom_context_host_alloc(context, (size_t)d.bytes, (void **)&c) != LOOM_OK) {
    printf("error: %s\n", loom_last_error());
    return 1;
  }
  printf("aligned: %d\n", ((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) % 64 == 0);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = (float)i;
    b[i] = 0.5f;
  }
  const void *in[] = {a, b};
  void *out[] = {c};
  for (int r = 0; r < 3; ++r)
    if (loom_run(context, 0, in, out) != LOOM_OK) {
      printf("error: %s\n", loom_last_error());
      return 1;
    }
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    wrong += c[i] != (float)i + 0.5f;
  printf("c = a + b: %lld of %lld wrong\n", (long long)wrong, (long long)n);
  loom_context_host_free(context, b);
  void *empty = NULL;
  printf("0 bytes: %s\n",
         loom_context_host_alloc(context, 0, &empty) == LOOM_OK && empty
             ? "a block" : "failed");
  int mine = 0;
  loom_context_host_free(context, &mine);
  loom_context_host_free(context, NULL);
  printf("null context: %s\n",
         loom_context_host_alloc(NULL, 16, &empty) == LOOM_OK
             ? "allocated" : loom_last_error());
  loom_context_free(context);
  loom_model_free(model);
  return wrong != 0;
}
