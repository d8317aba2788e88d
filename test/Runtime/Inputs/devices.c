/*===- devices.c - Report a model's devices through the C API ------------===*\
|*                                                                            *|
|* Part of Loom. test/Runtime/c-api-devices.test: loads an artifact with an  *|
|* optional device selector and prints each device the model runs on: kind,  *|
|* ordinal, the chip the code was compiled for and its required features.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "loom-c/Runtime.h"

#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: devices model.so [device]\n");
    return 2;
  }
  loom_model_options options = {0};
  options.device = argc > 2 ? argv[2] : NULL;
  loom_model *model;
  if (loom_model_load(argv[1], &options, &model) != LOOM_OK) {
    fprintf(stderr, "error: %s\n", loom_last_error());
    return 1;
  }
  int64_t n = loom_model_num_devices(model);
  printf("devices: %lld\n", (long long)n);
  for (int64_t i = 0; i < n; ++i) {
    loom_device_desc d;
    if (loom_model_device(model, i, &d) != LOOM_OK) {
      fprintf(stderr, "error: %s\n", loom_last_error());
      return 1;
    }
    printf("device %lld: %s:%lld chip %s features", (long long)i, d.kind,
           (long long)d.ordinal, d.chip);
    for (int64_t f = 0; f < d.num_features; ++f)
      printf(" %s", d.features[f]);
    printf("\n");
  }
  loom_device_desc none;
  if (loom_model_device(model, n, &none) == LOOM_OK) {
    fprintf(stderr, "error: device %lld should not exist\n", (long long)n);
    return 1;
  }
  printf("device %lld: %s\n", (long long)n, loom_last_error());
  loom_model_free(model);
  return 0;
}
