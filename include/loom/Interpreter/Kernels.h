//===- Kernels.h - Semantics of the tg operators ----------------*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// The numeric core of the reference interpreter: one function per family of
// `tg` operators, each written once in Kernels.cpp as a template over the
// number domain D (Domain.h) and explicitly instantiated for F32Domain,
// F64Domain and ModPDomain. Attributes follow ONNX conventions.
//
// Kernels assume that operand shapes and attributes were verified by the
// dialect; violations are caught by assertions in debug builds only. The one
// exception is gather(), whose indices are data and are checked at run time.
//
// Large matrix products (matmul, conv) run on several threads; see
// setNumThreads().
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_KERNELS_H
#define LOOM_INTERPRETER_KERNELS_H

#include "loom/Dialect/TG/IR/TGEnums.h"
#include "loom/Interpreter/ScalarFunctions.h"
#include "loom/Interpreter/Tensor.h"
#include "loom/Support/Activation.h"
#include "loom/Support/ElementTypes.h"
#include "loom/Support/Shapes.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLForwardCompat.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <vector>

namespace loom {
namespace interp {

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

/// Reductions. Mean = Sum / count.
enum class ReduceKind { Sum, Mean, Max };


/// Element types a cast can target (loom/Support/ElementTypes.def).
using loom::ElemKind;

/// Attributes of conv (ONNX Conv on channels-first input with k = 1, 2 or 3
/// spatial dimensions). The defaults are the 2-D ones, as tg.conv's.
struct ConvParams {
  /// One entry per spatial dimension.
  std::vector<int64_t> strides{1, 1};
  /// The begin pads of every spatial dimension, then the end pads (2-D:
  /// top, left, bottom, right).
  std::vector<int64_t> pads{0, 0, 0, 0};
  std::vector<int64_t> dilations{1, 1};
  int64_t groups = 1;
  /// Applied after the bias, with its parameters (Activations.def): any of
  /// Loom's activations (tg.conv's attribute names a subset).
  Activation activation = Activation::None;
  double alpha = 0, beta = 0;
};

/// Attributes of 1-D, 2-D or 3-D pooling (ONNX MaxPool/AveragePool, floor
/// mode), sized as ConvParams' (2-D defaults).
struct PoolParams {
  std::vector<int64_t> kernel{1, 1};
  std::vector<int64_t> strides{1, 1};
  /// Begin pads, then end pads.
  std::vector<int64_t> pads{0, 0, 0, 0};
  bool countIncludePad = false;
};

/// The options of resize(): the tg enums (ONNX Resize's `mode`,
/// `coordinate_transformation_mode` and `nearest_mode`).
using tg::ResizeCoordinateMode;
using tg::ResizeMode;
using tg::ResizeNearestMode;

/// Attributes of resize(): the output shape, one scale per dimension (used by
/// the coordinate map; empty means sizes[d] / input.shape[d]) and ONNX's
/// interpolation options.
struct ResizeParams {
  std::vector<int64_t> sizes;
  std::vector<double> scales;
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoordinateMode coordinateMode = ResizeCoordinateMode::HalfPixel;
  ResizeNearestMode nearestMode = ResizeNearestMode::RoundPreferFloor;
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
};

//===----------------------------------------------------------------------===//
// Threading
//===----------------------------------------------------------------------===//

/// Sets the number of threads used by large kernels; 0 (the default) means
/// std::thread::hardware_concurrency(), capped at 8, unless the environment
/// variable LOOM_NUM_THREADS gives a positive number.
void setNumThreads(unsigned n);
/// The number of threads large kernels will use (>= 1).
unsigned getNumThreads();

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Elementwise unary operator \p kind (see UnaryKind for the definitions).
template <class D>
Tensor<D> unary(UnaryKind kind, const Tensor<D> &x, UnaryParams params = {});

/// Elementwise binary operator with numpy broadcasting.
template <class D>
Tensor<D> binary(BinaryKind kind, const Tensor<D> &a, const Tensor<D> &b);

/// Elementwise comparison with numpy broadcasting: D::one() where it holds,
/// D::zero() elsewhere (see applyCompare; IEEE in float domains, NaN
/// compares false). Only for domains whose scalars can be compared when the
/// kernel runs (LOOM_INSTANTIATE_ORDERED_KERNELS).
template <class D>
Tensor<D> compare(CompareKind kind, const Tensor<D> &a, const Tensor<D> &b);

/// ONNX Where: cond != 0 ? a : b, the three broadcast together (numpy).
/// Only for domains whose scalars can be tested for zero when the kernel
/// runs (LOOM_INSTANTIATE_ORDERED_KERNELS).
template <class D>
Tensor<D> select(const Tensor<D> &cond, const Tensor<D> &a,
                 const Tensor<D> &b);

/// Matrix product of [..., M, K] and [..., K, N] (both rank >= 2); the batch
/// dimensions broadcast.
template <class D> Tensor<D> matmul(const Tensor<D> &a, const Tensor<D> &b);

/// 1-D, 2-D or 3-D convolution (ONNX Conv): \p x is [N, C, S...] (1 to 3
/// spatial dimensions), \p w is [O, C/groups, K...], \p bias is [O] or
/// null. Output [N, O, OS...] with OS = (S + padBegin + padEnd - dil * (K -
/// 1) - 1) / stride + 1 per spatial dimension. The bias is added, then the
/// activation applied.
/// (\p bias does not take part in deducing D, so it may be nullptr.)
template <class D>
Tensor<D> conv(const Tensor<D> &x, const Tensor<D> &w,
                 const llvm::type_identity_t<Tensor<D>> *bias,
                 const ConvParams &params);

/// Max pooling over channels-first input with 1 to 3 spatial dimensions;
/// padded positions never win (a window lying
/// entirely in padding yields D::lowest()).
template <class D>
Tensor<D> maxPool(const Tensor<D> &x, const PoolParams &params);

/// The vector-Jacobian product of maxPool with respect to \p x: zero, then
/// each window's \p gradOutput element (gradOutput has maxPool's result
/// shape) added at the window's first in-bounds position, in row-major
/// order, holding its maximum in the order D::less. Only for domains whose
/// scalars can be compared when the kernel runs
/// (LOOM_INSTANTIATE_ORDERED_KERNELS).
template <class D>
Tensor<D> maxPoolGrad(const Tensor<D> &x, const Tensor<D> &gradOutput,
                        const PoolParams &params);

/// Average pooling over channels-first input with 1 to 3 spatial
/// dimensions: the sum of the window's in-bounds elements divided by the
/// window's size if countIncludePad, else by the number of
/// in-bounds elements (ONNX count_include_pad).
template <class D>
Tensor<D> avgPool(const Tensor<D> &x, const PoolParams &params);

/// Mean over the spatial dimensions: [N, C, S...] -> [N, C, 1...].
template <class D> Tensor<D> globalAvgPool(const Tensor<D> &x);

/// Conversion to element type \p to, staying in the domain. Float domains:
/// F64/F32/F16/BF16 round to that precision (round to nearest even, with
/// subnormals, overflow to infinity); I64/I32 truncate toward zero (no
/// wrapping or saturation; NaN and infinities stay); I1 gives x != 0 ? 1 : 0.
/// ModPDomain: identity, except I1 (x != 0 ? 1 : 0).
template <class D> Tensor<D> cast(const Tensor<D> &x, ElemKind to);

/// Permutes dimensions: result dimension i is input dimension perm[i].
template <class D>
Tensor<D> transpose(const Tensor<D> &x, llvm::ArrayRef<int64_t> perm);

/// The same elements (row-major) under a new shape of equal size.
template <class D>
Tensor<D> reshape(const Tensor<D> &x, llvm::ArrayRef<int64_t> shape);

/// Concatenation along \p axis (all other dimensions equal).
template <class D>
Tensor<D> concat(llvm::ArrayRef<const Tensor<D> *> inputs, int64_t axis);

/// Splits \p x along \p axis into pieces of the given sizes (summing to the
/// dimension).
template <class D>
std::vector<Tensor<D>> split(const Tensor<D> &x, int64_t axis,
                             llvm::ArrayRef<int64_t> sizes);

/// Strided slice: along dimension i, indices start[i], start[i] + stride[i],
/// ... below limits[i] (half-open; strides >= 1).
template <class D>
Tensor<D> slice(const Tensor<D> &x, llvm::ArrayRef<int64_t> starts,
                llvm::ArrayRef<int64_t> limits,
                llvm::ArrayRef<int64_t> strides);

/// Constant padding with \p low / \p high elements (non-negative) of value
/// D::fromDouble(\p value) before / after each dimension.
template <class D>
Tensor<D> pad(const Tensor<D> &x, llvm::ArrayRef<int64_t> low,
              llvm::ArrayRef<int64_t> high, double value);

/// TASO enlarge: the rank-4 kernel [O, I, h, w] zero-padded, centered, to
/// [O, I, kh, kw] (kh - h and kw - w even and >= 0).
template <class D>
Tensor<D> enlarge(const Tensor<D> &w, int64_t kh, int64_t kw);

/// numpy broadcast of \p x to \p shape.
template <class D>
Tensor<D> broadcastTo(const Tensor<D> &x, llvm::ArrayRef<int64_t> shape);

/// ONNX Gather: output shape data.shape[:axis] + indices.shape +
/// data.shape[axis+1:]. Index values are D::toDouble of the elements (the
/// centered representative in ModPDomain); negative indices count from the
/// end. A non-integral or out-of-range index is an error naming the index and
/// the bound. A negative \p axis counts from the end.
template <class D>
llvm::Expected<Tensor<D>> gather(const Tensor<D> &data,
                                 const Tensor<D> &indices, int64_t axis);

/// The adjoint of gather: output shape updates.shape[:axis] + [dimSize] +
/// updates.shape[axis + indices.rank:], zero-initialised, and for every
/// multi-index j of \p indices output[..., indices[j], ...] +=
/// updates[..., j, ...]. Indices are read and checked as in gather (named
/// "scatter_add" in the error); \p axis is in [0, rank(updates) -
/// rank(indices)].
template <class D>
llvm::Expected<Tensor<D>> scatterAdd(const Tensor<D> &updates,
                                     const Tensor<D> &indices, int64_t axis,
                                     int64_t dimSize);

/// tg.update_slice: \p base with \p update written along \p axis (in
/// [0, rank)) at the offset \p offsets gives (rank 0: one for all; else one
/// per index of dimension 0), each clamped to [0, N - U] (N, U: the sizes of
/// base and update on the axis). Offsets are read as D::toDouble rounded
/// down.
template <class D>
Tensor<D> updateSlice(const Tensor<D> &base, const Tensor<D> &update,
                      const Tensor<D> &offsets, int64_t axis);

/// ONNX Resize (as its reference implementation): every dimension d is
/// resampled from x.shape[d] to params.sizes[d] elements. Output index i maps
/// to the input coordinate c given by params.coordinateMode (with the scale
/// s = params.scales[d] and L = s * x.shape[d]: half_pixel (i + 0.5) / s -
/// 0.5, pytorch_half_pixel the same if L > 1 else -0.5, align_corners
/// L == 1 ? 0 : i * (x.shape[d] - 1) / (L - 1), asymmetric i / s,
/// tf_half_pixel_for_nn (i + 0.5) / s). Let b = ceil(c) - 1 and r = c - b in
/// (0, 1]. nearest and linear read taps b and b + 1 with weights (1, 0) or
/// (0, 1) by the rounding of r (nearest) or (1 - r, r) (linear); cubic reads
/// b - 1 .. b + 2 with the cubic convolution weights of coefficient
/// cubicCoeffA. Tap indices are clamped to [0, x.shape[d]); with
/// excludeOutside the weights of taps outside are zeroed and the rest
/// renormalised. Dimensions are resampled one after another (the weights
/// are separable); taps of weight 0 are skipped.
template <class D>
Tensor<D> resize(const Tensor<D> &x, const ResizeParams &params);

/// Reduction over \p axes (sorted, distinct, non-negative; an empty list
/// reduces nothing). With \p keepDims the reduced dimensions stay as 1.
template <class D>
Tensor<D> reduce(ReduceKind kind, const Tensor<D> &x,
                 llvm::ArrayRef<int64_t> axes, bool keepDims);

/// Softmax along \p axis (negative counts from the end):
/// e = exp(x - max(x)); e / sum(e).
template <class D> Tensor<D> softmax(const Tensor<D> &x, int64_t axis);

/// The mean over the N rows of [N, C] \p logits of logsumexp(row) -
/// row[labels[n]] (the row maximum subtracted before exp), as a rank-0
/// tensor; an error when a label (D::toDouble) is not an integer in
/// [0, C).
template <class D>
llvm::Expected<Tensor<D>> softmaxCrossEntropy(const Tensor<D> &logits,
                                              const Tensor<D> &labels);

/// mean((a - b)^2) over every element of \p a and \p b (one shape), as a
/// rank-0 tensor.
template <class D> Tensor<D> mseLoss(const Tensor<D> &a, const Tensor<D> &b);

/// ONNX LayerNormalization over dimensions [axis, rank) (negative axis counts
/// from the end): mean = sum/n, var = sum((x - mean)^2)/n,
/// y = (x - mean) * (1 / sqrt(var + epsilon)) * scale + bias, where scale and
/// bias have shape x.shape[axis:].
template <class D>
Tensor<D> layerNorm(const Tensor<D> &x, const Tensor<D> &scale,
                    const Tensor<D> &bias, int64_t axis, double epsilon);

/// ONNX BatchNormalization, inference form, channels on dimension 1:
/// y = (x - mean) / sqrt(var + epsilon) * scale + bias, parameters of shape
/// [C].
template <class D>
Tensor<D> batchNorm(const Tensor<D> &x, const Tensor<D> &scale,
                    const Tensor<D> &bias, const Tensor<D> &mean,
                    const Tensor<D> &var, double epsilon);

//===----------------------------------------------------------------------===//
// Scalar semantics
//===----------------------------------------------------------------------===//

/// The scalar semantics of unary operator \p kind on one value; unary() maps
/// exactly this function over a tensor.
template <class D>
typename D::T unaryScalar(UnaryKind kind, typename D::T x,
                          UnaryParams params = {});

/// The scalar semantics of binary operator \p kind.
template <class D>
typename D::T binaryScalar(BinaryKind kind, typename D::T a, typename D::T b);

} // namespace interp
} // namespace loom

#endif // LOOM_INTERPRETER_KERNELS_H
