//===- Prover.cpp - Proving candidate rules from the axioms ---------------===//
//
// Part of Loom. See Prover.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Prover.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <z3++.h>

#include <chrono>
#include <numeric>
#include <cstdlib>

#include "llvm/Support/raw_ostream.h"
#include <optional>

using namespace loom;
using namespace loom::superopt;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::SmallVectorImpl;

uint64_t superopt::symbolKey(OpKind kind, const OpAttrs &attrs,
                             ArrayRef<ShapeId> operands, unsigned result,
                             const ShapeTable &shapes) {
  uint64_t k = hashMix(hashOp(kind, attrs, shapes), result);
  for (ShapeId s : operands)
    k = hashMix(k, s);
  return k;
}

namespace {

void collectSymbols(const ConcreteTerm &t, const ShapeTable &shapes,
                    SmallVectorImpl<uint64_t> &out) {
  if (t.isVar)
    return;
  SmallVector<ShapeId, 5> operands;
  for (const auto &a : t.args) {
    operands.push_back(a->shape);
    collectSymbols(*a, shapes, out);
  }
  uint64_t k = symbolKey(t.kind, t.attrs, operands, t.result, shapes);
  if (!llvm::is_contained(out, k))
    out.push_back(k);
}

} // namespace

AxiomBase::AxiomBase(Universe &u, const std::vector<Axiom> &all,
                     ArrayRef<unsigned> axioms, ArrayRef<ShapeId> shapes) {
  int64_t maxDim = 1;
  for (ShapeId s : shapes)
    for (int64_t d : u.shapes().get(s))
      maxDim = std::max(maxDim, d);
  for (const Axiom &a : all)
    addAxiom(a.name, a.vars);
  for (unsigned a : axioms)
    for (AxiomInstance &inst : instantiateAxiom(all[a], a, u, shapes, maxDim))
      addInstance(std::move(inst), u.shapes());
}

unsigned AxiomBase::addAxiom(std::string name, std::vector<std::string> v) {
  names.push_back(std::move(name));
  vars.push_back(std::move(v));
  return names.size() - 1;
}

void AxiomBase::addInstance(AxiomInstance inst, const ShapeTable &shapes) {
  Footprint f;
  collectSymbols(*inst.lhs, shapes, f.lhs);
  collectSymbols(*inst.rhs, shapes, f.rhs);
  uint32_t id = insts.size();
  if (!f.lhs.empty())
    index[f.lhs.front()].push_back(2 * id);
  if (!f.rhs.empty())
    index[f.rhs.front()].push_back(2 * id + 1);
  insts.push_back(std::move(inst));
  prints.push_back(std::move(f));
}

std::vector<AxiomInstance> Prover::ruleEquations(Universe &u,
                                                 const Graph &source,
                                                 const Graph &target,
                                                 unsigned axiom) {
  // Variables: the inputs either side uses, in input order.
  std::vector<int> varOf(u.numInputs(), -1);
  std::vector<ShapeId> varShapes;
  llvm::SmallBitVector used = inputsUsedBy(source, target, u.numInputs());
  for (unsigned i : used.set_bits()) {
    varOf[i] = varShapes.size();
    varShapes.push_back(u.inputs()[i].shape);
  }
  auto terms = [&](const Graph &g) {
    std::vector<std::shared_ptr<const ConcreteTerm>> values;
    auto types = u.typeGraph(g);
    if (!types) {
      llvm::consumeError(types.takeError());
      return values;
    }
    for (unsigned i = 0; i < u.numInputs(); ++i) {
      auto t = std::make_shared<ConcreteTerm>();
      t->isVar = true;
      t->var = varOf[i] < 0 ? 0 : varOf[i];
      t->shape = u.inputs()[i].shape;
      values.push_back(t);
    }
    for (const Node &n : g.nodes) {
      unsigned first = values.size();
      for (unsigned r = 0; r < specOf(n.kind).numResults; ++r) {
        auto t = std::make_shared<ConcreteTerm>();
        t->kind = n.kind;
        t->attrs = n.attrs;
        t->result = r;
        t->shape = types->shapes[first + r];
        for (unsigned v : n.operands)
          t->args.push_back(values[v]);
        values.push_back(t);
      }
    }
    return values;
  };
  auto src = terms(source), tgt = terms(target);
  std::vector<AxiomInstance> out;
  if (src.empty() || tgt.empty())
    return out;
  for (unsigned i = 0; i < source.outputs.size(); ++i)
    out.push_back(
        {axiom, varShapes, src[source.outputs[i]], tgt[target.outputs[i]]});
  return out;
}

struct Prover::Impl {
  Impl(Universe &u, const AxiomBase &base, ProverOptions options)
      : u(u), base(base), options(options) {
    sorts.resize(u.shapes().size());
  }

  z3::sort sortOf(ShapeId s) {
    if (s >= sorts.size())
      sorts.resize(s + 1);
    if (!sorts[s])
      sorts[s] = ctx.uninterpreted_sort(("T" + u.shapes().str(s)).c_str());
    return *sorts[s];
  }

  z3::func_decl funcOf(OpKind kind, const OpAttrs &attrs,
                       ArrayRef<ShapeId> operands, unsigned result,
                       ShapeId resultShape) {
    std::string key = opString(kind, attrs, u.shapes());
    if (specOf(kind).numResults > 1)
      key += "#" + std::to_string(result);
    key += "(";
    for (unsigned i = 0; i < operands.size(); ++i)
      key += (i ? "," : "") + u.shapes().str(operands[i]);
    key += ")";
    auto it = funcs.find(key);
    if (it != funcs.end())
      return it->second;
    z3::sort_vector domain(ctx);
    for (ShapeId s : operands)
      domain.push_back(sortOf(s));
    z3::func_decl f = ctx.function(key.c_str(), domain, sortOf(resultShape));
    funcs.try_emplace(key, f);
    return f;
  }

  z3::expr termOf(const ConcreteTerm &t, ArrayRef<z3::expr> vars) {
    if (t.isVar)
      return vars[t.var];
    z3::expr_vector args(ctx);
    SmallVector<ShapeId, 5> shapes;
    for (const auto &a : t.args) {
      args.push_back(termOf(*a, vars));
      shapes.push_back(a->shape);
    }
    return funcOf(t.kind, t.attrs, shapes, t.result, t.shape)(args);
  }

  static void varsOf(const ConcreteTerm &t, SmallVectorImpl<unsigned> &out) {
    if (t.isVar) {
      if (!llvm::is_contained(out, t.var))
        out.push_back(t.var);
      return;
    }
    for (const auto &a : t.args)
      varsOf(*a, out);
  }

  z3::expr formulaOf(unsigned i) {
    if (i >= formulas.size())
      formulas.resize(base.instances().size());
    if (formulas[i])
      return *formulas[i];
    const AxiomInstance &inst = base.instances()[i];
    const std::vector<std::string> &names = base.varsOf(inst.axiom);
    std::vector<z3::expr> vars;
    for (unsigned v = 0; v < inst.varShapes.size(); ++v)
      vars.push_back(ctx.constant(
          ("?" + (v < names.size() ? names[v] : std::to_string(v))).c_str(),
          sortOf(inst.varShapes[v])));
    z3::expr lhs = termOf(*inst.lhs, vars), rhs = termOf(*inst.rhs, vars);
    z3::expr body = lhs == rhs;
    // Only variables of the terms are bound (others just fix shapes).
    SmallVector<unsigned, 6> occurring;
    varsOf(*inst.lhs, occurring);
    varsOf(*inst.rhs, occurring);
    std::vector<z3::expr> boundVars;
    for (unsigned v = 0; v < vars.size(); ++v)
      if (llvm::is_contained(occurring, v))
        boundVars.push_back(vars[v]);
    if (boundVars.empty()) {
      formulas[i] = body;
      return body;
    }
    // Each side that is an application mentioning every variable is a
    // trigger.
    SmallVector<Z3_pattern, 2> patterns;
    std::vector<z3::ast> keepAlive; // patterns are reference-counted ASTs
    for (auto [term, expr] : {std::pair<const ConcreteTerm *, z3::expr *>(
                                  inst.lhs.get(), &lhs),
                              {inst.rhs.get(), &rhs}}) {
      if (term->isVar)
        continue;
      SmallVector<unsigned, 4> used;
      varsOf(*term, used);
      if (used.size() != boundVars.size())
        continue;
      Z3_ast a = *expr;
      Z3_pattern pat = Z3_mk_pattern(ctx, 1, &a);
      keepAlive.emplace_back(ctx, Z3_pattern_to_ast(ctx, pat));
      patterns.push_back(pat);
    }
    SmallVector<Z3_app, 6> bound;
    for (z3::expr &v : boundVars)
      bound.push_back(Z3_to_app(ctx, v));
    Z3_ast q = Z3_mk_forall_const(ctx, 0, bound.size(), bound.data(),
                                  patterns.size(), patterns.data(), body);
    formulas[i] = z3::expr(ctx, q);
    return *formulas[i];
  }

  z3::expr literalOf(unsigned axiom) {
    if (axiom >= literals.size())
      literals.resize(base.axiomNames().size());
    if (!literals[axiom])
      literals[axiom] =
          ctx.bool_const(("axiom:" + base.axiomNames()[axiom]).c_str());
    return *literals[axiom];
  }

  /// A concrete term with its shapes, for debugging output.
  std::string debugTerm(const ConcreteTerm &t) {
    if (t.isVar)
      return "v" + std::to_string(t.var) + ":" + u.shapes().str(t.shape);
    std::string s = opString(t.kind, t.attrs, u.shapes()) + "(";
    for (unsigned i = 0; i < t.args.size(); ++i)
      s += (i ? ", " : "") + debugTerm(*t.args[i]);
    return s + "):" + u.shapes().str(t.shape);
  }

  /// Z3 terms of the outputs of \p g.
  std::optional<std::vector<z3::expr>> encode(const Graph &g,
                                              llvm::DenseSet<uint64_t> &seen) {
    auto types = u.typeGraph(g);
    if (!types) {
      llvm::consumeError(types.takeError());
      return std::nullopt;
    }
    std::vector<z3::expr> values;
    for (unsigned i = 0; i < u.numInputs(); ++i)
      values.push_back(ctx.constant(u.inputs()[i].name.c_str(),
                                    sortOf(u.inputs()[i].shape)));
    for (const Node &n : g.nodes) {
      z3::expr_vector args(ctx);
      SmallVector<ShapeId, 5> shapes;
      for (unsigned v : n.operands) {
        args.push_back(values[v]);
        shapes.push_back(types->shapes[v]);
      }
      unsigned first = values.size();
      for (unsigned r = 0; r < specOf(n.kind).numResults; ++r) {
        values.push_back(funcOf(n.kind, n.attrs, shapes, r,
                                types->shapes[first + r])(args));
        seen.insert(symbolKey(n.kind, n.attrs, shapes, r, u.shapes()));
      }
    }
    std::vector<z3::expr> outs;
    for (unsigned o : g.outputs)
      outs.push_back(values[o]);
    return outs;
  }

  /// Tries with the axiom instances one side of which the candidate's own
  /// terms cover, then, if that fails, with two more rounds of instances
  /// the terms of the first ones cover.
  ProofResult prove(const Graph &source, const Graph &target) {
    auto start = std::chrono::steady_clock::now();
    ProofResult r = proveWith(source, target, 1);
    if (r.status != ProofStatus::Proved && options.extraRounds != 0 &&
        r.reason != "ill-typed candidate")
      r = proveWith(source, target, 1 + options.extraRounds);
    r.seconds = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    return r;
  }

  ProofResult proveWith(const Graph &source, const Graph &target,
                        unsigned rounds) {
    ProofResult r;
    llvm::DenseSet<uint64_t> symbols;
    auto src = encode(source, symbols);
    auto tgt = encode(target, symbols);
    if (!src || !tgt || src->size() != tgt->size() || src->empty()) {
      r.reason = "ill-typed candidate";
      return r;
    }
    // Axiom instances one side of which is made of symbols in use; then,
    // for further rounds, the symbols those instances introduce.
    const auto &prints = base.footprints();
    std::vector<char> selected(prints.size(), 0);
    // (A side that is a bare variable matches nothing by itself.)
    auto covered = [&](ArrayRef<uint64_t> list) {
      return !list.empty() && llvm::all_of(list, [&](uint64_t k) {
        return symbols.count(k) != 0;
      });
    };
    SmallVector<uint32_t, 64> chosen;
    for (unsigned round = 0; round < rounds; ++round) {
      SmallVector<uint64_t, 16> added;
      SmallVector<uint64_t, 32> current(symbols.begin(), symbols.end());
      for (uint64_t k : current)
        for (uint32_t side : base.sidesStartingWith(k)) {
          uint32_t i = side / 2;
          if (selected[i])
            continue;
          const AxiomBase::Footprint &f = prints[i];
          if (!covered(side % 2 ? f.rhs : f.lhs))
            continue;
          selected[i] = 1;
          chosen.push_back(i);
          added.append(f.lhs.begin(), f.lhs.end());
          added.append(f.rhs.begin(), f.rhs.end());
        }
      for (uint64_t k : added)
        symbols.insert(k);
    }
    llvm::sort(chosen);

    // One solver per batch of proofs, each proof in its own scope: setting
    // up a Z3 solver costs more than most proofs.
    if (!batchSolver) {
      batchSolver = std::make_unique<z3::solver>(ctx);
      z3::params p(ctx);
      p.set("timeout", options.timeoutMs);
      p.set("rlimit", options.rlimit); // per check, relative to the count
      p.set("mbqi", false);
      batchSolver->set(p);
    }
    z3::solver &solver = *batchSolver;
    solver.push();
    struct ScopeGuard {
      z3::solver &s;
      ~ScopeGuard() { s.pop(); }
    } scope{solver};
    std::vector<char> usesAxiom(base.axiomNames().size(), 0);
    for (uint32_t i : chosen) {
      unsigned a = base.instances()[i].axiom;
      usesAxiom[a] = 1;
      solver.add(z3::implies(literalOf(a), formulaOf(i)));
    }
    z3::expr_vector differ(ctx);
    for (unsigned i = 0; i < src->size(); ++i)
      differ.push_back((*src)[i] != (*tgt)[i]);
    solver.add(z3::mk_or(differ));
    z3::expr_vector assumptions(ctx);
    for (unsigned a = 0; a < usesAxiom.size(); ++a)
      if (usesAxiom[a])
        assumptions.push_back(literalOf(a));

    auto checkStart = std::chrono::steady_clock::now();
    z3::check_result verdict = solver.check(assumptions);
    if (getenv("LOOM_PROVER_DEBUG")) {
      unsigned count = chosen.size();
      double secs = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - checkStart)
                        .count();
      llvm::errs() << "PROVER rounds=" << rounds << " instances=" << count
                   << " check=" << secs << " verdict=" << int(verdict) << " "
                   << u.describe(source) << "\n";
      if (std::string(getenv("LOOM_PROVER_DEBUG")) == "2")
        for (uint32_t i : chosen)
          llvm::errs() << "  " << base.axiomNames()[base.instances()[i].axiom]
                       << ": " << debugTerm(*base.instances()[i].lhs) << " = "
                       << debugTerm(*base.instances()[i].rhs) << "\n";
    }
    switch (verdict) {
    case z3::unsat: {
      r.status = ProofStatus::Proved;
      z3::expr_vector core = solver.unsat_core();
      for (unsigned i = 0; i < core.size(); ++i) {
        std::string name = core[i].decl().name().str();
        r.axioms.push_back(name.substr(name.find(':') + 1));
      }
      llvm::sort(r.axioms);
      break;
    }
    case z3::sat:
      r.status = ProofStatus::Unproved;
      r.reason = "the axioms have a model where the sides differ";
      break;
    case z3::unknown: {
      r.reason = solver.reason_unknown();
      bool limit = r.reason.find("timeout") != std::string::npos ||
                   r.reason.find("canceled") != std::string::npos ||
                   r.reason.find("resource") != std::string::npos ||
                   r.reason.find("rlimit") != std::string::npos;
      r.status = limit ? ProofStatus::Timeout : ProofStatus::Unproved;
      break;
    }
    }
    return r;
  }

  Universe &u;
  const AxiomBase &base;
  ProverOptions options;
  z3::context ctx;
  std::vector<std::optional<z3::sort>> sorts;
  llvm::StringMap<z3::func_decl> funcs;
  std::vector<std::optional<z3::expr>> formulas;
  std::vector<std::optional<z3::expr>> literals;
  std::unique_ptr<z3::solver> batchSolver;
};

Prover::Prover(Universe &u, const AxiomBase &base, ProverOptions options)
    : impl(std::make_unique<Impl>(u, base, options)) {}

Prover::~Prover() = default;

void Prover::startBatch() { impl->batchSolver.reset(); }

ProofResult Prover::prove(const Graph &source, const Graph &target) {
  return impl->prove(source, target);
}

ProofResult superopt::proveFromAxioms(Universe &u, const Graph &source,
                                      const Graph &target,
                                      const std::vector<Axiom> &axioms,
                                      ArrayRef<std::string> firstTry,
                                      const ProverOptions &options) {
  std::vector<ShapeId> shapeIds(u.shapes().size());
  std::iota(shapeIds.begin(), shapeIds.end(), 0);
  std::vector<unsigned> first, all(axioms.size());
  std::iota(all.begin(), all.end(), 0);
  for (unsigned a = 0; a < axioms.size(); ++a)
    if (llvm::is_contained(firstTry, axioms[a].name))
      first.push_back(a);
  ProofResult proof;
  for (const std::vector<unsigned> *ids : {&first, &all}) {
    if (ids->empty())
      continue;
    AxiomBase base(u, axioms, *ids, shapeIds);
    Prover prover(u, base, options);
    proof = prover.prove(source, target);
    if (proof.status == ProofStatus::Proved)
      break;
  }
  return proof;
}
