//===- Search.cpp - Sites, options, the cover search, placement files -----===//
//
// Part of Loom. See Placement.h and docs/Placement.md.
//
//===----------------------------------------------------------------------===//

#include "Probe.h"

#include "loom/Compiler/Fragments.h"
#include "loom/Placement/Placement.h"
#include "loom/Support/StableSort.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::placement;
using llvm::json::Array;
using llvm::json::Object;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The most combinations the search enumerates in one group of sites that
/// share ops; a larger group is decided site by site (never seen in the zoo).
constexpr size_t kMaxCombinations = 4096;

/// The most runner-up moves the end-to-end level tries (the classes of
/// sites that take the most time).
constexpr size_t kMaxMoveTrials = 6;

/// A model of fewer FLOPs than this (a few milliseconds on a 2-core CPU)
/// compiles in seconds: the end-to-end level measures every fixed backend
/// set of it, whatever their fragments' estimates and the budget (small
/// models are where call overhead and layouts make the estimates least
/// reliable: oww-hey-jarvis, ppocr-cls). Counted from the ops' work, not
/// from times, so that the choice does not depend on the machine's load.
constexpr double kSmallModelFlops = 1e9;

/// Models with more weights than this skip the end-to-end level.
constexpr int64_t kMaxEndToEndWeightBytes = int64_t(512) << 20;

/// One way to compute a site: a fragment on a backend, plus the rest of
/// the site's chain as one generated fragment when the fragment is shorter.
struct Option {
  LibraryCall call;
  std::optional<LibraryCall> leftover;
  size_t callCost = 0, leftoverCost = 0; // indices into the cost requests
};

/// An op some library backend runs, with its options.
struct Site {
  Operation *anchor;
  /// The anchor's position among the ops of its block (placement files).
  int64_t index;
  /// The anchor and the elementwise consumers generated code would fuse.
  SmallVector<Operation *, 4> chain;
  std::vector<Option> options;
  int chosen = -1;
};

/// What the search knows about one function.
struct FunctionPlan {
  mutable func::FuncOp fn;
  std::vector<Site> sites;
};

std::string oneLine(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ')
      continue;
    out += c;
  }
  return out;
}

/// Whether the search may place a fragment on \p backend: the code
/// generator always (it runs what no library takes), the others when
/// listed.
bool allowed(const PlaceOptions &options, const Backend &backend) {
  if (backend.generatesCode() || options.backends.empty())
    return true;
  return llvm::is_contained(options.backends, backend.name());
}

class Placer {
public:
  Placer(ModuleOp module, const PlaceOptions &options)
      : module(module), options(options),
        registry(options.registry ? *options.registry
                                  : BackendRegistry::builtin()) {}

  LogicalResult run();

private:
  ModuleOp module;
  const PlaceOptions &options;
  const BackendRegistry &registry;
  std::vector<FunctionPlan> plans;
  /// Every fragment priced, with its key.
  std::vector<std::unique_ptr<LibraryCall>> pricedCalls;
  std::vector<CostRequest> requests;

  void findSites(FunctionPlan &plan, bool allPrefixes);
  size_t request(const LibraryCall &call);
  double optionSeconds(const Option &o) const {
    return requests[o.callCost].seconds +
           (o.leftover ? requests[o.leftoverCost].seconds : 0.0);
  }
  void solve(FunctionPlan &plan);
  LogicalResult applyPlacementFile(llvm::json::Object &root);
  void writeReport(llvm::raw_ostream &os) const;
  llvm::json::Value toJSON() const;
  LogicalResult form(FunctionPlan &plan);

  // The end-to-end level.
  using Choices = std::vector<std::vector<int>>; // per plan, per site
  struct Trial {
    std::string name;
    Choices choices;
    double seconds = kInf;
    std::string note = {};
    /// Compiled and loaded, until timed with the others.
    std::shared_ptr<ProbeArtifact> artifact = nullptr;
  };
  std::vector<Trial> trials;
  std::string moduleText, weightsBytes;
  Choices currentChoices() const;
  Choices fixedSetChoices(const Backend &library) const;
  std::unique_ptr<ProbeArtifact> compileWhole(const Choices &choices,
                                              std::string &error);
  void searchEndToEnd(std::chrono::steady_clock::time_point start);
  /// Keeps the fastest trial by searchEndToEnd's rule and sets the sites'
  /// choices to it.
  void keepFastestTrial();
  std::vector<std::pair<std::string, Choices>>
  endToEndCandidates(const Choices &cover) const;
  double estimateSeconds(const Choices &choices) const;
  void timeTrialsInTurn(
      llvm::function_ref<std::string(const Choices &)> keyOf);
};

Placer::Choices Placer::currentChoices() const {
  Choices c;
  for (const FunctionPlan &plan : plans) {
    c.emplace_back();
    for (const Site &site : plan.sites)
      c.back().push_back(site.chosen);
  }
  return c;
}

/// What --backends=<library> would form: at each site the longest fragment
/// of \p library (else generated code) whose ops are still free.
Placer::Choices Placer::fixedSetChoices(const Backend &library) const {
  Choices c;
  for (const FunctionPlan &plan : plans) {
    c.emplace_back();
    llvm::DenseSet<Operation *> claimed;
    for (const Site &site : plan.sites) {
      int pick = -1;
      for (const Backend *want : {&library, registry.codeGenerator()}) {
        for (auto [k, o] : llvm::enumerate(site.options))
          if (pick < 0 && o.call.backend == want &&
              llvm::none_of(o.call.ops,
                            [&](Operation *op) { return claimed.count(op); }))
            pick = k;
      }
      if (pick >= 0)
        claimed.insert(site.options[pick].call.ops.begin(),
                       site.options[pick].call.ops.end());
      c.back().push_back(pick);
    }
  }
  return c;
}

/// Compiles the module placed by \p choices (in a context of its own, with
/// random weights) and returns the sum over its entries of the median run.
std::unique_ptr<ProbeArtifact> Placer::compileWhole(const Choices &choices,
                                                    std::string &error) {
  PlaceOptions copy = options;
  copy.endToEnd = false;
  copy.report = nullptr;
  copy.progress = nullptr;
  auto prepare = [&](ModuleOp parsed) {
    Placer other(parsed, copy);
    for (auto fn : parsed.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      other.plans.push_back({fn, {}});
      other.findSites(other.plans.back(), /*allPrefixes=*/false);
    }
    if (other.plans.size() != choices.size())
      return failure();
    for (auto [plan, picks] : llvm::zip(other.plans, choices)) {
      if (plan.sites.size() != picks.size())
        return failure();
      for (auto [site, pick] : llvm::zip(plan.sites, picks))
        site.chosen = pick;
      if (failed(other.form(plan)))
        return failure();
    }
    return success();
  };
  assert(!moduleText.empty() && "the module is printed before it is placed");
  return compileModuleText(moduleText, weightsBytes, registry, options.threads,
                           prepare, error);
}

/// The sum of the chosen options' times: what the fragments of \p choices
/// take priced alone.
double Placer::estimateSeconds(const Choices &choices) const {
  double total = 0;
  for (auto [plan, picks] : llvm::zip(plans, choices))
    for (auto [site, pick] : llvm::zip(plan.sites, picks))
      if (pick >= 0)
        total += optionSeconds(site.options[pick]);
  return total;
}

/// The end-to-end level's trials: the cover, every fixed backend set (the
/// one its fragments price lowest first), and the
/// cover with one class of identical sites moved to its runner-up backend
/// when that is within 25% per fragment (the classes taking the most time,
/// at most kMaxMoveTrials).
std::vector<std::pair<std::string, Placer::Choices>>
Placer::endToEndCandidates(const Choices &cover) const {
  std::vector<std::pair<std::string, Choices>> candidates = {{"cover", cover}};
  for (const auto &backend : registry.all())
    if (allowed(options, *backend))
      candidates.push_back({("all " + backend->name()).str(),
                            fixedSetChoices(*backend)});
  // The fixed sets most promising first (by their fragments' times): the
  // first one is the baseline the placement must not lose to, compiled
  // whatever the budget (Placer::endToEnd).
  loom::stableSort(candidates.begin() + 1, candidates.end(),
                   [&](const auto &a, const auto &b) {
                     return estimateSeconds(a.second) <
                            estimateSeconds(b.second);
                   });
  llvm::StringMap<SmallVector<std::pair<size_t, size_t>>> classes;
  for (auto [p, plan] : llvm::enumerate(plans))
    for (auto [i, site] : llvm::enumerate(plan.sites))
      if (site.chosen >= 0)
        classes[requests[site.options[site.chosen].callCost].key].push_back(
            {p, i});
  std::vector<std::pair<double, SmallVector<std::pair<size_t, size_t>>>> order;
  for (auto &[key, members] : classes) {
    double total = 0;
    for (auto [p, i] : members)
      total += optionSeconds(
          plans[p].sites[i].options[plans[p].sites[i].chosen]);
    order.push_back({total, members});
  }
  loom::stableSort(order, [](const auto &a, const auto &b) {
    return a.first > b.first;
  });
  for (auto &[total, members] : order) {
    if (candidates.size() >= 1 + registry.all().size() + kMaxMoveTrials)
      break;
    Choices moved = cover;
    bool any = false;
    for (auto [p, i] : members) {
      const Site &site = plans[p].sites[i];
      const Option &chosen = site.options[site.chosen];
      int runnerUp = -1;
      for (auto [k, o] : llvm::enumerate(site.options))
        if (o.call.backend != chosen.call.backend &&
            (runnerUp < 0 ||
             optionSeconds(o) < optionSeconds(site.options[runnerUp])))
          runnerUp = k;
      if (runnerUp >= 0 && optionSeconds(site.options[runnerUp]) <=
                               1.25 * optionSeconds(chosen)) {
        moved[p][i] = runnerUp;
        any = true;
      }
    }
    const Site &first = plans[members[0].first].sites[members[0].second];
    if (any)
      candidates.push_back(
          {llvm::formatv("{0} x{1} to runner-up",
                         first.options[first.chosen].call.pattern(),
                         members.size()),
           moved});
  }

  return candidates;
}

/// Times every compiled trial in turn (timeInTurn), records the medians
/// under their keys and frees the artifacts.
void Placer::timeTrialsInTurn(
    llvm::function_ref<std::string(const Choices &)> keyOf) {
  std::vector<ProbeArtifact *> artifacts;
  std::vector<Trial *> timed;
  for (Trial &t : trials)
    if (t.artifact) {
      artifacts.push_back(t.artifact.get());
      timed.push_back(&t);
    }
  if (!artifacts.empty()) {
    std::vector<TimedArtifact> medians =
        timeInTurn(artifacts, /*shareInputs=*/false);
    for (auto [t, timing] : llvm::zip(timed, medians)) {
      t->artifact.reset();
      std::optional<double> median = timing.median;
      if (!median) {
        t->note = std::string("does not run: ") + loom_last_error();
        continue;
      }
      t->seconds = *median;
      if (options.db)
        options.db->record(keyOf(t->choices), *median);
    }
    if (options.progress) {
      *options.progress << llvm::format(
          "tg-place-backends: end to end, timed %zu trials in turn:",
          timed.size());
      for (Trial *t : timed)
        *options.progress << llvm::format(" %s %.3f ms;", t->name.c_str(),
                                          t->seconds * 1e3);
      *options.progress << "\n";
    }
  }

}

/// Collage's second level, for what the per-fragment costs cannot see (the
/// layouts oneDNN keeps between its own steps, reorders at backend switches,
/// fusion across a fragment's edge): whole-model trials of the cover, of every
/// fixed backend set, and of the cover with one class of identical sites moved
/// to its runner-up (when that is within 25% per fragment; the classes taking
/// the most time, at most kMaxMoveTrials). Every trial is compiled and loaded
/// first, then all are timed in turn (sequential timings of one binary minutes
/// apart differ by up to 2x on a shared machine); the fastest fixed set is
/// kept unless a mixed placement beats it by 5%.
void Placer::searchEndToEnd(std::chrono::steady_clock::time_point start) {
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  // A trial compiles the whole model with random weights in the artifact:
  // past this size that costs more than the search is worth.
  int64_t weightBytes = 0;
  llvm::StringSet<> names;
  module.walk([&](tg::WeightOp op) {
    if (names.insert(op.getName()).second)
      weightBytes +=
          op.getType().getNumElements() *
          std::max<int64_t>(1, op.getType().getElementTypeBitWidth() / 8);
  });
  if (weightBytes > kMaxEndToEndWeightBytes) {
    trials.push_back({"cover", currentChoices(), kInf,
                      llvm::formatv("end to end skipped: {0} MB of weights",
                                    weightBytes >> 20)});
    if (options.progress)
      *options.progress << "tg-place-backends: " << trials.back().note
                        << " (over " << (kMaxEndToEndWeightBytes >> 20)
                        << " MB)\n";
    return;
  }
  {
    llvm::raw_string_ostream os(moduleText);
    module.print(os);
    weightsBytes = randomWeights(module);
  }
  std::string machine = machineKey(options.threads);
  auto keyOf = [&](const Choices &choices) {
    std::string picks;
    for (const auto &function : choices)
      for (int pick : function)
        picks += std::to_string(pick) + ",";
    return llvm::formatv("{0}|whole|{1:x}|{2:x}", machine,
                         llvm::xxh3_64bits(moduleText),
                         llvm::xxh3_64bits(picks))
        .str();
  };

  auto skippedKey = [&](const Choices &choices) {
    return llvm::formatv("{0}|skipped under a budget of {1} s", keyOf(choices),
                         options.budgetSeconds)
        .str();
  };

  Choices cover = currentChoices();
  double coverEstimate = estimateSeconds(cover);
  double flops = 0;
  module.walk([&](tg::WorkOpInterface op) { flops += op.getWork().flops; });
  bool smallModel = flops < kSmallModelFlops;
  std::vector<std::pair<std::string, Choices>> candidates =
      endToEndCandidates(cover);
  // Compile (or find cached) every distinct candidate.
  for (const auto &candidate : candidates) {
    const std::string &name = candidate.first;
    const Choices &choices = candidate.second;
    bool fixedSet = StringRef(name).starts_with("all ");
    bool alwaysMeasured = fixedSet && smallModel;
    // A placement already a trial is not measured twice, unless it was left
    // out (for the budget) and is a fixed set that must be measured.
    if (llvm::any_of(trials, [&](const Trial &t) {
          return t.choices == choices &&
                 !(alwaysMeasured && !t.artifact && std::isinf(t.seconds));
        }))
      continue;
    Trial t{name, choices};
    // Layouts and switches do not make up for fragments that are far
    // slower (not closer than 4x: tiny fragments' probe times are mostly
    // call overhead; nasrnn is 2x faster all generated than all oneDNN
    // while its probes say the opposite).
    if (!trials.empty() && !alwaysMeasured &&
        estimateSeconds(t.choices) > 4 * coverEstimate) {
      t.note = llvm::formatv("not measured: its fragments take {0:f1} ms, "
                             "the cover's {1:f1} ms",
                             estimateSeconds(t.choices) * 1e3,
                             coverEstimate * 1e3);
    } else if (auto cached =
                   options.db ? options.db->lookup(keyOf(t.choices))
                              : std::nullopt) {
      t.seconds = *cached;
      t.note = "cached";
    } else if (!alwaysMeasured && options.db &&
               options.db->lookup(skippedKey(t.choices))) {
      // An earlier search with this budget left it out: a warm search
      // makes the same choice instead of spending the time now (a larger
      // --search-budget measures it).
      t.note = "not measured: budget (an earlier search)";
    } else if (!alwaysMeasured && elapsed() > 0.7 * options.budgetSeconds &&
               !(fixedSet &&
                 llvm::none_of(trials, [](const Trial &other) {
                   return StringRef(other.name).starts_with("all ");
                 }))) {
      // Past the budget, but never before one fixed set is measured: the
      // placement is kept only where it beats the best measured fixed set,
      // and without one the cover would stand unchecked (NASNet-A's cover,
      // its 293 fragments priced alone, ran 1.4x slower than all oneDNN).
      t.note = "not measured: budget";
      if (options.db)
        options.db->record(skippedKey(t.choices), 0);
    } else {
      std::string error;
      t.artifact = compileWhole(t.choices, error);
      if (!t.artifact)
        t.note = error;
    }
    if (options.progress)
      *options.progress << llvm::format(
          "tg-place-backends: end to end, %s: %s (%.1f s)\n", t.name.c_str(),
          t.artifact ? "compiled"
          : std::isinf(t.seconds)
              ? t.note.c_str()
              : llvm::formatv("{0:f3} ms, cached", t.seconds * 1e3)
                    .str()
                    .c_str(),
          elapsed());
    trials.push_back(std::move(t));
  }

  timeTrialsInTurn(keyOf);
  if (options.progress)
    *options.progress << llvm::format(
        "tg-place-backends: end to end, trials done (%.1f s)\n", elapsed());
  keepFastestTrial();
  if (options.db)
    if (auto err = options.db->save())
      module.emitWarning(llvm::toString(std::move(err)));
}

/// The baseline is the fastest fixed backend set (what --backends=<one>
/// builds); a placement that mixes backends (the cover or a variant)
/// replaces it only when it wins by 5%: measured in turn, whole BERT-base
/// artifacts still differ by a few percent from how loom-run times them
/// alone, and a mix the trials rank level with a fixed set was found
/// 10-20% slower alone (BERT-base's generated FFN matmuls). So the placed
/// model is the best fixed set unless mixing measurably pays.
void Placer::keepFastestTrial() {
  const Trial *fixed = nullptr, *mixed = nullptr;
  for (const Trial &t : trials) {
    const Trial *&best = StringRef(t.name).starts_with("all ") ? fixed : mixed;
    if (!best || t.seconds < best->seconds)
      best = &t;
  }
  const Trial *winner = &trials.front();
  if (fixed && !std::isinf(fixed->seconds))
    winner = mixed && mixed->seconds < kMeasurableGain * fixed->seconds
                 ? mixed
                 : fixed;
  bool replaced = winner != &trials.front();
  if (replaced)
    for (auto [plan, picks] : llvm::zip(plans, winner->choices))
      for (auto [site, pick] : llvm::zip(plan.sites, picks))
        site.chosen = pick;
  if (options.progress)
    *options.progress << "tg-place-backends: end to end, kept "
                      << (replaced ? winner->name : std::string("cover"))
                      << "\n";
}

void Placer::findSites(FunctionPlan &plan, bool allPrefixes) {
  const Backend *codegen = registry.codeGenerator();
  // The function's ops in pre-order, the regions of tg.if included (a
  // site's index counts them in that order; without regions it is the
  // op's position in the block). A chain stays in its anchor's block, as
  // fragments do.
  SmallVector<Operation *> ops;
  plan.fn->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == plan.fn.getOperation())
      return WalkResult::advance();
    ops.push_back(op);
    return isa<tg::FragmentOp>(op) ? WalkResult::skip()
                                   : WalkResult::advance();
  });
  for (auto [position, opPtr] : llvm::enumerate(ops)) {
    Operation &op = *opPtr;
    if (staysOutside(&op))
      continue;
    auto available = [&](Operation *user) {
      return user->getBlock() == op.getBlock() && !staysOutside(user);
    };
    bool library = false;
    for (const auto &backend : registry.all()) {
      if (backend->generatesCode() || !allowed(options, *backend))
        continue;
      SmallVector<LibraryCall> calls;
      backend->candidates(&op, available, calls);
      library |= !calls.empty();
    }
    if (!library)
      continue;
    Site site{&op, int64_t(position), {}, {}, -1};
    SmallVector<LibraryCall> chain;
    if (codegen)
      codegen->candidates(&op, available, chain);
    site.chain.assign(chain.empty() ? SmallVector<Operation *, 4>{&op}
                                    : chain.front().ops);
    plan.sites.push_back(std::move(site));
  }
  // Sites whose chains share an op decide together and need every prefix.
  llvm::DenseMap<Operation *, unsigned> owner;
  llvm::DenseSet<unsigned> shared;
  for (auto [i, site] : llvm::enumerate(plan.sites))
    for (Operation *op : site.chain)
      if (auto [it, inserted] = owner.try_emplace(op, i); !inserted) {
        shared.insert(i);
        shared.insert(it->second);
      }
  for (auto [i, site] : llvm::enumerate(plan.sites)) {
    bool prefixes = allPrefixes || shared.count(i);
    for (const auto &backend : registry.all()) {
      if (!allowed(options, *backend))
        continue;
      SmallVector<LibraryCall> calls;
      Block *block = site.anchor->getBlock();
      backend->candidates(
          site.anchor,
          [&](Operation *user) {
            return user->getBlock() == block && !staysOutside(user);
          },
          calls);
      for (LibraryCall &call : calls) {
        // Only fragments along the chain: the rest of it is a leftover.
        if (call.ops.size() > site.chain.size() ||
            !std::equal(call.ops.begin(), call.ops.end(), site.chain.begin()))
          continue;
        Option option{call, std::nullopt};
        if (call.ops.size() < site.chain.size()) {
          LibraryCall rest;
          rest.backend = codegen;
          rest.anchor = site.chain[call.ops.size()];
          rest.ops.assign(site.chain.begin() + call.ops.size(),
                          site.chain.end());
          option.leftover = std::move(rest);
        }
        site.options.push_back(std::move(option));
        if (!prefixes)
          break;
      }
    }
  }
}

size_t Placer::request(const LibraryCall &call) {
  pricedCalls.push_back(std::make_unique<LibraryCall>(call));
  CostRequest r;
  r.call = pricedCalls.back().get();
  r.key = oneLine(fragmentKey(call));
  requests.push_back(std::move(r));
  return requests.size() - 1;
}

/// Cheapest cover of the sites: the sites' costs add up except where two
/// sites' chains share an op (a residual add two convolutions could take),
/// so each group of sites sharing ops is solved exactly by enumeration and
/// the groups independently: the optimum under the additive model.
void Placer::solve(FunctionPlan &plan) {
  llvm::EquivalenceClasses<unsigned> groups;
  llvm::DenseMap<Operation *, unsigned> owner;
  for (auto [i, site] : llvm::enumerate(plan.sites)) {
    groups.insert(i);
    for (Operation *op : site.chain)
      if (auto [it, inserted] = owner.try_emplace(op, i); !inserted)
        groups.unionSets(i, it->second);
  }
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    SmallVector<unsigned> members;
    for (auto m = groups.member_begin(**it); m != groups.member_end(); ++m)
      members.push_back(*m);
    llvm::sort(members);
    size_t combinations = 1;
    for (unsigned m : members)
      combinations =
          std::min(kMaxCombinations + 1,
                   combinations * std::max<size_t>(
                                      1, plan.sites[m].options.size()));
    if (combinations > kMaxCombinations) {
      // Site by site, in order, skipping options that clash.
      llvm::DenseSet<Operation *> claimed;
      for (unsigned m : members) {
        Site &site = plan.sites[m];
        double best = kInf;
        for (auto [k, o] : llvm::enumerate(site.options)) {
          if (llvm::any_of(o.call.ops,
                           [&](Operation *op) { return claimed.count(op); }))
            continue;
          if (optionSeconds(o) < best) {
            best = optionSeconds(o);
            site.chosen = k;
          }
        }
        if (site.chosen >= 0)
          claimed.insert(site.options[site.chosen].call.ops.begin(),
                         site.options[site.chosen].call.ops.end());
      }
      continue;
    }
    SmallVector<int> pick(members.size(), 0), bestPick;
    double best = kInf;
    while (true) {
      llvm::DenseSet<Operation *> claimed;
      bool clash = false;
      for (auto [m, k] : llvm::zip(members, pick))
        for (Operation *op : plan.sites[m].options[k].call.ops)
          clash |= !claimed.insert(op).second;
      if (!clash) {
        double total = 0;
        // Each op left over is one generated kernel, counted once.
        llvm::DenseSet<Operation *> leftoverCounted;
        for (size_t a = 0; a < members.size(); ++a) {
          const Option &o = plan.sites[members[a]].options[pick[a]];
          total += requests[o.callCost].seconds;
          if (!o.leftover)
            continue;
          // A leftover another site computes costs nothing here.
          bool elsewhere = llvm::all_of(o.leftover->ops, [&](Operation *op) {
            for (size_t b = 0; b < members.size(); ++b)
              if (b != a && llvm::is_contained(
                                plan.sites[members[b]].options[pick[b]].call.ops,
                                op))
                return true;
            return false;
          });
          if (!elsewhere &&
              leftoverCounted.insert(o.leftover->ops.front()).second)
            total += requests[o.leftoverCost].seconds;
        }
        if (total < best) {
          best = total;
          bestPick = pick;
        }
      }
      // Next combination.
      size_t d = 0;
      for (; d < pick.size(); ++d) {
        if (++pick[d] < int(plan.sites[members[d]].options.size()))
          break;
        pick[d] = 0;
      }
      if (d == pick.size())
        break;
    }
    for (auto [m, k] : llvm::zip(members, bestPick))
      plan.sites[m].chosen = k;
  }
}

LogicalResult Placer::form(FunctionPlan &plan) {
  llvm::DenseMap<Operation *, const LibraryCall *> chosen;
  for (const Site &site : plan.sites)
    if (site.chosen >= 0)
      chosen[site.anchor] = &site.options[site.chosen].call;
  auto choose = [&](Operation *op,
                    Available available) -> std::optional<LibraryCall> {
    const LibraryCall *call = chosen.lookup(op);
    if (!call || !llvm::all_of(ArrayRef(call->ops).drop_front(), available))
      return std::nullopt;
    return *call;
  };
  return formFragments(plan.fn, choose, registry);
}

std::string describe(const LibraryCall &call) {
  return (call.backend->name() + " " + call.pattern()).str();
}

void Placer::writeReport(llvm::raw_ostream &os) const {
  for (const FunctionPlan &plan : plans) {
    double total = 0;
    os << "placement of @" << plan.fn.getName() << ": " << plan.sites.size()
       << " sites\n";
    os << llvm::format("  %-4s %-6s %-34s %10s  %s\n", "#", "op", "chosen",
                       "ms", "alternatives (ms)");
    for (auto [i, site] : llvm::enumerate(plan.sites)) {
      if (site.chosen < 0)
        continue;
      const Option &c = site.options[site.chosen];
      std::string alternatives;
      for (auto [k, o] : llvm::enumerate(site.options)) {
        if (int(k) == site.chosen)
          continue;
        if (!alternatives.empty())
          alternatives += ", ";
        alternatives += describe(o.call);
        if (!requests.empty())
          alternatives += llvm::formatv(" {0:f3}", optionSeconds(o) * 1e3);
      }
      // A placement read from a file was not priced.
      std::string ms = "(file)";
      if (!requests.empty()) {
        total += optionSeconds(c);
        ms = llvm::formatv("{0:f3}", optionSeconds(c) * 1e3).str();
      }
      os << llvm::format("  %-4zu %-6lld %-34s %10s  %s\n", i,
                         (long long)site.index, describe(c.call).c_str(),
                         ms.c_str(), alternatives.c_str());
    }
    if (!requests.empty())
      os << llvm::format("  sites total: %.3f ms (%s)\n", total * 1e3,
                         options.costModel ? options.costModel->name().c_str()
                                           : "");
  }
  if (!trials.empty())
    os << "end to end (whole model, sum of entries):\n";
  for (const Trial &t : trials)
    os << llvm::format("  %-40s %s\n", t.name.c_str(),
                       std::isinf(t.seconds)
                           ? t.note.c_str()
                           : llvm::formatv("{0:f3} ms", t.seconds * 1e3)
                                 .str()
                                 .c_str());
}

llvm::json::Value Placer::toJSON() const {
  Array functions;
  for (const FunctionPlan &plan : plans) {
    Array fragments;
    for (const Site &site : plan.sites) {
      if (site.chosen < 0)
        continue;
      auto optionObject = [&](const Option &o) {
        Object obj{{"backend", o.call.backend->name()},
                   {"pattern", o.call.pattern()},
                   {"ops", int64_t(o.call.ops.size())}};
        if (!requests.empty()) {
          obj["seconds"] = optionSeconds(o);
          obj["source"] = requests[o.callCost].source;
          if (o.leftover)
            obj["leftover_seconds"] = requests[o.leftoverCost].seconds;
        }
        return obj;
      };
      Object fragment = optionObject(site.options[site.chosen]);
      std::string loc;
      llvm::raw_string_ostream los(loc);
      site.anchor->getLoc().print(los);
      fragment["anchor"] = site.index;
      fragment["op"] = site.anchor->getName().getStringRef();
      fragment["signature"] = cost::opSignature(site.anchor);
      fragment["loc"] = loc;
      Array alternatives;
      for (auto [k, o] : llvm::enumerate(site.options))
        if (int(k) != site.chosen)
          alternatives.push_back(optionObject(o));
      fragment["alternatives"] = std::move(alternatives);
      fragments.push_back(std::move(fragment));
    }
    functions.push_back(Object{{"name", plan.fn.getName()},
                               {"fragments", std::move(fragments)}});
  }
  Object root{{"format", "loom-placement"},
              {"version", 1},
              {"functions", std::move(functions)}};
  if (options.costModel)
    root["cost_model"] = options.costModel->name();
  Array endToEnd;
  for (const Trial &t : trials) {
    Object trial{{"name", t.name}};
    trial["seconds"] = std::isinf(t.seconds) ? llvm::json::Value(nullptr)
                                             : llvm::json::Value(t.seconds);
    if (!t.note.empty())
      trial["note"] = t.note;
    endToEnd.push_back(std::move(trial));
  }
  if (!endToEnd.empty())
    root["end_to_end"] = std::move(endToEnd);
  return root;
}

LogicalResult Placer::applyPlacementFile(Object &root) {
  StringRef file = options.placementIn;
  auto fail = [&](Operation *at, const Twine &message) {
    return (at ? at : module.getOperation())->emitError()
           << "placement " << file << ": " << message;
  };
  if (root.getString("format") != "loom-placement" ||
      root.getInteger("version") != 1)
    return fail(nullptr, "not a Loom placement (need \"format\": "
                         "\"loom-placement\", \"version\": 1)");
  Array *functions = root.getArray("functions");
  if (!functions)
    return fail(nullptr, "no \"functions\" array");
  for (FunctionPlan &plan : plans) {
    Object *entry = nullptr;
    for (llvm::json::Value &f : *functions)
      if (auto *obj = f.getAsObject();
          obj && obj->getString("name") == plan.fn.getName())
        entry = obj;
    if (!entry)
      return fail(plan.fn, "has no function @" + plan.fn.getName());
    Array *fragments = entry->getArray("fragments");
    if (!fragments || fragments->size() != plan.sites.size())
      return fail(plan.fn, "@" + plan.fn.getName() + " has " +
                               Twine(fragments ? fragments->size() : 0) +
                               " fragments, this model " +
                               Twine(plan.sites.size()) +
                               " sites: it was searched for another model "
                               "(search again with --placement-out)");
    for (auto [site, value] : llvm::zip(plan.sites, *fragments)) {
      Object *frag = value.getAsObject();
      auto anchor = frag ? frag->getInteger("anchor") : std::nullopt;
      auto op = frag ? frag->getString("op") : std::nullopt;
      auto signature = frag ? frag->getString("signature") : std::nullopt;
      auto backend = frag ? frag->getString("backend") : std::nullopt;
      auto count = frag ? frag->getInteger("ops") : std::nullopt;
      if (!anchor || !op || !backend || !count || !signature)
        return fail(site.anchor, "a fragment lacks anchor, op, signature, "
                                 "backend or ops");
      if (*anchor != site.index || *op != site.anchor->getName().getStringRef() ||
          *signature != cost::opSignature(site.anchor))
        return fail(site.anchor,
                    "fragment at op " + Twine(*anchor) + " (" + *op +
                        ") does not match this model's site at op " +
                        Twine(site.index) + " (" +
                        site.anchor->getName().getStringRef() +
                        "): it was searched for another model");
      for (auto [k, o] : llvm::enumerate(site.options))
        if (o.call.backend->name() == *backend &&
            int64_t(o.call.ops.size()) == *count)
          site.chosen = k;
      if (site.chosen < 0) {
        std::string valid;
        for (const Option &o : site.options)
          valid += (valid.empty() ? "" : ", ") + describe(o.call) + " (" +
                   std::to_string(o.call.ops.size()) + " ops)";
        return fail(site.anchor, "no fragment of " + Twine(*count) +
                                     " ops on '" + *backend +
                                     "' starts here; the choices are: " +
                                     valid);
      }
    }
  }
  return success();
}

LogicalResult Placer::run() {
  auto start = std::chrono::steady_clock::now();
  bool fromFile = !options.placementIn.empty();
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    plans.push_back({fn, {}});
    findSites(plans.back(), /*allPrefixes=*/fromFile);
  }
  if (fromFile) {
    auto buffer = llvm::MemoryBuffer::getFile(options.placementIn);
    if (!buffer)
      return module.emitError("cannot read placement ")
             << options.placementIn << ": " << buffer.getError().message();
    auto json = llvm::json::parse((*buffer)->getBuffer());
    if (!json)
      return module.emitError("placement ")
             << options.placementIn
             << " is not JSON: " << llvm::toString(json.takeError());
    Object *root = json->getAsObject();
    if (!root)
      return module.emitError("placement ")
             << options.placementIn << " is not a JSON object";
    if (failed(applyPlacementFile(*root)))
      return failure();
  } else {
    if (!options.costModel)
      return module.emitError("tg-place-backends: no cost model");
    for (FunctionPlan &plan : plans)
      for (Site &site : plan.sites)
        for (Option &o : site.options) {
          o.callCost = request(o.call);
          if (o.leftover)
            o.leftoverCost = request(*o.leftover);
        }
    if (failed(options.costModel->estimate(module, requests)))
      return failure();
    for (FunctionPlan &plan : plans)
      solve(plan);
    if (options.endToEnd)
      searchEndToEnd(start);
  }
  if (options.report)
    writeReport(*options.report);
  if (!options.placementOut.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.placementOut, ec);
    if (ec)
      return module.emitError("cannot write placement ")
             << options.placementOut << ": " << ec.message();
    os << llvm::formatv("{0:2}", toJSON()) << "\n";
  }
  size_t sites = 0;
  for (FunctionPlan &plan : plans) {
    if (failed(form(plan)))
      return failure();
    sites += plan.sites.size();
  }
  if (options.progress)
    *options.progress << llvm::format(
        "tg-place-backends: placed %zu sites in %.2f s (%s)\n", sites,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count(),
        fromFile ? ("from " + options.placementIn).c_str()
                 : options.costModel->name().c_str());
  return success();
}

} // namespace

LogicalResult placement::placeBackends(ModuleOp module,
                                       const PlaceOptions &options) {
  return Placer(module, options).run();
}
