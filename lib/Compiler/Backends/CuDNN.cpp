//===- CuDNN.cpp - The cuDNN backend --------------------------------------===//
//
// Part of Loom. cuDNN 9 convolutions called by libloomrt's CUDA device
// (lib/Runtime/CUDA/Cudnn.cpp): f32, bf16 and f16 forward convolutions of 1,
// 2 or 3 spatial dimensions with any strides, padding, dilations and groups,
// accumulated in f32, their bias and an activation fused in one operation
// graph of cuDNN's backend API (conv, pointwise add, pointwise activation);
// a narrow convolution's cast back to f32 (--precision, docs/Precision.md)
// is taken into it, its result written in f32. Runs on a cuda device only
// (docs/Codegen/GPU.md, "Library backends").
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Backend.h"
#include "loom/Dialect/TG/IR/TGActivation.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::compiler::patterns;

namespace {

/// The static shape of \p v.
artifact::Shape shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape().vec();
}

/// Whether cuDNN 9 has an f32 execution plan (no TF32) for a plain
/// convolution graph that ends in \p a. Its graph API expresses every mode
/// artifact::cudnnRunsActivation names, but on an H100 (cuDNN 9, CUDA 13,
/// driver 580; scripts/gpu-check.sh's probes, docs/benchmarks/gpu.md) the
/// heuristics offered no engine at all for a GELU (either form) or a swish
/// fused after the convolution, while none, relu, sigmoid and tanh ran:
/// those three are left to a generated kernel after the convolution.
bool fusesInF32(Activation a) {
  return artifact::cudnnRunsActivation(a) && a != Activation::GeluErf &&
         a != Activation::GeluTanh && a != Activation::Swish;
}

/// Whether cuDNN fuses an activation after \p conv in f32: a plain
/// convolution with its bias (the graph conv, add, activation). On the same
/// H100, a grouped and dilated convolution with a sigmoid after it and a
/// 1x1 one with a tanh, neither with a bias, had no plan, while every
/// convolution alone and every one with a bias and a relu, sigmoid or tanh
/// ran; whether the groups, the dilation or the missing bias refused the
/// first is not known, so each is required.
bool fusesAfter(tg::ConvOp conv) {
  return conv.getBias() && conv.getGroups() == 1 &&
         llvm::all_of(conv.getDilations(), [](int64_t d) { return d == 1; });
}

/// Whether every operand and the result of \p conv have one element type
/// cuDNN takes (f32, bf16, f16).
bool oneElementType(tg::ConvOp conv) {
  Type elem = conv.getType().getElementType();
  return !libraryElementType(elem).empty() &&
         llvm::all_of(conv->getOperandTypes(), [&](Type t) {
           return cast<ShapedType>(t).getElementType() == elem;
         });
}

/// Whether cuDNN runs \p conv: f32, bf16 or f16, static shapes, 1 to 3
/// spatial dimensions, its own activation none or one cuDNN fuses after it
/// in f32.
bool runs(tg::ConvOp conv) {
  Activation own = tg::toActivation(conv.getActivation());
  auto type = conv.getType();
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  return oneElementType(conv) && type.hasStaticShape() &&
         input.hasStaticShape() && filter.hasStaticShape() &&
         type.getRank() >= 3 && type.getRank() <= 5 &&
         (own == Activation::None || (fusesAfter(conv) && fusesInF32(own)));
}

class CuDNNBackend : public Backend {
public:
  StringRef name() const override { return "cudnn"; }
  StringRef summary() const override {
    return "cuDNN 9 convolutions with bias and activation fused in one "
           "operation graph (CUDA)";
  }
  StringRef device() const override { return "cuda"; }
  bool generatesCode() const override { return false; }
  std::vector<StringRef> anchorOps() const override {
    return {tg::ConvOp::getOperationName()};
  }
  std::vector<std::string> patterns() const override {
    return {"conv [+cast to f32] [+relu|sigmoid|tanh after a bias, groups and "
            "dilations 1]: f32, bf16 or f16 (the cast only after a narrow "
            "one), static "
            "shapes, 1 to 3 spatial dimensions, any strides, pads, dilations "
            "and groups; the conv's own bias [O]; a conv with its own "
            "activation takes nothing after it"};
  }

  void collectCandidates(Operation *anchor, Available available,
                         SmallVectorImpl<LibraryCall> &out) const override {
    auto conv = dyn_cast<tg::ConvOp>(anchor);
    if (!conv || !runs(conv))
      return;
    LibraryCall call;
    call.anchor = conv;
    call.ops.push_back(conv);
    call.bias = conv.getBias();
    call.activation = tg::toActivation(conv.getActivation());
    appendWidening(call, available);
    if (call.activation == Activation::None && fusesAfter(conv))
      growActivation(call, available, fusesInF32);
    addPrefixes(call, out);
  }

  LogicalResult lower(const LibraryCall &call, const StepOperands &operands,
                      LibraryStep &step) const override {
    auto conv = cast<tg::ConvOp>(call.anchor);
    if (!runs(conv) || (call.activation != Activation::None &&
                        !(fusesAfter(conv) && fusesInF32(call.activation))))
      return conv.emitOpError("is not a convolution cuDNN runs");
    artifact::CudnnConvStep s;
    s.src = operands.buffer(conv.getInput());
    s.weights = operands.buffer(conv.getFilter());
    s.dst = operands.buffer(call.ops.back()->getResult(0));
    if (call.bias)
      s.bias = operands.buffer(call.bias);
    s.srcShape = shapeOf(conv.getInput());
    s.weightsShape = shapeOf(conv.getFilter());
    s.dstShape = shapeOf(conv.getResult());
    s.strides.assign(conv.getStrides().begin(), conv.getStrides().end());
    s.pads.assign(conv.getPads().begin(), conv.getPads().end());
    s.dilations.assign(conv.getDilations().begin(), conv.getDilations().end());
    s.groups = conv.getGroups();
    s.activation = {call.activation, call.alpha, call.beta};
    s.operandType = libraryElementType(conv.getType().getElementType());
    // Input and filter rounded to TF32 (--precision=tf32, by kernels
    // before the step): cuDNN's TF32 engines compute it exactly
    // (docs/Precision.md, "TF32"); the bias is added in f32.
    if (operands.roundedToTF32 && operands.roundedToTF32(conv.getInput()) &&
        operands.roundedToTF32(conv.getFilter()))
      s.operandType = "tf32";
    s.resultType = libraryElementType(
        cast<ShapedType>(call.ops.back()->getResult(0).getType())
            .getElementType());
    step.record = std::move(s);
    return success();
  }

  /// cuDNN's convolutions at about 60% of the peak on large ones: f32's
  /// for f32 operands (the runtime refuses engines that round them to
  /// TF32), the tensor-core rate for bf16, f16 and TF32 ones; an estimate,
  /// not measured here (scripts/gpu-check.sh times them on a lent GPU).
  double analyticSeconds(const LibraryCall &call,
                         const cost::RooflineTarget &target) const override {
    return rooflineSeconds(call.ops, target, 0.6, /*tensorCores=*/true);
  }
};

} // namespace

std::unique_ptr<Backend> compiler::createCuDNNBackend() {
  return std::make_unique<CuDNNBackend>();
}
