//===- Probe.cpp - A fragment as a function of its own --------------------===//
//
// Part of Loom. See Probe.h.
//
//===----------------------------------------------------------------------===//

#include "Probe.h"

#include "loom/Compiler/Fragments.h"
#include "loom/Placement/Placement.h"
#include "loom/Dialect/TG/IR/TGTypes.h"
#include "loom/Support/ElementTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

namespace {

/// Constants up to this many elements are copied into a probe (as fragment
/// formation copies them into kernels); larger ones become weights.
constexpr int64_t kInlineConstantElements = 1024;

void addRandomWeight(safetensors::Writer &weights, StringRef name,
                     RankedTensorType type, std::mt19937 &rng) {
  auto kind = tg::elemKindOf(type.getElementType());
  const ElementTypeInfo &info = elementTypeInfo(kind ? *kind : ElemKind::F32);
  std::vector<double> values(type.getNumElements(), 0.0);
  if (info.isFloat) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (double &v : values)
      v = dist(rng);
  }
  // Integer weights (indices) stay zero: valid for every gather.
  llvm::cantFail(weights.add(name, info.dtype, type.getShape(), values));
}

} // namespace

func::FuncOp placement::buildProbe(const LibraryCall &call, ModuleOp module,
                                   StringRef name, StringRef weightPrefix,
                                   safetensors::Writer *weights,
                                   std::mt19937 *rng, bool formFragment,
                                   const BackendRegistry &registry) {
  llvm::SmallPtrSet<Operation *, 8> inside(call.ops.begin(), call.ops.end());
  llvm::SetVector<Value> externals;
  for (Operation *op : call.ops)
    for (Value v : op->getOperands())
      if (!inside.count(v.getDefiningOp()))
        externals.insert(v);
  auto isParameter = [](Value v) {
    return isa_and_nonnull<tg::WeightOp, tg::ConstantOp>(v.getDefiningOp());
  };
  SmallVector<Type> argTypes;
  for (Value v : externals)
    if (!isParameter(v))
      argTypes.push_back(v.getType());
  Operation *last = call.ops.back();
  Location loc = UnknownLoc::get(module.getContext());
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(
      b, loc, name, b.getFunctionType(argTypes, last->getResultTypes()));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  unsigned arg = 0, weight = 0;
  for (Value v : externals) {
    if (!isParameter(v)) {
      mapping.map(v, body->getArgument(arg++));
      continue;
    }
    auto type = cast<RankedTensorType>(v.getType());
    auto constant = v.getDefiningOp<tg::ConstantOp>();
    if (constant && type.getNumElements() <= kInlineConstantElements) {
      mapping.map(v, b.clone(*constant)->getResult(0));
      continue;
    }
    std::string weightName = (weightPrefix + Twine(weight++)).str();
    if (weights)
      addRandomWeight(*weights, weightName, type, *rng);
    mapping.map(v, tg::WeightOp::create(b, loc, type,
                                        b.getStringAttr(weightName))
                       .getResult());
  }
  SmallVector<Operation *> cloned;
  for (Operation *op : call.ops) {
    Operation *copy = b.clone(*op, mapping);
    copy->setLoc(loc);
    cloned.push_back(copy);
  }
  SmallVector<Value> results;
  for (Value r : last->getResults())
    results.push_back(mapping.lookup(r));
  func::ReturnOp::create(b, loc, results);
  if (!formFragment)
    return fn;
  // The one fragment the call places: its backend's candidate of the same
  // length at the copied anchor.
  auto choose = [&](Operation *op,
                    Available available) -> std::optional<LibraryCall> {
    if (op != cloned.front())
      return std::nullopt;
    SmallVector<LibraryCall> candidates;
    if (const Backend *backend = registry.lookup(call.backend))
      backend->candidates(op, available, candidates);
    for (LibraryCall &candidate : candidates)
      if (candidate.ops.size() == call.ops.size())
        return candidate;
    return std::nullopt;
  };
  formFragments(fn, choose);
  return fn;
}

std::string placement::fragmentKey(const LibraryCall &call) {
  Operation *anchor = call.anchor;
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(anchor->getLoc());
  func::FuncOp fn =
      buildProbe(call, *scratch, "fragment", "w", /*weights=*/nullptr,
                 /*rng=*/nullptr, /*formFragment=*/false,
                 BackendRegistry::builtin());
  std::string text;
  llvm::raw_string_ostream os(text);
  fn.print(os);
  return text;
}
