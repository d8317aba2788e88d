//===- DynamicAlgorithms.h - Selections with data-dependent lengths -*- C++ -*-===//
//
// Part of Loom. The one definition of what tg.nonzero, tg.topk and
// tg.non_max_suppression compute (TGDynamicOps.td), shared by the
// interpreter (loom/Interpreter/DynamicKernels.h, over its number domains)
// and by libloomrt's CPU steps loomrt.nonzero, loomrt.topk and
// loomrt.non_max_suppression (lib/Runtime/CPU/DynamicSteps.cpp, over the
// buffers' numbers). Plain C++17 and the standard library only: libloomrt
// builds without LLVM (lib/Runtime/CMakeLists.txt).
//
// The algorithms (docs/Runtime.md "The dynamic steps"): nonzero one pass;
// topk a selection (nth_element) then a sort of the k chosen, O(n + k log k)
// per line; NMS one sort of a class's candidates by score, then a greedy
// pass that tests each candidate against the boxes kept so far only and
// stops at the class's maximum.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_DYNAMICALGORITHMS_H
#define LOOM_SUPPORT_DYNAMICALGORITHMS_H

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

namespace loom::dynamic {

/// The order of plain numbers the dynamic ops use: the usual one, with NaN
/// above +inf (the interpreter's FloatDomain::less).
template <class T> bool numberLess(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a < b || (b != b && a == a);
  else
    return a < b;
}

/// Whether the element \p a at position \p i comes before \p b at \p j in
/// descending order under \p less: larger first, then the lower position.
/// A strict total order on (value, position) pairs.
template <class T, class Less>
bool before(const T &a, const T &b, int64_t i, int64_t j, Less less) {
  if (less(b, a))
    return true;
  if (less(a, b))
    return false;
  return i < j;
}

/// The positions of the min(k, valid) best of the first \p valid elements
/// of a line, best first, into \p order[0, count) (its tail is scratch):
/// largest first when \p largest, else smallest first; the lower position
/// first among equals. \p at(j) is the line's element j. Returns count.
template <class At, class Less>
int64_t topKLine(int64_t valid, int64_t k, bool largest, At at, Less less,
                 std::vector<int64_t> &order) {
  int64_t count = std::min(k, valid);
  order.resize(size_t(valid));
  std::iota(order.begin(), order.end(), int64_t(0));
  auto cmp = [&](int64_t a, int64_t b) {
    return largest ? before(at(a), at(b), a, b, less)
                   : before(at(b), at(a), a, b, less);
  };
  if (count < valid)
    std::nth_element(order.begin(), order.begin() + count, order.end(), cmp);
  std::sort(order.begin(), order.begin() + count, cmp);
  return count;
}

/// A box's extent along both axes, with its area: what suppression
/// compares, computed once per box.
struct BoxExtent {
  float x0 = 0, x1 = 0, y0 = 0, y1 = 0, area = 0;
};

/// The extent of \p box (4 coordinates): corners [y1, x1, y2, x2] in either
/// order, or with \p centerPointBox a center and size [xc, yc, w, h].
inline BoxExtent boxExtent(const float *box, bool centerPointBox) {
  auto extent = [&](int c0, int c1, float &lo, float &hi) {
    if (centerPointBox) {
      lo = box[c0] - box[c1] / 2;
      hi = box[c0] + box[c1] / 2;
    } else {
      lo = std::min(box[c0], box[c1]);
      hi = std::max(box[c0], box[c1]);
    }
  };
  BoxExtent e;
  extent(centerPointBox ? 0 : 1, centerPointBox ? 2 : 3, e.x0, e.x1);
  extent(centerPointBox ? 1 : 0, centerPointBox ? 3 : 2, e.y0, e.y1);
  e.area = (e.x1 - e.x0) * (e.y1 - e.y0);
  return e;
}

/// The bound of NMS's selected rows.
inline int64_t nmsBound(int64_t batches, int64_t classes, int64_t boxes,
                        int64_t maxOutputPerClass) {
  return batches * classes *
         std::min(std::max<int64_t>(maxOutputPerClass, 0), boxes);
}

/// The parameters of NMS (tg.non_max_suppression's attributes).
struct NMSOptions {
  bool centerPointBox = false;
  int64_t maxOutputPerClass = 0;
  float iouThreshold = 0;
  std::optional<float> scoreThreshold;
};

/// The boxes NMS kept so far in a class, a column per field, so that
/// testing a candidate against all of them is one vectorisable loop.
class KeptBoxes {
public:
  void clear() {
    for (std::vector<float> *v : {&x0, &x1, &y0, &y1, &area})
      v->clear();
  }
  size_t size() const { return x0.size(); }
  void push(const BoxExtent &e) {
    x0.push_back(e.x0);
    x1.push_back(e.x1);
    y0.push_back(e.y0);
    y1.push_back(e.y1);
    area.push_back(e.area);
  }
  /// Whether a kept box suppresses \p b: their intersection over union is
  /// above \p threshold, in float as ONNX Runtime computes it (boxes
  /// without area never suppress). Without branches, every condition
  /// evaluated, a block of kept boxes at a time.
  bool anySuppresses(const BoxExtent &b, float threshold) const {
    constexpr size_t kBlock = 64;
    for (size_t begin = 0; begin < size(); begin += kBlock) {
      size_t end = std::min(size(), begin + kBlock);
      int any = 0;
      for (size_t i = begin; i < end; ++i) {
        float ix0 = std::max(x0[i], b.x0), ix1 = std::min(x1[i], b.x1);
        float iy0 = std::max(y0[i], b.y0), iy1 = std::min(y1[i], b.y1);
        float inter = (ix1 - ix0) * (iy1 - iy0);
        float uni = area[i] + b.area - inter;
        any |= int(ix1 > ix0) & int(iy1 > iy0) & int(inter > 0) &
               int(area[i] > 0) & int(b.area > 0) & int(uni > 0) &
               int(inter / uni > threshold);
      }
      if (any)
        return true;
    }
    return false;
  }

private:
  std::vector<float> x0, x1, y0, y1, area;
};

/// Scratch NMS reuses across classes.
struct NMSScratch {
  std::vector<int64_t> candidates;
  KeptBoxes kept;
};

/// ONNX NonMaxSuppression of one (batch, class): the boxes of the first
/// \p valid whose score (\p score(j); \p toFloat of it compared in float)
/// is above the score threshold, by descending score under \p less (the
/// lower position first among equals), each kept unless a box kept before
/// suppresses it, at most maxOutputPerClass. \p extent(j) is box j's
/// BoxExtent; \p emit(j) is called for each kept box in order.
template <class Score, class Less, class ToFloat, class Extent, class Emit>
void nmsClass(int64_t valid, Score score, Less less, ToFloat toFloat,
              Extent extent, const NMSOptions &p, NMSScratch &scratch,
              Emit emit) {
  std::vector<int64_t> &candidates = scratch.candidates;
  candidates.clear();
  for (int64_t j = 0; j < valid; ++j)
    if (!p.scoreThreshold || toFloat(score(j)) > *p.scoreThreshold)
      candidates.push_back(j);
  std::sort(candidates.begin(), candidates.end(), [&](int64_t x, int64_t y) {
    return before(score(x), score(y), x, y, less);
  });
  scratch.kept.clear();
  for (int64_t j : candidates) {
    if (int64_t(scratch.kept.size()) >= p.maxOutputPerClass)
      break;
    BoxExtent cand = extent(j);
    if (scratch.kept.anySuppresses(cand, p.iouThreshold))
      continue;
    scratch.kept.push(cand);
    emit(j);
  }
}

/// The coordinates of element \p i of a row-major tensor of \p shape
/// (\p rank dimensions) into \p coords.
inline void coordinatesOf(int64_t i, const int64_t *shape, int64_t rank,
                          int64_t *coords) {
  for (int64_t d = rank - 1; d >= 0; --d) {
    int64_t size = std::max<int64_t>(shape[d], 1);
    coords[d] = i % size;
    i /= size;
  }
}

/// ONNX NonZero over \p n elements of a tensor of \p shape: calls
/// \p emit(column, coords) for each element \p nonZero(i) accepts, in
/// row-major order; returns their number.
template <class NonZero, class Emit>
int64_t nonZero(int64_t n, const std::vector<int64_t> &shape, NonZero isNonZero,
                Emit emit) {
  std::vector<int64_t> coords(shape.size());
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!isNonZero(i))
      continue;
    coordinatesOf(i, shape.data(), int64_t(shape.size()), coords.data());
    emit(count++, coords.data());
  }
  return count;
}

} // namespace loom::dynamic

#endif // LOOM_SUPPORT_DYNAMICALGORITHMS_H
