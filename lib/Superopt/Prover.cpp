//===- Prover.cpp - Proving candidate rules from the axioms ---------------===//
//
// Part of Loom. See Prover.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Prover.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <z3++.h>

#include <chrono>
#include <optional>

using namespace loom;
using namespace loom::superopt;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::SmallVectorImpl;

namespace {

void collectShapes(const ConcreteTerm &t, SmallVectorImpl<ShapeId> &out) {
  if (!llvm::is_contained(out, t.shape))
    out.push_back(t.shape);
  for (const auto &a : t.args)
    collectShapes(*a, out);
}

} // namespace

AxiomBase::AxiomBase(Universe &u, const std::vector<Axiom> &all,
                     ArrayRef<unsigned> axioms, ArrayRef<ShapeId> shapes)
    : all(all) {
  int64_t maxDim = 1;
  for (ShapeId s : shapes)
    for (int64_t d : u.shapes().get(s))
      maxDim = std::max(maxDim, d);
  for (unsigned a : axioms)
    for (AxiomInstance &inst :
         instantiateAxiom(all[a], a, u, shapes, maxDim)) {
      Footprint f;
      for (ShapeId s : inst.varShapes)
        if (!llvm::is_contained(f.vars, s))
          f.vars.push_back(s);
      collectShapes(*inst.lhs, f.lhs);
      collectShapes(*inst.rhs, f.rhs);
      insts.push_back(std::move(inst));
      prints.push_back(std::move(f));
    }
}

struct Prover::Impl {
  Impl(Universe &u, const AxiomBase &base, ProverOptions options)
      : u(u), base(base), options(options) {
    sorts.resize(u.shapes().size());
    formulas.resize(base.instances().size());
    literals.resize(base.axioms().size());
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
    if (formulas[i])
      return *formulas[i];
    const AxiomInstance &inst = base.instances()[i];
    const Axiom &axiom = base.axioms()[inst.axiom];
    std::vector<z3::expr> vars;
    for (unsigned v = 0; v < inst.varShapes.size(); ++v)
      vars.push_back(ctx.constant(("?" + axiom.vars[v]).c_str(),
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
    if (!literals[axiom])
      literals[axiom] =
          ctx.bool_const(("axiom:" + base.axioms()[axiom].name).c_str());
    return *literals[axiom];
  }

  /// Z3 terms of the outputs of \p g.
  std::optional<std::vector<z3::expr>> encode(const Graph &g,
                                              SmallVectorImpl<ShapeId> &seen) {
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
      for (unsigned r = 0; r < specOf(n.kind).numResults; ++r)
        values.push_back(funcOf(n.kind, n.attrs, shapes, r,
                                types->shapes[first + r])(args));
    }
    for (ShapeId s : types->shapes)
      if (!llvm::is_contained(seen, s))
        seen.push_back(s);
    std::vector<z3::expr> outs;
    for (unsigned o : g.outputs)
      outs.push_back(values[o]);
    return outs;
  }

  /// Tries with the axiom instances over the candidate's own shapes, then,
  /// if that fails, also over the shapes those instances introduce.
  ProofResult prove(const Graph &source, const Graph &target) {
    auto start = std::chrono::steady_clock::now();
    ProofResult r = proveWith(source, target, 1);
    if (r.status != ProofStatus::Proved && r.reason != "ill-typed candidate")
      r = proveWith(source, target, 2);
    r.seconds = std::chrono::duration<double>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    return r;
  }

  ProofResult proveWith(const Graph &source, const Graph &target,
                        unsigned rounds) {
    ProofResult r;
    SmallVector<ShapeId, 16> shapes;
    auto src = encode(source, shapes);
    auto tgt = encode(target, shapes);
    if (!src || !tgt || src->size() != tgt->size() || src->empty()) {
      r.reason = "ill-typed candidate";
      return r;
    }
    // Axiom instances over the candidate's shapes, and one more round over
    // the shapes those introduce.
    std::vector<char> inSet(u.shapes().size(), 0);
    for (ShapeId s : shapes)
      inSet[s] = 1;
    const auto &prints = base.footprints();
    std::vector<char> selected(prints.size(), 0);
    auto covered = [&](ArrayRef<ShapeId> list) {
      return llvm::all_of(list, [&](ShapeId s) { return inSet[s] != 0; });
    };
    for (unsigned round = 0; round < rounds; ++round) {
      SmallVector<ShapeId, 8> added;
      for (unsigned i = 0; i < prints.size(); ++i) {
        if (selected[i])
          continue;
        const AxiomBase::Footprint &f = prints[i];
        if (!covered(f.vars) || (!covered(f.lhs) && !covered(f.rhs)))
          continue;
        selected[i] = 1;
        for (ArrayRef<ShapeId> side : {ArrayRef<ShapeId>(f.lhs),
                                       ArrayRef<ShapeId>(f.rhs)})
          for (ShapeId s : side)
            if (!inSet[s])
              added.push_back(s);
      }
      for (ShapeId s : added)
        inSet[s] = 1;
    }

    z3::solver solver(ctx);
    z3::params p(ctx);
    p.set("timeout", options.timeoutMs);
    p.set("rlimit", options.rlimit);
    p.set("mbqi", false);
    solver.set(p);
    std::vector<char> usesAxiom(base.axioms().size(), 0);
    for (unsigned i = 0; i < prints.size(); ++i) {
      if (!selected[i])
        continue;
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

    switch (solver.check(assumptions)) {
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
};

Prover::Prover(Universe &u, const AxiomBase &base, ProverOptions options)
    : impl(std::make_unique<Impl>(u, base, options)) {}

Prover::~Prover() = default;

ProofResult Prover::prove(const Graph &source, const Graph &target) {
  return impl->prove(source, target);
}
