/*===- tied-state.c - State updated in place, kept by a context ------------*\
|*                                                                            *|
|* Part of Loom. test/Runtime/tied-state.test: runs Inputs/decode-cache.mlir's *|
|* entries on the context's own cache (null input and output pointers):       *|
|* prefill writes positions 0 and 1, decode positions 2 and 3; prints the     *|
|* cache (loom_context_state, asked for again after the runs) and the totals  *|
|* after each run; writes the context's cache between two runs; then refuses  *|
|* an output pointer that is not the tied input's, and runs decode on a cache *|
|* the caller owns. tied-state.test runs it on the CPU and on Vulkan.         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "loom-c/Runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static loom_model *model;
static loom_context *context;

/* Runs `entry` with its new rows all `value` at `pos`; the cache is the
   context's (NULL) or `cache`. Prints the totals of head 0. */
static int step(const char *entry, float value, int64_t pos, float *cache,
                void *cacheOut) {
  int64_t e = loom_model_find_entry(model, entry);
  loom_tensor_desc d;
  loom_entry_input(model, e, 1, &d);
  float *rows = malloc(d.bytes);
  for (int64_t i = 0; i < d.bytes / 4; ++i)
    rows[i] = value;
  float total[6];
  const void *inputs[3] = {cache, rows, &pos};
  void *outputs[2] = {cacheOut, total};
  loom_status st = loom_run(context, e, inputs, outputs);
  free(rows);
  if (st != LOOM_OK) {
    printf("%s: error: %s\n", entry, loom_last_error());
    return 1;
  }
  printf("%s at %lld: total %g %g %g\n", entry, (long long)pos, total[0],
         total[1], total[2]);
  return 0;
}

static void printCache(const float *cache) {
  printf("cache head 0:");
  for (int p = 0; p < 6; ++p)
    printf(" %g", cache[p * 3]);
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tied-state model.so\n");
    return 2;
  }
  if (loom_model_load(argv[1], NULL, &model) != LOOM_OK ||
      loom_context_create(model, &context) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  int64_t decode = loom_model_find_entry(model, "decode");
  printf("tied: output 0 -> input %lld, output 1 -> input %lld\n",
         (long long)loom_entry_output_tied_input(model, decode, 0),
         (long long)loom_entry_output_tied_input(model, decode, 1));
  void *state;
  int64_t bytes;
  if (loom_context_state(context, "cache", &state, &bytes) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  printf("state: %lld bytes\n", (long long)bytes);
  if (step("prefill", 1, 0, NULL, NULL) || step("decode", 2, 2, NULL, NULL) ||
      step("decode", 3, 3, NULL, NULL))
    return 1;
  /* The runs updated the state where the entry runs (on a GPU, in the
     device's memory): asking for it again brings the host copy up to date. */
  if (loom_context_state(context, "cache", &state, &bytes) != LOOM_OK)
    return 1;
  printCache(state);
  /* Written by the caller between runs: the next run reads it. */
  for (int c = 0; c < 3; ++c)
    ((float *)state)[4 * 3 + c] = 9;
  if (step("decode", 6, 5, NULL, NULL) ||
      loom_context_state(context, "cache", &state, &bytes) != LOOM_OK)
    return 1;
  printCache(state);
  if (loom_context_state(context, "new", &state, &bytes) == LOOM_OK)
    return 1;
  printf("new: %s\n", loom_last_error());
  /* An output pointer of its own for the tied output is refused. */
  float other[36];
  if (step("decode", 9, 4, NULL, other) == 0)
    return 1;
  /* The caller's own cache: its pointer as input and output. */
  float mine[36];
  memset(mine, 0, sizeof mine);
  if (step("decode", 5, 5, mine, mine))
    return 1;
  printCache(mine);
  loom_context_free(context);
  loom_model_free(model);
  return 0;
}
