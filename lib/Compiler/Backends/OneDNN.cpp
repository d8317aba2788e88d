//===- OneDNN.cpp - The oneDNN backend ------------------------------------===//
//
// Part of Loom. oneDNN primitives called by libloomrt (lib/Runtime/CPU/
// Forms.h): convolutions with their bias, a residual sum and an
// activation as post-ops; matrix products with a row bias and an
// activation. f32 only.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Backend.h"
#include "loom/Compiler/StridedView.h"
#include "loom/Dialect/TG/IR/TGActivation.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <array>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::compiler::patterns;

namespace {

/// This backend's registered name (its fragments in the IR carry it).
constexpr llvm::StringLiteral kOneDNN("onednn");

/// The static shape of \p v.
artifact::Shape shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape().vec();
}

/// The right and bottom padding of the forward convolution whose filter
/// gradient \p conv computes (see filterGradientOf), each at least 0, or
/// nullopt.
std::optional<std::array<int64_t, 2>> filterGradientPads(tg::ConvOp conv) {
  auto in = cast<ShapedType>(conv.getInput().getType()).getShape();
  auto dz = cast<ShapedType>(conv.getFilter().getType()).getShape();
  auto dw = cast<ShapedType>(conv.getType()).getShape();
  std::array<int64_t, 2> pads;
  for (int d = 0; d < 2; ++d) {
    // Forward: stride = this dilation, dilation = this stride.
    int64_t reach = (dw[2 + d] - 1) * conv.getStrides()[d] + 1;
    pads[d] = (dz[2 + d] - 1) * conv.getDilations()[d] + reach - in[2 + d] -
              conv.getPads()[d];
    if (pads[d] < 0)
      return std::nullopt;
  }
  return pads;
}

/// The transpose [1, 0, 2, 3] after \p conv when the two compute a filter
/// gradient as GradBuilder::conv2dFilterGrad builds it: the input [C, G*N,
/// H, W] (batch and channels exchanged) by the result gradient [O, N, OH,
/// OW] as the filter in G groups (a grouped convolution's, or trials fused
/// by --tg-fuse-trials), no bias or activation, the filter spatially larger
/// than the result [C, O, KH, KW]. oneDNN computes the transposed
/// result directly as the backward-weights convolution of the forward one
/// (onednn.conv2d_filter_grad): direct kernels where the convolution form
/// has a 14x14 or 28x28 filter (im2col + sgemm).
tg::TransposeOp filterGradientOf(tg::ConvOp conv, Available available) {
  auto transpose =
      dyn_cast_or_null<tg::TransposeOp>(soleUser(conv.getResult(), available));
  auto filter = cast<ShapedType>(conv.getFilter().getType()).getShape();
  auto out = cast<ShapedType>(conv.getType()).getShape();
  if (!transpose || conv.getBias() ||
      conv.getActivation() != tg::Activation::None ||
      transpose.getPerm() != ArrayRef<int64_t>{1, 0, 2, 3} ||
      filter[2] * filter[3] <= out[2] * out[3] || !filterGradientPads(conv))
    return {};
  return transpose;
}

/// Whether \p conv runs faster as oneDNN's Winograd convolution than as its
/// direct one, reorders to and from Winograd's blocked layout included: a
/// dense 3x3 convolution of stride and dilation 1 with at least 64 input and
/// output channels, at most twice as many outputs as inputs, on an output
/// plane of at least 16x16, or 14x14 at batch 1. Measured per shape on this
/// machine's class with oneDNN 2.6 (loom-bench-winograd, 2 threads, caches
/// cold; docs/benchmarks/cpu.md "Winograd by plane and batch"): on planes of
/// 20x20 and more (ResNet stages 1-2, VGG, Inception-v3's 35x35, GoogLeNet's
/// inception3) Winograd took 0.8-0.95 of the direct time. Below 16x16 it
/// works on few tiles, and oneDNN takes its 4x4-output tiles
/// (jit_wino_4x3) from batch 2 on, which a 10x10, 13x13 or 14x14 plane
/// fills badly: 1.02-1.51x the direct time there (GoogLeNet's inception4
/// at 160x160, batch 2: 1.15-1.51x), and 1.03-1.4x on 7x7 and 8x8 planes
/// at batch 1. At batch 1 and 14x14 (2x2-output tiles, which fit) it still
/// paid (ResNet-50's stage 3: 0.92). Narrower convolutions (16-48
/// channels) and 4x expansions (SqueezeNet's 64->256) were slower.
bool winogradPays(tg::ConvOp conv) {
  auto in = cast<ShapedType>(conv.getInput().getType()).getShape();
  auto filter = cast<ShapedType>(conv.getFilter().getType()).getShape();
  auto out = cast<ShapedType>(conv.getType()).getShape();
  if (filter.size() != 4)
    return false;
  auto isOne = [](int64_t v) { return v == 1; };
  int64_t inputs = in[1], outputs = filter[0];
  int64_t plane = std::min(out[2], out[3]);
  bool planePays = plane >= 16 || (plane >= 14 && out[0] == 1);
  return conv.getGroups() == 1 && filter[2] == 3 && filter[3] == 3 &&
         planePays && llvm::all_of(conv.getStrides(), isOne) &&
         llvm::all_of(conv.getDilations(), isOne) && inputs >= 64 &&
         outputs >= 64 && outputs <= 2 * inputs;
}

LibraryCall growConv(tg::ConvOp conv, Available available) {
  LibraryCall call;
  call.anchor = conv;
  call.ops.push_back(conv);
  call.bias = conv.getBias();
  call.activation = tg::toActivation(conv.getActivation());
  if (tg::TransposeOp transpose = filterGradientOf(conv, available)) {
    call.ops.push_back(transpose);
    return call;
  }
  if (conv.getActivation() != tg::Activation::None)
    return call;
  // conv + residual: the sum post-op, applied before the activation. Only a
  // full tensor: the sum post-op does not broadcast.
  Value out = conv.getResult();
  Operation *add = soleUser(out, available);
  if (Value other = addendOf(add, out);
      other && other.getType() == out.getType()) {
    call.sum = other;
    call.ops.push_back(add);
  }
  growActivation(call, available);
  return call;
}

/// The value of a one-element constant \p v (inside a fragment, the block
/// argument such a constant outside it enters as), if it is one.
std::optional<double> scalarOf(Value v) {
  if (cast<ShapedType>(v.getType()).getNumElements() != 1)
    return std::nullopt;
  return splatOf(v);
}

/// A product without bias followed by a division or multiplication by a
/// constant of one element: oneDNN's output scale (an attention's
/// q k^T / sqrt(d) after --tg-scale-after-matmul). 1 / c for a division
/// (exact for a power of two; rounding otherwise).
void growScale(LibraryCall &call, Available available) {
  Value out = call.ops.back()->getResult(0);
  Operation *user = soleUser(out, available);
  if (call.bias || !user || !isa<tg::DivOp, tg::MulOp>(user) ||
      user->getResult(0).getType() != out.getType())
    return;
  Value other = user->getOperand(0) == out ? user->getOperand(1)
                                           : user->getOperand(0);
  std::optional<double> c = scalarOf(other);
  if (!c || *c == 0 || (isa<tg::DivOp>(user) && user->getOperand(0) != out))
    return;
  call.scale = isa<tg::DivOp>(user) ? 1 / *c : *c;
  call.ops.push_back(user);
}

LibraryCall growMatmul(tg::MatmulOp matmul, Available available) {
  LibraryCall call = matmulWithBias(matmul, available);
  growScale(call, available);
  growActivation(call, available);
  return call;
}

/// A pooling, a channel concatenation or an add between convolutions: alone
/// in its fragment (an add with its activation after it). oneDNN runs them
/// on whatever layout the convolutions around them keep (lib/Runtime/CPU/
/// Plan.cpp plans it), so a run of convolutions through them
/// (SqueezeNet's fire modules, Inception's branches, NASNet's cells) stays
/// in that layout instead of reordering to NCHW at each.
LibraryCall single(Operation *op) {
  LibraryCall call;
  call.anchor = op;
  call.ops.push_back(op);
  return call;
}

bool isFourD(Value v) { return cast<ShapedType>(v.getType()).getRank() == 4; }

/// A concat of 4-D tensors along their channels (axis 1 or -3).
bool isChannelConcat(tg::ConcatOp concat) {
  int64_t axis = concat.getAxis();
  return isFourD(concat.getResult()) && (axis == 1 || axis == -3);
}

/// The operands of an add or multiply that runs as a oneDNN binary step:
/// src0 of the result's type, src1 of the result's type or one value per
/// channel ([N, C, 1, 1]).
struct ChainOperands {
  Value src0, src1;
};

std::optional<ChainOperands> chainBinary(Operation *op, int depth = 0);
Value chainShift(Operation *op, int depth = 0);

/// Whether \p v comes from oneDNN's layout chain (a convolution, pool,
/// channel concatenation, chain add or multiply or oneDNN fragment, or the
/// only activation of one of those, in one op or several), or from where the pattern cannot see
/// (a block or function argument: inside a fragment, or a placement probe).
bool fromLayoutChain(Value v, int depth) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return true;
  if (auto fragment = dyn_cast<tg::FragmentOp>(def))
    return fragment.getBackend() == kOneDNN;
  if (depth >= 8)
    return false;
  // The last op of an activation spelled as several ops (swish, leaky
  // ReLU) of a value from the chain: a convolution's post-op too.
  for (Value x : def->getOperands())
    if (auto chain = compoundActivationOf(x, nullptr);
        chain && chain->ops.back() == def)
      return fromLayoutChain(x, depth + 1);
  if (isa<tg::AddOp, tg::MulOp>(def))
    return chainBinary(def, depth + 1).has_value() ||
           chainShift(def, depth + 1);
  // An activation of one that it is the only user of (a convolution's
  // post-op).
  if (def->getNumOperands() == 1 && activationOf(def) &&
      def->getOperand(0).hasOneUse())
    return fromLayoutChain(def->getOperand(0), depth + 1);
  return isa<tg::ConvOp, tg::MaxPoolOp, tg::AvgPoolOp,
             tg::GlobalAvgPoolOp, tg::ConcatOp>(def);
}

/// Whether \p v holds one value per channel of 4-D \p type: [N, C, 1, 1],
/// or [1, C, 1, 1] shared by the batch (a batchnorm's factor and shift,
/// --tg-fold-batchnorm).
bool isPerChannel(Value v, ShapedType type) {
  auto shape = cast<ShapedType>(v.getType()).getShape();
  return shape.size() == 4 &&
         (shape[0] == 1 || shape[0] == type.getDimSize(0)) &&
         shape[1] == type.getDimSize(1) && shape[2] == 1 && shape[3] == 1;
}

/// The per-channel addend of \p add when it adds one value per channel,
/// shared by the batch ([1, C, 1, 1]: oneDNN 2.6's post-ops broadcast no
/// other), to the result of a chain add or multiply that it is the only
/// user of: oneDNN's binary step takes it as a post-op (a batchnorm no
/// convolution takes is x * k + shift: DenseNet's pre-activation layers,
/// which kept their concatenations and transition pools on NCHW as
/// generated kernels). Null otherwise.
Value chainShift(Operation *add, int depth) {
  if (!isa_and_nonnull<tg::AddOp>(add) || !isFourD(add->getResult(0)))
    return {};
  auto type = cast<ShapedType>(add->getResult(0).getType());
  for (int i = 0; i < 2; ++i) {
    Value scaled = add->getOperand(i), shift = add->getOperand(1 - i);
    Operation *def = scaled.getDefiningOp();
    if (scaled.getType() == type && isPerChannel(shift, type) &&
        cast<ShapedType>(shift.getType()).getDimSize(0) == 1 && def &&
        scaled.hasOneUse() && chainBinary(def, depth))
      return shift;
  }
  return {};
}

/// Whether \p concat is a channel concatenation that the schedule writes in
/// place with its readers generated (docs/Compiler.md, "Concatenations and
/// splits in place"): at batch 1, of operands that other concatenations
/// take too (DenseNet's dense blocks).
bool isDenseConcatenation(tg::ConcatOp concat) {
  if (!isChannelConcat(concat) ||
      cast<ShapedType>(concat.getType()).getDimSize(0) != 1)
    return false;
  return llvm::any_of(concat.getInputs(), [&](Value in) {
    return llvm::any_of(in.getUsers(), [&](Operation *user) {
      return user != concat && isa<tg::ConcatOp>(user);
    });
  });
}

/// Whether \p v is such a concatenation or one of its operands: a buffer in
/// place, which stays plain. A multiply by one value per channel on it (a
/// DenseNet layer's batchnorm) stays generated: oneDNN's binary kernel on
/// NCHW runs the short rows of its planes, and DenseNet-121's 62 such steps
/// took 2.8 ms a run against 1.5 ms generated (docs/Runtime.md,
/// "Per-channel affine steps").
bool isInPlainGroup(Value v) {
  auto dense = [](Operation *op) {
    auto concat = dyn_cast_or_null<tg::ConcatOp>(op);
    return concat && isDenseConcatenation(concat);
  };
  return dense(v.getDefiningOp()) || llvm::any_of(v.getUsers(), dense);
}

/// An add or multiply between the convolutions: a oneDNN binary step in
/// their layout. Either two 4-D tensors of the result's type, both from the
/// layout chain (NASNet's cells add pool and convolution outputs: 33
/// generated adds on NCHW, each with reorders on both sides), or a multiply
/// of one from the chain by one value per channel from anywhere (a squeeze-and-
/// excitation's `x * sigmoid(fc(pool(x)))`: generated on NCHW, it made the
/// convolutions on both sides reorder). An op with a full generated operand
/// (DBNet's upsampled maps) stays generated, fused with its neighbours.
std::optional<ChainOperands> chainBinary(Operation *op, int depth) {
  // A swish's multiply is its convolution's post-op (growActivation).
  auto act = activationOf(op);
  if (!isa<tg::AddOp, tg::MulOp>(op) || !isFourD(op->getResult(0)) ||
      (act && act->kind == Activation::Swish))
    return std::nullopt;
  auto type = cast<ShapedType>(op->getResult(0).getType());
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (lhs.getType() != type)
    std::swap(lhs, rhs);
  if (lhs.getType() != type || !fromLayoutChain(lhs, depth))
    return std::nullopt;
  // Per-channel adds stay generated (form-fragments.mlir,
  // broadcast_addend): only the multiply was measured.
  if (rhs.getType() != type)
    return isa<tg::MulOp>(op) && isPerChannel(rhs, type) &&
                   !isInPlainGroup(lhs)
               ? std::optional(ChainOperands{lhs, rhs})
               : std::nullopt;
  // A convolution's only use, which its sum post-op takes (growConv): the
  // add is part of that convolution's fragment, not a site of its own.
  auto convSum = [&](Value v) {
    auto conv = v.getDefiningOp<tg::ConvOp>();
    return isa<tg::AddOp>(op) && conv && v.hasOneUse() &&
           conv.getActivation() == tg::Activation::None;
  };
  if (convSum(lhs) || convSum(rhs) || !fromLayoutChain(rhs, depth))
    return std::nullopt;
  return ChainOperands{op->getOperand(0), op->getOperand(1)};
}

/// The least multiply-adds of one product of a batch (M * N * K) for which a
/// matmul reads or writes strided views instead of the copies: oneDNN 2.6
/// runs strided batches with its jit sgemm, one call per product, which on
/// Swin's windows (49x32 by 32x49, 64 windows x 3 heads) took 0.21 ms against
/// the brgemm's 0.12 on dense copies, more than the copies cost; from
/// xfmr-post's 128x64x128 heads on (1M) the views paid (2 threads, this VM:
/// docs/Compiler.md, "Views folded into matrix products").
constexpr int64_t kMinViewProduct = int64_t(1) << 18;

class OneDNNBackend : public Backend {
public:
  StringRef name() const override { return kOneDNN; }
  StringRef summary() const override {
    return "oneDNN primitives: convolutions and matrix products with "
           "post-ops";
  }
  StringRef device() const override { return "cpu"; }
  bool generatesCode() const override { return false; }
  std::vector<StringRef> anchorOps() const override {
    return {tg::ConvOp::getOperationName(),
            tg::MatmulOp::getOperationName(),
            tg::MaxPoolOp::getOperationName(),
            tg::AvgPoolOp::getOperationName(),
            tg::GlobalAvgPoolOp::getOperationName(),
            tg::ConcatOp::getOperationName(),
            tg::AddOp::getOperationName(),
            tg::MulOp::getOperationName()};
  }
  std::vector<std::string> patterns() const override {
    return {"conv [+sum] [+relu|sigmoid|tanh|gelu|hardswish|swish|clip|"
            "hardsigmoid|leaky_relu]: f32 2-D (NCHW) or 3-D (NCDHW), any "
            "groups, strides, dilations, pads; sum: a full tensor of the "
            "result's type; a conv with its own activation takes nothing "
            "after it; "
            "a dense 3x3 one of stride 1 with at least 64 input and output "
            "channels, outputs at most twice the inputs, on a plane of at "
            "least 16x16 (14x14 at batch 1), runs as Winograd's "
            "convolution where oneDNN has one",
            "conv+transpose[1,0,2,3] (a filter gradient, run as oneDNN's "
            "backward-weights convolution): f32, one group, no bias or "
            "activation, the filter spatially larger than the result",
            "matmul [+bias|scale] [+relu|sigmoid|tanh|gelu|hardswish|swish|clip|"
            "hardsigmoid|leaky_relu]: f32, any batch "
            "dims; bias: [N] or [1,...,1,N]; without a bias, a division or "
            "multiplication by a constant of one element after it (an output "
            "scale); operands and result may be "
            "strided views of their buffers (transposes, slices and "
            "reshapes the schedule folds into the product)",
            "maxpool, avgpool, global_avgpool: f32 2-D (NCHW), any kernel, "
            "strides and pads; run in the layout of the convolutions "
            "around it",
            "concat along channels (axis 1 of 4-D tensors): f32; run in "
            "the layout of the convolutions around it",
            "add|mul [+shift] [+activation]: f32 4-D, two tensors of the "
            "result's type, each from a convolution, pool, concat or such "
            "an add or mul; or a mul of one of them by one value per "
            "channel ([N,C,1,1] or [1,C,1,1]) from anywhere; shift: an add "
            "of one value per channel (a batchnorm's x * k + shift); run in "
            "the layout of the convolutions around it"};
  }

  void collectCandidates(Operation *anchor, Available available,
                         SmallVectorImpl<LibraryCall> &out) const override {
    if (!allF32(anchor))
      return;
    // 2-D and 3-D convolutions: the runtime's step is NCHW or NCDHW
    // (docs/Artifact.md); 1-D ones arrive as 2-D over a unit height
    // (docs/ONNX/Import.md). --tg-conv3d-as-2d leaves the 3-D ones this
    // backend takes 3-D (docs/Compiler.md).
    if (auto conv = dyn_cast<tg::ConvOp>(anchor)) {
      int64_t rank = cast<ShapedType>(conv.getType()).getRank();
      if (rank == 4 || rank == 5)
        addPrefixes(growConv(conv, available), out);
      return;
    }
    if (auto matmul = dyn_cast<tg::MatmulOp>(anchor))
      return addPrefixes(growMatmul(matmul, available), out);
    if (isa<tg::MaxPoolOp, tg::AvgPoolOp, tg::GlobalAvgPoolOp>(anchor) &&
        isFourD(anchor->getResult(0)))
      return out.push_back(single(anchor));
    if (auto concat = dyn_cast<tg::ConcatOp>(anchor);
        concat && isChannelConcat(concat))
      return out.push_back(single(anchor));
    if (chainBinary(anchor)) {
      LibraryCall call = single(anchor);
      Operation *add = soleUser(anchor->getResult(0), available);
      if (Value shift = chainShift(add)) {
        call.bias = shift;
        call.ops.push_back(add);
      }
      growActivation(call, available);
      return addPrefixes(call, out);
    }
  }

  /// onednn.binary: src0, src1, the shift when there is one, dst;
  /// dst_shape, src1_shape, shift_shape, the algorithm (add or mul) and the
  /// activation.
  static void lowerBinary(const LibraryCall &call,
                          const StepOperands &operands, LibraryStep &step) {
    Operation *op = call.anchor;
    // Matched by chainBinary when the fragment formed; inside it the
    // operands are block arguments, so only their types decide the order.
    Value src0 = op->getOperand(0), src1 = op->getOperand(1);
    if (src0.getType() != op->getResult(0).getType())
      std::swap(src0, src1);
    artifact::BinaryStep s;
    s.src0 = operands.buffer(src0);
    s.src1 = operands.buffer(src1);
    s.dst = operands.buffer(call.ops.back()->getResult(0));
    s.dstShape = shapeOf(op->getResult(0));
    s.src1Shape = shapeOf(src1);
    s.algorithm = isa<tg::MulOp>(op) ? artifact::BinaryAlgorithm::Mul
                                     : artifact::BinaryAlgorithm::Add;
    if (call.bias) {
      s.shift = operands.buffer(call.bias);
      s.shiftShape = shapeOf(call.bias);
    }
    s.activation = postOp(call);
    step.record = std::move(s);
  }

  /// The activation a step applies last, with its parameters.
  static artifact::PostOp postOp(const LibraryCall &call) {
    artifact::PostOp out;
    out.kind = call.activation;
    if (activationParameters(call.activation) > 0) {
      out.alpha = call.alpha;
      out.beta = call.beta;
    }
    return out;
  }

  /// onednn.pool2d: src, dst; kernel, strides, pads and the algorithm
  /// (max, avg_include_pad, avg_exclude_pad). A global average pool is an
  /// average over a kernel the size of the input.
  static void lowerPool(Operation *op, const StepOperands &operands,
                        LibraryStep &step) {
    Value input = op->getOperand(0);
    auto in = cast<ShapedType>(input.getType()).getShape();
    artifact::Pool2dStep s;
    s.src = operands.buffer(input);
    s.dst = operands.buffer(op->getResult(0));
    s.srcShape = shapeOf(input);
    s.dstShape = shapeOf(op->getResult(0));
    auto window = [&](auto pool) {
      s.kernel = pool.getKernelSize().vec();
      s.strides = pool.getStrides().vec();
      s.pads = pool.getPads().vec();
    };
    s.algorithm = artifact::PoolAlgorithm::AvgExcludePad;
    if (auto max = dyn_cast<tg::MaxPoolOp>(op)) {
      window(max);
      s.algorithm = artifact::PoolAlgorithm::Max;
    } else if (auto avg = dyn_cast<tg::AvgPoolOp>(op)) {
      window(avg);
      if (avg.getCountIncludePad())
        s.algorithm = artifact::PoolAlgorithm::AvgIncludePad;
    } else { // global: one window over the whole plane
      s.kernel = {in[2], in[3]};
      s.strides = {1, 1};
      s.pads = {0, 0, 0, 0};
    }
    step.record = std::move(s);
  }

  /// onednn.concat: srcs (in order), dst; the channel count of each source.
  static void lowerConcat(tg::ConcatOp concat, const StepOperands &operands,
                          LibraryStep &step) {
    artifact::ConcatStep s;
    for (Value input : concat.getInputs()) {
      s.srcs.push_back(operands.buffer(input));
      s.srcChannels.push_back(cast<ShapedType>(input.getType()).getDimSize(1));
    }
    s.dst = operands.buffer(concat.getResult());
    s.dstShape = shapeOf(concat.getResult());
    step.record = std::move(s);
  }

  /// onednn.conv2d or onednn.conv2d_filter_grad (a conv whose result is
  /// transposed [1, 0, 2, 3]).
  static void lowerConv(tg::ConvOp conv, const LibraryCall &call,
                        const StepOperands &operands, LibraryStep &step) {
    artifact::ConvolutionOperands c;
    c.src = operands.buffer(conv.getInput());
    c.weights = operands.buffer(conv.getFilter());
    c.dst = operands.buffer(call.ops.back()->getResult(0));
    c.srcShape = shapeOf(conv.getInput());
    c.weightsShape = shapeOf(conv.getFilter());
    c.dstShape = shapeOf(call.ops.back()->getResult(0));
    c.strides = conv.getStrides().vec();
    c.pads = conv.getPads().vec();
    c.dilations = conv.getDilations().vec();
    c.groups = conv.getGroups();
    if (isa<tg::TransposeOp>(call.ops.back())) {
      step.record = artifact::Conv2dFilterGradStep{c};
      return;
    }
    artifact::Conv2dStep s;
    static_cast<artifact::ConvolutionOperands &>(s) = c;
    if (call.bias)
      s.bias = operands.buffer(call.bias);
    if (call.sum)
      s.sum = operands.buffer(call.sum);
    s.algorithm = winogradPays(conv) ? artifact::ConvAlgorithm::Winograd
                                     : artifact::ConvAlgorithm::Direct;
    s.activation = postOp(call);
    step.record = std::move(s);
  }

  /// The views of a matmul's operands and result the schedule folded into
  /// it, as its primitive's strided descriptors (all of one rank), or
  /// nullopt: none is a view. Failure when they are not such descriptors
  /// (a dimension of M, K or N that is not one stride, batch dimensions
  /// cut differently), or the result is a view and the step adds a residual
  /// sum (the sum is read as the result's layout).
  static FailureOr<std::optional<std::array<artifact::StridedOperand, 3>>>
  matmulViews(tg::MatmulOp matmul, const LibraryCall &call,
              const StepOperands &operands) {
    using Views = std::optional<std::array<artifact::StridedOperand, 3>>;
    if (!operands.view)
      return Views();
    Value result = call.ops.back()->getResult(0);
    std::array<Value, 3> values = {matmul.getLhs(), matmul.getRhs(), result};
    std::array<StridedView, 3> views;
    bool any = false;
    for (auto [value, view] : llvm::zip(values, views)) {
      const StridedView *given = operands.view(value);
      any |= given != nullptr;
      view = given ? *given : StridedView::dense(shapeOf(value));
    }
    if (!any)
      return Views();
    artifact::Shape mn = shapeOf(result);
    int64_t work = mn[mn.size() - 2] * mn.back() * shapeOf(values[0]).back();
    if ((operands.view(result) && call.sum) || work < kMinViewProduct)
      return failure();
    Views out = matmulOperands(views[0], views[1], views[2]);
    if (!out)
      return failure();
    return out;
  }

  /// onednn.matmul: src, weights, optional bias and sum, dst; the shapes,
  /// whether the weights are constant, the activation, the views.
  static LogicalResult lowerMatmul(tg::MatmulOp matmul,
                                   const LibraryCall &call,
                                   const StepOperands &operands,
                                   LibraryStep &step) {
    auto views = matmulViews(matmul, call, operands);
    if (failed(views))
      return failure();
    artifact::MatmulStep s;
    s.views = std::move(*views);
    s.src = operands.buffer(matmul.getLhs());
    s.weights = operands.buffer(matmul.getRhs());
    s.dst = operands.buffer(call.ops.back()->getResult(0));
    if (call.bias)
      s.bias = operands.buffer(call.bias);
    if (call.sum)
      s.sum = operands.buffer(call.sum);
    s.srcShape = shapeOf(matmul.getLhs());
    s.weightsShape = shapeOf(matmul.getRhs());
    s.dstShape = shapeOf(matmul.getResult());
    s.weightsConstant = operands.isWeight(matmul.getRhs());
    s.activation = postOp(call);
    s.scale = call.scale;
    step.record = std::move(s);
    return success();
  }

  bool takesViews(const LibraryCall &call) const override {
    return isa<tg::MatmulOp>(call.anchor);
  }

  LogicalResult lower(const LibraryCall &call, const StepOperands &operands,
                      LibraryStep &step) const override {
    if (auto concat = dyn_cast<tg::ConcatOp>(call.anchor))
      lowerConcat(concat, operands, step);
    else if (isa<tg::AddOp, tg::MulOp>(call.anchor))
      lowerBinary(call, operands, step);
    else if (auto conv = dyn_cast<tg::ConvOp>(call.anchor))
      lowerConv(conv, call, operands, step);
    else if (auto matmul = dyn_cast<tg::MatmulOp>(call.anchor))
      return lowerMatmul(matmul, call, operands, step);
    else
      lowerPool(call.anchor, operands, step);
    return success();
  }

  /// Measured on this machine's class (docs/benchmarks/cpu.md): oneDNN's
  /// sgemm at ~95% of peak, its AVX-512 convolutions at roughly 70%, its
  /// Winograd ones ~1.4x faster than that (fewer products than the
  /// roofline counts).
  double analyticSeconds(const LibraryCall &call,
                         const cost::RooflineTarget &target) const override {
    double efficiency = isa<tg::MatmulOp>(call.anchor) ? 0.9 : 0.7;
    if (auto conv = dyn_cast<tg::ConvOp>(call.anchor);
        conv && winogradPays(conv) && !isa<tg::TransposeOp>(call.ops.back()))
      efficiency = 1.0;
    return rooflineSeconds(call.ops, target, efficiency);
  }
};

} // namespace

std::unique_ptr<Backend> compiler::createOneDNNBackend() {
  return std::make_unique<OneDNNBackend>();
}
