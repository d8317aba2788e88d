//===- HostTensor.h - loom-run's tensors of an artifact ---------*- C++ -*-===//
//
// Part of Loom. A tensor of an artifact's entry or step as bytes of its
// dtype, and its conversion from and to doubles (RunArtifact.cpp,
// RunStep.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOM_RUN_HOSTTENSOR_H
#define LOOM_TOOLS_LOOM_RUN_HOSTTENSOR_H

#include "loom-c/Runtime.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace loom::run {

/// A tensor of an entry, as bytes of its dtype.
struct HostTensor {
  loom_tensor_desc desc;
  std::vector<uint8_t> bytes;
  /// After a run: the shape of an output of data-dependent length, whose
  /// bytes are then only its valid part (loom_output_shape).
  std::optional<std::vector<int64_t>> validShape;
  std::vector<int64_t> shape() const {
    if (validShape)
      return *validShape;
    return std::vector<int64_t>(desc.shape, desc.shape + desc.rank);
  }
};

/// Converts between the entry's dtype and doubles.
inline bool fromDoubles(HostTensor &t, llvm::ArrayRef<double> v) {
  std::string dtype = t.desc.dtype;
  t.bytes.assign(t.desc.bytes, 0);
  int64_t n = v.size();
  auto store = [&](auto zero) {
    using T = decltype(zero);
    if (int64_t(t.bytes.size()) != n * int64_t(sizeof(T)))
      return false;
    for (int64_t i = 0; i < n; ++i) {
      T x = static_cast<T>(v[i]);
      std::memcpy(t.bytes.data() + i * sizeof(T), &x, sizeof(T));
    }
    return true;
  };
  if (dtype == "f32")
    return store(float());
  if (dtype == "f64")
    return store(double());
  if (dtype == "i64")
    return store(int64_t());
  if (dtype == "i32")
    return store(int32_t());
  if (dtype == "i1" || dtype == "i8")
    return store(int8_t());
  return false;
}

inline std::vector<double> toDoubles(const HostTensor &t) {
  std::string dtype = t.desc.dtype;
  std::vector<double> v;
  auto load = [&](auto zero) {
    using T = decltype(zero);
    size_t n = t.bytes.size() / sizeof(T);
    v.resize(n);
    for (size_t i = 0; i < n; ++i) {
      T x;
      std::memcpy(&x, t.bytes.data() + i * sizeof(T), sizeof(T));
      v[i] = double(x);
    }
  };
  if (dtype == "f32")
    load(float());
  else if (dtype == "f64")
    load(double());
  else if (dtype == "i64")
    load(int64_t());
  else if (dtype == "i32")
    load(int32_t());
  else
    load(int8_t());
  return v;
}

} // namespace loom::run

#endif // LOOM_TOOLS_LOOM_RUN_HOSTTENSOR_H
