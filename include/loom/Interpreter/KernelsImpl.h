//===- KernelsImpl.h - Definitions of the domain-generic kernels -*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//
//
// The template definitions of the kernels declared in Kernels.h. The library
// instantiates them for F32Domain, F64Domain and ModPDomain (Kernels.cpp);
// include this header only to instantiate them for another domain (the rule
// generator's symbolic Z3 domain does), with LOOM_INSTANTIATE_KERNELS(D) in
// exactly one .cpp file.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_KERNELSIMPL_H
#define LOOM_INTERPRETER_KERNELSIMPL_H

#include "loom/Interpreter/Gemm.h"
#include "loom/Interpreter/Kernels.h"
#include "loom/Interpreter/Precision.h"
#include "loom/Interpreter/StridedLoops.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>

namespace loom {
namespace interp {

namespace kernels_detail {}
using namespace kernels_detail;



namespace kernels_detail {

/// Applies unary operator K in place to data[0, n).
template <class D, UnaryKind K>
void mapUnaryInPlace(const UnaryConsts<D> &c, typename D::T *data, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    data[i] = applyUnary<D, K>(c, data[i]);
}

} // namespace kernels_detail

template <class D>
typename D::T unaryScalar(UnaryKind kind, typename D::T x,
                                  UnaryParams params) {
  UnaryConsts<D> c(params);
  return dispatchUnary(
      kind, [&](auto k) { return applyUnary<D, decltype(k)::value>(c, x); });
}

template <class D>
typename D::T binaryScalar(BinaryKind kind, typename D::T a,
                                   typename D::T b) {
  return dispatchBinary(
      kind, [&](auto k) { return applyBinary<D, decltype(k)::value>(a, b); });
}

//===----------------------------------------------------------------------===//
// Elementwise kernels
//===----------------------------------------------------------------------===//

template <class D>
Tensor<D> unary(UnaryKind kind, const Tensor<D> &x,
                        UnaryParams params) {
  UnaryConsts<D> c(params);
  Tensor<D> out = x;
  dispatchUnary(kind, [&](auto k) {
    mapUnaryInPlace<D, decltype(k)::value>(c, out.data.data(),
                                           out.numElements());
  });
  return out;
}

namespace kernels_detail {

/// out[i] = op(a[i * sa], b[i * sb]) for i in [0, n), with the common stride
/// patterns of broadcasting specialised so that they vectorize.
template <class T, class Op>
void binaryRun(T *__restrict out, const T *a, const T *b, int64_t n,
               int64_t sa, int64_t sb, Op op) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    T bv = *b;
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(a[i], bv);
  } else if (sa == 0 && sb == 1) {
    T av = *a;
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(a[i * sa], b[i * sb]);
  }
}

/// out = op(a, b) elementwise, \p a and \p b broadcast numpy-style.
template <class D, class Op>
Tensor<D> broadcastMap(const Tensor<D> &a, const Tensor<D> &b, Op op) {
  Tensor<D> out(broadcastShapesOf(a.shape, b.shape));
  std::vector<int64_t> outStrides = stridesOf(out.shape);
  auto aStrides = broadcastStrides(a.shape, out.shape);
  auto bStrides = broadcastStrides(b.shape, out.shape);
  LoopNest<3> nest(out.shape, {outStrides, aStrides, bStrides});
  using T = typename D::T;
  T *o = out.data.data();
  const T *pa = a.data.data(), *pb = b.data.data();
  nest.forEachRun([&](const std::array<int64_t, 3> &off, int64_t n,
                      const std::array<int64_t, 3> &s) {
    assert(s[0] == 1 && "output runs are contiguous");
    binaryRun(o + off[0], pa + off[1], pb + off[2], n, s[1], s[2], op);
  });
  return out;
}

} // namespace kernels_detail

template <class D>
Tensor<D> binary(BinaryKind kind, const Tensor<D> &a,
                         const Tensor<D> &b) {
  using T = typename D::T;
  return dispatchBinary(kind, [&](auto k) {
    return broadcastMap<D>(a, b, [](const T &x, const T &y) {
      return applyBinary<D, decltype(k)::value>(x, y);
    });
  });
}

template <class D>
Tensor<D> compare(CompareKind kind, const Tensor<D> &a, const Tensor<D> &b) {
  using T = typename D::T;
  T one = D::one(), zero = D::zero();
  return dispatchCompare(kind, [&](auto k) {
    return broadcastMap<D>(a, b, [&](const T &x, const T &y) {
      return applyCompare<D, decltype(k)::value>(x, y) ? one : zero;
    });
  });
}

template <class D>
Tensor<D> select(const Tensor<D> &cond, const Tensor<D> &a,
                 const Tensor<D> &b) {
  using T = typename D::T;
  Tensor<D> out(
      broadcastShapesOf(broadcastShapesOf(cond.shape, a.shape), b.shape));
  std::vector<int64_t> outStrides = stridesOf(out.shape);
  auto cStrides = broadcastStrides(cond.shape, out.shape);
  auto aStrides = broadcastStrides(a.shape, out.shape);
  auto bStrides = broadcastStrides(b.shape, out.shape);
  LoopNest<4> nest(out.shape, {outStrides, cStrides, aStrides, bStrides});
  T *o = out.data.data();
  const T *pc = cond.data.data(), *pa = a.data.data(), *pb = b.data.data();
  nest.forEachRun([&](const std::array<int64_t, 4> &off, int64_t n,
                      const std::array<int64_t, 4> &s) {
    for (int64_t i = 0; i < n; ++i)
      o[off[0] + i] = pc[off[1] + i * s[1]] != D::zero()
                          ? pa[off[2] + i * s[2]]
                          : pb[off[3] + i * s[3]];
  });
  return out;
}

//===----------------------------------------------------------------------===//
// Matrix product and convolution
//===----------------------------------------------------------------------===//

template <class D>
Tensor<D> matmul(const Tensor<D> &a, const Tensor<D> &b) {
  using T = typename D::T;
  assert(a.rank() >= 2 && b.rank() >= 2 && "matmul needs rank >= 2");
  int64_t m = a.shape[a.rank() - 2], k = a.shape[a.rank() - 1];
  int64_t n = b.shape[b.rank() - 1];
  assert(b.shape[b.rank() - 2] == k && "matmul contraction mismatch");
  llvm::ArrayRef<int64_t> aBatch = llvm::ArrayRef(a.shape).drop_back(2);
  llvm::ArrayRef<int64_t> bBatch = llvm::ArrayRef(b.shape).drop_back(2);
  std::vector<int64_t> batch = broadcastShapesOf(aBatch, bBatch);
  std::vector<int64_t> outShape = batch;
  outShape.push_back(m);
  outShape.push_back(n);
  Tensor<D> out(outShape);

  // Matrix offsets of every batch element, in row-major order.
  auto aStr = broadcastStrides(aBatch, batch);
  auto bStr = broadcastStrides(bBatch, batch);
  std::vector<std::array<int64_t, 2>> offsets;
  offsets.reserve(product(batch));
  LoopNest<2> nest(batch, {aStr, bStr});
  nest.forEachRun([&](const std::array<int64_t, 2> &off, int64_t cnt,
                      const std::array<int64_t, 2> &s) {
    for (int64_t i = 0; i < cnt; ++i)
      offsets.push_back(
          {(off[0] + i * s[0]) * m * k, (off[1] + i * s[1]) * k * n});
  });
  int64_t count = static_cast<int64_t>(offsets.size());
  int64_t perMatrix = m * n * std::max<int64_t>(k, 1);
  const T *pa = a.data.data(), *pb = b.data.data();
  T *po = out.data.data();
  if (perMatrix >= detail::kParallelThreshold || count == 1) {
    for (int64_t i = 0; i < count; ++i)
      detail::gemm<D>(m, n, k, pa + offsets[i][0], k, pb + offsets[i][1], n,
                      po + i * m * n, n, false);
  } else {
    detail::parallelFor(count, count * perMatrix, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        detail::gemmSerial<D>(m, n, k, pa + offsets[i][0], k,
                              pb + offsets[i][1], n, po + i * m * n, n, false);
    });
  }
  return out;
}

namespace kernels_detail {

/// \p v (one entry per spatial dimension, 1 to 3) extended to three
/// (depth, height, width) with leading \p fill entries.
inline std::array<int64_t, 3> spatial3(llvm::ArrayRef<int64_t> v,
                                       int64_t fill) {
  assert(!v.empty() && v.size() <= 3 && "1 to 3 spatial dimensions");
  std::array<int64_t, 3> out{fill, fill, fill};
  std::copy(v.begin(), v.end(), out.begin() + (3 - v.size()));
  return out;
}

/// Geometry of one conv call, its spatial dimensions extended to three
/// (depth, height, width) with leading unit dimensions: a 1-D or 2-D
/// convolution is a 3-D one over unit depth (and height).
struct ConvGeometry {
  int64_t n, c;          // input
  int64_t o, cg;         // weights (cg = channels per group)
  int64_t groups, og;    // og = output channels per group
  std::array<int64_t, 3> in, k, out; // input, kernel, output extents
  std::array<int64_t, 3> s, d, pb;   // strides, dilations, begin pads
  int64_t inVolume() const { return in[0] * in[1] * in[2]; }
  int64_t outVolume() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return k[0] * k[1] * k[2]; }
};

/// Unrolls input channels [c0, c1) of the cg channels at \p x (one image,
/// one group) into their rows of the (cg * taps) x (output volume) matrix
/// \p col, zero where the receptive field falls into padding.
template <class D>
void im2col(const ConvGeometry &g, const typename D::T *x, typename D::T *col,
            int64_t c0, int64_t c1) {
  using T = typename D::T;
  int64_t l = g.outVolume(), ow = g.out[2], w = g.in[2], sw = g.s[2];
  for (int64_t c = c0; c < c1; ++c) {
    const T *volume = x + c * g.inVolume();
    T *dst = col + c * g.taps() * l;
    for (int64_t kz = 0; kz < g.k[0]; ++kz)
      for (int64_t ki = 0; ki < g.k[1]; ++ki)
        for (int64_t kj = 0; kj < g.k[2]; ++kj, dst += l) {
          // Input column iw = ow * sw + iw0 is in bounds for ow in [lo, hi).
          int64_t iw0 = kj * g.d[2] - g.pb[2];
          int64_t lo = iw0 >= 0 ? 0 : (-iw0 + sw - 1) / sw;
          int64_t hi = w - iw0 <= 0 ? 0 : (w - iw0 + sw - 1) / sw;
          lo = std::min(lo, ow);
          hi = std::max(lo, std::min(hi, ow));
          for (int64_t z = 0; z < g.out[0]; ++z) {
            int64_t iz = z * g.s[0] + kz * g.d[0] - g.pb[0];
            for (int64_t r = 0; r < g.out[1]; ++r) {
              T *row = dst + (z * g.out[1] + r) * ow;
              int64_t ih = r * g.s[1] + ki * g.d[1] - g.pb[1];
              if (iz < 0 || iz >= g.in[0] || ih < 0 || ih >= g.in[1]) {
                std::fill(row, row + ow, D::zero());
                continue;
              }
              const T *src = volume + (iz * g.in[1] + ih) * w + iw0;
              std::fill(row, row + lo, D::zero());
              if (sw == 1)
                std::copy(src + lo, src + hi, row + lo);
              else
                for (int64_t q = lo; q < hi; ++q)
                  row[q] = src[q * sw];
              std::fill(row + hi, row + ow, D::zero());
            }
          }
        }
  }
}

/// Applies activation \p act (parameters in \p c: alpha, beta) to \p n
/// elements in place: every activation of Activations.def, each through the
/// unary kinds' definitions.
template <class D>
void activateInPlace(Activation act, const UnaryConsts<D> &c,
                     typename D::T *p, int64_t n) {
  switch (act) {
  case Activation::None:
    return;
  case Activation::Relu:
    return mapUnaryInPlace<D, UnaryKind::Relu>(c, p, n);
  case Activation::Sigmoid:
    return mapUnaryInPlace<D, UnaryKind::Sigmoid>(c, p, n);
  case Activation::Tanh:
    return mapUnaryInPlace<D, UnaryKind::Tanh>(c, p, n);
  case Activation::GeluErf:
    return mapUnaryInPlace<D, UnaryKind::Gelu>(c, p, n);
  case Activation::GeluTanh:
    return mapUnaryInPlace<D, UnaryKind::GeluTanh>(c, p, n);
  case Activation::HardSwish:
    return mapUnaryInPlace<D, UnaryKind::HardSwish>(c, p, n);
  case Activation::Clip:
    return mapUnaryInPlace<D, UnaryKind::Clip>(c, p, n);
  case Activation::HardSigmoid:
    return mapUnaryInPlace<D, UnaryKind::HardSigmoid>(c, p, n);
  case Activation::Swish:
    // x * sigmoid(x).
    for (int64_t i = 0; i < n; ++i)
      p[i] = D::mul(p[i], applyUnary<D, UnaryKind::Sigmoid>(c, p[i]));
    return;
  case Activation::LeakyRelu:
    // relu(x) - alpha * relu(-x), exact for any slope.
    for (int64_t i = 0; i < n; ++i)
      p[i] = D::sub(applyUnary<D, UnaryKind::Relu>(c, p[i]),
                    D::mul(c.a, applyUnary<D, UnaryKind::Relu>(c, D::neg(p[i]))));
    return;
  }
}

/// Adds the bias of each output channel and applies the fused activation to
/// \p count channels of \p spatial elements starting at channel \p o0.
template <class D>
void biasAndActivate(typename D::T *out, const typename D::T *bias, int64_t o0,
                     int64_t count, int64_t spatial, const ConvParams &params) {
  UnaryConsts<D> c(UnaryParams{params.alpha, params.beta});
  for (int64_t o = 0; o < count; ++o) {
    typename D::T *p = out + o * spatial;
    if (bias) {
      typename D::T bv = bias[o0 + o];
      for (int64_t i = 0; i < spatial; ++i)
        p[i] = D::add(p[i], bv);
    }
    activateInPlace<D>(params.activation, c, p, spatial);
  }
}

} // namespace kernels_detail

template <class D>
Tensor<D> conv(const Tensor<D> &x, const Tensor<D> &w,
               const llvm::type_identity_t<Tensor<D>> *bias,
               const ConvParams &params) {
  using T = typename D::T;
  size_t k = x.rank() - 2;
  assert(x.rank() >= 3 && x.rank() <= 5 && w.rank() == x.rank() &&
         params.strides.size() == k && params.dilations.size() == k &&
         params.pads.size() == 2 * k && "conv needs 1 to 3 spatial dims");
  ConvGeometry g;
  g.n = x.shape[0], g.c = x.shape[1];
  g.o = w.shape[0], g.cg = w.shape[1];
  g.groups = params.groups;
  assert(g.groups >= 1 && g.c == g.cg * g.groups && g.o % g.groups == 0 &&
         "conv channel/group mismatch");
  g.og = g.o / g.groups;
  llvm::ArrayRef<int64_t> pads(params.pads);
  g.in = spatial3(llvm::ArrayRef<int64_t>(x.shape).drop_front(2), 1);
  g.k = spatial3(llvm::ArrayRef<int64_t>(w.shape).drop_front(2), 1);
  g.s = spatial3(params.strides, 1);
  g.d = spatial3(params.dilations, 1);
  g.pb = spatial3(pads.take_front(k), 0);
  std::array<int64_t, 3> pe = spatial3(pads.drop_front(k), 0);
  for (int i = 0; i < 3; ++i)
    g.out[i] = std::max<int64_t>(
        0, (g.in[i] + g.pb[i] + pe[i] - g.d[i] * (g.k[i] - 1) - 1) / g.s[i] +
               1);
  assert((!bias || (bias->rank() == 1 && bias->shape[0] == g.o)) &&
         "conv bias must be [O]");

  std::vector<int64_t> outShape = {g.n, g.o};
  outShape.insert(outShape.end(), g.out.end() - k, g.out.end());
  Tensor<D> out(outShape);
  int64_t l = g.outVolume();
  int64_t kdim = g.cg * g.taps();
  int64_t inVolume = g.inVolume();
  // A 1x1, stride-1, unpadded convolution is a plain matrix product with the
  // input planes.
  bool direct = g.taps() == 1 &&
                llvm::all_of(params.strides, [](int64_t v) { return v == 1; }) &&
                llvm::all_of(params.pads, [](int64_t v) { return v == 0; });
  const T *px = x.data.data(), *pw = w.data.data();
  const T *pbias = bias ? bias->data.data() : nullptr;
  T *po = out.data.data();

  // One item is one (image, group) pair: im2col, a GEMM of og x l x kdim,
  // then bias and activation.
  auto runItem = [&](int64_t item, std::vector<T> &col, bool threaded) {
    int64_t img = item / g.groups, grp = item % g.groups;
    const T *xin = px + (img * g.c + grp * g.cg) * inVolume;
    const T *bmat = xin;
    if (!direct) {
      col.resize(static_cast<size_t>(kdim * l));
      T *colData = col.data();
      if (threaded)
        detail::parallelFor(g.cg, kdim * l, [&](int64_t c0, int64_t c1) {
          im2col<D>(g, xin, colData, c0, c1);
        });
      else
        im2col<D>(g, xin, colData, 0, g.cg);
      bmat = colData;
    }
    T *dst = po + (img * g.o + grp * g.og) * l;
    const T *wg = pw + grp * g.og * kdim;
    if (threaded)
      detail::gemm<D>(g.og, l, kdim, wg, kdim, bmat, l, dst, l, false);
    else
      detail::gemmSerial<D>(g.og, l, kdim, wg, kdim, bmat, l, dst, l, false);
    biasAndActivate<D>(dst, pbias, grp * g.og, g.og, l, params);
  };

  int64_t items = g.n * g.groups;
  int64_t perItem = g.og * l * std::max<int64_t>(kdim, 1);
  if (perItem >= detail::kParallelThreshold || items == 1) {
    std::vector<T> col;
    for (int64_t i = 0; i < items; ++i)
      runItem(i, col, true);
  } else {
    detail::parallelFor(items, items * perItem, [&](int64_t i0, int64_t i1) {
      std::vector<T> col;
      for (int64_t i = i0; i < i1; ++i)
        runItem(i, col, false);
    });
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

namespace kernels_detail {

/// The window of one pooled element: \p in is the offset of its
/// (depth x height x width, unit-extended) input volume, \p out its offset
/// in the pooled tensor, [lo, hi) its in-bounds part per spatial dimension.
struct PoolWindow {
  int64_t in, out;
  std::array<int64_t, 3> lo, hi;
  /// The number of in-bounds positions.
  int64_t size() const {
    int64_t n = 1;
    for (int i = 0; i < 3; ++i)
      n *= std::max<int64_t>(0, hi[i] - lo[i]);
    return n;
  }
  /// Calls fn(offset) for each in-bounds position, in row-major order, with
  /// \p ext the input's (unit-extended) spatial extents.
  template <class F>
  void forEachTap(const std::array<int64_t, 3> &ext, F &&fn) const {
    for (int64_t z = lo[0]; z < hi[0]; ++z)
      for (int64_t y = lo[1]; y < hi[1]; ++y)
        for (int64_t xx = lo[2]; xx < hi[2]; ++xx)
          fn(in + (z * ext[1] + y) * ext[2] + xx);
  }
};

/// The result shape [N, C, OS...] of pooling a channels-first \p shape.
inline std::vector<int64_t> pooledShape(const std::vector<int64_t> &shape,
                                        const PoolParams &p) {
  size_t k = shape.size() - 2;
  assert(shape.size() >= 3 && shape.size() <= 5 && p.kernel.size() == k &&
         p.strides.size() == k && p.pads.size() == 2 * k &&
         "pooling needs 1 to 3 spatial dims");
  std::vector<int64_t> out = {shape[0], shape[1]};
  for (size_t i = 0; i < k; ++i)
    out.push_back(std::max<int64_t>(
        0, (shape[2 + i] + p.pads[i] + p.pads[k + i] - p.kernel[i]) /
                   p.strides[i] +
               1));
  return out;
}

/// Calls fn(window) for every window of pooling a channels-first \p shape,
/// in row-major order of the pooled shape (see PoolWindow).
template <class F>
void forEachPoolWindow(const std::vector<int64_t> &shape, const PoolParams &p,
                       F &&fn) {
  std::vector<int64_t> pooled = pooledShape(shape, p);
  size_t k = shape.size() - 2;
  llvm::ArrayRef<int64_t> pads(p.pads);
  auto ext = spatial3(llvm::ArrayRef<int64_t>(shape).drop_front(2), 1);
  auto out = spatial3(llvm::ArrayRef<int64_t>(pooled).drop_front(2), 1);
  auto kernel = spatial3(p.kernel, 1), strides = spatial3(p.strides, 1),
       begin = spatial3(pads.take_front(k), 0);
  int64_t inVolume = ext[0] * ext[1] * ext[2];
  PoolWindow win;
  win.out = 0;
  auto axis = [&](int i, int64_t o) {
    int64_t start = o * strides[i] - begin[i];
    win.lo[i] = std::max<int64_t>(start, 0);
    win.hi[i] = std::min(start + kernel[i], ext[i]);
  };
  for (int64_t plane = 0; plane < shape[0] * shape[1]; ++plane) {
    win.in = plane * inVolume;
    for (int64_t z = 0; z < out[0]; ++z) {
      axis(0, z);
      for (int64_t r = 0; r < out[1]; ++r) {
        axis(1, r);
        for (int64_t q = 0; q < out[2]; ++q, ++win.out) {
          axis(2, q);
          fn(win);
        }
      }
    }
  }
}

/// Pools \p x (channels-first): every output element is fn(window) for its
/// window (see forEachPoolWindow).
template <class D, class F>
Tensor<D> pool(const Tensor<D> &x, const PoolParams &p, F &&fn) {
  Tensor<D> out(pooledShape(x.shape, p));
  forEachPoolWindow(x.shape, p, [&](const PoolWindow &win) {
    out.data[win.out] = fn(win);
  });
  return out;
}

/// The spatial extents of \p x extended to three.
template <class D> std::array<int64_t, 3> spatialExtents(const Tensor<D> &x) {
  return spatial3(llvm::ArrayRef<int64_t>(x.shape).drop_front(2), 1);
}

} // namespace kernels_detail

template <class D>
Tensor<D> maxPool(const Tensor<D> &x, const PoolParams &params) {
  using T = typename D::T;
  auto ext = spatialExtents(x);
  return pool<D>(x, params, [&](const PoolWindow &win) {
    T m = D::lowest();
    win.forEachTap(ext, [&](int64_t at) { m = D::max(m, x.data[at]); });
    return m;
  });
}

template <class D>
Tensor<D> maxPoolGrad(const Tensor<D> &x, const Tensor<D> &gradOutput,
                      const PoolParams &params) {
  assert(gradOutput.shape == pooledShape(x.shape, params) &&
         "grad_output must have the pooled shape");
  Tensor<D> out(x.shape);
  auto ext = spatialExtents(x);
  forEachPoolWindow(x.shape, params, [&](const PoolWindow &win) {
    if (win.size() == 0)
      return;
    // The first maximum in row-major order: only a strictly greater value
    // moves the argmax.
    int64_t best = -1;
    win.forEachTap(ext, [&](int64_t at) {
      if (best < 0 || D::less(x.data[best], x.data[at]))
        best = at;
    });
    out.data[best] = D::add(out.data[best], gradOutput.data[win.out]);
  });
  return out;
}

template <class D>
Tensor<D> avgPool(const Tensor<D> &x, const PoolParams &params) {
  using T = typename D::T;
  int64_t window = 1;
  for (int64_t k : params.kernel)
    window *= k;
  bool includePad = params.countIncludePad;
  auto ext = spatialExtents(x);
  return pool<D>(x, params, [&](const PoolWindow &win) {
    T s = D::zero();
    win.forEachTap(ext, [&](int64_t at) { s = D::add(s, x.data[at]); });
    return D::div(s, D::fromInt(includePad ? window : win.size()));
  });
}

template <class D> Tensor<D> globalAvgPool(const Tensor<D> &x) {
  assert(x.rank() >= 3 && x.rank() <= 5 &&
         "globalAvgPool needs 1 to 3 spatial dims");
  std::vector<int64_t> axes;
  for (int64_t a = 2; a < int64_t(x.rank()); ++a)
    axes.push_back(a);
  return reduce<D>(ReduceKind::Mean, x, axes, /*keepDims=*/true);
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

namespace kernels_detail {

/// Whether D provides nonZeroIndicator (symbolic domains, whose scalars
/// cannot be tested for zero at kernel run time).
template <class D, class = void>
struct HasNonZeroIndicator : std::false_type {};
template <class D>
struct HasNonZeroIndicator<D, std::void_t<decltype(D::nonZeroIndicator(
                                  std::declval<typename D::T>()))>>
    : std::true_type {};

/// x != 0 ? 1 : 0 in domain D.
template <class D> typename D::T nonZeroIndicator(const typename D::T &v) {
  if constexpr (HasNonZeroIndicator<D>::value)
    return D::nonZeroIndicator(v);
  else
    return v != D::zero() ? D::one() : D::zero();
}

} // namespace kernels_detail

template <class D> Tensor<D> cast(const Tensor<D> &x, ElemKind to) {
  using T = typename D::T;
  Tensor<D> out = x;
  if (to == ElemKind::I1) {
    for (T &v : out.data)
      v = nonZeroIndicator<D>(v);
    return out;
  }
  if constexpr (D::isExact) {
    return out; // Exact domains have no precision to lose.
  } else {
    for (T &v : out.data)
      v = D::fromDouble(roundToElemKind(D::toDouble(v), to));
    return out;
  }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

template <class D>
Tensor<D> transpose(const Tensor<D> &x, llvm::ArrayRef<int64_t> perm) {
  assert(static_cast<int64_t>(perm.size()) == x.rank() && "bad permutation");
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  std::vector<int64_t> outShape(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    outShape[i] = x.shape[perm[i]];
    strides[i] = inStrides[perm[i]];
  }
  return gatherStrided<D>(x, std::move(outShape), strides, 0);
}

template <class D>
Tensor<D> reshape(const Tensor<D> &x, llvm::ArrayRef<int64_t> shape) {
  assert(numElementsOf(shape) == x.numElements() && "reshape changes size");
  return Tensor<D>(std::vector<int64_t>(shape.begin(), shape.end()), x.data);
}

template <class D>
Tensor<D> concat(llvm::ArrayRef<const Tensor<D> *> inputs,
                         int64_t axis) {
  assert(!inputs.empty() && "concat of nothing");
  std::vector<int64_t> shape = inputs.front()->shape;
  axis = normAxis(axis, static_cast<int64_t>(shape.size()));
  int64_t total = 0;
  for (const Tensor<D> *t : inputs) {
    assert(t->rank() == static_cast<int64_t>(shape.size()) &&
           "concat rank mismatch");
    total += t->shape[axis];
  }
  shape[axis] = total;
  Tensor<D> out(shape);
  int64_t outer = product(llvm::ArrayRef(shape).take_front(axis));
  int64_t inner = product(llvm::ArrayRef(shape).drop_front(axis + 1));
  int64_t rowOut = total * inner;
  int64_t at = 0;
  for (const Tensor<D> *t : inputs) {
    int64_t row = t->shape[axis] * inner;
    for (int64_t i = 0; i < outer; ++i)
      std::copy(t->data.begin() + i * row, t->data.begin() + (i + 1) * row,
                out.data.begin() + i * rowOut + at);
    at += row;
  }
  return out;
}

template <class D>
std::vector<Tensor<D>> split(const Tensor<D> &x, int64_t axis,
                                     llvm::ArrayRef<int64_t> sizes) {
  axis = normAxis(axis, x.rank());
  assert(std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) ==
             x.shape[axis] &&
         "split sizes do not cover the dimension");
  int64_t outer = product(llvm::ArrayRef(x.shape).take_front(axis));
  int64_t inner = product(llvm::ArrayRef(x.shape).drop_front(axis + 1));
  int64_t rowIn = x.shape[axis] * inner;
  std::vector<Tensor<D>> result;
  int64_t at = 0;
  for (int64_t size : sizes) {
    std::vector<int64_t> shape = x.shape;
    shape[axis] = size;
    Tensor<D> piece(shape);
    int64_t row = size * inner;
    for (int64_t i = 0; i < outer; ++i)
      std::copy(x.data.begin() + i * rowIn + at,
                x.data.begin() + i * rowIn + at + row,
                piece.data.begin() + i * row);
    at += row;
    result.push_back(std::move(piece));
  }
  return result;
}

template <class D>
Tensor<D> slice(const Tensor<D> &x, llvm::ArrayRef<int64_t> starts,
                        llvm::ArrayRef<int64_t> limits,
                        llvm::ArrayRef<int64_t> strides) {
  int64_t rank = x.rank();
  assert(static_cast<int64_t>(starts.size()) == rank &&
         static_cast<int64_t>(limits.size()) == rank &&
         static_cast<int64_t>(strides.size()) == rank && "slice rank mismatch");
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  std::vector<int64_t> outShape(rank), readStrides(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    assert(strides[d] >= 1 && starts[d] >= 0 && limits[d] <= x.shape[d] &&
           "bad slice bounds");
    outShape[d] = std::max<int64_t>(
        0, (limits[d] - starts[d] + strides[d] - 1) / strides[d]);
    readStrides[d] = inStrides[d] * strides[d];
    base += starts[d] * inStrides[d];
  }
  if (numElementsOf(outShape) == 0)
    return Tensor<D>(std::move(outShape));
  return gatherStrided<D>(x, std::move(outShape), readStrides, base);
}

template <class D>
Tensor<D> pad(const Tensor<D> &x, llvm::ArrayRef<int64_t> low,
                      llvm::ArrayRef<int64_t> high, double value) {
  using T = typename D::T;
  int64_t rank = x.rank();
  assert(static_cast<int64_t>(low.size()) == rank &&
         static_cast<int64_t>(high.size()) == rank && "pad rank mismatch");
  std::vector<int64_t> outShape(rank);
  for (int64_t d = 0; d < rank; ++d) {
    assert(low[d] >= 0 && high[d] >= 0 && "negative padding");
    outShape[d] = low[d] + x.shape[d] + high[d];
  }
  Tensor<D> out(outShape);
  std::fill(out.data.begin(), out.data.end(), D::fromDouble(value));
  std::vector<int64_t> outStrides = stridesOf(outShape);
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d)
    base += low[d] * outStrides[d];
  LoopNest<2> nest(x.shape, {inStrides, outStrides});
  const T *in = x.data.data();
  T *o = out.data.data() + base;
  if (x.numElements() == 0)
    return out;
  nest.forEachRun([&](const std::array<int64_t, 2> &off, int64_t n,
                      const std::array<int64_t, 2> &s) {
    for (int64_t i = 0; i < n; ++i)
      o[off[1] + i * s[1]] = in[off[0] + i * s[0]];
  });
  return out;
}

template <class D>
Tensor<D> enlarge(const Tensor<D> &w, int64_t kh, int64_t kw) {
  assert(w.rank() == 4 && "enlarge needs a rank-4 kernel");
  int64_t dh = kh - w.shape[2], dw = kw - w.shape[3];
  assert(dh >= 0 && dw >= 0 && dh % 2 == 0 && dw % 2 == 0 &&
         "enlarge needs an even, non-negative size increase");
  return pad<D>(w, {0, 0, dh / 2, dw / 2}, {0, 0, dh / 2, dw / 2}, 0.0);
}

template <class D>
Tensor<D> broadcastTo(const Tensor<D> &x,
                              llvm::ArrayRef<int64_t> shape) {
  auto strides = broadcastStrides(x.shape, shape);
  return gatherStrided<D>(x, std::vector<int64_t>(shape.begin(), shape.end()),
                          strides, 0);
}

namespace kernels_detail {

/// The values of \p indices (D::toDouble) as positions in [0, dim): each an
/// integer in [-dim, dim), negative ones counting from the end; otherwise an
/// error of \p op naming the index and the bound.
template <class D>
llvm::Expected<std::vector<int64_t>>
checkedIndices(const Tensor<D> &indices, int64_t dim, int64_t axis,
               const char *op) {
  std::vector<int64_t> idx;
  idx.reserve(indices.data.size());
  for (const auto &v : indices.data) {
    double d = D::toDouble(v);
    if (!(std::trunc(d) == d))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "%s index %g is not an integer", op, d);
    if (d < -static_cast<double>(dim) || d >= static_cast<double>(dim))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "%s index %.0f is out of range [-%lld, %lld) of axis %lld", op, d,
          static_cast<long long>(dim), static_cast<long long>(dim),
          static_cast<long long>(axis));
    int64_t i = static_cast<int64_t>(d);
    idx.push_back(i < 0 ? i + dim : i);
  }
  return idx;
}

} // namespace kernels_detail

template <class D>
llvm::Expected<Tensor<D>>
gather(const Tensor<D> &data, const Tensor<D> &indices, int64_t axis) {
  int64_t rank = data.rank();
  if (axis < -rank || axis >= rank)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "gather axis %lld out of range for rank %lld",
        static_cast<long long>(axis), static_cast<long long>(rank));
  axis = normAxis(axis, rank);
  int64_t dim = data.shape[axis];
  auto checked = checkedIndices<D>(indices, dim, axis, "gather");
  if (!checked)
    return checked.takeError();
  std::vector<int64_t> &idx = *checked;
  std::vector<int64_t> outShape(data.shape.begin(), data.shape.begin() + axis);
  outShape.insert(outShape.end(), indices.shape.begin(), indices.shape.end());
  outShape.insert(outShape.end(), data.shape.begin() + axis + 1,
                  data.shape.end());
  Tensor<D> out(outShape);
  int64_t outer = product(llvm::ArrayRef(data.shape).take_front(axis));
  int64_t inner = product(llvm::ArrayRef(data.shape).drop_front(axis + 1));
  int64_t count = static_cast<int64_t>(idx.size());
  auto dst = out.data.begin();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j) {
      auto src = data.data.begin() + (o * dim + idx[j]) * inner;
      dst = std::copy(src, src + inner, dst);
    }
  return out;
}

template <class D>
Tensor<D> updateSlice(const Tensor<D> &base, const Tensor<D> &update,
                      const Tensor<D> &offsets, int64_t axis) {
  llvm::ArrayRef<int64_t> shape(base.shape);
  int64_t outer = product(shape.take_front(axis));
  int64_t inner = product(shape.drop_front(axis + 1));
  int64_t dim = shape[axis], rows = update.shape[axis];
  // Outer rows per offset: all of them for one offset, else those of one
  // index of dimension 0.
  int64_t perOffset = offsets.numElements() == 1 ? outer
                                                 : outer / offsets.numElements();
  Tensor<D> out = base;
  for (int64_t o = 0; o < outer; ++o) {
    double raw = std::floor(D::toDouble(offsets.data[o / perOffset]));
    int64_t at = static_cast<int64_t>(
        std::clamp(raw, 0.0, static_cast<double>(dim - rows)));
    const auto *src = update.data.data() + o * rows * inner;
    std::copy(src, src + rows * inner,
              out.data.data() + (o * dim + at) * inner);
  }
  return out;
}

template <class D>
llvm::Expected<Tensor<D>> scatterAdd(const Tensor<D> &updates,
                                     const Tensor<D> &indices, int64_t axis,
                                     int64_t dimSize) {
  auto checked = checkedIndices<D>(indices, dimSize, axis, "scatter_add");
  if (!checked)
    return checked.takeError();
  const std::vector<int64_t> &idx = *checked;
  llvm::ArrayRef<int64_t> shape(updates.shape);
  int64_t ri = indices.rank();
  std::vector<int64_t> outShape(shape.begin(), shape.begin() + axis);
  outShape.push_back(dimSize);
  outShape.insert(outShape.end(), shape.begin() + axis + ri, shape.end());
  Tensor<D> out(outShape);
  int64_t outer = product(shape.take_front(axis));
  int64_t inner = product(shape.drop_front(axis + ri));
  int64_t count = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j) {
      const auto *src = updates.data.data() + (o * count + j) * inner;
      auto *dst = out.data.data() + (o * dimSize + idx[j]) * inner;
      for (int64_t k = 0; k < inner; ++k)
        dst[k] = D::add(dst[k], src[k]);
    }
  return out;
}

} // namespace interp
} // namespace loom

#include "loom/Interpreter/ResizeKernel.h"

namespace loom {
namespace interp {

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//

template <class D>
Tensor<D> reduce(ReduceKind kind, const Tensor<D> &x,
                         llvm::ArrayRef<int64_t> axes, bool keepDims) {
  using T = typename D::T;
  int64_t rank = x.rank();
  std::vector<bool> reduced(rank, false);
  int64_t count = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    assert(axes[i] >= 0 && axes[i] < rank && "reduce axis out of range");
    assert((i == 0 || axes[i - 1] < axes[i]) && "reduce axes not sorted");
    reduced[axes[i]] = true;
    count *= x.shape[axes[i]];
  }
  // The result in keep-dims form; accumulate every input element into it.
  std::vector<int64_t> keptShape = x.shape;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      keptShape[d] = 1;
  Tensor<D> out(keptShape);
  std::fill(out.data.begin(), out.data.end(),
            kind == ReduceKind::Max ? D::lowest() : D::zero());
  std::vector<int64_t> outStrides = stridesOf(keptShape);
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      outStrides[d] = 0;
  std::vector<int64_t> inStrides = stridesOf(x.shape);
  LoopNest<2> nest(x.shape, {inStrides, outStrides});
  const T *in = x.data.data();
  T *o = out.data.data();
  auto accumulate = [&](auto op) {
    if (x.numElements() == 0)
      return;
    nest.forEachRun([&](const std::array<int64_t, 2> &off, int64_t n,
                        const std::array<int64_t, 2> &s) {
      const T *src = in + off[0];
      T *dst = o + off[1];
      assert(s[0] == 1 && "input runs are contiguous");
      if (s[1] == 0) {
        T acc = *dst;
        for (int64_t i = 0; i < n; ++i)
          acc = op(acc, src[i]);
        *dst = acc;
      } else {
        for (int64_t i = 0; i < n; ++i)
          dst[i * s[1]] = op(dst[i * s[1]], src[i]);
      }
    });
  };
  if (kind == ReduceKind::Max) {
    accumulate([](T a, T b) { return D::max(a, b); });
  } else {
    accumulate([](T a, T b) { return D::add(a, b); });
    if (kind == ReduceKind::Mean) {
      T n = D::fromInt(count);
      for (T &v : out.data)
        v = D::div(v, n);
    }
  }
  if (!keepDims) {
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        shape.push_back(x.shape[d]);
    out.shape = std::move(shape);
  }
  return out;
}

template <class D> Tensor<D> softmax(const Tensor<D> &x, int64_t axis) {
  using T = typename D::T;
  axis = normAxis(axis, x.rank());
  int64_t outer = product(llvm::ArrayRef(x.shape).take_front(axis));
  int64_t n = x.shape[axis];
  int64_t inner = product(llvm::ArrayRef(x.shape).drop_front(axis + 1));
  Tensor<D> out(x.shape);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T *src = x.data.data() + o * n * inner + i;
      T *dst = out.data.data() + o * n * inner + i;
      T m = D::lowest();
      for (int64_t j = 0; j < n; ++j)
        m = D::max(m, src[j * inner]);
      T sum = D::zero();
      for (int64_t j = 0; j < n; ++j) {
        T e = D::exp(D::sub(src[j * inner], m));
        dst[j * inner] = e;
        sum = D::add(sum, e);
      }
      for (int64_t j = 0; j < n; ++j)
        dst[j * inner] = D::div(dst[j * inner], sum);
    }
  }
  return out;
}

template <class D>
llvm::Expected<Tensor<D>> softmaxCrossEntropy(const Tensor<D> &logits,
                                              const Tensor<D> &labels) {
  using T = typename D::T;
  assert(logits.rank() == 2 && labels.numElements() == logits.shape[0] &&
         "softmaxCrossEntropy takes [N, C] logits and [N] labels");
  int64_t n = logits.shape[0], c = logits.shape[1];
  T total = D::zero();
  for (int64_t r = 0; r < n; ++r) {
    double label = D::toDouble(labels.data[r]);
    if (!(std::trunc(label) == label) || label < 0 ||
        label >= static_cast<double>(c))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "softmax_cross_entropy label %g of row %lld is not a class in "
          "[0, %lld)",
          label, static_cast<long long>(r), static_cast<long long>(c));
    const T *row = logits.data.data() + r * c;
    T m = D::lowest();
    for (int64_t j = 0; j < c; ++j)
      m = D::max(m, row[j]);
    T sum = D::zero();
    for (int64_t j = 0; j < c; ++j)
      sum = D::add(sum, D::exp(D::sub(row[j], m)));
    // logsumexp(row) - row[label] = log(sum) - (row[label] - m).
    T picked = row[static_cast<int64_t>(label)];
    total = D::add(total, D::sub(D::log(sum), D::sub(picked, m)));
  }
  Tensor<D> out(std::vector<int64_t>{});
  out.data[0] = D::div(total, D::fromInt(n));
  return out;
}

template <class D> Tensor<D> mseLoss(const Tensor<D> &a, const Tensor<D> &b) {
  using T = typename D::T;
  assert(a.shape == b.shape && "mseLoss takes operands of one shape");
  T sum = D::zero();
  for (size_t i = 0; i < a.data.size(); ++i) {
    T d = D::sub(a.data[i], b.data[i]);
    sum = D::add(sum, D::mul(d, d));
  }
  Tensor<D> out(std::vector<int64_t>{});
  out.data[0] = D::div(sum, D::fromInt(static_cast<int64_t>(a.data.size())));
  return out;
}

template <class D>
Tensor<D> layerNorm(const Tensor<D> &x, const Tensor<D> &scale,
                            const Tensor<D> &bias, int64_t axis,
                            double epsilon) {
  using T = typename D::T;
  axis = normAxis(axis, x.rank());
  int64_t outer = product(llvm::ArrayRef(x.shape).take_front(axis));
  int64_t n = product(llvm::ArrayRef(x.shape).drop_front(axis));
  assert(scale.numElements() == n && bias.numElements() == n &&
         "layerNorm scale/bias must have shape x.shape[axis:]");
  Tensor<D> out(x.shape);
  T count = D::fromInt(n), eps = D::fromDouble(epsilon);
  for (int64_t o = 0; o < outer; ++o) {
    const T *src = x.data.data() + o * n;
    T *dst = out.data.data() + o * n;
    T sum = D::zero();
    for (int64_t i = 0; i < n; ++i)
      sum = D::add(sum, src[i]);
    T mean = D::div(sum, count);
    T sq = D::zero();
    for (int64_t i = 0; i < n; ++i) {
      T dev = D::sub(src[i], mean);
      sq = D::add(sq, D::mul(dev, dev));
    }
    T var = D::div(sq, count);
    T invStd = D::div(D::one(), D::sqrt(D::add(var, eps)));
    for (int64_t i = 0; i < n; ++i)
      dst[i] =
          D::add(D::mul(D::mul(D::sub(src[i], mean), invStd), scale.data[i]),
                 bias.data[i]);
  }
  return out;
}

template <class D>
Tensor<D> batchNorm(const Tensor<D> &x, const Tensor<D> &scale,
                            const Tensor<D> &bias, const Tensor<D> &mean,
                            const Tensor<D> &var, double epsilon) {
  using T = typename D::T;
  assert(x.rank() >= 2 && "batchNorm needs a channel dimension");
  int64_t n = x.shape[0], c = x.shape[1];
  int64_t spatial = product(llvm::ArrayRef(x.shape).drop_front(2));
  assert(scale.numElements() == c && bias.numElements() == c &&
         mean.numElements() == c && var.numElements() == c &&
         "batchNorm parameters must be [C]");
  Tensor<D> out(x.shape);
  T eps = D::fromDouble(epsilon);
  for (int64_t ch = 0; ch < c; ++ch) {
    T m = mean.data[ch], s = scale.data[ch], b = bias.data[ch];
    T stddev = D::sqrt(D::add(var.data[ch], eps));
    for (int64_t img = 0; img < n; ++img) {
      const T *src = x.data.data() + (img * c + ch) * spatial;
      T *dst = out.data.data() + (img * c + ch) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        dst[i] = D::add(D::mul(D::div(D::sub(src[i], m), stddev), s), b);
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Explicit instantiations
//===----------------------------------------------------------------------===//

} // namespace interp
} // namespace loom

/// Explicitly instantiates every kernel for domain D; use at global scope.
#define LOOM_INSTANTIATE_KERNELS(D)                                            \
  namespace loom {                                                             \
  namespace interp {                                                           \
  template D::T unaryScalar<D>(UnaryKind, D::T, UnaryParams);          \
  template D::T binaryScalar<D>(BinaryKind, D::T, D::T);               \
  template Tensor<D> unary<D>(UnaryKind, const Tensor<D> &,            \
                                      UnaryParams);                            \
  template Tensor<D> binary<D>(BinaryKind, const Tensor<D> &,          \
                                       const Tensor<D> &);                     \
  template Tensor<D> matmul<D>(const Tensor<D> &, const Tensor<D> &);  \
  template Tensor<D> conv<D>(const Tensor<D> &, const Tensor<D> &,   \
                                       const Tensor<D> *,                      \
                                       const ConvParams &);                  \
  template Tensor<D> maxPool<D>(const Tensor<D> &,                   \
                                          const PoolParams &);               \
  template Tensor<D> avgPool<D>(const Tensor<D> &,                   \
                                          const PoolParams &);               \
  template Tensor<D> globalAvgPool<D>(const Tensor<D> &);              \
  template Tensor<D> cast<D>(const Tensor<D> &, ElemKind);             \
  template Tensor<D> transpose<D>(const Tensor<D> &,                   \
                                          llvm::ArrayRef<int64_t>);            \
  template Tensor<D> reshape<D>(const Tensor<D> &,                     \
                                        llvm::ArrayRef<int64_t>);              \
  template Tensor<D> concat<D>(llvm::ArrayRef<const Tensor<D> *>,      \
                                       int64_t);                               \
  template std::vector<Tensor<D>> split<D>(const Tensor<D> &, int64_t, \
                                                   llvm::ArrayRef<int64_t>);   \
  template Tensor<D> slice<D>(                                         \
      const Tensor<D> &, llvm::ArrayRef<int64_t>, llvm::ArrayRef<int64_t>,     \
      llvm::ArrayRef<int64_t>);                                                \
  template Tensor<D> pad<D>(const Tensor<D> &,                         \
                                    llvm::ArrayRef<int64_t>,                   \
                                    llvm::ArrayRef<int64_t>, double);          \
  template Tensor<D> enlarge<D>(const Tensor<D> &, int64_t, int64_t);  \
  template Tensor<D> broadcastTo<D>(const Tensor<D> &,                 \
                                            llvm::ArrayRef<int64_t>);          \
  template llvm::Expected<Tensor<D>> gather<D>(                        \
      const Tensor<D> &, const Tensor<D> &, int64_t);                          \
  template llvm::Expected<Tensor<D>> scatterAdd<D>(                    \
      const Tensor<D> &, const Tensor<D> &, int64_t, int64_t);                 \
  template Tensor<D> updateSlice<D>(const Tensor<D> &, const Tensor<D> &,    \
                                    const Tensor<D> &, int64_t);              \
  template Tensor<D> resize<D>(const Tensor<D> &, const ResizeParams &);      \
  template Tensor<D> reduce<D>(ReduceKind, const Tensor<D> &,          \
                                       llvm::ArrayRef<int64_t>, bool);         \
  template Tensor<D> softmax<D>(const Tensor<D> &, int64_t);           \
  template llvm::Expected<Tensor<D>> softmaxCrossEntropy<D>(                   \
      const Tensor<D> &, const Tensor<D> &);                                   \
  template Tensor<D> mseLoss<D>(const Tensor<D> &, const Tensor<D> &);         \
  template Tensor<D> layerNorm<D>(const Tensor<D> &,                   \
                                          const Tensor<D> &,                   \
                                          const Tensor<D> &, int64_t, double); \
  template Tensor<D> batchNorm<D>(                                     \
      const Tensor<D> &, const Tensor<D> &, const Tensor<D> &,                 \
      const Tensor<D> &, const Tensor<D> &, double); \
  }                                                                            \
  }

/// Explicitly instantiates the kernels that branch on scalar values when
/// they run (comparisons, select, the argmax of maxPoolGrad) for domain D,
/// whose scalars compare with == and whose order is D::less (the
/// interpreter's domains; not the symbolic Z3 domain). Use at global scope.
#define LOOM_INSTANTIATE_ORDERED_KERNELS(D)                                    \
  namespace loom {                                                             \
  namespace interp {                                                           \
  template Tensor<D> compare<D>(CompareKind, const Tensor<D> &,                \
                                const Tensor<D> &);                            \
  template Tensor<D> select<D>(const Tensor<D> &, const Tensor<D> &,           \
                               const Tensor<D> &);                             \
  template Tensor<D> maxPoolGrad<D>(const Tensor<D> &, const Tensor<D> &,    \
                                      const PoolParams &);                   \
  }                                                                            \
  }

#endif // LOOM_INTERPRETER_KERNELSIMPL_H
