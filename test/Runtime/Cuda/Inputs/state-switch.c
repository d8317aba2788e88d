/*===- state-switch.c - The state bound otherwise: the graph again --------===*\
|*                                                                            *|
|* Part of Loom. test/Runtime/Cuda/state.test: runs the entry of              *|
|* Inputs/gpu/state.json.in (c = a + b, c the input a updated in place) on    *|
|* the context's state three times (the third replays the graph the second    *|
|* recorded), then once on a state of the caller's own, then once more on     *|
|* the context's: each run must update the state it was given, whatever       *|
|* graph an earlier binding recorded. Prints each state's first element.      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "loom-c/Runtime.h"

#include <stdio.h>
#include <stdlib.h>

static loom_context *context;

/* One run with b all 2 on `state` (NULL: the context's). */
static int run(float *state, int64_t n) {
  float *b = malloc(n * sizeof(float));
  for (int64_t i = 0; i < n; ++i)
    b[i] = 2;
  const void *inputs[2] = {state, b};
  void *outputs[1] = {state};
  loom_status st = loom_run(context, 0, inputs, outputs);
  free(b);
  if (st != LOOM_OK)
    fprintf(stderr, "error: %s\n", loom_last_error());
  return st != LOOM_OK;
}

static int printContextState(const char *when) {
  void *data;
  int64_t bytes;
  if (loom_context_state(context, "a", &data, &bytes) != LOOM_OK)
    return 1;
  printf("%s: context's a[0] = %g\n", when, ((float *)data)[0]);
  return 0;
}

int main(int argc, char **argv) {
  loom_model *model;
  if (argc != 2 || loom_model_load(argv[1], NULL, &model) != LOOM_OK ||
      loom_context_create(model, &context) != LOOM_OK) {
    fprintf(stderr, "usage: state-switch state.so (%s)\n", loom_last_error());
    return 1;
  }
  loom_tensor_desc d;
  loom_entry_input(model, 0, 0, &d);
  int64_t n = d.bytes / 4;
  if (run(NULL, n) || run(NULL, n) || run(NULL, n) ||
      printContextState("three runs"))
    return 1;
  float *mine = malloc(d.bytes);
  for (int64_t i = 0; i < n; ++i)
    mine[i] = 1;
  if (run(mine, n))
    return 1;
  printf("the caller's: a[0] = %g\n", mine[0]);
  if (printContextState("untouched") || run(NULL, n) ||
      printContextState("one more"))
    return 1;
  free(mine);
  loom_context_free(context);
  loom_model_free(model);
  return 0;
}
