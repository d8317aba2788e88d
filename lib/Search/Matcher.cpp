//===- Matcher.cpp - Instantiating rule targets at real shapes ------------===//
//
// Part of Loom. See Matcher.h for the matching rules.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/Matcher.h"

#include "llvm/ADT/Hashing.h"

#include <algorithm>

using namespace mlir;
using namespace loom;
using namespace loom::search;

bool search::unifyType(DimMap &dims, RankedTensorType witness, Type real) {
  auto r = dyn_cast<RankedTensorType>(real);
  if (!r || r.getRank() != witness.getRank() ||
      r.getElementType() != witness.getElementType())
    return false;
  for (auto [w, x] : llvm::zip(witness.getShape(), r.getShape()))
    if (!dims.unify(w, x))
      return false;
  return true;
}

size_t Instantiator::KeyHash::operator()(const std::vector<int64_t> &k) const {
  return llvm::hash_combine_range(k.begin(), k.end());
}

const Instance *Instantiator::instantiate(const Rule &rule,
                                          ArrayRef<Type> varTypes,
                                          const DimMap &dims,
                                          ArrayRef<Type> outputTypes) {
  std::vector<int64_t> key;
  key.reserve(4 + varTypes.size() + 2 * dims.entries().size() +
              outputTypes.size());
  key.push_back(rule.id);
  for (Type t : varTypes)
    key.push_back(int64_t(uintptr_t(t ? t.getAsOpaquePointer() : nullptr)));
  key.push_back(-1);
  SmallVector<std::pair<int64_t, int64_t>, 12> entries(dims.entries());
  llvm::sort(entries);
  for (auto [w, r] : entries) {
    key.push_back(w);
    key.push_back(r);
  }
  key.push_back(-2);
  for (Type t : outputTypes)
    key.push_back(int64_t(uintptr_t(t.getAsOpaquePointer())));
  auto it = memo.find(key);
  if (it == memo.end()) {
    it = memo.emplace(std::move(key), build(rule, varTypes, dims, outputTypes))
             .first;
    if (!it->second)
      ++rejected;
  }
  return it->second ? &*it->second : nullptr;
}

/// The witness type `t` with its dims mapped; `complete` is cleared when a
/// dim has no image (it is then kept as is).
static RankedTensorType mapType(RankedTensorType t, const DimMap &dims,
                                bool &complete) {
  SmallVector<int64_t, 4> shape;
  for (int64_t d : t.getShape()) {
    std::optional<int64_t> m = dims.map(d);
    if (!m)
      complete = false;
    shape.push_back(m.value_or(d));
  }
  return RankedTensorType::get(shape, t.getElementType());
}

std::optional<Instance> Instantiator::build(const Rule &rule,
                                            ArrayRef<Type> varTypes,
                                            const DimMap &dims,
                                            ArrayRef<Type> outputTypes) {
  const GraphPattern &t = rule.target;
  MLIRContext *ctx = sc.getContext();
  Instance inst;
  auto typeOfRef = [&](PatternRef r) -> Type {
    return r.isVar() ? varTypes[r.index] : inst.ops[r.op].types[r.index];
  };
  for (const PatternOp &pop : t.ops) {
    const OpInfo &info = sc.op(pop.op);
    StringRef opName = info.name->getStringRef();
    SmallVector<Type, 3> operandTypes;
    for (PatternRef r : pop.operands) {
      Type ty = typeOfRef(r);
      if (!ty)
        return std::nullopt;
      operandTypes.push_back(ty);
    }
    bool complete = true;
    SmallVector<Type, 2> mapped;
    for (RankedTensorType w : pop.types)
      mapped.push_back(mapType(w, dims, complete));

    // Shape-carrying attributes and constant values, through the mapping.
    NamedAttrList attrs(info.attrs);
    bool changed = false;
    for (StringRef attrName : SearchContext::shapeAttrNames(opName)) {
      auto arr = dyn_cast_or_null<DenseI64ArrayAttr>(attrs.get(attrName));
      if (!arr)
        continue;
      SmallVector<int64_t, 4> values;
      for (int64_t w : arr.asArrayRef()) {
        std::optional<int64_t> m = dims.map(w);
        if (!m)
          return std::nullopt; // a size the match does not determine
        values.push_back(*m);
      }
      if (ArrayRef<int64_t>(values) != arr.asArrayRef()) {
        attrs.set(attrName, DenseI64ArrayAttr::get(ctx, values));
        changed = true;
      }
    }
    switch (pop.constKind) {
    case ConstKind::None:
      break;
    case ConstKind::Splat: {
      if (!complete)
        return std::nullopt;
      auto value = cast<DenseElementsAttr>(info.attrs.get("value"));
      auto type = cast<RankedTensorType>(mapped[0]);
      if (type != value.getType()) {
        attrs.set("value", DenseElementsAttr::get(
                               type, value.getSplatValue<Attribute>()));
        changed = true;
      }
      break;
    }
    case ConstKind::Tagged: {
      if (!complete)
        return std::nullopt;
      DenseElementsAttr value =
          makeTaggedConstant(pop.tag, cast<RankedTensorType>(mapped[0]));
      if (!value)
        return std::nullopt;
      attrs.set("value", value);
      changed = true;
      break;
    }
    case ConstKind::Exact:
      if (mapped[0] != pop.types[0])
        return std::nullopt;
      break;
    }

    OpId id = pop.op;
    if (changed) {
      std::optional<int64_t> rank;
      if (!operandTypes.empty())
        rank = cast<RankedTensorType>(operandTypes[0]).getRank();
      id = sc.internOp(*info.name, attrs.getDictionary(ctx), rank);
    }
    const OpInfo &newInfo = sc.op(id);
    if (!newInfo.infersTypes && !complete)
      return std::nullopt; // a result shape the match does not determine
    const OpEval &eval = sc.evaluate(id, operandTypes, mapped);
    if (!eval.valid)
      return std::nullopt;
    if (complete && ArrayRef<Type>(eval.resultTypes) != ArrayRef<Type>(mapped))
      return std::nullopt; // inconsistent with the witness
    Instance::Op op;
    op.op = id;
    op.operands = pop.operands;
    op.types = eval.resultTypes;
    op.cost = eval.cost;
    inst.ops.push_back(std::move(op));
  }
  if (t.outputs.size() != outputTypes.size())
    return std::nullopt;
  for (auto [r, want] : llvm::zip(t.outputs, outputTypes))
    if (typeOfRef(r) != want)
      return std::nullopt;
  inst.outputs = t.outputs;
  return inst;
}
