/* loom-c-example: load an artifact of loom-compile, describe its first
   entry, run it on inputs filled with a fixed pattern, and print the sum of
   each output. Build: see CMakeLists.txt beside this file. */
#include <loom-c/Runtime.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill(const loom_tensor_desc *d, void *data) {
  size_t n = (size_t)d->bytes / 4;
  if (strcmp(d->dtype, "f32") == 0) {
    float *f = data;
    for (size_t i = 0; i < n; ++i)
      f[i] = (float)((int)(i % 17) - 8) / 8.0f;
  } else {
    memset(data, 0, (size_t)d->bytes);
  }
}

/* --concurrent: the loaded model is shared by two threads, each with its own
   context, each running the entry 10 times; every output must equal the
   single-threaded one byte for byte. */
typedef struct {
  const loom_model *model;
  const void **inputs;
  void **expected;
  int64_t num_outputs;
  int ok;
} job;

static void *work(void *arg) {
  job *j = arg;
  loom_tensor_desc d;
  void **outputs = calloc((size_t)j->num_outputs, sizeof(void *));
  for (int64_t i = 0; i < j->num_outputs; ++i) {
    loom_entry_output(j->model, 0, i, &d);
    outputs[i] = malloc((size_t)d.bytes);
  }
  loom_context *context;
  j->ok = loom_context_create(j->model, &context) == LOOM_OK;
  for (int r = 0; j->ok && r < 10; ++r) {
    j->ok = loom_run(context, 0, j->inputs, outputs) == LOOM_OK;
    for (int64_t i = 0; j->ok && i < j->num_outputs; ++i) {
      loom_entry_output(j->model, 0, i, &d);
      j->ok = memcmp(outputs[i], j->expected[i], (size_t)d.bytes) == 0;
    }
  }
  if (j->ok)
    loom_context_free(context);
  for (int64_t i = 0; i < j->num_outputs; ++i)
    free(outputs[i]);
  free(outputs);
  return NULL;
}

int main(int argc, char **argv) {
  int concurrent = argc == 3 && strcmp(argv[2], "--concurrent") == 0;
  if (argc != 2 && !concurrent) {
    fprintf(stderr, "usage: %s model.so [--concurrent]\n", argv[0]);
    return 2;
  }
  loom_model *model;
  loom_model_options options = {0, NULL, NULL};
  if (loom_model_load(argv[1], &options, &model) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  int64_t entry = 0;
  int64_t ni = loom_entry_num_inputs(model, entry);
  int64_t no = loom_entry_num_outputs(model, entry);
  printf("entry %s: %lld inputs, %lld outputs\n",
         loom_model_entry_name(model, entry), (long long)ni, (long long)no);
  const void **inputs = calloc((size_t)ni, sizeof(void *));
  void **outputs = calloc((size_t)no, sizeof(void *));
  loom_tensor_desc d;
  for (int64_t i = 0; i < ni; ++i) {
    loom_entry_input(model, entry, i, &d);
    void *buf = malloc((size_t)d.bytes);
    fill(&d, buf);
    inputs[i] = buf;
    printf("  input %s: %s, %lld bytes\n", d.name, d.dtype, (long long)d.bytes);
  }
  for (int64_t i = 0; i < no; ++i) {
    loom_entry_output(model, entry, i, &d);
    outputs[i] = malloc((size_t)d.bytes);
  }
  loom_context *context;
  if (loom_context_create(model, &context) != LOOM_OK ||
      loom_run(context, entry, inputs, outputs) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  if (concurrent) {
    job jobs[2];
    pthread_t threads[2];
    for (int t = 0; t < 2; ++t) {
      jobs[t] = (job){model, inputs, outputs, no, 0};
      pthread_create(&threads[t], NULL, work, &jobs[t]);
    }
    for (int t = 0; t < 2; ++t)
      pthread_join(threads[t], NULL);
    printf("concurrent: 2 threads x 10 runs, outputs %s\n",
           jobs[0].ok && jobs[1].ok ? "identical" : "DIFFERENT");
    if (!jobs[0].ok || !jobs[1].ok)
      return 1;
  }
  for (int64_t i = 0; i < no; ++i) {
    loom_entry_output(model, entry, i, &d);
    double sum = 0;
    const float *f = outputs[i];
    for (int64_t k = 0; k < d.bytes / 4; ++k)
      sum += f[k];
    printf("  output %s: sum %.6g\n", d.name, sum);
    free(outputs[i]);
  }
  for (int64_t i = 0; i < ni; ++i)
    free((void *)inputs[i]);
  free(inputs);
  free(outputs);
  loom_context_free(context);
  loom_model_free(model);
  return 0;
}
