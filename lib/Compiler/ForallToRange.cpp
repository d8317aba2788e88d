//===- ForallToRange.cpp - The [begin, end) kernel convention -------------===//
//
// Part of Loom. See LoomForallToRange in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/IRMapping.h"

namespace loom::compiler {
#define GEN_PASS_DEF_LOOMFORALLTORANGE
#include "loom/Compiler/Passes.h.inc"
} // namespace loom::compiler

using namespace mlir;
using namespace loom;

namespace {

/// Replaces \p forall (static bounds, on memrefs) by a loop over the
/// linearised iterations [begin, end); returns the trip count.
FailureOr<int64_t> rewriteForall(scf::ForallOp forall, Value begin, Value end) {
  if (!forall.getOutputs().empty())
    return forall.emitOpError("still has shared outputs: bufferize first");
  ArrayRef<int64_t> lbs = forall.getStaticLowerBound();
  ArrayRef<int64_t> ubs = forall.getStaticUpperBound();
  ArrayRef<int64_t> steps = forall.getStaticStep();
  if (llvm::any_of(llvm::concat<const int64_t>(lbs, ubs, steps),
                   ShapedType::isDynamic))
    return forall.emitOpError("has dynamic bounds");
  SmallVector<int64_t> counts;
  int64_t total = 1;
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps)) {
    counts.push_back(std::max<int64_t>(0, (ub - lb + step - 1) / step));
    total *= counts.back();
  }
  OpBuilder b(forall);
  Location loc = forall.getLoc();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, begin, end, one);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<OpFoldResult> basis = llvm::map_to_vector(
      counts, [&](int64_t c) -> OpFoldResult { return b.getIndexAttr(c); });
  auto delinearized = affine::AffineDelinearizeIndexOp::create(
      b, loc, loop.getInductionVar(), basis, /*hasOuterBound=*/true);
  IRMapping mapping;
  for (auto [i, iv] : llvm::enumerate(forall.getInductionVars())) {
    Value scaled = delinearized.getResult(i);
    if (steps[i] != 1)
      scaled = arith::MulIOp::create(
          b, loc, scaled, arith::ConstantIndexOp::create(b, loc, steps[i]));
    if (lbs[i] != 0)
      scaled = arith::AddIOp::create(
          b, loc, scaled, arith::ConstantIndexOp::create(b, loc, lbs[i]));
    mapping.map(iv, scaled);
  }
  for (Operation &op : forall.getBody()->without_terminator())
    b.clone(op, mapping);
  forall.erase();
  return total;
}

/// The memref \p v is a view of: a function argument or an allocation.
Value baseOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether iterations of \p forall may run as separate calls over parts of
/// the range: nothing else in the function writes a function argument (an
/// output), and nothing after the loop writes memory at all (when the loop
/// fills a temporary that is then copied out, every call would copy the
/// whole temporary, including the parts other calls computed).
bool splittable(scf::ForallOp forall) {
  bool after = false;
  for (Operation &op : *forall->getBlock()) {
    if (&op == forall.getOperation()) {
      after = true;
      continue;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(&op);
    if (!effects) {
      if (op.getNumRegions() > 0)
        return false; // unknown nested effects
      continue;
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (auto &e : list) {
      if (!isa<MemoryEffects::Write>(e.getEffect()))
        continue;
      if (after)
        return false;
      Value v = e.getValue();
      if (!v || isa<BlockArgument>(baseOf(v)))
        return false;
    }
  }
  return true;
}

struct ForallToRange
    : public compiler::impl::LoomForallToRangeBase<ForallToRange> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn.isPrivate())
        continue;
      Block &body = fn.getBody().front();
      Type index = IndexType::get(&getContext());
      unsigned n = fn.getNumArguments();
      if (failed(fn.insertArguments({n, n}, {index, index}, {{}, {}},
                                    {fn.getLoc(), fn.getLoc()})))
        return signalPassFailure();
      Value begin = body.getArgument(n), end = body.getArgument(n + 1);
      SmallVector<scf::ForallOp> foralls(body.getOps<scf::ForallOp>());
      int64_t range = 1;
      if (foralls.size() > 1) {
        fn.emitOpError("has ")
            << foralls.size() << " top-level scf.forall; a kernel has one";
        return signalPassFailure();
      }
      if (foralls.size() == 1) {
        scf::ForallOp forall = foralls.front();
        if (splittable(forall)) {
          auto total = rewriteForall(forall, begin, end);
          if (failed(total))
            return signalPassFailure();
          range = *total;
        } else {
          // One call computes everything: the loop runs its whole range.
          int64_t total = 1;
          for (auto [lb, ub, step] :
               llvm::zip(forall.getStaticLowerBound(),
                         forall.getStaticUpperBound(),
                         forall.getStaticStep()))
            total *= std::max<int64_t>(0, (ub - lb + step - 1) / step);
          OpBuilder b(forall);
          Value zero = arith::ConstantIndexOp::create(b, forall.getLoc(), 0);
          Value all =
              arith::ConstantIndexOp::create(b, forall.getLoc(), total);
          if (failed(rewriteForall(forall, zero, all)))
            return signalPassFailure();
        }
      }
      fn->setAttr("loom.range",
                  IntegerAttr::get(IntegerType::get(&getContext(), 64), range));
    }
  }
};

} // namespace
