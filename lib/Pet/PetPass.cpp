//===- PetPass.cpp - --tg-pet: apply PET's transformation with corrections -===//
//
// Part of Loom. For every sliding-window op the transformation applies to:
// prove it at a small shape of the op's own window, build the corrected
// program at the real shape, check it against the original with the
// interpreter on random inputs, and only then replace the op.
//
//===----------------------------------------------------------------------===//

#include "loom/Pet/Passes.h"
#include "loom/Pet/Pet.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Search/Check.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace loom::pet {
#define GEN_PASS_DEF_TGPET
#include "loom/Pet/Passes.h.inc"
} // namespace loom::pet

using namespace mlir;
using namespace loom;
using namespace loom::pet;

namespace {

/// A module of one function @f that computes \p op alone (its operands the
/// arguments), or, when \p t is given, the corrected program of \p op.
OwningOpRef<ModuleOp> isolate(Operation *op, const SplitToBatch *t,
                              bool fuse) {
  OpBuilder b(op->getContext());
  OwningOpRef<ModuleOp> module = ModuleOp::create(op->getLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto fn = func::FuncOp::create(
      b, op->getLoc(), "f",
      b.getFunctionType(op->getOperandTypes(), op->getResultTypes()));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToEnd(body);
  IRMapping map;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    map.map(op->getOperand(i), body->getArgument(i));
  Operation *copy = b.clone(*op, map);
  Value result = copy->getResult(0);
  if (t) {
    result = buildCorrected(b, copy, *t, fuse);
    copy->erase();
  }
  func::ReturnOp::create(b, op->getLoc(), result);
  return module;
}

struct PetPass : loom::pet::impl::TGPetBase<PetPass> {
  using TGPetBase::TGPetBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Fold> how = parseFold(fold);
    if (failed(how)) {
      emitError(module.getLoc()) << "tg-pet: unknown fold '" << fold
                         << "' (expected split-concat or reshape-transpose)";
      return signalPassFailure();
    }
    if (parts < 2 || dim < 2 || trials == 0) {
      emitError(module.getLoc())
          << "tg-pet: need dim >= 2, parts >= 2 and trials >= 1 (got dim="
          << unsigned(dim) << ", parts=" << int64_t(parts)
          << ", trials=" << unsigned(trials) << ")";
      return signalPassFailure();
    }
    SplitToBatch t{unsigned(dim), parts, *how};
    SmallVector<Operation *> candidates;
    module.walk([&](Operation *op) {
      if (!isa<tg::ConvOp, tg::AvgPoolOp, tg::MaxPoolOp>(op))
        return;
      auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
      if (in && in.hasStaticShape() && dim < unsigned(in.getRank()) &&
          in.getDimSize(dim) >= minExtent)
        candidates.push_back(op);
    });
    llvm::json::Array applications;
    for (Operation *op : candidates)
      applications.push_back(apply(op, t));
    if (!report.empty() && failed(writeReport(std::move(applications))))
      return signalPassFailure();
  }

  /// Applies \p t to \p op when it is applicable, proved and checked;
  /// returns what happened.
  llvm::json::Value apply(Operation *op, const SplitToBatch &t) {
    std::string loc;
    llvm::raw_string_ostream(loc) << op->getLoc();
    llvm::json::Object entry{{"op", op->getName().getStringRef()},
                             {"loc", loc},
                             {"transform", t.str()}};
    std::string why;
    if (failed(checkApplicable(op, t, why))) {
      entry["applied"] = false;
      entry["why"] = why;
      return entry;
    }
    PartialGenOptions o;
    o.trials = trials;
    SmallProof proof = proveAtSmallShape(op, t, o);
    entry["proof"] = llvm::json::Object{{"method", proof.method},
                                        {"proved", proof.proved},
                                        {"equal_boxes", int64_t(proof.equal)},
                                        {"error_bound", proof.errorBound}};
    if (!proof.proved) {
      entry["applied"] = false;
      entry["why"] = "not proved: " + proof.detail;
      emitRemark(op->getLoc(), "tg-pet: ")
          << t.str() << " not applied: not proved (" << proof.detail << ")";
      return entry;
    }
    Window w = *windowOf(op, t.dim, why);
    int64_t extent =
        cast<RankedTensorType>(op->getOperand(0).getType()).getDimSize(t.dim);
    auto outShape =
        cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    RowBoxes boxes = boxesOfRows(wrongRows(w, extent, t), outShape, t.dim);
    llvm::json::Array equal, wrong;
    for (const Box &b : boxes.equal)
      equal.push_back(b.str());
    for (const Box &b : boxes.wrong)
      wrong.push_back(b.str());
    entry["equal"] = std::move(equal);
    entry["pad_rows"] = padRows(extent, t);
    entry["corrected"] = std::move(wrong);
    if (check) {
      OwningOpRef<ModuleOp> before = isolate(op, nullptr, fuse);
      OwningOpRef<ModuleOp> after = isolate(op, &t, fuse);
      if (failed(search::checkEquivalent(*before, *after, {}))) {
        entry["applied"] = false;
        entry["why"] = "the interpreter check failed";
        return entry;
      }
      entry["checked"] = true;
    }
    OpBuilder b(op);
    unsigned corrections = 0;
    Value v = buildCorrected(b, op, t, fuse, &corrections);
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
    entry["applied"] = true;
    entry["corrections"] = int64_t(corrections);
    return entry;
  }

  LogicalResult writeReport(llvm::json::Array applications) {
    std::error_code ec;
    llvm::raw_fd_ostream os(report, ec);
    if (ec)
      return emitError(getOperation().getLoc(), "tg-pet: cannot write '")
             << report << "': " << ec.message();
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"applications",
                                      std::move(applications)}}))
       << "\n";
    return success();
  }
};

} // namespace
