//===- DynamicKernels.h - Kernels with data-dependent lengths ---*- C++ -*-===//
//
// Part of Loom. The reference semantics of tg.nonzero, tg.topk and
// tg.non_max_suppression (TGDynamicOps.td), generic over the number domain
// D as the other kernels (Kernels.h) are. Each returns its results padded
// to their static bound and the run-time length (docs/ONNX/Import.md
// "Bounded dynamic shapes"); padding is 0.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_DYNAMICKERNELS_H
#define LOOM_INTERPRETER_DYNAMICKERNELS_H

#include "loom/Interpreter/Tensor.h"

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
  std::vector<int64_t> strides = stridesOf(x.shape);
  for (int64_t i = 0; i < n; ++i) {
    if (x.data[i] == D::zero())
      continue;
    int64_t rest = i;
    for (int64_t d = 0; d < rank; ++d) {
      out.value.data[d * n + out.count] = D::fromInt(rest / strides[d]);
      rest %= strides[d];
    }
    ++out.count;
  }
  return out;
}

/// Whether the element \p a at position \p i comes before \p b at \p j in
/// descending order: larger first (D::less, NaN largest), then the lower
/// position.
template <class D>
bool before(typename D::T a, typename D::T b, int64_t i, int64_t j) {
  if (D::less(b, a))
    return true;
  if (D::less(a, b))
    return false;
  return i < j;
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
  int64_t count = std::min(p.k, valid);
  std::vector<int64_t> shape = x.shape;
  shape[p.axis] = p.k;
  TopKResult<D> r{Tensor<D>(shape), Tensor<D>(shape), count};
  std::vector<int64_t> order(valid);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t j) { return x.data[(o * dim + j) * inner + in]; };
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return p.largest ? before<D>(at(a), at(b), a, b)
                         : before<D>(at(b), at(a), a, b);
      });
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

/// Whether box \p a suppresses box \p b (4 coordinates each): their
/// intersection over union is above \p threshold. Computed in float, as
/// ONNX Runtime does; boxes without area never suppress.
inline bool suppresses(const float *a, const float *b, bool centerPointBox,
                       float threshold) {
  // The extent of a box along one axis: coordinates c0 and c1 are corners
  // (either order) or a center and a size.
  auto extent = [&](const float *box, int c0, int c1, float &lo, float &hi) {
    if (centerPointBox) {
      lo = box[c0] - box[c1] / 2;
      hi = box[c0] + box[c1] / 2;
    } else {
      lo = std::min(box[c0], box[c1]);
      hi = std::max(box[c0], box[c1]);
    }
  };
  // Corners: [y1, x1, y2, x2]; centers: [xc, yc, w, h].
  float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
  extent(a, centerPointBox ? 0 : 1, centerPointBox ? 2 : 3, ax0, ax1);
  extent(b, centerPointBox ? 0 : 1, centerPointBox ? 2 : 3, bx0, bx1);
  extent(a, centerPointBox ? 1 : 0, centerPointBox ? 3 : 2, ay0, ay1);
  extent(b, centerPointBox ? 1 : 0, centerPointBox ? 3 : 2, by0, by1);
  float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (ix1 <= ix0 || iy1 <= iy0)
    return false;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  float areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);
  float uni = areaA + areaB - inter;
  if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0)
    return false;
  return inter / uni > threshold;
}

/// The bound of nonMaxSuppression's selected rows.
inline int64_t nmsBound(int64_t batches, int64_t classes, int64_t boxes,
                        int64_t maxOutputPerClass) {
  return batches * classes * std::min(std::max<int64_t>(maxOutputPerClass, 0), boxes);
}

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
  std::vector<float> box(boxes.data.size());
  for (size_t i = 0; i < box.size(); ++i)
    box[i] = static_cast<float>(D::toDouble(boxes.data[i]));
  std::vector<int64_t> candidates, selected;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const auto *s = &scores.data[(b * classes + c) * n];
      candidates.clear();
      for (int64_t j = 0; j < valid; ++j)
        if (!p.scoreThreshold ||
            static_cast<float>(D::toDouble(s[j])) > *p.scoreThreshold)
          candidates.push_back(j);
      std::sort(candidates.begin(), candidates.end(), [&](int64_t x, int64_t y) {
        return before<D>(s[x], s[y], x, y);
      });
      selected.clear();
      for (int64_t j : candidates) {
        if (static_cast<int64_t>(selected.size()) >= p.maxOutputPerClass)
          break;
        const float *cand = &box[(b * n + j) * 4];
        if (std::any_of(selected.begin(), selected.end(), [&](int64_t k) {
              return suppresses(&box[(b * n + k) * 4], cand, p.centerPointBox,
                                p.iouThreshold);
            }))
          continue;
        selected.push_back(j);
        int64_t row = out.count++;
        out.value.data[row * 3] = D::fromInt(b);
        out.value.data[row * 3 + 1] = D::fromInt(c);
        out.value.data[row * 3 + 2] = D::fromInt(j);
      }
    }
  return out;
}

} // namespace loom::interp

#endif // LOOM_INTERPRETER_DYNAMICKERNELS_H
