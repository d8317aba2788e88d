//===- RuleSet.cpp - Rule files: writing, loading, importing --------------===//
//
// Part of Loom. See RuleSet.h and docs/Superopt/RuleFormat.md.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/RuleSet.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;

#ifndef LOOM_DEFAULT_RULES_PATH
#define LOOM_DEFAULT_RULES_PATH ""
#endif

std::string superopt::defaultRulesPath() { return LOOM_DEFAULT_RULES_PATH; }

namespace {

/// Attribute names of the format.
constexpr const char *kStatus = "loom.status";
constexpr const char *kAxioms = "loom.axioms";
constexpr const char *kSourceOps = "loom.source_ops";
constexpr const char *kTargetOps = "loom.target_ops";
constexpr const char *kName = "loom.name";
constexpr const char *kRole = "loom.role";

std::optional<Role> roleNamed(StringRef name) {
  for (unsigned r = 0; r <= unsigned(Role::FoldedFilter); ++r)
    if (roleName(Role(r)) == name)
      return Role(r);
  return std::nullopt;
}

/// Emits \p g into the body of \p fn, whose arguments are \p args.
void emitGraph(Universe &u, const Graph &g, func::FuncOp fn,
               ArrayRef<int> argOf) {
  OpBuilder b = OpBuilder::atBlockEnd(&fn.getBody().front());
  Location loc = fn.getLoc();
  auto types = u.typeGraph(g);
  assert(types && "emitting an ill-typed graph");
  SmallVector<Value> values(u.numInputs());
  for (unsigned i = 0; i < u.numInputs(); ++i)
    if (argOf[i] >= 0)
      values[i] = fn.getArgument(argOf[i]);
  for (const Node &n : g.nodes) {
    SmallVector<Value, 5> operands;
    for (unsigned v : n.operands)
      operands.push_back(values[v]);
    SmallVector<Type, 2> resultTypes;
    unsigned first = values.size();
    for (unsigned r = 0; r < specOf(n.kind).numResults; ++r)
      resultTypes.push_back(
          tensorTypeOf(b.getContext(), u.shapes().get(types->shapes[first + r])));
    SmallVector<Value, 2> results;
    specOf(n.kind).emit(b, loc, n.attrs, operands, resultTypes, results);
    values.append(results.begin(), results.end());
  }
  SmallVector<Value, 4> outs;
  for (unsigned o : g.outputs)
    outs.push_back(values[o]);
  func::ReturnOp::create(b, loc, outs);
}

} // namespace

OwningOpRef<ModuleOp> superopt::emitRules(Universe &u,
                                          ArrayRef<RuleRecord> rules,
                                          DictionaryAttr info) {
  MLIRContext *ctx = u.mlir();
  Location loc = UnknownLoc::get(ctx);
  OwningOpRef<ModuleOp> top = ModuleOp::create(loc);
  (*top)->setAttr("loom.rulegen", info);
  OpBuilder b = OpBuilder::atBlockEnd(top->getBody());
  for (unsigned i = 0; i < rules.size(); ++i) {
    const RuleRecord &rule = rules[i];
    Universe &ru = rule.universe ? *rule.universe : u;
    auto module = ModuleOp::create(loc, "rule_" + std::to_string(i));
    b.insert(module);
    module->setAttr(kStatus, b.getStringAttr(rule.status));
    SmallVector<Attribute> axioms;
    for (const std::string &a : rule.axioms)
      axioms.push_back(b.getStringAttr(a));
    module->setAttr(kAxioms, b.getArrayAttr(axioms));
    module->setAttr(kSourceOps, b.getI64IntegerAttr(rule.source.numOps()));
    module->setAttr(kTargetOps, b.getI64IntegerAttr(rule.target.numOps()));
    module->setAttr("loom.source", b.getStringAttr(ru.describe(rule.source)));
    module->setAttr("loom.target", b.getStringAttr(ru.describe(rule.target)));

    // Arguments: the inputs either side uses, in universe order.
    llvm::SmallBitVector used =
        inputsUsedBy(rule.source, rule.target, ru.numInputs());
    SmallVector<int> argOf(ru.numInputs(), -1);
    SmallVector<Type> argTypes;
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned in = 0; in < ru.numInputs(); ++in) {
      if (!used[in])
        continue;
      argOf[in] = argTypes.size();
      const Input &input = ru.inputs()[in];
      argTypes.push_back(tensorTypeOf(ctx, ru.shapes().get(input.shape)));
      argAttrs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr(kName, b.getStringAttr(input.name)),
           b.getNamedAttr(kRole, b.getStringAttr(roleName(input.role)))}));
    }
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    for (auto [name, graph] : {std::pair<const char *, const Graph *>(
                                   "source", &rule.source),
                               {"target", &rule.target}}) {
      auto types = ru.typeGraph(*graph);
      assert(types && "emitting an ill-typed graph");
      SmallVector<Type> results;
      for (unsigned o : graph->outputs)
        results.push_back(
            tensorTypeOf(ctx, ru.shapes().get(types->shapes[o])));
      auto fn = func::FuncOp::create(mb, loc, name,
                                     mb.getFunctionType(argTypes, results));
      fn.setAllArgAttrs(argAttrs);
      fn.addEntryBlock();
      emitGraph(ru, *graph, fn, argOf);
    }
  }
  return top;
}

FailureOr<std::vector<Rule>> superopt::loadRules(ModuleOp rules) {
  std::vector<Rule> out;
  for (Operation &op : rules.getBody()->getOperations()) {
    auto module = dyn_cast<ModuleOp>(op);
    if (!module)
      return op.emitError("a rules file holds only rule modules, found ")
             << op.getName();
    Rule r;
    r.module = module;
    if (!module.getSymName())
      return module.emitError("a rule module needs a name (module @rule_N)");
    r.name = module.getSymName()->str();
    r.source = module.lookupSymbol<func::FuncOp>("source");
    r.target = module.lookupSymbol<func::FuncOp>("target");
    if (!r.source || !r.target)
      return module.emitError("rule @")
             << r.name << " needs func.func @source and func.func @target";
    if (r.source.getFunctionType() != r.target.getFunctionType())
      return module.emitError("rule @")
             << r.name << ": @source and @target have different types ("
             << r.source.getFunctionType() << " vs "
             << r.target.getFunctionType() << ")";
    if (r.source.getFunctionType().getNumResults() == 0)
      return module.emitError("rule @") << r.name << " has no results";
    auto status = module->getAttrOfType<StringAttr>(kStatus);
    if (!status)
      return module.emitError("rule @")
             << r.name << " lacks the string attribute " << kStatus;
    r.status = status.str();
    if (auto axioms = module->getAttrOfType<ArrayAttr>(kAxioms)) {
      for (Attribute a : axioms) {
        auto s = dyn_cast<StringAttr>(a);
        if (!s)
          return module.emitError("rule @")
                 << r.name << ": " << kAxioms << " must hold strings";
        r.axioms.push_back(s.str());
      }
    }
    auto countOps = [](func::FuncOp fn) {
      unsigned n = 0;
      fn.walk([&](Operation *o) {
        if (!isa<func::FuncOp, func::ReturnOp>(o))
          ++n;
      });
      return n;
    };
    auto opsAttr = [&](StringRef name, func::FuncOp fn) -> unsigned {
      if (auto a = module->getAttrOfType<IntegerAttr>(name))
        return a.getInt();
      return countOps(fn);
    };
    r.sourceOps = opsAttr(kSourceOps, r.source);
    r.targetOps = opsAttr(kTargetOps, r.target);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<InputDecl> superopt::inputsOfRuleFunction(func::FuncOp fn) {
  std::vector<InputDecl> r;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    InputDecl d;
    auto name = fn.getArgAttrOfType<StringAttr>(i, kName);
    d.name = name ? name.str() : "arg" + std::to_string(i);
    auto type = cast<RankedTensorType>(fn.getArgument(i).getType());
    d.shape.assign(type.getShape().begin(), type.getShape().end());
    auto role = fn.getArgAttrOfType<StringAttr>(i, kRole);
    d.role = Role::Activation;
    if (role)
      if (std::optional<Role> r = roleNamed(role.getValue()))
        d.role = *r;
    r.push_back(std::move(d));
  }
  return r;
}

FailureOr<Graph> superopt::importGraph(func::FuncOp fn, Universe &u) {
  Graph g;
  DenseMap<Value, unsigned> ids;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    ids[fn.getArgument(i)] = i;
  unsigned next = u.numInputs();
  // Constants carry their shape as an attribute of the kind; make every
  // shape of the function known to the universe's table first.
  fn.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (auto ranked = dyn_cast<RankedTensorType>(t))
        u.shapes().intern(ranked.getShape());
  });
  // Ops that belong to a macro are taken with its last op.
  DenseMap<Operation *, bool> covered;
  for (Operation &op : fn.getBody().front()) {
    ImportedOp imported;
    if (op.hasAttr("loom.macro") && importOp(&op, u.shapes(), imported))
      for (Operation *inner : imported.ops)
        if (inner != &op)
          covered[inner] = true;
  }
  for (Operation &op : fn.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        g.outputs.push_back(ids.lookup(v));
      continue;
    }
    if (covered.count(&op))
      continue;
    ImportedOp imported;
    if (!importOp(&op, u.shapes(), imported))
      return op.emitError("the rule generator does not know this op (or "
                          "these attributes)");
    Node n{imported.kind, imported.attrs, {}};
    for (Value v : imported.operands) {
      auto it = ids.find(v);
      if (it == ids.end())
        return op.emitError("operand defined outside the rule");
      n.operands.push_back(it->second);
    }
    for (Value r : op.getResults())
      ids[r] = next++;
    g.nodes.push_back(std::move(n));
  }
  if (auto types = u.typeGraph(g); !types)
    return fn.emitError("ill-typed rule: ")
           << llvm::toString(types.takeError());
  return g;
}
