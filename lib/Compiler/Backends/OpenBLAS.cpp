//===- OpenBLAS.cpp - The OpenBLAS backend --------------------------------===//
//
// Part of Loom. cblas_sgemm called by libloomrt: a plain f32 matrix product
// of a rank-2 (or rank-3, looped over its batch) left operand and a rank-2
// right one, nothing fused.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Backend.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::compiler::patterns;

namespace {

class OpenBLASBackend : public Backend {
public:
  StringRef name() const override { return "openblas"; }
  StringRef summary() const override {
    return "OpenBLAS cblas_sgemm: plain matrix products";
  }
  StringRef device() const override { return "cpu"; }
  bool generatesCode() const override { return false; }
  std::vector<StringRef> anchorOps() const override {
    return {tg::MatmulOp::getOperationName()};
  }
  std::vector<std::string> patterns() const override {
    return {"matmul: f32, left operand rank 2 or 3 (a loop over its batch), "
            "right operand rank 2; nothing fused"};
  }

  void collectCandidates(Operation *anchor, Available,
                         SmallVectorImpl<LibraryCall> &out) const override {
    auto matmul = dyn_cast<tg::MatmulOp>(anchor);
    if (!matmul || !allF32(matmul))
      return;
    int64_t lhsRank = matmul.getLhs().getType().getRank();
    if ((lhsRank != 2 && lhsRank != 3) ||
        matmul.getRhs().getType().getRank() != 2)
      return;
    LibraryCall call;
    call.anchor = matmul;
    call.ops.push_back(matmul);
    out.push_back(std::move(call));
  }

  LogicalResult lower(const LibraryCall &call, const StepOperands &operands,
                      LibraryStep &step) const override {
    auto matmul = cast<tg::MatmulOp>(call.anchor);
    auto lhs = matmul.getLhs().getType().getShape();
    auto rhs = matmul.getRhs().getType().getShape();
    artifact::SgemmStep s;
    s.a = operands.buffer(matmul.getLhs());
    s.b = operands.buffer(matmul.getRhs());
    s.c = operands.buffer(matmul.getResult());
    s.aShape = {lhs[lhs.size() - 2], lhs.back()};
    s.bShape = {rhs[0], rhs[1]};
    s.batch = lhs.size() == 3 ? lhs[0] : int64_t(1);
    step.record = std::move(s);
    return success();
  }

  /// loom-bench-gemm: Debian's OpenBLAS sgemm at ~55% of oneDNN's.
  double analyticSeconds(const LibraryCall &call,
                         const cost::RooflineTarget &target) const override {
    return rooflineSeconds(call.ops, target, 0.5);
  }
};

} // namespace

std::unique_ptr<Backend> compiler::createOpenBLASBackend() {
  return std::make_unique<OpenBLASBackend>();
}
