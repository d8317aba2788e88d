/*===- output-shape.c - The actual shape of outputs of data-dependent length *\
|*                                                                            *|
|* Part of Loom. test/Runtime/output-shape.test: runs entry 0 of an artifact  *|
|* whose one input is f32, filled with i % 3 == 0 ? 0 : i, and prints each    *|
|* output's padded shape, which output holds its length                       *|
|* (loom_entry_output_length), its actual shape (loom_output_shape) and, for  *|
|* an i64 output, its valid values.                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "loom-c/Runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printShape(const char *what, int64_t rank, const int64_t *shape) {
  printf(" %s [", what);
  for (int64_t d = 0; d < rank; ++d)
    printf(d ? " %lld" : "%lld", (long long)shape[d]);
  printf("]");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: output-shape model.so\n");
    return 2;
  }
  loom_model *model;
  loom_context *context;
  if (loom_model_load(argv[1], NULL, &model) != LOOM_OK ||
      loom_context_create(model, &context) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  loom_tensor_desc in;
  loom_entry_input(model, 0, 0, &in);
  float *x = malloc(in.bytes);
  for (int64_t i = 0; i < in.bytes / 4; ++i)
    x[i] = i % 3 == 0 ? 0.0f : (float)i;
  int64_t n = loom_entry_num_outputs(model, 0);
  void **outs = calloc(n, sizeof(void *));
  int64_t shape[8];
  for (int64_t i = 0; i < n; ++i) {
    loom_tensor_desc d;
    loom_entry_output(model, 0, i, &d);
    outs[i] = calloc(1, d.bytes);
  }
  if (loom_output_shape(context, 0, 0, shape) == LOOM_OK) {
    fprintf(stderr, "error: a shape before any run\n");
    return 1;
  }
  printf("before a run: %s\n", loom_last_error());
  const void *ins[1] = {x};
  if (loom_run(context, 0, ins, outs) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  for (int64_t i = 0; i < n; ++i) {
    loom_tensor_desc d;
    loom_entry_output(model, 0, i, &d);
    int64_t dim = -1;
    int64_t length = loom_entry_output_length(model, 0, i, &dim);
    if (loom_output_shape(context, 0, i, shape) != LOOM_OK) {
      fprintf(stderr, "error: %s\n", loom_last_error());
      return 1;
    }
    printf("output %s:", d.name);
    printShape("padded", d.rank, d.shape);
    printf(" length output %lld dim %lld", (long long)length, (long long)dim);
    printShape("actual", d.rank, shape);
    if (strcmp(d.dtype, "i64") == 0 && d.rank == 2 && length >= 0) {
      /* Row r of the valid part: the first shape[1] of the padded row. */
      const int64_t *v = outs[i];
      printf(" values");
      for (int64_t r = 0; r < shape[0]; ++r)
        for (int64_t c = 0; c < shape[1]; ++c)
          printf(" %lld", (long long)v[r * d.shape[1] + c]);
    }
    printf("\n");
  }
  if (loom_output_shape(context, 0, n, shape) == LOOM_OK) {
    fprintf(stderr, "error: a shape for no output\n");
    return 1;
  }
  printf("no output %lld: %s\n", (long long)n, loom_last_error());
  for (int64_t i = 0; i < n; ++i)
    free(outs[i]);
  free(outs);
  free(x);
  loom_context_free(context);
  loom_model_free(model);
  return 0;
}
