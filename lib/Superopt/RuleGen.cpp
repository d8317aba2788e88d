//===- RuleGen.cpp - The rule generator pipeline --------------------------===//
//
// Part of Loom. See RuleGen.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/RuleGen.h"
#include "loom/Superopt/Generalize.h"
#include "loom/Superopt/Rewrite.h"
#include "loom/Support/Threads.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <thread>

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using interp::F64Domain;
using interp::Tensor;

/// Proofs per Z3 solver (Prover::startBatch): solver set-up dominates
/// short proofs; fixed batches keep the results independent of threads.
constexpr size_t kProofBatch = 16;
/// Implication pruning is one pass in order for rules of at most this many
/// ops per side, and two passes (the first parallel) for larger ones.
constexpr unsigned kSequentialSideOps = 3;

/// Calls `item(prover, i)` for every i in [0, n) on `threads` threads (the
/// caller's among them). Each thread has its own Prover over `base` and
/// takes fixed batches of kProofBatch items, which share one solver
/// (Prover::startBatch), so results do not depend on the threads.
/// `progress(d)` runs under a lock after every `every` items done.
template <class Item, class Progress>
static void proveInBatches(Universe &u, const AxiomBase &base,
                           const ProverOptions &po, size_t n, unsigned threads,
                           Item item, size_t every, Progress progress) {
  std::atomic<size_t> nextBatch{0}, done{0};
  std::mutex logMutex;
  auto worker = [&] {
    Prover prover(u, base, po);
    for (;;) {
      size_t first = kProofBatch * nextBatch++;
      if (first >= n)
        return;
      prover.startBatch();
      for (size_t i = first; i < std::min(first + kProofBatch, n); ++i) {
        if (!item(prover, i))
          continue;
        size_t d = ++done;
        if (d % every == 0) {
          std::lock_guard<std::mutex> lock(logMutex);
          progress(d);
        }
      }
    }
  };
  runOnThreads(threads, [&](unsigned) { worker(); });
}

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// The first values of \p t, for messages.
std::string tensorString(const Tensor<F64Domain> &t, size_t limit = 8) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  for (size_t i = 0; i < t.data.size() && i < limit; ++i)
    os << (i ? ", " : "") << llvm::format("%.6g", t.data[i]);
  if (t.data.size() > limit)
    os << ", ... (" << t.data.size() << " values)";
  os << "]";
  return s;
}

} // namespace

std::optional<std::string> superopt::numericCounterexample(const Universe &u,
                                                           const Graph &a,
                                                           const Graph &b,
                                                           uint64_t seed,
                                                           unsigned trials) {
  for (unsigned trial = 0; trial < trials; ++trial) {
    // Uniform values in [-1, 1), each input shifted by -1, 0 or +1 at random
    // after the first trial: tensors of one sign expose order-based
    // equalities that only hold for most random inputs (max pooling of a
    // relu, ...).
    std::vector<Tensor<F64Domain>> inputs;
    uint64_t state = hashMix(seed, 0xc0ffee + trial);
    for (unsigned i = 0; i < u.numInputs(); ++i) {
      llvm::ArrayRef<int64_t> s = u.shapes().get(u.inputs()[i].shape);
      Tensor<F64Domain> t = Tensor<F64Domain>::random(
          std::vector<int64_t>(s.begin(), s.end()),
          hashMix(seed, 0x5eed0000 + trial * 1024 + i));
      double shift =
          trial == 0
              ? 0.0
              : static_cast<double>(
                    static_cast<int>(interp::splitmix64Next(state) % 3) - 1);
      for (double &v : t.data)
        v += shift;
      if (u.inputs()[i].role == Role::BnVar)
        for (double &v : t.data)
          v = std::fabs(v);
      inputs.push_back(std::move(t));
    }
    std::vector<Tensor<F64Domain>> ra = u.evaluate<F64Domain>(a, inputs);
    std::vector<Tensor<F64Domain>> rb = u.evaluate<F64Domain>(b, inputs);
    for (unsigned o = 0; o < ra.size() && o < rb.size(); ++o) {
      if (ra[o].shape != rb[o].shape)
        return "output " + std::to_string(o) + " has different shapes";
      double scale = 1;
      for (double v : ra[o].data)
        scale = std::max(scale, std::fabs(v));
      for (size_t i = 0; i < ra[o].data.size(); ++i) {
        double x = ra[o].data[i], y = rb[o].data[i];
        bool same = (std::isnan(x) && std::isnan(y)) ||
                    std::fabs(x - y) <= 1e-9 * scale;
        if (same)
          continue;
        std::string s;
        llvm::raw_string_ostream os(s);
        os << "counterexample:";
        llvm::SmallBitVector used = inputsUsedBy(a, b, u.numInputs());
        for (unsigned in : used.set_bits())
          os << " " << u.inputs()[in].name << " = " << tensorString(inputs[in])
             << ";";
        os << " source output " << o << indexString(ra[o].shape, i) << " = "
           << llvm::format("%.9g", x) << " but target output " << o
           << indexString(ra[o].shape, i) << " = " << llvm::format("%.9g", y);
        return s;
      }
    }
  }
  return std::nullopt;
}

llvm::Expected<std::vector<Axiom>>
superopt::axiomsWith(llvm::ArrayRef<std::string> extra) {
  std::vector<Axiom> axioms = parseBuiltinAxioms();
  for (const std::string &text : extra)
    if (llvm::Error e = appendAxiom(axioms, text, "(given with --axiom)"))
      return std::move(e);
  return std::move(axioms);
}

namespace {

/// The generator's pipeline, one named step per stage (RuleGen.md): the
/// state the stages share is the members.
class RuleGenerator {
public:
  RuleGenerator(MLIRContext *context, const RuleGenOptions &options,
                Universe &u, std::vector<Axiom> axioms)
      : context(context), options(options), log(options.log), u(u),
        axioms(std::move(axioms)), axiomIds(this->axioms.size()),
        rewrites(u) {
    std::iota(axiomIds.begin(), axiomIds.end(), 0);
    stats.axioms = this->axioms.size();
  }

  llvm::Expected<RuleGenResult> run();

private:
  void startAxiomCheck();
  llvm::Error finishAxiomCheck();
  void enumerateAndPair();
  std::vector<RuleRecord> verifyAndPrune();
  void verify(llvm::ArrayRef<size_t> indices, std::vector<RuleRecord> &records);
  void sortRecords(std::vector<RuleRecord> &records);
  void addToBase(RuleRecord &rec);
  void sequentialPass(std::vector<RuleRecord> &records, bool rewriting);
  void pruneLarger(llvm::ArrayRef<size_t> largeCandidates);
  void generalize(std::vector<RuleRecord> &sorted);
  void emit(std::vector<RuleRecord> &sorted);

  double elapsed() const { return since(start); }

  MLIRContext *context;
  const RuleGenOptions &options;
  llvm::raw_ostream *log;
  Clock::time_point start = Clock::now();
  RuleGenResult result;
  RuleGenStats &stats = result.stats;
  Universe &u;
  std::vector<Axiom> axioms;
  std::vector<unsigned> axiomIds;

  // The axiom check, on its own thread (with its own shape table) while
  // this one enumerates.
  std::unique_ptr<Universe> checkUniverse;
  std::thread checker;
  double axiomSeconds = 0;

  std::vector<Candidate> candidates;

  // Verification: the axioms' instances over every shape enumerated, and
  // per candidate its numeric counterexample or its proof.
  std::unique_ptr<AxiomBase> base;
  std::vector<std::optional<std::string>> counterexamples;
  std::vector<ProofResult> proofs;
  ProverOptions verifyOptions;
  double verifySeconds = 0;

  // Pruning by implication: the rules kept so far, as axioms for Z3 and as
  // rewrites, and the (shallower) prover options of implication proofs.
  std::vector<RuleRecord> kept;
  AxiomBase ruleBase;
  RewriteBase rewrites;
  ProverOptions implyOptions;
  std::vector<std::string> vars;
};

llvm::Expected<RuleGenResult> RuleGenerator::run() {
  if (log)
    *log << "loom-rulegen: ops " << u.opList() << "; " << u.numInputs()
         << " inputs; K = " << options.maxOps << ", P = " << options.maxParamOps
         << "; " << axioms.size() << " axioms\n";
  startAxiomCheck();
  enumerateAndPair();
  if (llvm::Error err = finishAxiomCheck())
    return std::move(err);
  std::vector<RuleRecord> sorted = verifyAndPrune();
  generalize(sorted);
  emit(sorted);
  stats.seconds.total = elapsed();
  if (log)
    *log << "loom-rulegen: " << stats.finalRules << " rules ("
         << stats.enumeration.enumerated << " graphs, " << stats.prune.pairs
         << " candidates, " << stats.verified << " verified, " << stats.rejected
         << " rejected, " << stats.timeouts << " timeouts) in "
         << llvm::format("%.2f", stats.seconds.total) << " s\n";
  return std::move(result);
}

void RuleGenerator::startAxiomCheck() {
  checkUniverse = Universe::createForInputs(context, {}, options.seed);
  if (!options.checkAxioms)
    return;
  checker = std::thread([this] {
    auto t = Clock::now();
    AxiomCheckOptions co;
    co.threads = 1;
    result.axiomChecks = checkAxioms(axioms, axiomIds, *checkUniverse, co);
    axiomSeconds = since(t);
  });
}

llvm::Error RuleGenerator::finishAxiomCheck() {
  if (checker.joinable())
    checker.join();
  stats.seconds.axioms = axiomSeconds;
  std::string axiomErrors;
  for (const AxiomCheckResult &r : result.axiomChecks) {
    stats.axiomInstancesChecked += r.instances;
    if (!r.proved)
      axiomErrors += "\n  axiom '" + r.name + "' " + r.failure;
  }
  if (log && options.checkAxioms)
    *log << "  axioms: " << axioms.size() << " checked on "
         << stats.axiomInstancesChecked << " shape instances, "
         << llvm::format("%.2f", axiomSeconds) << " s\n";
  if (!axiomErrors.empty())
    return llvm::createStringError("an axiom failed its bounded check:" +
                                   axiomErrors);
  return llvm::Error::success();
}

/// Enumeration and fingerprinting, then the candidate pairs of each class
/// and the prunings before any proof.
void RuleGenerator::enumerateAndPair() {
  EnumerateOptions eo;
  eo.maxOps = options.maxOps;
  eo.maxOutputs = options.maxOutputs;
  eo.threads = options.threads;
  if (log)
    eo.progress = [&](uint64_t visited, uint64_t recorded) {
      *log << "  enumerate: " << visited << " graphs visited, " << recorded
           << " recorded, " << llvm::format("%.1f", elapsed()) << " s\n";
    };
  Enumeration e = enumerate(u, eo, stats.enumeration);
  stats.seconds.enumerate = stats.enumeration.seconds;
  stats.seconds.fingerprint = stats.enumeration.fingerprintSeconds;
  if (log)
    *log << "  enumerate: " << stats.enumeration.enumerated
         << " graphs recorded (" << stats.enumeration.visited << " visited, "
         << stats.enumeration.redundant << " recompute a tensor), "
         << stats.enumeration.classes << " classes of equal fingerprints, "
         << llvm::format("%.2f", stats.seconds.enumerate) << " s\n";

  std::function<void(uint64_t)> pruneProgress;
  if (log)
    pruneProgress = [&](uint64_t classesDone) {
      *log << "  prune: " << classesDone << "/" << e.classes.size()
           << " classes paired, " << llvm::format("%.1f", elapsed())
           << " s\n";
    };
  candidates =
      makeCandidates(u, e, stats.prune, options.threads, pruneProgress);
  stats.seconds.prune = stats.prune.seconds;
  if (log)
    *log << "  prune: " << stats.prune.pairs << " candidate pairs; removed "
         << stats.prune.commonSubgraph << " (common subgraph), "
         << stats.prune.congruence << " (congruence), " << stats.prune.renaming
         << " (renaming); " << stats.prune.kept << " to verify, "
         << llvm::format("%.2f", stats.seconds.prune) << " s\n";
}

/// Verifies the candidates `indices`: threads take fixed batches, checking
/// each numerically, then proving it (proveInBatches). Appends the proved
/// ones to `records` in the order of `indices`.
void RuleGenerator::verify(llvm::ArrayRef<size_t> indices,
                           std::vector<RuleRecord> &records) {
  auto t = Clock::now();
  proveInBatches(
      u, *base, verifyOptions, indices.size(), options.threads,
      [&](Prover &prover, size_t k) {
        const Candidate &c = candidates[indices[k]];
        counterexamples[indices[k]] =
            numericCounterexample(u, c.source, c.target, options.seed);
        if (counterexamples[indices[k]])
          return false;
        proofs[indices[k]] = prover.prove(c.source, c.target);
        return true;
      },
      500,
      [&](size_t d) {
        if (log)
          *log << "  verify: " << d << "/" << indices.size() << ", "
               << llvm::format("%.1f", elapsed()) << " s\n";
      });
  for (size_t i : indices) {
    const Candidate &c = candidates[i];
    const ProofResult &p = proofs[i];
    if (p.status == ProofStatus::Proved) {
      ++stats.verified;
      for (const std::string &a : p.axioms)
        ++stats.axiomUses[a];
      records.push_back({c.source, c.target, "proved", p.axioms, nullptr});
      continue;
    }
    Failure f{u.describe(c.source), u.describe(c.target), "", p.reason};
    if (counterexamples[i]) {
      ++stats.rejected;
      f.status = "rejected";
      f.detail = *counterexamples[i];
    } else if (p.status == ProofStatus::Timeout) {
      ++stats.timeouts;
      f.status = "timeout";
    } else {
      ++stats.unproved;
      f.status = "unproved";
    }
    result.failures.push_back(std::move(f));
  }
  verifySeconds += since(t);
}

/// Sorts rules smaller first (both sides' ops, then the source's), then by
/// description: an order independent of threads and timing.
void RuleGenerator::sortRecords(std::vector<RuleRecord> &records) {
  std::vector<std::tuple<unsigned, unsigned, std::string, std::string, size_t>>
      order;
  for (size_t i = 0; i < records.size(); ++i)
    order.emplace_back(records[i].source.numOps() + records[i].target.numOps(),
                       records[i].source.numOps(),
                       u.describe(records[i].source),
                       u.describe(records[i].target), i);
  llvm::sort(order);
  std::vector<RuleRecord> sorted;
  for (auto &o : order)
    sorted.push_back(std::move(records[std::get<4>(o)]));
  records = std::move(sorted);
}

void RuleGenerator::addToBase(RuleRecord &rec) {
  unsigned id = ruleBase.addAxiom("rule_" + std::to_string(kept.size()), vars);
  for (AxiomInstance &inst :
       Prover::ruleEquations(u, rec.source, rec.target, id))
    ruleBase.addInstance(std::move(inst), u.shapes());
  if (options.rewriteImplication)
    rewrites.addRule(rec.source, rec.target);
  kept.push_back(std::move(rec));
}

/// One pass, in order, over `records`: each is dropped if it follows from
/// the rules kept before it (by rewriting, for larger rules, when
/// `rewriting`; by Z3 otherwise), else kept.
void RuleGenerator::sequentialPass(std::vector<RuleRecord> &records,
                                   bool rewriting) {
  Prover implier(u, ruleBase, implyOptions);
  for (size_t k = 0; k < records.size(); ++k) {
    if (k % kProofBatch == 0)
      implier.startBatch();
    RuleRecord &rec = records[k];
    if (log && k > 0 && k % 5000 == 0)
      *log << "  prune: " << k << "/" << records.size() << " by implication, "
           << llvm::format("%.1f", elapsed()) << " s\n";
    bool implied =
        rewriting ? rewrites.derives(rec.source, rec.target, options.derive)
                  : !ruleBase.instances().empty() &&
                        implier.prove(rec.source, rec.target).status ==
                            ProofStatus::Proved;
    if (implied) {
      ++stats.implied;
      stats.impliedByRewriting += rewriting;
      continue;
    }
    addToBase(rec);
  }
}

/// The candidates with a side of more than kSequentialSideOps ops, after
/// the smaller rules are kept: derived by rewriting where they can be (in
/// parallel, against the fixed smaller base), the rest verified, proved
/// from the smaller rules where they can be (in parallel, without rewriting
/// implication), and the rest pruned in order.
void RuleGenerator::pruneLarger(llvm::ArrayRef<size_t> largeCandidates) {
  std::vector<size_t> toVerify;
  if (options.rewriteImplication) {
    std::vector<char> derived(largeCandidates.size(), 0);
    std::atomic<size_t> next{0};
    runOnThreads(options.threads, [&](unsigned) {
      for (size_t k; (k = next++) < largeCandidates.size();) {
        const Candidate &c = candidates[largeCandidates[k]];
        derived[k] = rewrites.derives(c.source, c.target, options.derive);
      }
    });
    for (size_t k = 0; k < largeCandidates.size(); ++k) {
      if (!derived[k]) {
        toVerify.push_back(largeCandidates[k]);
        continue;
      }
      ++stats.verified;
      ++stats.verifiedByRewriting;
      ++stats.implied;
      ++stats.impliedByRewriting;
    }
    if (log)
      *log << "  prune: " << stats.verifiedByRewriting << " of "
           << largeCandidates.size()
           << " larger candidates derived from the smaller rules kept, "
           << llvm::format("%.1f", elapsed()) << " s\n";
  } else {
    toVerify.assign(largeCandidates.begin(), largeCandidates.end());
  }
  std::vector<RuleRecord> records;
  verify(toVerify, records);
  sortRecords(records);
  if (!options.rewriteImplication && !ruleBase.instances().empty()) {
    std::vector<char> implied(records.size(), 0);
    proveInBatches(
        u, ruleBase, implyOptions, records.size(), options.threads,
        [&](Prover &prover, size_t k) {
          implied[k] =
              prover.prove(records[k].source, records[k].target).status ==
              ProofStatus::Proved;
          return true;
        },
        5000,
        [&](size_t d) {
          if (log)
            *log << "  prune: " << d << "/" << records.size()
                 << " larger rules against the smaller ones, "
                 << llvm::format("%.1f", elapsed()) << " s\n";
        });
    std::vector<RuleRecord> rest;
    for (size_t k = 0; k < records.size(); ++k) {
      if (implied[k])
        ++stats.implied;
      else
        rest.push_back(std::move(records[k]));
    }
    records = std::move(rest);
  }
  // The rest in order, each against everything kept before it; the first
  // ones need no check until a larger rule has been kept.
  size_t before = kept.size(), k = 0;
  for (; k < records.size() && kept.size() == before; ++k)
    addToBase(records[k]);
  records.erase(records.begin(), records.begin() + k);
  sequentialPass(records, options.rewriteImplication);
}

/// Verification and pruning by implication, interleaved by size.
///
/// Candidates with at most kSequentialSideOps ops per side (all of them at
/// K <= 3) are verified, then pruned one after the other in sorted order:
/// a rule that Z3 proves from the rules kept before it -- used as axioms,
/// universally quantified over their inputs -- adds nothing, and is
/// dropped. By induction the kept rules imply every verified one.
///
/// Larger candidates (K = 4: a quarter of a million) are first derived,
/// where they can be, by rewriting with the smaller rules kept (Rewrite.h;
/// in parallel against that fixed base): a derivation is a proof from
/// proved rules, so such a candidate is true and implied at once, and
/// needs neither a numeric check nor a proof. The others are verified,
/// sorted, and pruned one after the other by rewriting with everything
/// kept before them. With --no-rewrite-implication every larger candidate
/// is verified, then proved from the smaller rules kept (in parallel), and
/// those left are pruned in order by Z3, as the smaller ones are.
///
/// Returns the rules kept, in emission order.
std::vector<RuleRecord> RuleGenerator::verifyAndPrune() {
  auto verifyStart = Clock::now();
  std::vector<ShapeId> shapeIds(u.shapes().size());
  std::iota(shapeIds.begin(), shapeIds.end(), 0);
  base = std::make_unique<AxiomBase>(u, axioms, axiomIds, shapeIds);
  stats.axiomInstances = base->instances().size();
  // A numeric check first (in the workers of verify): it is cheap, and a
  // candidate with a counterexample (the fingerprint domain orders numbers
  // unlike the reals, so order-based equalities can be spurious) need not
  // go to Z3, where it would cost a long, fruitless search.
  counterexamples.assign(candidates.size(), std::nullopt);
  proofs.assign(candidates.size(), ProofResult());
  verifyOptions.timeoutMs = options.timeoutMs;
  verifyOptions.rlimit = options.rlimit;
  // A rule whose implication is not found quickly is kept: keeping a
  // redundant rule is safe, so the search is shallower than for
  // verification (one round, a tenth of the resource limit).
  implyOptions.timeoutMs = options.timeoutMs;
  implyOptions.rlimit = std::max(1u, options.rlimit / 10);
  implyOptions.extraRounds = 0;
  for (unsigned i = 0; i < u.numInputs(); ++i)
    vars.push_back(u.inputs()[i].name);

  std::vector<size_t> smallCandidates, largeCandidates;
  for (size_t i = 0; i < candidates.size(); ++i)
    (std::max(candidates[i].source.numOps(), candidates[i].target.numOps()) >
             kSequentialSideOps
         ? largeCandidates
         : smallCandidates)
        .push_back(i);

  std::vector<RuleRecord> records;
  verify(smallCandidates, records);
  sortRecords(records);
  sequentialPass(records, /*rewriting=*/false);
  if (!largeCandidates.empty())
    pruneLarger(largeCandidates);

  stats.seconds.verify = verifySeconds;
  stats.seconds.implication = since(verifyStart) - verifySeconds;
  if (log)
    *log << "  verify: " << stats.verified << " proved ("
         << stats.verifiedByRewriting << " derived by rewriting), "
         << stats.rejected << " rejected (counterexample), " << stats.timeouts
         << " timeouts, " << stats.unproved << " unproved; "
         << base->instances().size() << " axiom instances, "
         << llvm::format("%.2f", stats.seconds.verify) << " s\n"
         << "  prune: " << stats.implied
         << " verified rules follow from smaller ones ("
         << stats.impliedByRewriting << " derived by rewriting), "
         << llvm::format("%.2f", stats.seconds.implication) << " s\n";
  // In the emission order: smaller (and larger) rules kept, merged.
  sortRecords(kept);
  return std::move(kept);
}

/// Generalisation: each rule restated at witness shapes where the
/// dimensions its typing does not tie get distinct values, re-proved there
/// (Generalize.h); threads take rules in turn, the output does not depend
/// on their timing.
void RuleGenerator::generalize(std::vector<RuleRecord> &sorted) {
  auto generalizeStart = Clock::now();
  if (options.generalize) {
    ProverOptions po;
    po.timeoutMs = options.timeoutMs;
    po.rlimit = options.rlimit;
    std::vector<GeneralizeResult> general(sorted.size());
    std::atomic<size_t> nextRule{0};
    // The generator's universe (its shape table and inference memo) is
    // shared; probing interns shapes, so it is serialised.
    std::mutex universeMutex;
    runOnThreads(options.threads, [&](unsigned) {
      for (size_t i; (i = nextRule++) < sorted.size();)
        general[i] =
            generalizeRule(u, sorted[i].source, sorted[i].target, axioms,
                           sorted[i].axioms, po, options.seed, &universeMutex);
    });
    for (size_t i = 0; i < sorted.size(); ++i) {
      GeneralizeResult &g = general[i];
      switch (g.outcome) {
      case GeneralizeOutcome::Generalized:
        ++stats.generalized;
        sorted[i].universe = std::move(g.rule->universe);
        sorted[i].source = std::move(g.rule->source);
        sorted[i].target = std::move(g.rule->target);
        sorted[i].axioms = std::move(g.rule->axioms);
        break;
      case GeneralizeOutcome::AlreadyGeneral:
        ++stats.alreadyGeneral;
        break;
      case GeneralizeOutcome::NotProvableAlone:
        ++stats.notProvableAlone;
        if (options.showFailures && log)
          *log << "  generalise: dropped: " << u.describe(sorted[i].source)
               << " = " << u.describe(sorted[i].target) << ": " << g.reason
               << "\n";
        sorted[i].status = "";
        break;
      case GeneralizeOutcome::NotReproved:
        ++stats.notReproved;
        if (options.showFailures && log)
          *log << "  generalise: kept at its shapes: "
               << u.describe(sorted[i].source) << " = "
               << u.describe(sorted[i].target) << ": " << g.reason << "\n";
        break;
      }
    }
  }
  llvm::erase_if(sorted, [](const RuleRecord &r) { return r.status.empty(); });
  stats.seconds.generalize = since(generalizeStart);
  if (log && options.generalize)
    *log << "  generalise: " << stats.generalized
         << " rules restated at independent witness dimensions, "
         << stats.alreadyGeneral << " already general, " << stats.notReproved
         << " kept at their shapes, " << stats.notProvableAlone
         << " dropped (not provable on their own), "
         << llvm::format("%.2f", stats.seconds.generalize) << " s\n";
}

/// The rules module, its loom.rulegen summary, and the rules that
/// generalisation made identical dropped.
void RuleGenerator::emit(std::vector<RuleRecord> &sorted) {
  auto emitStart = Clock::now();
  stats.finalRules = sorted.size();
  Builder b(context);
  SmallVector<NamedAttribute> info = {
      b.getNamedAttr("generator", b.getStringAttr("loom-rulegen")),
      b.getNamedAttr("version", b.getI64IntegerAttr(1)),
      b.getNamedAttr("ops", b.getStringAttr(u.opList())),
      b.getNamedAttr("max_ops", b.getI64IntegerAttr(options.maxOps)),
      b.getNamedAttr("max_param_ops", b.getI64IntegerAttr(options.maxParamOps)),
      b.getNamedAttr("max_outputs", b.getI64IntegerAttr(options.maxOutputs)),
      b.getNamedAttr("seed", b.getI64IntegerAttr(options.seed)),
      b.getNamedAttr("rlimit", b.getI64IntegerAttr(options.rlimit)),
      b.getNamedAttr("axioms", b.getI64IntegerAttr(axioms.size())),
      b.getNamedAttr("enumerated",
                     b.getI64IntegerAttr(stats.enumeration.enumerated)),
      b.getNamedAttr("candidates", b.getI64IntegerAttr(stats.prune.pairs)),
      b.getNamedAttr("verified", b.getI64IntegerAttr(stats.verified)),
      b.getNamedAttr("rejected", b.getI64IntegerAttr(stats.rejected)),
      b.getNamedAttr("timeouts", b.getI64IntegerAttr(stats.timeouts)),
      b.getNamedAttr("unproved", b.getI64IntegerAttr(stats.unproved)),
      b.getNamedAttr("implied", b.getI64IntegerAttr(stats.implied)),
      b.getNamedAttr("generalized", b.getI64IntegerAttr(stats.generalized)),
  };
  result.rules = emitRules(u, sorted, b.getDictionaryAttr(info));
  // Generalisation can make rules over inputs of different kinds (f, g, h
  // filters; x activations and w weights) the same rule: keep the first.
  llvm::StringSet<> seen;
  SmallVector<ModuleOp> duplicates;
  for (ModuleOp rule : result.rules->getOps<ModuleOp>()) {
    std::string key;
    llvm::raw_string_ostream os(key);
    for (StringRef side : {"source", "target"}) {
      auto fn = rule.lookupSymbol<func::FuncOp>(side);
      func::FuncOp copy = fn.clone();
      copy->removeAttr(copy.getArgAttrsAttrName());
      copy.print(os);
      copy.erase();
    }
    if (!seen.insert(key).second)
      duplicates.push_back(rule);
  }
  stats.duplicates = duplicates.size();
  for (ModuleOp rule : duplicates)
    rule.erase();
  unsigned index = 0;
  for (ModuleOp rule : result.rules->getOps<ModuleOp>())
    rule.setSymName("rule_" + std::to_string(index++));
  stats.finalRules = index;
  info.push_back(
      b.getNamedAttr("duplicates", b.getI64IntegerAttr(stats.duplicates)));
  info.push_back(
      b.getNamedAttr("final_rules", b.getI64IntegerAttr(stats.finalRules)));
  (*result.rules)->setAttr("loom.rulegen", b.getDictionaryAttr(info));
  if (log)
    *log << "  emit: " << stats.duplicates
         << " rules that generalisation made identical dropped\n";
  stats.seconds.emit = since(emitStart);
}

} // namespace

llvm::Expected<RuleGenResult>
superopt::generateRules(MLIRContext *context, const RuleGenOptions &options) {
  if (options.maxOps < 1 || options.maxOps > 5)
    return llvm::createStringError("--max-ops must be between 1 and 5");
  if (options.maxParamOps > 4)
    return llvm::createStringError("--max-param-ops must be at most 4");
  if (options.maxOutputs < 1 || options.maxOutputs > 4)
    return llvm::createStringError("--max-outputs must be between 1 and 4");
  if (options.threads < 1 || options.threads > 64)
    return llvm::createStringError("--threads must be between 1 and 64");

  UniverseOptions uo;
  uo.ops = options.ops;
  uo.seed = options.seed;
  uo.maxParamOps = options.maxParamOps;
  auto universe = Universe::create(context, uo);
  if (!universe)
    return universe.takeError();
  auto axioms = axiomsWith(options.extraAxioms);
  if (!axioms)
    return axioms.takeError();
  return RuleGenerator(context, options, **universe, std::move(*axioms)).run();
}

void superopt::writeStatsJson(llvm::raw_ostream &os,
                              const RuleGenOptions &options,
                              const RuleGenStats &stats) {
  llvm::json::Object uses;
  for (auto &[name, count] : stats.axiomUses)
    uses[name] = count;
  llvm::json::Object root{
      {"options",
       llvm::json::Object{{"ops", options.ops},
                          {"max_ops", options.maxOps},
                          {"max_param_ops", options.maxParamOps},
                          {"max_outputs", options.maxOutputs},
                          {"seed", static_cast<int64_t>(options.seed)},
                          {"threads", options.threads},
                          {"timeout_ms", options.timeoutMs},
                          {"rlimit", options.rlimit}}},
      {"visited", static_cast<int64_t>(stats.enumeration.visited)},
      {"enumerated", static_cast<int64_t>(stats.enumeration.enumerated)},
      {"redundant_graphs", static_cast<int64_t>(stats.enumeration.redundant)},
      {"evaluations", static_cast<int64_t>(stats.enumeration.evaluations)},
      {"classes", static_cast<int64_t>(stats.enumeration.classes)},
      {"candidates", static_cast<int64_t>(stats.prune.pairs)},
      {"pruned",
       llvm::json::Object{
           {"common_subgraph",
            static_cast<int64_t>(stats.prune.commonSubgraph)},
           {"congruence", static_cast<int64_t>(stats.prune.congruence)},
           {"renaming", static_cast<int64_t>(stats.prune.renaming)},
           {"implied_by_smaller", static_cast<int64_t>(stats.implied)},
           {"implied_by_rewriting",
            static_cast<int64_t>(stats.impliedByRewriting)},
           {"identical_after_generalization",
            static_cast<int64_t>(stats.duplicates)}}},
      {"generalization",
       llvm::json::Object{
           {"generalized", static_cast<int64_t>(stats.generalized)},
           {"already_general", static_cast<int64_t>(stats.alreadyGeneral)},
           {"kept_not_reproved", static_cast<int64_t>(stats.notReproved)},
           {"dropped_not_provable_alone",
            static_cast<int64_t>(stats.notProvableAlone)}}},
      {"to_verify", static_cast<int64_t>(stats.prune.kept)},
      {"verified", static_cast<int64_t>(stats.verified)},
      {"verified_by_rewriting",
       static_cast<int64_t>(stats.verifiedByRewriting)},
      {"rejected", static_cast<int64_t>(stats.rejected)},
      {"timeouts", static_cast<int64_t>(stats.timeouts)},
      {"unproved", static_cast<int64_t>(stats.unproved)},
      {"final_rules", static_cast<int64_t>(stats.finalRules)},
      {"axioms",
       llvm::json::Object{{"count", stats.axioms},
                          {"checked_instances", stats.axiomInstancesChecked},
                          {"prover_instances", stats.axiomInstances}}},
      {"axiom_uses", std::move(uses)},
      {"seconds", llvm::json::Object{{"total", stats.seconds.total},
                                     {"axiom_check", stats.seconds.axioms},
                                     {"enumerate", stats.seconds.enumerate},
                                     {"fingerprint", stats.seconds.fingerprint},
                                     {"prune", stats.seconds.prune},
                                     {"verify", stats.seconds.verify},
                                     {"implication", stats.seconds.implication},
                                     {"generalize", stats.seconds.generalize},
                                     {"emit", stats.seconds.emit}}},
  };
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

FailureOr<std::vector<RuleVerdict>>
superopt::verifyRules(ModuleOp rules, const RuleGenOptions &options) {
  auto loaded = loadRules(rules);
  if (failed(loaded))
    return failure();
  auto parsed = axiomsWith(options.extraAxioms);
  if (!parsed)
    return rules.emitError(llvm::toString(parsed.takeError()));
  std::vector<Axiom> axioms = std::move(*parsed);
  std::vector<RuleVerdict> verdicts;
  for (const Rule &rule : *loaded) {
    std::unique_ptr<Universe> u = Universe::createForInputs(
        rules.getContext(), inputsOfRuleFunction(rule.source), options.seed);
    auto source = importGraph(rule.source, *u);
    auto target = importGraph(rule.target, *u);
    if (failed(source) || failed(target))
      return failure();
    ProverOptions po;
    po.timeoutMs = options.timeoutMs;
    po.rlimit = options.rlimit;
    // The axioms the file says the proof used first, then all of them.
    ProofResult proof =
        proveFromAxioms(*u, *source, *target, axioms, rule.axioms, po);
    RuleVerdict v{rule.name, "", proof.axioms, proof.reason};
    std::optional<std::string> cex =
        numericCounterexample(*u, *source, *target, options.seed);
    if (cex) {
      v.status = "rejected";
      v.detail = *cex;
      if (proof.status == ProofStatus::Proved)
        v.detail =
            "proved from the axioms, yet " + v.detail + " (an axiom is wrong)";
    } else if (proof.status == ProofStatus::Proved) {
      v.status = "proved";
    } else {
      v.status = proof.status == ProofStatus::Timeout ? "timeout" : "unproved";
    }
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}
