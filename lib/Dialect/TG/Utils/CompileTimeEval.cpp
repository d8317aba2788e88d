//===- CompileTimeEval.cpp - Computing tg ops at compile time -------------===//
//
// Part of Loom. See CompileTimeEval.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/Utils/CompileTimeEval.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TGTypes.h"
#include "loom/Interpreter/EvalFrame.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

std::optional<interp::FoldDomain> tg::foldDomainOf(Operation *op) {
  SmallVector<ElemKind> kinds;
  for (TypeRange types : {TypeRange(op->getOperandTypes()),
                          TypeRange(op->getResultTypes())})
    for (Type t : types) {
      std::optional<ElemKind> kind = elemKindOf(t);
      if (!kind)
        return std::nullopt;
      kinds.push_back(*kind);
    }
  return interp::foldDomainFor(kinds, /*convertsOnly=*/isa<CastOp>(op));
}

namespace {

template <class D>
using TensorsIn = std::vector<std::shared_ptr<const interp::Tensor<D>>>;

/// \p op's results on \p in, by its EvaluableOpInterface in domain D.
template <class D>
FailureOr<TensorsIn<D>> runIn(EvaluableOpInterface op,
                              ArrayRef<const interp::Tensor<D> *> in) {
  TensorsIn<D> results;
  auto noWeight = [&]() -> FailureOr<std::shared_ptr<const interp::Tensor<D>>> {
    return op->emitOpError("reads a weight file, which compile-time "
                           "evaluation does not");
  };
  auto noBody = [&](Block &, ArrayRef<std::shared_ptr<const interp::Tensor<D>>>)
      -> FailureOr<TensorsIn<D>> {
    return op->emitOpError("runs a region, which compile-time evaluation "
                           "does not");
  };
  interp::TypedFrame<D> typed(in, results, noWeight, noBody);
  interp::EvalFrame frame(typed);
  if (failed(op.evaluate(frame)))
    return failure();
  return results;
}

/// \p t with its elements rounded to \p kind (\p t itself when they are
/// already what the type holds, as the results of an op in F64 mostly are).
KnownTensorPtr roundedTo(KnownTensorPtr t, ElemKind kind) {
  auto differs = [&](double v) {
    double r = interp::roundToElemKind(v, kind);
    return r != v && !(r != r && v != v); // NaN stays NaN
  };
  if (!llvm::any_of(t->data, differs))
    return t;
  auto out = std::make_shared<KnownTensor>(*t);
  for (double &v : out->data)
    v = interp::roundToElemKind(v, kind);
  return out;
}

} // namespace

FailureOr<std::vector<KnownTensorPtr>>
tg::evaluateAtCompileTime(Operation &op, ArrayRef<const KnownTensor *> operands) {
  auto evaluable = dyn_cast<EvaluableOpInterface>(op);
  if (!evaluable)
    return op.emitOpError("has no evaluation (EvaluableOpInterface)");
  std::optional<interp::FoldDomain> domain = foldDomainOf(&op);
  if (!domain)
    return op.emitOpError("has an operand or result that is not a tg tensor "
                          "type; compile-time evaluation needs one");
  TensorsIn<interp::F64Domain> results;
  switch (*domain) {
  case interp::FoldDomain::F64: {
    auto r = runIn<interp::F64Domain>(evaluable, operands);
    if (failed(r))
      return failure();
    results = std::move(*r);
    break;
  }
  case interp::FoldDomain::F32: {
    using F32 = interp::Tensor<interp::F32Domain>;
    std::vector<F32> converted;
    converted.reserve(operands.size());
    for (const KnownTensor *t : operands)
      converted.push_back(F32::fromDoubles(t->shape, t->data));
    std::vector<const F32 *> in;
    for (const F32 &t : converted)
      in.push_back(&t);
    auto r = runIn<interp::F32Domain>(evaluable, in);
    if (failed(r))
      return failure();
    for (const auto &t : *r)
      results.push_back(std::make_shared<const KnownTensor>(
          KnownTensor::fromDoubles(t->shape, t->toDoubles())));
    break;
  }
  }
  std::vector<KnownTensorPtr> out;
  for (auto [t, type] : llvm::zip(results, op.getResultTypes()))
    out.push_back(roundedTo(std::move(t), *elemKindOf(type)));
  return out;
}
