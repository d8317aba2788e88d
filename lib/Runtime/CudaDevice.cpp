#include "Device.h"
loom::rt::Error loom::rt::createCudaDevice(int64_t ordinal, const DeviceOptions &, std::unique_ptr<Device> &) {
  return makeError(LOOM_ERROR_NO_DEVICE, "no device cuda:" + std::to_string(ordinal) + ": TODO");
}
