//===- OneDNN.cpp - The oneDNN backend ------------------------------------===//
//
// Part of Loom. oneDNN primitives called by libloomrt (lib/Runtime/
// Library.cpp): convolutions with their bias, a residual sum and an
// activation as post-ops; matrix products with a row bias and an
// activation. f32 only.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Backend.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::compiler::patterns;
using llvm::json::Array;

namespace {

Array shapeJSON(ArrayRef<int64_t> shape) {
  Array a;
  for (int64_t d : shape)
    a.push_back(d);
  return a;
}
Array shapeJSON(Value v) {
  return shapeJSON(cast<ShapedType>(v.getType()).getShape());
}

/// Grows \p call over an activation using its current result.
void growActivation(LibraryCall &call, Available available) {
  Operation *user = soleUser(call.ops.back()->getResult(0), available);
  if (auto act = activationOf(user)) {
    call.activation = *act;
    call.ops.push_back(user);
  }
}

LibraryCall growConv(tg::Conv2dOp conv, Available available) {
  LibraryCall call;
  call.backend = tg::Backend::OneDNN;
  call.anchor = conv;
  call.ops.push_back(conv);
  call.bias = conv.getBias();
  call.activation = tg::stringifyActivation(conv.getActivation());
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

LibraryCall growMatmul(tg::MatmulOp matmul, Available available) {
  LibraryCall call;
  call.backend = tg::Backend::OneDNN;
  call.anchor = matmul;
  call.ops.push_back(matmul);
  Value out = matmul.getResult();
  Operation *add = soleUser(out, available);
  if (Value other = addendOf(add, out);
      other && isRowBias(other, matmul.getType())) {
    call.bias = other;
    call.ops.push_back(add);
  }
  growActivation(call, available);
  return call;
}

class OneDNNBackend : public Backend {
public:
  tg::Backend kind() const override { return tg::Backend::OneDNN; }
  StringRef summary() const override {
    return "oneDNN primitives: convolutions and matrix products with "
           "post-ops";
  }
  std::vector<std::string> patterns() const override {
    return {"conv2d [+sum] [+relu|sigmoid|tanh|gelu]: f32, any groups, "
            "strides, dilations, pads; sum: a full tensor of the result's "
            "type; a conv with its own activation takes nothing after it",
            "matmul [+bias] [+relu|sigmoid|tanh|gelu]: f32, any batch "
            "dims; bias: [N] or [1,...,1,N]"};
  }

  void candidates(Operation *anchor, Available available,
                  SmallVectorImpl<LibraryCall> &out) const override {
    if (!allF32(anchor))
      return;
    if (auto conv = dyn_cast<tg::Conv2dOp>(anchor))
      return addPrefixes(growConv(conv, available), out);
    if (auto matmul = dyn_cast<tg::MatmulOp>(anchor))
      return addPrefixes(growMatmul(matmul, available), out);
  }

  LogicalResult lower(const LibraryCall &call, const StepOperands &operands,
                      LibraryStep &step) const override {
    auto &args = step.args;
    auto &attrs = step.attrs;
    if (auto conv = dyn_cast<tg::Conv2dOp>(call.anchor)) {
      step.op = "onednn.conv2d";
      args["src"] = operands.buffer(conv.getInput());
      args["weights"] = operands.buffer(conv.getFilter());
      attrs["src_shape"] = shapeJSON(conv.getInput());
      attrs["weights_shape"] = shapeJSON(conv.getFilter());
      attrs["dst_shape"] = shapeJSON(conv.getResult());
      attrs["strides"] = shapeJSON(conv.getStrides());
      attrs["pads"] = shapeJSON(conv.getPads());
      attrs["dilations"] = shapeJSON(conv.getDilations());
      attrs["groups"] = conv.getGroups();
    } else {
      auto matmul = cast<tg::MatmulOp>(call.anchor);
      step.op = "onednn.matmul";
      args["src"] = operands.buffer(matmul.getLhs());
      args["weights"] = operands.buffer(matmul.getRhs());
      attrs["src_shape"] = shapeJSON(matmul.getLhs());
      attrs["weights_shape"] = shapeJSON(matmul.getRhs());
      attrs["dst_shape"] = shapeJSON(matmul.getResult());
      attrs["weights_constant"] = operands.isWeight(matmul.getRhs());
    }
    if (call.bias)
      args["bias"] = operands.buffer(call.bias);
    if (call.sum)
      args["sum"] = operands.buffer(call.sum);
    args["dst"] = operands.buffer(call.ops.back()->getResult(0));
    attrs["activation"] = call.activation;
    return success();
  }

  /// Measured on this machine's class (docs/benchmarks/cpu.md): oneDNN's
  /// sgemm at ~95% of peak, its AVX-512 convolutions at roughly 70%.
  double analyticSeconds(const LibraryCall &call,
                         const cost::RooflineTarget &target) const override {
    double efficiency = isa<tg::Conv2dOp>(call.anchor) ? 0.7 : 0.9;
    return rooflineSeconds(call.ops, target, efficiency);
  }
};

} // namespace

std::unique_ptr<Backend> compiler::createOneDNNBackend() {
  return std::make_unique<OneDNNBackend>();
}
