//===- CuDNN.cpp - The cuDNN backend --------------------------------------===//
//
// Part of Loom. cuDNN 9 convolutions called by libloomrt's CUDA device
// (lib/Runtime/CUDA/Cudnn.cpp): f32 forward convolutions of 1, 2 or 3 spatial
// dimensions with any strides, padding, dilations and groups, their bias
// and an activation fused in one operation graph of cuDNN's backend API
// (conv, pointwise add, pointwise activation). Runs on a cuda device only
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

/// Whether cuDNN runs \p conv: f32, static shapes, 1 to 3 spatial
/// dimensions, its own activation one of cuDNN's pointwise modes.
bool runs(tg::ConvOp conv) {
  auto type = conv.getType();
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  return allF32(conv) && type.hasStaticShape() && input.hasStaticShape() &&
         filter.hasStaticShape() && type.getRank() >= 3 &&
         type.getRank() <= 5 &&
         artifact::cudnnRunsActivation(tg::toActivation(conv.getActivation()));
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
    return {"conv [+relu|sigmoid|tanh|gelu_erf|gelu_tanh|swish]: f32, static "
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
    if (call.activation == Activation::None)
      growActivation(call, available, artifact::cudnnRunsActivation);
    addPrefixes(call, out);
  }

  LogicalResult lower(const LibraryCall &call, const StepOperands &operands,
                      LibraryStep &step) const override {
    auto conv = cast<tg::ConvOp>(call.anchor);
    if (!runs(conv) || !artifact::cudnnRunsActivation(call.activation))
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
    step.record = std::move(s);
    return success();
  }

  /// cuDNN's f32 convolutions (implicit-GEMM kernels without TF32: the
  /// runtime refuses engines that round to TF32) at about 60% of the FP32
  /// peak on large convolutions; an estimate, not measured here
  /// (scripts/gpu-check.sh times them on a lent GPU).
  double analyticSeconds(const LibraryCall &call,
                         const cost::RooflineTarget &target) const override {
    return rooflineSeconds(call.ops, target, 0.6);
  }
};

} // namespace

std::unique_ptr<Backend> compiler::createCuDNNBackend() {
  return std::make_unique<CuDNNBackend>();
}
