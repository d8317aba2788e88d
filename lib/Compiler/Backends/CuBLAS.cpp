//===- CuBLAS.cpp - The cuBLASLt backend ----------------------------------===//
//
// Part of Loom. cuBLASLt matrix products called by libloomrt's CUDA device
// (lib/Runtime/CUDA/Cublas.cpp): f32, bf16 and f16 products accumulated in
// f32, batched where each operand either has the whole batch or is shared
// by it, with a row bias and a ReLU or (tanh-approximated) GELU as
// cuBLASLt's epilogue; a narrow product's cast back to f32 (--precision,
// docs/Precision.md) is taken into it, the f32 accumulator written as it
// is. Runs on a cuda device only (docs/Codegen/GPU.md, "Library backends").
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Backend.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::compiler::patterns;

namespace {

/// A product as cuBLASLt runs it: d[b] (m x n) = a[b] (m x k) x b[b]
/// (k x n), each operand's matrices consecutive (stride m * k, k * n) or
/// one shared by the batch (stride 0).
struct Gemm {
  int64_t m = 1, n = 1, k = 1, batch = 1;
  int64_t aStride = 0, bStride = 0;
};

/// The product of elements [begin, end) of \p shape.
int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// \p matmul as one strided-batched GEMM, or nullopt: static shapes of one
/// element type (f32, bf16 or f16)
/// whose batch dimensions are, per operand, the result's (left-padded with
/// ones) or all ones. A shared right operand folds the left one's batch
/// into m (one GEMM of batch * m rows, as a linear layer's weights).
std::optional<Gemm> gemmOf(tg::MatmulOp matmul) {
  auto lhs = matmul.getLhs().getType(), rhs = matmul.getRhs().getType();
  auto out = matmul.getType();
  Type elem = out.getElementType();
  if (libraryElementType(elem).empty() || lhs.getElementType() != elem ||
      rhs.getElementType() != elem || !lhs.hasStaticShape() ||
      !rhs.hasStaticShape() || !out.hasStaticShape() || lhs.getRank() < 2 ||
      rhs.getRank() < 2)
    return std::nullopt;
  ArrayRef<int64_t> batch = out.getShape().drop_back(2);
  // Whether an operand has the result's whole batch (true), none of it
  // (false), or part of it (nullopt: a broadcast cuBLASLt cannot stride).
  auto batchOf = [&](RankedTensorType t) -> std::optional<bool> {
    ArrayRef<int64_t> own = t.getShape().drop_back(2);
    if (product(own) == 1)
      return false;
    if (own.size() > batch.size())
      return std::nullopt;
    for (size_t i = 0; i < own.size(); ++i)
      if (own[own.size() - 1 - i] != batch[batch.size() - 1 - i])
        return std::nullopt;
    if (product(own) != product(batch))
      return std::nullopt;
    return true;
  };
  std::optional<bool> aFull = batchOf(lhs), bFull = batchOf(rhs);
  if (!aFull || !bFull)
    return std::nullopt;
  Gemm g;
  g.m = lhs.getShape()[lhs.getRank() - 2];
  g.k = lhs.getShape().back();
  g.n = rhs.getShape().back();
  if (*aFull && !*bFull) {
    g.m *= product(batch);
    return g;
  }
  g.batch = product(batch);
  g.aStride = *aFull ? g.m * g.k : 0;
  g.bStride = *bFull ? g.k * g.n : 0;
  return g;
}

/// The epilogue of \p call: its bias, then its activation.
artifact::CublasEpilogue epilogueOf(const LibraryCall &call) {
  bool bias = bool(call.bias);
  switch (call.activation) {
  case Activation::Relu:
    return bias ? artifact::CublasEpilogue::ReluBias
                : artifact::CublasEpilogue::Relu;
  case Activation::GeluTanh:
    return bias ? artifact::CublasEpilogue::GeluBias
                : artifact::CublasEpilogue::Gelu;
  case Activation::None:
    return bias ? artifact::CublasEpilogue::Bias
                : artifact::CublasEpilogue::Default;
  case Activation::Sigmoid:
  case Activation::Tanh:
  case Activation::GeluErf:
  case Activation::HardSwish:
  case Activation::Swish:
  case Activation::Clip:
  case Activation::HardSigmoid:
  case Activation::LeakyRelu:
    break;
  }
  llvm_unreachable("cuBLASLt's candidates end in relu or gelu_tanh only");
}

class CuBLASBackend : public Backend {
public:
  StringRef name() const override { return "cublas"; }
  StringRef summary() const override {
    return "cuBLASLt matrix products with bias, ReLU and GELU epilogues "
           "(CUDA)";
  }
  StringRef device() const override { return "cuda"; }
  bool generatesCode() const override { return false; }
  std::vector<StringRef> anchorOps() const override {
    return {tg::MatmulOp::getOperationName()};
  }
  std::vector<std::string> patterns() const override {
    return {"matmul [+cast to f32] [+bias] [+relu|gelu_tanh]: f32, bf16 or "
            "f16 (the cast only after a narrow one), static shapes; batch "
            "dims per operand the result's or all ones (a shared right "
            "operand folds the batch into M); bias [N] or [1,..,1,N] of the "
            "result's type; GELU only as the tanh approximation (cuBLASLt's "
            "GELU epilogue)"};
  }

  void collectCandidates(Operation *anchor, Available available,
                         SmallVectorImpl<LibraryCall> &out) const override {
    auto matmul = dyn_cast<tg::MatmulOp>(anchor);
    if (!matmul || !gemmOf(matmul))
      return;
    LibraryCall call = matmulWithBias(matmul, available, /*widen=*/true);
    Operation *user = soleUser(call.ops.back()->getResult(0), available);
    if (auto act = activationOf(user);
        act &&
        (act->kind == Activation::Relu || act->kind == Activation::GeluTanh)) {
      call.activation = act->kind;
      call.ops.push_back(user);
    }
    addPrefixes(call, out);
  }

  LogicalResult lower(const LibraryCall &call, const StepOperands &operands,
                      LibraryStep &step) const override {
    auto matmul = cast<tg::MatmulOp>(call.anchor);
    std::optional<Gemm> g = gemmOf(matmul);
    if (!g)
      return matmul.emitOpError("is not a product cuBLASLt runs");
    artifact::CublasMatmulStep s;
    s.a = operands.buffer(matmul.getLhs());
    s.b = operands.buffer(matmul.getRhs());
    s.d = operands.buffer(call.ops.back()->getResult(0));
    if (call.bias)
      s.bias = operands.buffer(call.bias);
    s.m = g->m;
    s.n = g->n;
    s.k = g->k;
    s.batch = g->batch;
    s.aBatchStride = g->aStride;
    s.bBatchStride = g->bStride;
    s.epilogue = epilogueOf(call);
    s.operandType = libraryElementType(matmul.getType().getElementType());
    // Both operands rounded to TF32 (--precision=tf32, by kernels before
    // the step): on tensor cores, exactly (docs/Precision.md, "TF32").
    if (operands.roundedToTF32 && operands.roundedToTF32(matmul.getLhs()) &&
        operands.roundedToTF32(matmul.getRhs()))
      s.operandType = "tf32";
    s.resultType = libraryElementType(
        cast<ShapedType>(call.ops.back()->getResult(0).getType())
            .getElementType());
    step.record = std::move(s);
    return success();
  }

  /// cuBLASLt's GEMMs at about 70% of the peak on large products: f32's
  /// (non-tensor-core), or the tensor-core rate of bf16, f16 and TF32
  /// operands (NVIDIA's published H100 figures; f32 measured on the H200 at
  /// 51 of 67 TFLOP/s, docs/benchmarks/gpu.md; the others not yet:
  /// scripts/gpu-check.sh times them against torch.matmul).
  double analyticSeconds(const LibraryCall &call,
                         const cost::RooflineTarget &target) const override {
    return rooflineSeconds(call.ops, target, 0.7, /*tensorCores=*/true);
  }
};

} // namespace

std::unique_ptr<Backend> compiler::createCuBLASBackend() {
  return std::make_unique<CuBLASBackend>();
}
