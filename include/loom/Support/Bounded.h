//===- Bounded.h - The valid part of a padded tensor ------------*- C++ -*-===//
//
// Part of Loom. A result of data-dependent length is a tensor padded to a
// static bound along one dimension, with its run-time length beside it
// (docs/ONNX/Import.md "Bounded dynamic shapes"). These two functions cut
// such a tensor to its valid part; the interpreter's and the artifact's
// callers (loom-run, libloomrt's loom_output_shape) share them. Plain
// C++17: libloomrt has no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_BOUNDED_H
#define LOOM_SUPPORT_BOUNDED_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace loom {

/// The shape of a tensor of shape \p padded whose dimension \p dim is valid
/// up to \p length (clamped to [0, padded[dim]]).
inline std::vector<int64_t> boundedShape(const std::vector<int64_t> &padded,
                                         int64_t dim, int64_t length) {
  std::vector<int64_t> shape = padded;
  shape[dim] = std::clamp<int64_t>(length, 0, padded[dim]);
  return shape;
}

/// The valid elements, row-major, of a padded tensor of shape \p padded
/// whose elements are \p elementBytes bytes each at \p data: the first
/// `length` positions of dimension \p dim.
inline std::vector<uint8_t> validPart(const uint8_t *data,
                                      const std::vector<int64_t> &padded,
                                      int64_t dim, int64_t length,
                                      int64_t elementBytes) {
  int64_t outer = 1, inner = elementBytes;
  for (int64_t d = 0; d < dim; ++d)
    outer *= padded[d];
  for (size_t d = dim + 1; d < padded.size(); ++d)
    inner *= padded[d];
  int64_t keep = std::clamp<int64_t>(length, 0, padded[dim]) * inner;
  std::vector<uint8_t> out(static_cast<size_t>(outer * keep));
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.data() + o * keep, data + o * padded[dim] * inner, keep);
  return out;
}

/// Cuts \p values, a padded tensor of shape \p shape, to its valid part: the
/// first \p length positions of dimension \p dim; \p shape becomes the
/// valid shape. What every caller that reads a padded result as a flat vector
/// (the interpreter's, in loom-run, loom-onnx-conformance and
/// loom-bench-cpu) does before it shows, saves or compares it.
template <class T>
void cutToValid(std::vector<T> &values, std::vector<int64_t> &shape,
                int64_t dim, int64_t length) {
  std::vector<uint8_t> valid =
      validPart(reinterpret_cast<const uint8_t *>(values.data()), shape, dim,
                length, sizeof(T));
  shape = boundedShape(shape, dim, length);
  values.resize(valid.size() / sizeof(T));
  std::memcpy(values.data(), valid.data(), valid.size());
}

} // namespace loom

#endif // LOOM_SUPPORT_BOUNDED_H
