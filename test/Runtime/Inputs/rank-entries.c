/*===- rank-entries.c - Which world ranks run a rank's entries -------------*\
|*                                                                            *|
|* Part of Loom. test/Runtime/rank-entries.test: on an artifact of entries    *|
|* per tensor-parallel rank, prints for every world rank the entries it runs *|
|* (loom_model_entry_runs_on), then runs an entry from a context that joined *|
|* no world and from a world rank whose entry it is not: both refused before *|
|* any collective, with the runtime's message.                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "loom-c/Runtime.h"

#include <stdio.h>
#include <stdlib.h>

/* Runs `entry` on `context` with zeroed inputs and prints the outcome. */
static void run(loom_model *model, loom_context *context, const char *entry,
                const char *who) {
  int64_t e = loom_model_find_entry(model, entry);
  int64_t n = loom_entry_num_inputs(model, e), m = loom_entry_num_outputs(model, e);
  const void *inputs[16] = {0};
  void *outputs[16] = {0};
  for (int64_t i = 0; i < n && i < 16; ++i) {
    loom_tensor_desc d;
    loom_entry_input(model, e, i, &d);
    inputs[i] = calloc(1, (size_t)d.bytes);
  }
  for (int64_t i = 0; i < m && i < 16; ++i) {
    loom_tensor_desc d;
    loom_entry_output(model, e, i, &d);
    outputs[i] = calloc(1, (size_t)d.bytes);
  }
  loom_status st = loom_run(context, e, inputs, outputs);
  printf("%s runs %s: %s\n", who, entry,
         st == LOOM_OK ? "ok" : loom_last_error());
  for (int64_t i = 0; i < n && i < 16; ++i)
    free((void *)inputs[i]);
  for (int64_t i = 0; i < m && i < 16; ++i)
    free(outputs[i]);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: rank-entries model.so\n");
    return 2;
  }
  loom_model *model;
  if (loom_model_load(argv[1], NULL, &model) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  int64_t ranks = loom_model_world_ranks(model);
  printf("world of %lld ranks\n", (long long)ranks);
  for (int64_t w = 0; w < ranks; ++w) {
    printf("rank %lld:", (long long)w);
    for (int64_t e = 0; e < loom_model_num_entries(model); ++e)
      if (loom_model_entry_runs_on(model, e, w))
        printf(" %s", loom_model_entry_name(model, e));
    printf("\n");
  }
  loom_world **worlds = calloc((size_t)ranks, sizeof *worlds);
  loom_context *none, *last;
  if (loom_world_open_threads(ranks, 5.0, worlds) != LOOM_OK ||
      loom_context_create(model, &none) != LOOM_OK ||
      loom_context_create(model, &last) != LOOM_OK ||
      loom_context_join_world(last, worlds[ranks - 1]) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  run(model, none, "prefill.rank0", "no world");
  run(model, last, "prefill.rank0", "the last rank");
  loom_context_free(none);
  loom_context_free(last);
  for (int64_t w = 0; w < ranks; ++w)
    loom_world_free(worlds[w]);
  free(worlds);
  loom_model_free(model);
  return 0;
}
