//===- DynamicKernels.h - Kernels with data-dependent lengths ---*- C++ -*-===//
//
// Part of Loom. tg.nonzero, tg.topk and tg.non_max_suppression
// (TGDynamicOps.td) on the interpreter's tensors, generic over the number
// domain D as the other kernels (Kernels.h) are: the algorithms are
// loom/Support/DynamicAlgorithms.h's, which libloomrt's steps share. Each returns its results padded
// to their static bound and the run-time length (docs/ONNX/Import.md
// "Bounded dynamic shapes"); padding is 0.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_DYNAMICKERNELS_H
#define LOOM_INTERPRETER_DYNAMICKERNELS_H

#include "loom/Interpreter/Tensor.h"
#include "loom/Support/DynamicAlgorithms.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

namespace loom::interp {

/// A result padded to its bound, and how much of it is valid.
template <class D> struct Padded {
  Tensor<D> value;
  int64_t count = 0;
};

/// ONNX NonZero: a [rank, numElements] tensor whose first `count` columns
/// are the coordinates of the non-zero elements of \p x, row-major.
template <class D> Padded<D> nonZero(const Tensor<D> &x) {
  int64_t rank = x.rank(), n = x.numElements();
  Padded<D> out{Tensor<D>({rank, n}), 0};
  out.count = dynamic::nonZero(
      n, x.shape, [&](int64_t i) { return !(x.data[i] == D::zero()); },
      [&](int64_t column, const int64_t *coords) {
        for (int64_t d = 0; d < rank; ++d)
          out.value.data[d * n + column] = D::fromInt(coords[d]);
      });
  return out;
}

/// The parameters of topK (tg.topk's attributes; axis in [0, rank)).
struct TopKParams {
  int64_t k = 1, axis = 0;
  bool largest = true;
  /// Only the first `valid` positions along the axis take part.
  std::optional<int64_t> valid;
};

/// ONNX TopK along an axis: values and positions (as D values) of the k
/// best elements of each line, best first, the lower position first among
/// equals; NaN is the largest value (D::less). count = min(k, valid).
template <class D> struct TopKResult {
  Tensor<D> values, indices;
  int64_t count = 0;
};

template <class D>
TopKResult<D> topK(const Tensor<D> &x, const TopKParams &p) {
  int64_t dim = x.shape[p.axis];
  int64_t outer = numElementsOf(llvm::ArrayRef(x.shape).take_front(p.axis));
  int64_t inner = numElementsOf(llvm::ArrayRef(x.shape).drop_front(p.axis + 1));
  int64_t valid = std::clamp<int64_t>(p.valid.value_or(dim), 0, dim);
  std::vector<int64_t> shape = x.shape;
  shape[p.axis] = p.k;
  TopKResult<D> r{Tensor<D>(shape), Tensor<D>(shape), std::min(p.k, valid)};
  std::vector<int64_t> order;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t j) { return x.data[(o * dim + j) * inner + in]; };
      int64_t count =
          dynamic::topKLine(valid, p.k, p.largest, at, D::less, order);
      for (int64_t j = 0; j < count; ++j) {
        int64_t dst = (o * p.k + j) * inner + in;
        r.values.data[dst] = at(order[j]);
        r.indices.data[dst] = D::fromInt(order[j]);
      }
    }
  return r;
}

/// The parameters of nonMaxSuppression (tg.non_max_suppression's).
struct NMSParams {
  bool centerPointBox = false;
  int64_t maxOutputPerClass = 0;
  float iouThreshold = 0;
  std::optional<float> scoreThreshold;
  /// Only the first `valid` boxes take part.
  std::optional<int64_t> valid;
};

using dynamic::nmsBound;

/// ONNX NonMaxSuppression: boxes [B, N, 4], scores [B, C, N] -> rows
/// [b, c, box] of the selected boxes, padded to nmsBound.
template <class D>
Padded<D> nonMaxSuppression(const Tensor<D> &boxes, const Tensor<D> &scores,
                            const NMSParams &p) {
  int64_t batches = scores.shape[0], classes = scores.shape[1];
  int64_t n = scores.shape[2];
  int64_t valid = std::clamp<int64_t>(p.valid.value_or(n), 0, n);
  int64_t bound = nmsBound(batches, classes, n, p.maxOutputPerClass);
  Padded<D> out{Tensor<D>({bound, 3}), 0};
  std::vector<dynamic::BoxExtent> extents(size_t(batches * n));
  for (size_t i = 0; i < extents.size(); ++i) {
    float box[4];
    for (int c = 0; c < 4; ++c)
      box[c] = static_cast<float>(D::toDouble(boxes.data[i * 4 + c]));
    extents[i] = dynamic::boxExtent(box, p.centerPointBox);
  }
  dynamic::NMSOptions options{p.centerPointBox, p.maxOutputPerClass,
                              p.iouThreshold, p.scoreThreshold};
  dynamic::NMSScratch scratch;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const auto *s = &scores.data[(b * classes + c) * n];
      dynamic::nmsClass(
          valid, [&](int64_t j) { return s[j]; }, D::less,
          [](typename D::T v) { return static_cast<float>(D::toDouble(v)); },
          [&](int64_t j) { return extents[b * n + j]; }, options, scratch,
          [&](int64_t j) {
            int64_t row = out.count++;
            out.value.data[row * 3] = D::fromInt(b);
            out.value.data[row * 3 + 1] = D::fromInt(c);
            out.value.data[row * 3 + 2] = D::fromInt(j);
          });
    }
  return out;
}

} // namespace loom::interp

#endif // LOOM_INTERPRETER_DYNAMICKERNELS_H
