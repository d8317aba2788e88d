//===- FoldWeights.cpp - Compute parameter-only ops at compile time -------===//
//
// Part of Loom. See TGFoldWeights in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Interpreter/EvalFrame.h"
#include "loom/Support/Shapes.h"

#include "mlir/IR/Builders.h"

namespace loom::tg {
#define GEN_PASS_DEF_TGFOLDWEIGHTS
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

#include <vector>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

using interp::F64Domain;
using TensorPtr = std::shared_ptr<const interp::Tensor<F64Domain>>;

/// A dense attribute of \p type holding \p values, rounded once to the
/// element type.
DenseElementsAttr denseOf(RankedTensorType type, ArrayRef<double> values) {
  Type e = type.getElementType();
  // f32 and f64 directly (a C++ conversion rounds to nearest, ties to even,
  // as APFloat's below): a concatenation of eight 512x512 matrices took
  // 1.9 s through APFloat, most of a compilation (NasRNN rewritten).
  if (e.isF32()) {
    std::vector<float> out(values.begin(), values.end());
    return DenseElementsAttr::get(type, ArrayRef<float>(out));
  }
  if (e.isF64())
    return DenseElementsAttr::get(type, values);
  if (auto f = dyn_cast<FloatType>(e)) {
    SmallVector<APFloat> out;
    out.reserve(values.size());
    for (double v : values) {
      APFloat a(v);
      bool lost;
      a.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(a);
    }
    return DenseElementsAttr::get(type, out);
  }
  SmallVector<APInt> out;
  unsigned width = e.getIntOrFloatBitWidth();
  for (double v : values)
    out.push_back(APInt(width, static_cast<int64_t>(v), /*isSigned=*/true,
                        /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, out);
}

class WeightFolder {
public:
  WeightFolder(ModuleOp module, const safetensors::File *given,
               StringRef weightsFile, int64_t maxElements)
      : module(module), given(given), lazy(module, weightsFile.str()),
        maxElements(maxElements) {}

  LogicalResult run() {
    // Every block, the regions of tg.if included (parameters defined
    // outside a region are used inside it).
    SmallVector<Block *> blocks;
    for (auto fn : module.getOps<func::FuncOp>())
      fn->walk<WalkOrder::PreOrder>([&](Block *b) { blocks.push_back(b); });
    for (Block *block : blocks)
      for (Operation &op : llvm::make_early_inc_range(*block))
        if (failed(visit(op)))
          return failure();
    return success();
  }

private:
  ModuleOp module;
  const safetensors::File *given;
  LazyWeights lazy;
  int64_t maxElements;
  llvm::DenseMap<Value, TensorPtr> known;

  FailureOr<TensorPtr> loadWeight(WeightOp op) {
    const safetensors::File *file = given;
    if (file) {
      if (failed(checkWeight(op, *file)))
        return failure();
    } else {
      auto opened = lazy.fileFor(op);
      if (failed(opened))
        return failure();
      file = *opened;
    }
    auto values = file->readAsDouble(op.getName());
    if (!values)
      return op.emitOpError() << llvm::toString(values.takeError());
    auto shape = op.getType().getShape();
    return std::make_shared<const interp::Tensor<F64Domain>>(
        interp::Tensor<F64Domain>::fromDoubles(
            std::vector<int64_t>(shape.begin(), shape.end()), *values));
  }

  /// The value of a parameter operand (loading a weight on first use).
  FailureOr<TensorPtr> valueOf(Value v) {
    auto it = known.find(v);
    if (it != known.end())
      return it->second;
    auto weight = v.getDefiningOp<WeightOp>();
    if (!weight)
      return failure();
    auto t = loadWeight(weight);
    if (succeeded(t))
      known[v] = *t;
    return t;
  }

  static bool isParameter(Value v) {
    Operation *def = v.getDefiningOp();
    return def && isa<WeightOp, ConstantOp>(def);
  }

  LogicalResult visit(Operation &op) {
    if (!isa<TGDialect>(op.getDialect()) || op.getNumRegions() ||
        op.hasTrait<OpTrait::IsTerminator>() ||
        isa<WeightOp, ConstantOp>(op) || op.getNumOperands() == 0 ||
        !llvm::all_of(op.getOperands(), isParameter))
      return success();
    for (Type t : op.getResultTypes()) {
      auto n = checkedNumElements(cast<RankedTensorType>(t).getShape());
      if (n < 0 || n > maxElements)
        return success();
    }
    std::vector<const interp::Tensor<F64Domain> *> in;
    std::vector<TensorPtr> keep;
    for (Value v : op.getOperands()) {
      if (isa<ConstantOp>(v.getDefiningOp()) && !known.count(v)) {
        auto c = evaluate(*v.getDefiningOp(), {});
        if (failed(c))
          return failure();
        known[v] = c->front();
      }
      auto t = valueOf(v);
      if (failed(t))
        return failure();
      keep.push_back(*t);
      in.push_back(t->get());
    }
    auto results = evaluate(op, in);
    if (failed(results))
      return failure();
    OpBuilder b(&op);
    for (auto [r, t] : llvm::zip(op.getResults(), *results)) {
      auto type = cast<RankedTensorType>(r.getType());
      auto folded = ConstantOp::create(b, op.getLoc(), type,
                                       denseOf(type, t->toDoubles()));
      known[folded.getResult()] = t;
      r.replaceAllUsesWith(folded.getResult());
    }
    op.erase();
    return success();
  }

  FailureOr<std::vector<TensorPtr>>
  evaluate(Operation &op, ArrayRef<const interp::Tensor<F64Domain> *> in) {
    std::vector<TensorPtr> results;
    auto noWeight = []() -> FailureOr<TensorPtr> { return failure(); };
    auto noBody = [](Block &,
                     ArrayRef<TensorPtr>) -> FailureOr<std::vector<TensorPtr>> {
      return failure();
    };
    interp::TypedFrame<F64Domain> typed(in, results, noWeight, noBody);
    interp::EvalFrame frame(typed);
    if (failed(cast<EvaluableOpInterface>(op).evaluate(frame)))
      return failure();
    return results;
  }
};

struct FoldWeights : public tg::impl::TGFoldWeightsBase<FoldWeights> {
  using TGFoldWeightsBase::TGFoldWeightsBase;
  FoldWeights(const safetensors::File *weights, int64_t max) : given(weights) {
    maxElements = max;
  }

  void runOnOperation() override {
    WeightFolder folder(getOperation(), given, weightsFile, maxElements);
    if (failed(folder.run()))
      signalPassFailure();
  }

  const safetensors::File *given = nullptr;
};

} // namespace

std::unique_ptr<Pass> tg::createTGFoldWeightsPass(const safetensors::File *w,
                                                  int64_t maxElements) {
  return std::make_unique<FoldWeights>(w, maxElements);
}
