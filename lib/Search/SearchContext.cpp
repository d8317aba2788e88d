//===- SearchContext.cpp - Interned ops, shape rules and costs ------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/SearchContext.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <thread>

using namespace mlir;
using namespace loom;
using namespace loom::search;

SearchContext::SearchContext(MLIRContext *context, cost::CostModel *model)
    : context(context), model(model), scratch(std::make_unique<Block>()) {}

SearchContext::~SearchContext() = default;

size_t
SearchContext::KeyHash::operator()(const std::vector<const void *> &k) const {
  return llvm::hash_combine_range(k.begin(), k.end());
}

ArrayRef<StringRef> SearchContext::shapeAttrNames(StringRef opName) {
  static const StringRef split[] = {"sizes"};
  static const StringRef slice[] = {"starts", "limits"};
  static const StringRef resize[] = {"sizes"};
  if (opName == "tg.split")
    return split;
  if (opName == "tg.slice")
    return slice;
  if (opName == "tg.resize")
    return resize;
  return {};
}

/// Fills in default values and returns the inherent attributes of an op
/// named `name` with attributes `attrs`, by building it (detached) and
/// reading them back.
static DictionaryAttr canonicalInherentAttrs(MLIRContext *ctx,
                                             OperationName name,
                                             DictionaryAttr attrs) {
  if (!name.isRegistered())
    return attrs;
  OperationState state(UnknownLoc::get(ctx), name);
  state.attributes.append(attrs.getValue());
  Operation *op = Operation::create(state);
  if (op->getPropertiesStorageSize())
    name.populateDefaultProperties(op->getPropertiesStorage());
  NamedAttrList inherent;
  name.populateInherentAttrs(op, inherent);
  if (!op->getPropertiesStorageSize()) {
    // No properties: attributes are stored in the dictionary; keep them.
    inherent = NamedAttrList(op->getAttrDictionary());
    name.populateDefaultAttrs(inherent);
  }
  op->destroy();
  return inherent.getDictionary(ctx);
}

/// Makes negative `axis` / `axes` values non-negative for a tg op whose
/// first operand has rank `rank`.
static DictionaryAttr normalizeAxes(MLIRContext *ctx, OperationName name,
                                    DictionaryAttr attrs,
                                    std::optional<int64_t> rank) {
  if (!rank || name.getDialectNamespace() != "tg")
    return attrs;
  NamedAttrList list(attrs);
  bool changed = false;
  if (auto axis = dyn_cast_or_null<IntegerAttr>(list.get("axis"))) {
    int64_t a = axis.getInt();
    if (a < 0 && a >= -*rank) {
      list.set("axis", IntegerAttr::get(axis.getType(), a + *rank));
      changed = true;
    }
  }
  if (auto axes = dyn_cast_or_null<DenseI64ArrayAttr>(list.get("axes"))) {
    SmallVector<int64_t> v(axes.asArrayRef());
    bool any = false;
    for (int64_t &a : v)
      if (a < 0 && a >= -*rank) {
        a += *rank;
        any = true;
      }
    if (any) {
      list.set("axes", DenseI64ArrayAttr::get(ctx, v));
      changed = true;
    }
  }
  return changed ? list.getDictionary(ctx) : attrs;
}

OpId SearchContext::internOp(OperationName name, DictionaryAttr attrs,
                             std::optional<int64_t> operand0Rank) {
  if (!attrs)
    attrs = DictionaryAttr::get(context);
  DictionaryAttr canonical =
      normalizeAxes(context, name, canonicalInherentAttrs(context, name, attrs),
                    operand0Rank);
  auto key =
      std::make_pair(name.getAsOpaquePointer(), canonical.getAsOpaquePointer());
  auto it = opIds.find(key);
  if (it != opIds.end())
    return it->second;
  OpInfo info;
  info.kind = OpInfo::Kind::Op;
  info.name = name;
  info.attrs = canonical;
  computeDerived(info);
  OpId id = ops.size();
  ops.push_back(std::move(info));
  opIds[key] = id;
  return id;
}

OpId SearchContext::internOp(Operation *op) {
  NamedAttrList inherent;
  if (op->getPropertiesStorageSize())
    op->getName().populateInherentAttrs(op, inherent);
  else
    inherent = NamedAttrList(op->getAttrDictionary());
  std::optional<int64_t> rank;
  if (op->getNumOperands())
    if (auto t = dyn_cast<RankedTensorType>(op->getOperand(0).getType()))
      rank = t.getRank();
  return internOp(op->getName(), inherent.getDictionary(context), rank);
}

OpId SearchContext::argOp(unsigned index) {
  while (argOps.size() <= index) {
    OpInfo info;
    info.kind = OpInfo::Kind::Arg;
    info.index = argOps.size();
    info.shapeClass = ~0u;
    info.numResults = 1;
    argOps.push_back(ops.size());
    ops.push_back(std::move(info));
  }
  return argOps[index];
}

OpId SearchContext::projOp(unsigned index) {
  while (projOps.size() <= index) {
    OpInfo info;
    info.kind = OpInfo::Kind::Proj;
    info.index = projOps.size();
    info.shapeClass = ~0u - 1;
    info.numResults = 1;
    projOps.push_back(ops.size());
    ops.push_back(std::move(info));
  }
  return projOps[index];
}

void SearchContext::computeDerived(OpInfo &info) {
  OperationName name = *info.name;
  StringRef opName = name.getStringRef();
  info.commutative = name.hasTrait<OpTrait::IsCommutative>();
  info.literalKernel = opName == "tg.conv";
  info.leaf = opName == "tg.weight" || opName == "tg.constant";
  info.infersTypes = name.hasInterface<InferTypeOpInterface>();
  if (opName != "tg.split")
    info.numResults = 1;

  // The shape class: the attributes with shape-carrying values replaced by
  // their lengths, and splat constants by their element value.
  NamedAttrList key(info.attrs);
  for (StringRef attrName : shapeAttrNames(opName)) {
    if (auto arr = dyn_cast_or_null<DenseI64ArrayAttr>(key.get(attrName))) {
      llvm::append_range(info.shapeValues, arr.asArrayRef());
      key.set(attrName,
              IntegerAttr::get(IntegerType::get(context, 64), arr.size()));
    }
  }
  if (opName == "tg.constant") {
    auto value = dyn_cast_or_null<DenseElementsAttr>(key.get("value"));
    if (value && value.isSplat()) {
      info.constKind = ConstKind::Splat;
      key.erase("value");
      key.set("splat", value.getSplatValue<Attribute>());
    } else {
      info.constKind = ConstKind::Exact;
    }
  }
  auto classKey =
      std::make_pair(name.getAsOpaquePointer(),
                     key.getDictionary(context).getAsOpaquePointer());
  auto [it, inserted] = shapeClasses.try_emplace(classKey, shapeClasses.size());
  info.shapeClass = it->second;
}

Value SearchContext::scratchValue(Type type) {
  auto it = scratchValues.find(type);
  if (it != scratchValues.end())
    return it->second;
  Value v = scratch->addArgument(type, UnknownLoc::get(context));
  scratchValues[type] = v;
  return v;
}

const OpEval &SearchContext::evaluate(OpId id, ArrayRef<Type> operandTypes,
                                      ArrayRef<Type> hintTypes) {
  ++numEvaluations;
  const OpInfo &info = ops[id];
  std::vector<const void *> key;
  key.reserve(2 + operandTypes.size() + hintTypes.size());
  key.push_back(reinterpret_cast<const void *>(uintptr_t(id)));
  for (Type t : operandTypes)
    key.push_back(t.getAsOpaquePointer());
  if (!info.infersTypes) {
    key.push_back(nullptr);
    for (Type t : hintTypes)
      key.push_back(t.getAsOpaquePointer());
  }
  auto it = evalMemo.find(key);
  if (it != evalMemo.end())
    return it->second;

  OpEval eval;
  if (!info.isOp()) {
    // Pseudo ops: an argument has its hinted type, a projection is free.
    eval.valid = true;
    eval.resultTypes.assign(hintTypes.begin(), hintTypes.end());
    return evalMemo[key] = eval;
  }

  // Failed inference and verification report through diagnostics; a failed
  // candidate is an ordinary event of the search, so keep them quiet: this
  // thread's only (loom-compile compiles the graph as written on another
  // thread during the search; its diagnostics go on to the tool's handler).
  ScopedDiagnosticHandler silence(
      context, [searching = std::this_thread::get_id()](Diagnostic &) {
        return success(std::this_thread::get_id() == searching);
      });
  OperationState state(UnknownLoc::get(context), *info.name);
  for (Type t : operandTypes)
    state.operands.push_back(scratchValue(t));
  state.attributes.append(info.attrs.getValue());
  bool ok = true;
  if (info.infersTypes) {
    Operation *probe = Operation::create(state);
    SmallVector<Type, 2> inferred;
    auto iface = cast<InferTypeOpInterface>(probe);
    ok = succeeded(iface.inferReturnTypes(
        context, std::nullopt, probe->getOperands(),
        probe->getRawDictionaryAttrs(), probe->getPropertiesStorage(),
        probe->getRegions(), inferred));
    probe->destroy();
    state.types.assign(inferred.begin(), inferred.end());
  } else {
    state.types.assign(hintTypes.begin(), hintTypes.end());
  }
  if (ok) {
    Operation *op = Operation::create(state);
    ok = succeeded(mlir::verify(op, /*verifyRecursively=*/false));
    if (ok) {
      eval.resultTypes.assign(op->result_type_begin(), op->result_type_end());
      if (model) {
        eval.cost = model->opCost(op);
      } else {
        cost::OpWork w = cost::workOf(op);
        eval.cost = w.kernel ? 1e-6 + w.flops * 1e-12 + w.bytes() * 1e-11 : 0;
      }
    }
    op->destroy();
  }
  eval.valid = ok;
  return evalMemo[key] = std::move(eval);
}

std::string SearchContext::describe(OpId id) const {
  const OpInfo &info = ops[id];
  if (info.isArg())
    return "arg#" + std::to_string(info.index);
  if (info.isProj())
    return "proj#" + std::to_string(info.index);
  std::string s;
  llvm::raw_string_ostream os(s);
  os << info.name->getStringRef();
  if (info.attrs && !info.attrs.empty())
    os << info.attrs;
  return s;
}

DenseElementsAttr search::makeTaggedConstant(StringRef tag,
                                             RankedTensorType type) {
  if (!type.getElementType().isF32() || !type.hasStaticShape())
    return {};
  ArrayRef<int64_t> s = type.getShape();
  int64_t n = type.getNumElements();
  // The uniform families are splats: no storage of their size.
  if (tag == "const_one")
    return DenseElementsAttr::get(type, 1.0f);
  if (tag == "const_pool") {
    if (s.size() != 4 || s[2] * s[3] == 0)
      return {};
    return DenseElementsAttr::get(type,
                                  static_cast<float>(1.0 / double(s[2] * s[3])));
  }
  // The others are stored element by element; one too large for a
  // rewrite to be worth it (an identity of a vocabulary's width) is none.
  if (n > kMaxTaggedConstantElements)
    return {};
  std::vector<float> values(n, 0.0f);
  if (tag == "const_imm") {
    if (s.size() != 2)
      return {};
    for (int64_t i = 0; i < n; ++i)
      values[i] = i / s[1] == i % s[1] ? 1.0f : 0.0f;
  } else if (tag == "const_iconv") {
    if (s.size() != 4)
      return {};
    for (int64_t i = 0; i < n; ++i) {
      int64_t kw = i % s[3], kh = (i / s[3]) % s[2];
      int64_t in = (i / (s[3] * s[2])) % s[1], o = i / (s[3] * s[2] * s[1]);
      values[i] = o == in && kh == s[2] / 2 && kw == s[3] / 2 ? 1.0f : 0.0f;
    }
  } else {
    return {};
  }
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

bool SearchContext::isTaggedConstant(OpId id, StringRef tag) {
  const OpInfo &info = ops[id];
  if (!info.isOp() || info.constKind == ConstKind::None)
    return false;
  std::pair<OpId, const void *> key(
      id, StringAttr::get(context, tag).getAsOpaquePointer());
  auto it = taggedMemo.find(key);
  if (it != taggedMemo.end())
    return it->second;
  auto value = dyn_cast_or_null<DenseElementsAttr>(info.attrs.get("value"));
  bool is = false;
  if (value)
    if (auto type = dyn_cast<RankedTensorType>(value.getType()))
      is = makeTaggedConstant(tag, type) == value;
  taggedMemo[key] = is;
  return is;
}
