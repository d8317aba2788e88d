//===- AxiomChecker.cpp - Bounded symbolic proofs of the axioms -----------===//
//
// Part of Loom. See AxiomChecker.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/AxiomChecker.h"
#include "loom/Support/Threads.h"

#include "loom/Superopt/Z3Domain.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

using namespace loom;
using namespace loom::superopt;
using interp::Tensor;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {

std::string valueString(const z3::expr &v) {
  if (v.is_numeral())
    return v.get_decimal_string(6);
  return v.to_string();
}

/// Checks one instance; returns an empty string when proved.
std::string checkInstance(const Axiom &axiom, const AxiomInstance &inst,
                          const ShapeTable &shapes, unsigned timeoutMs) {
  z3::context ctx;
  Z3Domain::Scope scope(ctx);
  std::vector<Tensor<Z3Domain>> vars;
  std::vector<z3::expr> assumptions;
  for (unsigned v = 0; v < axiom.vars.size(); ++v) {
    ArrayRef<int64_t> s = shapes.get(inst.varShapes[v]);
    Tensor<Z3Domain> t(std::vector<int64_t>(s.begin(), s.end()));
    for (int64_t i = 0; i < t.numElements(); ++i) {
      std::string name = axiom.vars[v] + indexString(s, i);
      t.data[i] = ctx.real_const(name.c_str());
      if (axiom.varShapes[v].nonNegative)
        assumptions.push_back(t.data[i].e >= 0);
    }
    vars.push_back(std::move(t));
  }
  Tensor<Z3Domain> lhs = evaluateTerm<Z3Domain>(*inst.lhs, shapes, vars);
  Tensor<Z3Domain> rhs = evaluateTerm<Z3Domain>(*inst.rhs, shapes, vars);
  if (lhs.shape != rhs.shape)
    return "the two sides have different shapes";

  z3::params som(ctx);
  som.set("som", true);
  std::vector<int64_t> open;
  for (int64_t i = 0; i < lhs.numElements(); ++i) {
    z3::expr d = (lhs.data[i].e - rhs.data[i].e).simplify(som);
    int64_t zero;
    if (d.is_numeral() && d.is_numeral_i64(zero) && zero == 0)
      continue;
    open.push_back(i);
  }
  if (open.empty())
    return "";

  z3::solver solver(ctx);
  z3::params p(ctx);
  p.set("timeout", timeoutMs);
  solver.set(p);
  for (const z3::expr &a : assumptions)
    solver.add(a);
  for (const z3::expr &f : Z3Domain::facts())
    solver.add(f);
  z3::expr_vector differs(ctx);
  for (int64_t i : open)
    differs.push_back(lhs.data[i].e != rhs.data[i].e);
  solver.add(z3::mk_or(differs));
  switch (solver.check()) {
  case z3::unsat:
    return "";
  case z3::unknown:
    return "Z3 could not decide (" + solver.reason_unknown() + ")";
  case z3::sat:
    break;
  }
  z3::model m = solver.get_model();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "counterexample:";
  for (unsigned v = 0; v < axiom.vars.size(); ++v) {
    os << " " << axiom.vars[v] << " = [";
    for (int64_t i = 0; i < vars[v].numElements(); ++i)
      os << (i ? ", " : "") << valueString(m.eval(vars[v].data[i].e, true));
    os << "];";
  }
  for (int64_t i : open) {
    z3::expr l = m.eval(lhs.data[i].e, true), r = m.eval(rhs.data[i].e, true);
    if (z3::eq(l, r))
      continue;
    os << " lhs" << indexString(lhs.shape, i) << " = " << valueString(l)
       << " but rhs" << indexString(lhs.shape, i) << " = " << valueString(r);
    break;
  }
  return s;
}

} // namespace

std::vector<AxiomCheckResult>
superopt::checkAxioms(const std::vector<Axiom> &all, ArrayRef<unsigned> axioms,
                      Universe &u, const AxiomCheckOptions &options) {
  // Instances are built here (interning shapes is single-threaded) and
  // checked on worker threads, each with its own Z3 context.
  struct Job {
    unsigned result;
    AxiomInstance inst;
  };
  std::vector<Job> jobs;
  std::vector<AxiomCheckResult> results(axioms.size());
  for (unsigned r = 0; r < axioms.size(); ++r) {
    const Axiom &a = all[axioms[r]];
    results[r].name = a.name;
    for (AxiomInstance &inst : boundedInstances(a, axioms[r], u))
      jobs.push_back({r, std::move(inst)});
  }
  for (const Job &j : jobs)
    ++results[j.result].instances;
  for (AxiomCheckResult &r : results)
    if (r.instances == 0) {
      r.proved = false;
      r.failure = "no shape in the bounded range types both sides";
    }

  std::mutex mutex;
  std::atomic<size_t> next{0};
  const ShapeTable &shapes = u.shapes();
  auto worker = [&] {
    for (;;) {
      size_t i = next++;
      if (i >= jobs.size())
        return;
      const Job &job = jobs[i];
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!results[job.result].proved)
          continue; // one counterexample per axiom is enough
      }
      const Axiom &a = all[axioms[job.result]];
      auto start = std::chrono::steady_clock::now();
      std::string failure =
          checkInstance(a, job.inst, shapes, options.timeoutMs);
      double secs = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count();
      std::lock_guard<std::mutex> lock(mutex);
      AxiomCheckResult &r = results[job.result];
      r.seconds += secs;
      if (!failure.empty() && r.proved) {
        r.proved = false;
        std::string where;
        for (unsigned v = 0; v < a.vars.size(); ++v)
          where += (v ? ", " : "") + a.vars[v] + ":" +
                   shapes.str(job.inst.varShapes[v]);
        r.failure = "at " + where + ": " + failure;
      }
    }
  };
  runOnThreads(options.threads, [&](unsigned) { worker(); });
  return results;
}
