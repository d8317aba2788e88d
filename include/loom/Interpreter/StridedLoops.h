//===- StridedLoops.h - Strided iteration for the kernels -------*- C++ -*-===//
//
// Part of Loom. Loop nests over shapes with per-operand strides (merged and
// simplified so that the innermost run is as long as possible), the strided
// gather behind transpose, slice and broadcast, and axis helpers; used by
// the kernel definitions in KernelsImpl.h.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_STRIDEDLOOPS_H
#define LOOM_INTERPRETER_STRIDEDLOOPS_H

#include "loom/Interpreter/Tensor.h"
#include "loom/Support/Shapes.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <vector>

namespace loom {
namespace interp {

//===----------------------------------------------------------------------===//
// Strided iteration
//===----------------------------------------------------------------------===//

namespace kernels_detail {

/// A loop nest over a shape visiting N operands with per-operand strides,
/// simplified by dropping unit dimensions and merging dimensions that are
/// contiguous for every operand, so that the innermost loop is as long as
/// possible.
template <int N> struct LoopNest {
  llvm::SmallVector<int64_t, 6> sizes;
  llvm::SmallVector<std::array<int64_t, N>, 6> strides;

  LoopNest(llvm::ArrayRef<int64_t> shape,
           const std::array<llvm::ArrayRef<int64_t>, N> &operandStrides) {
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1)
        continue;
      std::array<int64_t, N> s;
      for (int o = 0; o < N; ++o)
        s[o] = operandStrides[o][d];
      if (!sizes.empty()) {
        bool mergeable = true;
        for (int o = 0; o < N; ++o)
          mergeable &= strides.back()[o] == s[o] * shape[d];
        if (mergeable) {
          sizes.back() *= shape[d];
          strides.back() = s;
          continue;
        }
      }
      sizes.push_back(shape[d]);
      strides.push_back(s);
    }
  }

  /// Calls fn(offsets, innerSize, innerStrides) for every innermost run, in
  /// row-major order of the shape. Does nothing for an empty shape.
  template <class F> void forEachRun(F &&fn) const {
    if (sizes.empty()) {
      // A single element; report unit strides so callers see a plain run.
      std::array<int64_t, N> zero{}, ones;
      ones.fill(1);
      fn(zero, int64_t(1), ones);
      return;
    }
    for (int64_t s : sizes)
      if (s == 0)
        return;
    size_t rank = sizes.size();
    int64_t inner = sizes.back();
    std::array<int64_t, N> innerStrides = strides.back();
    llvm::SmallVector<int64_t, 6> idx(rank - 1, 0);
    std::array<int64_t, N> off{};
    for (;;) {
      fn(off, inner, innerStrides);
      // Odometer increment over the outer dimensions.
      size_t d = rank - 1;
      for (;;) {
        if (d == 0)
          return;
        --d;
        if (++idx[d] < sizes[d]) {
          for (int o = 0; o < N; ++o)
            off[o] += strides[d][o];
          break;
        }
        for (int o = 0; o < N; ++o)
          off[o] -= strides[d][o] * (sizes[d] - 1);
        idx[d] = 0;
      }
    }
  }
};

/// The broadcast of two shapes the verifier accepted.
inline std::vector<int64_t> broadcastShapesOf(llvm::ArrayRef<int64_t> a,
                                              llvm::ArrayRef<int64_t> b) {
  auto shape = broadcastShapes(a, b);
  assert(shape && "shapes are not broadcast-compatible");
  return std::vector<int64_t>(shape->begin(), shape->end());
}

/// Copies \p x into a tensor of shape \p outShape reading through
/// \p inStrides from element \p base (transpose, slice, broadcast).
template <class D>
Tensor<D> gatherStrided(const Tensor<D> &x, std::vector<int64_t> outShape,
                        llvm::ArrayRef<int64_t> inStrides, int64_t base) {
  using T = typename D::T;
  Tensor<D> out(std::move(outShape));
  std::vector<int64_t> outStrides = stridesOf(out.shape);
  LoopNest<2> nest(out.shape, {outStrides, inStrides});
  T *o = out.data.data();
  const T *in = x.data.data() + base;
  nest.forEachRun([&](const std::array<int64_t, 2> &off, int64_t n,
                      const std::array<int64_t, 2> &s) {
    T *dst = o + off[0];
    const T *src = in + off[1];
    assert(s[0] == 1 && "output runs are contiguous");
    if (s[1] == 1)
      std::copy(src, src + n, dst);
    else if (s[1] == 0)
      std::fill(dst, dst + n, *src);
    else
      for (int64_t i = 0; i < n; ++i)
        dst[i] = src[i * s[1]];
  });
  return out;
}

/// Normalises a possibly negative axis.
inline int64_t normAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  assert(axis >= 0 && axis < std::max<int64_t>(rank, 1) && "axis out of range");
  return axis;
}

inline int64_t product(llvm::ArrayRef<int64_t> dims) {
  return numElementsOf(dims);
}

} // namespace kernels_detail

} // namespace interp
} // namespace loom

#endif // LOOM_INTERPRETER_STRIDEDLOOPS_H
