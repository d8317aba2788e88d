//===- ResizeKernel.h - The resize kernel -----------------------*- C++ -*-===//
//
// Part of Loom. The definition of interp::resize (ONNX Resize), declared in
// Kernels.h; included by KernelsImpl.h.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_RESIZEKERNEL_H
#define LOOM_INTERPRETER_RESIZEKERNEL_H

#include "loom/Interpreter/Kernels.h"
#include "loom/Interpreter/StridedLoops.h"

#include <cmath>
#include <vector>

namespace loom {
namespace tg {
class ResizeOp;
} // namespace tg
namespace interp {

/// The options of a tg.resize op (its attributes as resize() takes them);
/// the interpreter and the lowering to linalg both read them from here.
ResizeParams resizeParamsOf(tg::ResizeOp op);

namespace kernels_detail {

/// One input element read by a resized output element, and its weight.
struct ResizeTap {
  int64_t index;
  double weight;
};

/// The taps of every output index of one resized dimension (see resize()).
inline std::vector<llvm::SmallVector<ResizeTap, 4>>
resizeTaps(int64_t in, int64_t out, double scale, const ResizeParams &p) {
  double length = scale * static_cast<double>(in);
  std::vector<llvm::SmallVector<ResizeTap, 4>> taps(out);
  for (int64_t i = 0; i < out; ++i) {
    double x = static_cast<double>(i), c = 0;
    switch (p.coordinateMode) {
    case ResizeCoordinateMode::HalfPixel:
      c = (x + 0.5) / scale - 0.5;
      break;
    case ResizeCoordinateMode::PytorchHalfPixel:
      c = length > 1 ? (x + 0.5) / scale - 0.5 : -0.5;
      break;
    case ResizeCoordinateMode::AlignCorners:
      c = length == 1 ? 0 : x * static_cast<double>(in - 1) / (length - 1);
      break;
    case ResizeCoordinateMode::Asymmetric:
      c = x / scale;
      break;
    case ResizeCoordinateMode::TfHalfPixelForNN:
      c = (x + 0.5) / scale;
      break;
    }
    // b is the neighbour left of c, r in (0, 1] the distance to it.
    double b = std::ceil(c) - 1, r = c - b;
    llvm::SmallVector<double, 4> w;
    int64_t first = static_cast<int64_t>(b);
    switch (p.mode) {
    case ResizeMode::Nearest: {
      bool up = true;
      if (r < 1) {
        switch (p.nearestMode) {
        case ResizeNearestMode::RoundPreferFloor:
          up = r > 0.5;
          break;
        case ResizeNearestMode::RoundPreferCeil:
          up = r >= 0.5;
          break;
        case ResizeNearestMode::Floor:
          up = false;
          break;
        case ResizeNearestMode::Ceil:
          up = true;
          break;
        }
      }
      w = {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
      break;
    }
    case ResizeMode::Linear:
      w = {1 - r, r};
      break;
    case ResizeMode::Cubic: {
      double a = p.cubicCoeffA, s = 1 - r;
      w = {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
           ((a + 2) * r - (a + 3)) * r * r + 1,
           ((a + 2) * s - (a + 3)) * s * s + 1,
           ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
      first -= 1;
      break;
    }
    }
    if (p.excludeOutside) {
      double sum = 0;
      for (size_t k = 0; k < w.size(); ++k) {
        int64_t idx = first + static_cast<int64_t>(k);
        if (idx < 0 || idx >= in)
          w[k] = 0;
        sum += w[k];
      }
      if (sum != 0)
        for (double &v : w)
          v /= sum;
    }
    for (size_t k = 0; k < w.size(); ++k) {
      if (w[k] == 0)
        continue;
      int64_t idx =
          std::clamp<int64_t>(first + static_cast<int64_t>(k), 0, in - 1);
      taps[i].push_back({idx, w[k]});
    }
  }
  return taps;
}

} // namespace kernels_detail

template <class D>
Tensor<D> resize(const Tensor<D> &x, const ResizeParams &params) {
  using namespace kernels_detail;
  using T = typename D::T;
  assert(params.sizes.size() == x.shape.size() && "resize rank mismatch");
  Tensor<D> cur = x;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    int64_t in = cur.shape[d], out = params.sizes[d];
    double scale = params.scales.empty()
                       ? static_cast<double>(out) / static_cast<double>(in)
                       : params.scales[d];
    auto taps = resizeTaps(in, out, scale, params);
    bool identity = in == out;
    for (int64_t i = 0; identity && i < out; ++i)
      identity = taps[i].size() == 1 && taps[i][0].index == i &&
                 taps[i][0].weight == 1;
    if (identity)
      continue;
    std::vector<int64_t> shape = cur.shape;
    shape[d] = out;
    Tensor<D> next(shape);
    int64_t outer = product(llvm::ArrayRef(shape).take_front(d));
    int64_t inner = product(llvm::ArrayRef(shape).drop_front(d + 1));
    std::vector<llvm::SmallVector<std::pair<int64_t, T>, 4>> weights(out);
    for (int64_t i = 0; i < out; ++i)
      for (const ResizeTap &t : taps[i])
        weights[i].push_back({t.index, D::fromDouble(t.weight)});
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < out; ++i) {
        T *dst = next.data.data() + (o * out + i) * inner;
        const auto &ws = weights[i];
        if (ws.size() == 1 && taps[i][0].weight == 1) {
          const T *src = cur.data.data() + (o * in + ws[0].first) * inner;
          std::copy(src, src + inner, dst);
          continue;
        }
        for (int64_t k = 0; k < inner; ++k) {
          T acc = D::zero();
          for (const auto &[idx, w] : ws)
            acc = D::add(acc, D::mul(w, cur.data[(o * in + idx) * inner + k]));
          dst[k] = acc;
        }
      }
    cur = std::move(next);
  }
  return cur;
}

} // namespace interp
} // namespace loom

#endif // LOOM_INTERPRETER_RESIZEKERNEL_H
