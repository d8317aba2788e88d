/*===- cache-steps.c - Two decode steps on the state a context keeps ------*\
|*                                                                            *|
|* Part of Loom. test/Tools/loom-compile/cache-in-place.test: runs an        *|
|* export compiled with --cache-in-place=C for two steps on the context's own *|
|* caches (null pointers for the tied inputs and outputs), as a token loop    *|
|* does:                                                                      *|
|*                                                                            *|
|*   cache-steps MODEL.so STEP1.safetensors STEP2.safetensors OUT1 OUT2      *|
|*                                                                            *|
|* STEP1 holds x and the past of every cache input, [B, H, L, D]: the        *|
|* context's caches get the past at positions 0..L-1 (loom_context_state),   *|
|* then step 1 runs with past_length = L; step 2 runs STEP2's x with          *|
|* past_length = L + S, on the caches step 1 left. OUTi gets step i's logits  *|
|* (output 0) as a safetensors file.                                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "loom-c/Runtime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole file, or NULL. */
static char *slurp(const char *path, long *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  *size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *data = malloc(*size + 1);
  if (fread(data, 1, *size, f) != (size_t)*size) {
    free(data);
    data = NULL;
  }
  fclose(f);
  return data;
}

/* The data of tensor `name` in a safetensors file and its size in bytes,
   found in the JSON header by name (enough for the files the tests
   write). */
static const char *tensor(const char *file, const char *name, long *bytes) {
  uint64_t headerSize;
  memcpy(&headerSize, file, 8);
  char key[256];
  snprintf(key, sizeof key, "\"%s\"", name);
  const char *at = strstr(file + 8, key);
  if (!at || at > file + 8 + headerSize)
    return NULL;
  const char *offsets = strstr(at, "\"data_offsets\"");
  offsets = offsets ? strchr(offsets, '[') : NULL;
  long begin, end;
  if (!offsets || sscanf(offsets, "[ %ld , %ld ]", &begin, &end) != 2)
    return NULL;
  *bytes = end - begin;
  return file + 8 + headerSize + begin;
}

/* Writes `data` as the one f32 tensor `name` of a safetensors file. */
static int writeTensor(const char *path, const char *name,
                       const loom_tensor_desc *d, const void *data) {
  char header[512], shape[128] = "";
  for (int64_t i = 0; i < d->rank; ++i)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld",
             i ? "," : "", (long long)d->shape[i]);
  int n = snprintf(header, sizeof header,
                   "{\"%s\":{\"dtype\":\"F32\",\"shape\":[%s],"
                   "\"data_offsets\":[0,%lld]}}",
                   name, shape, (long long)d->bytes);
  while (n % 8)
    header[n++] = ' ';
  uint64_t size = n;
  FILE *f = fopen(path, "wb");
  if (!f)
    return 1;
  fwrite(&size, 8, 1, f);
  fwrite(header, 1, n, f);
  fwrite(data, 1, d->bytes, f);
  return fclose(f) != 0;
}

static loom_model *model;
static loom_context *context;

/* Fills every cache of the context with its past from `file`, positions
   0..L-1 of each [B, H, C, D]; returns L, or -1. */
static long fillCaches(const char *file) {
  long past = -1;
  for (int64_t i = 0; i < loom_entry_num_inputs(model, 0); ++i) {
    loom_tensor_desc d;
    loom_entry_input(model, 0, i, &d);
    void *state;
    int64_t bytes;
    if (loom_context_state(context, d.name, &state, &bytes) != LOOM_OK)
      continue; /* not a cache */
    long got;
    const char *src = tensor(file, d.name, &got);
    if (!src || d.rank != 4)
      return -1;
    long rows = d.shape[0] * d.shape[1], row = d.shape[3] * 4;
    past = got / (rows * row);
    for (long r = 0; r < rows; ++r)
      memcpy((char *)state + r * d.shape[2] * row, src + r * past * row,
             past * row);
  }
  return past;
}

/* One step: x from `file`, past_length = `past`; logits to `out`. */
static int step(const char *file, int64_t past, const char *out) {
  const void *inputs[16] = {0};
  void *outputs[16] = {0};
  int64_t n = loom_entry_num_inputs(model, 0);
  for (int64_t i = 0; i < n && i < 16; ++i) {
    loom_tensor_desc d;
    loom_entry_input(model, 0, i, &d);
    long bytes;
    if (!strcmp(d.name, "past_length"))
      inputs[i] = &past;
    else if (!strcmp(d.name, "x"))
      inputs[i] = tensor(file, "x", &bytes);
  }
  loom_tensor_desc logits;
  loom_entry_output(model, 0, 0, &logits);
  outputs[0] = malloc(logits.bytes);
  if (loom_run(context, 0, inputs, outputs) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  printf("step at past_length %lld: logits %g %g ...\n", (long long)past,
         ((float *)outputs[0])[0], ((float *)outputs[0])[1]);
  int rc = writeTensor(out, "logits", &logits, outputs[0]);
  free(outputs[0]);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: cache-steps MODEL.so STEP1 STEP2 OUT1 OUT2\n");
    return 2;
  }
  long size1, size2;
  char *step1 = slurp(argv[2], &size1), *step2 = slurp(argv[3], &size2);
  if (!step1 || !step2 || loom_model_load(argv[1], NULL, &model) != LOOM_OK ||
      loom_context_create(model, &context) != LOOM_OK) {
    fprintf(stderr, "error: cannot read the inputs or load %s: %s\n", argv[1],
            loom_last_error());
    return 1;
  }
  long past = fillCaches(step1);
  loom_tensor_desc x;
  loom_entry_input(model, 0, 0, &x);
  if (past < 0) {
    fprintf(stderr, "error: no past for a cache in %s\n", argv[2]);
    return 1;
  }
  if (step(step1, past, argv[4]) || step(step2, past + x.shape[1], argv[5]))
    return 1;
  loom_context_free(context);
  loom_model_free(model);
  free(step1);
  free(step2);
  return 0;
}
