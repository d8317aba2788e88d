//===- HostTensor.h - A tensor of an artifact's entry, as bytes -*- C++ -*-===//
//
// Part of Loom. A tensor of an artifact's entry or step as bytes of its
// dtype, and its conversion from and to doubles, for every element type of
// ElementTypes.def: loom-run's and loom-generate's.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_COMMON_HOSTTENSOR_H
#define LOOM_TOOLS_COMMON_HOSTTENSOR_H

#include "loom-c/Runtime.h"
#include "loom/Support/ElementTypes.h"
#include "loom/Support/SafeTensors.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace loom::tools {

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

/// How the tools show a tensor's type: `tensor<2x6xi64>`.
inline std::string typeText(const loom_tensor_desc &d) {
  std::string s = "tensor<";
  for (int64_t i = 0; i < d.rank; ++i)
    s += std::to_string(d.shape[i]) + "x";
  return s + d.dtype + ">";
}

/// The element type of an entry's \p dtype (its MLIR name: "f32", "bf16"),
/// if it is one of ElementTypes.def.
inline std::optional<ElemKind> elemKindOfDtype(llvm::StringRef dtype) {
  for (const ElementTypeInfo &info : allElementTypes())
    if (info.mlirName == dtype)
      return info.kind;
  return std::nullopt;
}

/// Calls \p f(zero, decode, encode) for \p kind: a zero of the C++ type its
/// elements are stored as, and the conversions of one element to and from
/// double (half and bfloat16 through float, rounding to nearest even).
template <class F> void withElementCodec(ElemKind kind, F f) {
  auto same = [](auto x) { return x; };
  switch (kind) {
  case ElemKind::F64:
    return f(double(), same, same);
  case ElemKind::F32:
    return f(float(), [](float x) { return double(x); },
             [](double x) { return float(x); });
  case ElemKind::F16:
    return f(uint16_t(),
             [](uint16_t b) { return double(safetensors::halfToFloat(b)); },
             [](double x) { return safetensors::floatToHalf(float(x)); });
  case ElemKind::BF16:
    return f(uint16_t(),
             [](uint16_t b) { return double(safetensors::bfloat16ToFloat(b)); },
             [](double x) { return safetensors::floatToBFloat16(float(x)); });
  case ElemKind::I64:
    return f(int64_t(), [](int64_t x) { return double(x); },
             [](double x) { return static_cast<int64_t>(x); });
  case ElemKind::I32:
    return f(int32_t(), [](int32_t x) { return double(x); },
             [](double x) { return static_cast<int32_t>(x); });
  case ElemKind::I1:
    return f(int8_t(), [](int8_t x) { return double(x); },
             [](double x) { return static_cast<int8_t>(x); });
  }
}

/// Writes \p v to \p t's bytes in its dtype; false when the dtype is not an
/// element type or \p v has not one value an element.
inline bool fromDoubles(HostTensor &t, llvm::ArrayRef<double> v) {
  t.bytes.assign(t.desc.bytes, 0);
  std::optional<ElemKind> kind = elemKindOfDtype(t.desc.dtype);
  if (!kind)
    return false;
  bool written = false;
  withElementCodec(*kind, [&](auto zero, auto, auto encode) {
    using T = decltype(zero);
    if (t.bytes.size() != v.size() * sizeof(T))
      return;
    for (size_t i = 0; i < v.size(); ++i) {
      T x = encode(v[i]);
      std::memcpy(t.bytes.data() + i * sizeof(T), &x, sizeof(T));
    }
    written = true;
  });
  return written;
}

/// \p t's elements as doubles (none when its dtype is not an element type,
/// which the runtime's manifest reader does not let through).
inline std::vector<double> toDoubles(const HostTensor &t) {
  std::vector<double> v;
  std::optional<ElemKind> kind = elemKindOfDtype(t.desc.dtype);
  if (!kind)
    return v;
  withElementCodec(*kind, [&](auto zero, auto decode, auto) {
    using T = decltype(zero);
    v.resize(t.bytes.size() / sizeof(T));
    for (size_t i = 0; i < v.size(); ++i) {
      T x;
      std::memcpy(&x, t.bytes.data() + i * sizeof(T), sizeof(T));
      v[i] = double(decode(x));
    }
  });
  return v;
}

} // namespace loom::tools

#endif // LOOM_TOOLS_COMMON_HOSTTENSOR_H
