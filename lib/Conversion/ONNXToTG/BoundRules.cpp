//===- BoundRules.cpp - The table of bound rules, and shared helpers ------===//
//
// Part of Loom. Builds the one table of bound rules (BoundRules.h) from the
// files that own them, and the helpers they share.
//
//===----------------------------------------------------------------------===//

#include "BoundRules.h"

#include "loom/Dialect/TG/IR/TGOps.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using TP = onnx::TensorProto;

const BoundRules &onnx_to_tg::getBoundRules(NodeContext &ctx) {
  static const BoundRulesTable table = [] {
    BoundRulesTable t;
    populateBoundPropagationRules(t);
    populateRunTimeIntRules(t); // before the lengths rules of reductions
    populateRunTimeLengthRules(t);
    populateTwicePaddedRules(t);
    populateValueRangeRules(t);
    return t;
  }();
  static const BoundRules none;
  auto it = table.find(ctx.opType());
  return it == table.end() ? none : it->second;
}

void onnx_to_tg::addLengthsRule(
    BoundRulesTable &table, StringRef op,
    std::function<FailureOr<bool>(NodeContext &)> rule) {
  auto &slot = table[op].lengths;
  if (!slot) {
    slot = std::move(rule);
    return;
  }
  slot = [first = std::move(slot),
          second = std::move(rule)](NodeContext &c) -> FailureOr<bool> {
    FailureOr<bool> done = first(c);
    if (failed(done) || *done)
      return done;
    return second(c);
  };
}

LogicalResult BoundMerger::add(BoundedDim b) {
  if (merged && (merged->dim != b.dim || merged->length != b.length))
    return ctx.fail("inputs of different data-dependent lengths (or padded "
                    "along different dimensions) are not supported");
  merged = b;
  return success();
}

FailureOr<bool> onnx_to_tg::handled(LogicalResult result) {
  if (failed(result))
    return failure();
  return true;
}

ImportedValue *onnx_to_tg::inputValue(NodeContext &ctx, unsigned i) {
  return ctx.hasInput(i) ? ctx.importer().lookup(ctx.node().input(i)) : nullptr;
}

ImportedValue *onnx_to_tg::outputValue(NodeContext &ctx, unsigned i) {
  return ctx.hasOutput(i) ? ctx.importer().lookup(ctx.node().output(i))
                          : nullptr;
}

bool onnx_to_tg::isTracked(NodeContext &ctx, unsigned i) {
  ImportedValue *v = inputValue(ctx, i);
  return v && v->runTimeInts;
}

std::optional<RunTimeInts> onnx_to_tg::intsOf(NodeContext &ctx, unsigned i) {
  ImportedValue *v = inputValue(ctx, i);
  if (!v)
    return std::nullopt;
  if (v->runTimeInts)
    return *v->runTimeInts;
  const HostTensor *t = ctx.known(i, kMaxTracked);
  if (!t || t->isFloat())
    return std::nullopt;
  RunTimeInts out;
  for (int64_t e : t->ints)
    out.push_back({e, true, Value()});
  return out;
}

Type onnx_to_tg::i64Type(NodeContext &ctx) {
  return IntegerType::get(ctx.context(), 64);
}

Value onnx_to_tg::i64Scalar(NodeContext &ctx, int64_t v) {
  return ctx.scalar(i64Type(ctx), static_cast<double>(v));
}

FailureOr<Value> onnx_to_tg::iota(NodeContext &ctx, int64_t n,
                                  ArrayRef<int64_t> shape) {
  HostTensor t;
  t.dataType = TP::INT64;
  t.shape.assign(shape.begin(), shape.end());
  for (int64_t i = 0; i < n; ++i)
    t.ints.push_back(i);
  return ctx.materialize(t, "iota");
}

/// Element `k` of a 1-D (or one-element) run-time integer tensor, rank 0.
static FailureOr<Value> elementAt(NodeContext &ctx, Value v, int64_t k) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 0)
    return v;
  auto flat = ctx.reshape(v, {type.getNumElements()});
  if (failed(flat))
    return failure();
  auto one = ctx.create<tg::SliceOp>(
      *flat, {ctx.arrayAttr("starts", {k}), ctx.arrayAttr("limits", {k + 1})});
  if (failed(one))
    return failure();
  return ctx.reshape(*one, {});
}

FailureOr<Value> onnx_to_tg::readElement(NodeContext &ctx, unsigned i,
                                         int64_t k) {
  auto v = ctx.input(i);
  if (failed(v))
    return failure();
  auto x = ctx.convert(*v, i64Type(ctx));
  if (failed(x))
    return failure();
  return elementAt(ctx, *x, k);
}

void onnx_to_tg::setOutputInts(NodeContext &ctx, unsigned i, RunTimeInts ints) {
  if (ImportedValue *v = outputValue(ctx, i))
    v->runTimeInts = std::move(ints);
}

void onnx_to_tg::setOutputBounds(NodeContext &ctx, ArrayRef<BoundedDim> bs) {
  setBounds(ctx, *outputValue(ctx, 0), bs);
}

LogicalResult onnx_to_tg::ownHandler(NodeContext &ctx) {
  return getHandlerTable().find(ctx.opType())->second(ctx);
}
