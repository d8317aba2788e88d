//===- Rule.cpp - Graph substitutions and their loader --------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/Rule.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace loom;
using namespace loom::search;

bool GraphPattern::usesVar(unsigned i) const {
  for (const PatternOp &op : ops)
    for (PatternRef r : op.operands)
      if (r.isVar() && r.index == i)
        return true;
  for (PatternRef r : outputs)
    if (r.isVar() && r.index == i)
      return true;
  return false;
}

void GraphPattern::finalize() {
  resultBase.clear();
  unsigned next = varTypes.size();
  for (const PatternOp &op : ops) {
    resultBase.push_back(next);
    next += op.types.size();
  }
  numValuesCached = next;
}

std::string search::defaultRulesPath() {
#ifdef LOOM_DEFAULT_RULES
  return LOOM_DEFAULT_RULES;
#else
  return "";
#endif
}

namespace {

/// Builds a pattern from a rule function; reports problems through `error`.
LogicalResult buildPattern(SearchContext &sc, func::FuncOp fn, GraphPattern &p,
                           function_ref<InFlightDiagnostic()> error) {
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return error() << "@" << fn.getSymName() << " must have one block";
  Block &body = fn.getBody().front();
  llvm::DenseMap<Value, PatternRef> refs;
  for (BlockArgument arg : body.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || !t.hasStaticShape())
      return error() << "@" << fn.getSymName()
                     << ": arguments must be statically shaped tensors";
    refs[arg] = PatternRef::var(p.varTypes.size());
    p.varTypes.push_back(t);
  }
  std::vector<PatternOp> all;
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        p.outputs.push_back(refs.lookup(v));
      continue;
    }
    if (!op.getDialect() || op.getDialect()->getNamespace() != "tg" ||
        op.getNumRegions())
      return error() << "@" << fn.getSymName() << ": op '" << op.getName()
                     << "' is not a tg op";
    PatternOp pop;
    pop.op = sc.internOp(&op);
    for (Value v : op.getOperands()) {
      auto it = refs.find(v);
      if (it == refs.end())
        return error() << "@" << fn.getSymName()
                       << ": operand defined outside the function";
      pop.operands.push_back(it->second);
    }
    for (auto [i, t] : llvm::enumerate(op.getResultTypes())) {
      auto rt = dyn_cast<RankedTensorType>(t);
      if (!rt || !rt.hasStaticShape())
        return error() << "@" << fn.getSymName()
                       << ": results must be statically shaped tensors";
      pop.types.push_back(rt);
      refs[op.getResult(i)] = PatternRef::result(all.size(), i);
    }
    pop.constKind = sc.op(pop.op).constKind;
    if (auto tag = op.getAttrOfType<StringAttr>("loom.const")) {
      pop.constKind = ConstKind::Tagged;
      pop.tag = tag.getValue().str();
      if (!makeTaggedConstant(pop.tag, pop.types[0]))
        return error() << "@" << fn.getSymName() << ": unknown constant '"
                       << pop.tag << "' at " << pop.types[0];
    }
    all.push_back(std::move(pop));
  }

  // Keep the ops that reach an output, renumbered in order.
  std::vector<bool> live(all.size(), false);
  SmallVector<unsigned> work;
  for (PatternRef r : p.outputs)
    if (!r.isVar() && !live[r.op]) {
      live[r.op] = true;
      work.push_back(r.op);
    }
  while (!work.empty()) {
    unsigned k = work.pop_back_val();
    for (PatternRef r : all[k].operands)
      if (!r.isVar() && !live[r.op]) {
        live[r.op] = true;
        work.push_back(r.op);
      }
  }
  std::vector<int32_t> renum(all.size(), -1);
  for (size_t k = 0; k < all.size(); ++k) {
    if (!live[k])
      continue;
    renum[k] = p.ops.size();
    p.ops.push_back(std::move(all[k]));
  }
  auto fix = [&](PatternRef &r) {
    if (!r.isVar())
      r.op = renum[r.op];
  };
  for (PatternOp &op : p.ops)
    for (PatternRef &r : op.operands)
      fix(r);
  for (PatternRef &r : p.outputs)
    fix(r);
  p.finalize();
  return success();
}

/// Why a pattern cannot be the source of a rewrite, or empty.
std::string unusableAsSource(SearchContext &sc, const GraphPattern &src,
                             const GraphPattern &tgt) {
  if (src.ops.empty())
    return "source has no ops";
  for (PatternRef r : src.outputs) {
    if (r.isVar())
      return "a source output is a bare variable";
    if (sc.op(src.ops[r.op].op).leaf)
      return "a source output is a constant";
  }
  for (unsigned i = 0, e = tgt.varTypes.size(); i < e; ++i)
    if (tgt.usesVar(i) && !src.usesVar(i))
      return "the target uses a variable the source does not bind";
  return "";
}

/// The order in which the matcher binds the ops of `p` (see Matcher.h).
std::vector<MatchStep> planMatch(SearchContext &sc, const GraphPattern &p,
                                 bool &multiPattern) {
  std::vector<MatchStep> plan;
  std::vector<bool> matched(p.ops.size(), false);
  std::vector<bool> bound(p.numValues(), false);
  auto take = [&](unsigned k) {
    matched[k] = true;
    for (unsigned i = 0; i < p.ops[k].types.size(); ++i)
      bound[p.valueIndex(PatternRef::result(k, i))] = true;
    for (PatternRef r : p.ops[k].operands)
      bound[p.valueIndex(r)] = true;
  };
  // TENSAT's multi-pattern rules: several outputs, each a pattern of its
  // own (joined through shared variables or not).
  multiPattern = p.outputs.size() > 1;
  while (plan.size() < p.ops.size()) {
    std::optional<MatchStep> next;
    // Prefer an op one of whose results is known: its definer is unique in
    // a term graph. Then an op one of whose operands is known.
    for (unsigned k = 0; k < p.ops.size() && !next; ++k) {
      if (matched[k])
        continue;
      for (unsigned i = 0; i < p.ops[k].types.size(); ++i)
        if (bound[p.valueIndex(PatternRef::result(k, i))]) {
          next = MatchStep{MatchStep::Kind::Definer, k, i};
          break;
        }
    }
    for (unsigned k = 0; k < p.ops.size() && !next; ++k) {
      if (matched[k])
        continue;
      for (auto [j, r] : llvm::enumerate(p.ops[k].operands))
        if (bound[p.valueIndex(r)]) {
          next = MatchStep{MatchStep::Kind::Join, k, unsigned(j)};
          break;
        }
    }
    if (!next) {
      // A new root: the first unmatched output op, else any unmatched op
      // (cannot happen: every op reaches an output).
      for (PatternRef r : p.outputs)
        if (!r.isVar() && !matched[r.op]) {
          next = MatchStep{MatchStep::Kind::Root, unsigned(r.op), 0};
          break;
        }
      if (!next)
        for (unsigned k = 0; k < p.ops.size(); ++k)
          if (!matched[k]) {
            next = MatchStep{MatchStep::Kind::Root, k, 0};
            break;
          }
    }
    take(next->op);
    plan.push_back(*next);
  }
  return plan;
}

bool samePattern(const GraphPattern &a, const GraphPattern &b) {
  if (a.varTypes != b.varTypes || a.ops.size() != b.ops.size() ||
      !llvm::equal(a.outputs, b.outputs))
    return false;
  for (size_t k = 0; k < a.ops.size(); ++k) {
    const PatternOp &x = a.ops[k], &y = b.ops[k];
    if (x.op != y.op || !llvm::equal(x.operands, y.operands) ||
        x.types != y.types || x.tag != y.tag)
      return false;
  }
  return true;
}

} // namespace

FailureOr<RuleSet> search::loadRules(SearchContext &sc, ModuleOp module,
                                     const RuleLoadOptions &options) {
  RuleSet set;
  for (auto ruleModule : module.getOps<ModuleOp>()) {
    ++set.numRuleModules;
    std::string name = ruleModule.getSymName()
                           ? ruleModule.getSymName()->str()
                           : "rule#" + std::to_string(set.numRuleModules);
    auto status = ruleModule->getAttrOfType<StringAttr>("loom.status");
    if (options.requireProved && (!status || status.getValue() != "proved")) {
      ++set.numUnproved;
      continue;
    }
    auto error = [&] {
      return ruleModule.emitError() << "rule '" << name << "': ";
    };
    auto source = ruleModule.lookupSymbol<func::FuncOp>("source");
    auto target = ruleModule.lookupSymbol<func::FuncOp>("target");
    if (!source || !target)
      return error() << "needs func.func @source and func.func @target";
    if (source.getFunctionType() != target.getFunctionType())
      return error() << "@source and @target have different signatures ("
                     << source.getFunctionType() << " vs "
                     << target.getFunctionType() << ")";
    Rule fwd;
    fwd.name = name;
    fwd.loc = ruleModule.getLoc();
    if (failed(buildPattern(sc, source, fwd.source, error)) ||
        failed(buildPattern(sc, target, fwd.target, error)))
      return failure();
    if (samePattern(fwd.source, fwd.target)) {
      set.numDirectionsSkipped += 2;
      continue;
    }

    Rule rev;
    rev.name = name + "~";
    rev.loc = fwd.loc;
    rev.reversed = true;
    rev.source = fwd.target;
    rev.target = fwd.source;

    for (Rule *r : {&fwd, &rev}) {
      if (r->reversed && !options.bothDirections)
        continue;
      std::string why = unusableAsSource(sc, r->source, r->target);
      if (!why.empty()) {
        ++set.numDirectionsSkipped;
        continue;
      }
      r->plan = planMatch(sc, r->source, r->multiPattern);
      r->id = set.rules.size();
      set.rules.push_back(std::move(*r));
    }
  }
  return set;
}

FailureOr<RuleSet> search::loadRules(SearchContext &sc, StringRef path,
                                     const RuleLoadOptions &options) {
  ParserConfig config(sc.getContext());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, config);
  if (!module)
    return failure();
  FailureOr<RuleSet> set = loadRules(sc, *module, options);
  if (succeeded(set))
    set->path = path.str();
  return set;
}

RuleIndex::RuleIndex(const SearchContext &sc, const RuleSet &rules,
                     bool enabled)
    : rules(rules), enabled(enabled) {
  if (!enabled)
    return;
  for (auto [i, rule] : llvm::enumerate(rules.rules)) {
    llvm::SmallVector<uint32_t, 4> classes;
    for (const PatternOp &op : rule.source.ops)
      if (op.constKind != ConstKind::Tagged)
        classes.push_back(sc.op(op.op).shapeClass);
    llvm::sort(classes);
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    needs.push_back(std::move(classes));
    const PatternOp &root = rule.source.ops[rule.plan.front().op];
    if (root.constKind == ConstKind::Tagged)
      anyRoot.push_back(i);
    else
      byRoot[sc.op(root.op).shapeClass].push_back(i);
  }
}

void RuleIndex::candidates(llvm::function_ref<bool(uint32_t)> hasClass,
                           std::vector<const Rule *> &out) const {
  out.clear();
  if (!enabled) {
    for (const Rule &rule : rules.rules)
      out.push_back(&rule);
    return;
  }
  llvm::DenseMap<uint32_t, bool> present;
  auto has = [&](uint32_t cls) {
    auto [it, fresh] = present.try_emplace(cls, false);
    if (fresh)
      it->second = hasClass(cls);
    return it->second;
  };
  std::vector<uint32_t> picked;
  auto consider = [&](uint32_t i) {
    if (llvm::all_of(needs[i], has))
      picked.push_back(i);
  };
  for (const auto &[cls, list] : byRoot)
    if (has(cls))
      llvm::for_each(list, consider);
  llvm::for_each(anyRoot, consider);
  llvm::sort(picked);
  for (uint32_t i : picked)
    out.push_back(&rules.rules[i]);
}
