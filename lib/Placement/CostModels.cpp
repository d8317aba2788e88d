//===- CostModels.cpp - Analytic and measured costs of fragments ----------===//
//
// Part of Loom. See Placement.h.
//
//===----------------------------------------------------------------------===//

#include "Probe.h"

#include "loom/Placement/Placement.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <chrono>
#include <thread>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::placement;

FragmentCostModel::~FragmentCostModel() = default;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

//===----------------------------------------------------------------------===//
// Analytic
//===----------------------------------------------------------------------===//

class AnalyticModel : public FragmentCostModel {
public:
  explicit AnalyticModel(cost::RooflineTarget target)
      : target(std::move(target)) {}
  std::string name() const override { return "analytic:" + target.name; }
  LogicalResult estimate(ModuleOp,
                         MutableArrayRef<CostRequest> requests) override {
    for (CostRequest &r : requests) {
      r.seconds = r.call->backend->analyticSeconds(*r.call, target);
      r.source = "analytic";
    }
    return success();
  }

private:
  cost::RooflineTarget target;
};

//===----------------------------------------------------------------------===//
// Measured
//===----------------------------------------------------------------------===//

class MeasuredModel : public FragmentCostModel {
public:
  MeasuredModel(const BackendRegistry &backends, cost::CostDatabase &db,
                MeasureOptions options,
                std::unique_ptr<FragmentCostModel> fallback)
      : backends(backends), db(db), options(options),
        fallback(std::move(fallback)), machine(machineKey(options.threads)) {}

  std::string name() const override { return "measured:" + machine; }
  LogicalResult estimate(ModuleOp module,
                         MutableArrayRef<CostRequest> requests) override;

private:
  const BackendRegistry &backends;
  cost::CostDatabase &db;
  MeasureOptions options;
  std::unique_ptr<FragmentCostModel> fallback;
  std::string machine;

  std::string dbKey(const CostRequest &r) const {
    return machine + "|" + r.call->backend->name().str() + "|" +
           r.key;
  }
  /// Compiles and times \p batch (indices into \p requests); returns false
  /// when the probe artifact does not compile.
  bool measureBatch(ModuleOp module, MutableArrayRef<CostRequest> requests,
                    ArrayRef<size_t> batch, Clock::time_point start,
                    std::string &error);
};

LogicalResult MeasuredModel::estimate(ModuleOp module,
                                      MutableArrayRef<CostRequest> requests) {
  auto start = Clock::now();
  // Cached ones first; one probe per distinct key.
  llvm::StringMap<size_t> firstOfKey;
  std::vector<size_t> toMeasure;
  for (auto [i, r] : llvm::enumerate(requests)) {
    if (auto seconds = db.lookup(dbKey(r))) {
      r.seconds = *seconds;
      r.source = "cached";
    } else if (firstOfKey.try_emplace(dbKey(r), i).second) {
      toMeasure.push_back(i);
    }
  }
  if (options.progress)
    *options.progress << "tg-place-backends: " << requests.size()
                      << " fragments to price, "
                      << llvm::count_if(requests,
                                        [](const CostRequest &r) {
                                          return r.source == "cached";
                                        })
                      << " cached; measuring " << toMeasure.size()
                      << " distinct ones on " << machine << "\n";
  if (!toMeasure.empty()) {
    std::string error;
    if (!measureBatch(module, requests, toMeasure, start, error)) {
      // One fragment that does not compile must not hide the others' times:
      // measure one at a time, the failing ones cost infinity.
      if (options.progress)
        *options.progress << "tg-place-backends: the probe artifact does not "
                             "compile (" << error
                          << "); measuring one fragment at a time\n";
      for (size_t i : toMeasure) {
        std::string one;
        if (!measureBatch(module, requests, {i}, start, one)) {
          requests[i].seconds = std::numeric_limits<double>::infinity();
          requests[i].source = "does not compile: " + one;
        }
      }
    }
  }
  // Duplicates take their key's time; what the budget left gets analytic.
  SmallVector<size_t> unpriced;
  for (auto [i, r] : llvm::enumerate(requests)) {
    if (!r.source.empty())
      continue;
    const CostRequest &first = requests[firstOfKey.lookup(dbKey(r))];
    if (!first.source.empty() && first.source != "analytic (budget)") {
      r.seconds = first.seconds;
      r.source = first.source;
    } else {
      unpriced.push_back(i);
    }
  }
  if (!unpriced.empty()) {
    std::vector<CostRequest> rest;
    for (size_t i : unpriced)
      rest.push_back(requests[i]);
    if (failed(fallback->estimate(module, rest)))
      return failure();
    for (auto [i, r] : llvm::zip(unpriced, rest)) {
      requests[i].seconds = r.seconds;
      requests[i].source = "analytic (budget)";
    }
  }
  if (auto err = db.save())
    return module.emitError(llvm::toString(std::move(err)));
  if (options.progress)
    *options.progress << llvm::format(
        "tg-place-backends: costs ready in %.1f s\n", secondsSince(start));
  return success();
}

bool MeasuredModel::measureBatch(ModuleOp module,
                                 MutableArrayRef<CostRequest> requests,
                                 ArrayRef<size_t> batch,
                                 Clock::time_point start, std::string &error) {
  SmallVector<const LibraryCall *> calls;
  for (size_t i : batch)
    calls.push_back(requests[i].call);
  if (options.progress)
    *options.progress << "tg-place-backends: compiling " << batch.size()
                      << " probe" << (batch.size() == 1 ? "" : "s") << "\n";
  std::unique_ptr<ProbeArtifact> probe =
      compileProbes(calls, module, backends, options.threads, error);
  if (!probe)
    return false;
  std::mt19937 rng(12345);
  size_t reported = 0;
  for (auto [n, i] : llvm::enumerate(batch)) {
    CostRequest &r = requests[i];
    if (secondsSince(start) > options.budgetSeconds)
      break; // left for the fallback
    int64_t entry =
        loom_model_find_entry(probe->model, ("p" + Twine(n)).str().c_str());
    auto seconds =
        entry >= 0 ? medianSeconds(*probe, entry, rng) : std::nullopt;
    if (!seconds) {
      r.seconds = std::numeric_limits<double>::infinity();
      r.source = std::string("does not run: ") + loom_last_error();
      continue;
    }
    r.seconds = *seconds;
    r.source = "measured";
    db.record(dbKey(r), *seconds);
    if (options.progress && (n + 1) * 10 / batch.size() > reported) {
      reported = (n + 1) * 10 / batch.size();
      *options.progress << llvm::format(
          "tg-place-backends: timed %zu/%zu fragments (%.1f s)\n", n + 1,
          batch.size(), secondsSince(start));
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// An op priced as the placement would run it (tg-superopt's cost)
//===----------------------------------------------------------------------===//

class BackendOpModel : public cost::CostModel {
public:
  BackendOpModel(const BackendRegistry &registry, cost::RooflineTarget target,
                 const cost::CostDatabase *db, int threads)
      : registry(registry), target(std::move(target)), db(db),
        machine(machineKey(threads)) {
    for (const auto &backend : registry.all())
      layoutChains |= !backend->generatesCode() &&
                      !backend->anchorOps().empty();
  }
  std::string name() const override { return "backends:" + target.name; }
  double opCost(Operation *op) override;

private:
  const BackendRegistry &registry;
  cost::RooflineTarget target;
  const cost::CostDatabase *db;
  std::string machine;
  /// Some library runs fragments in a layout of its own.
  bool layoutChains = false;
};

double BackendOpModel::opCost(Operation *op) {
  cost::OpWork work = cost::workOf(op);
  if (!work.kernel)
    return 0;
  double best = std::numeric_limits<double>::infinity();
  bool generated = true;
  for (const auto &backend : registry.all()) {
    SmallVector<LibraryCall, 4> calls;
    backend->candidates(op, [](Operation *) { return false; }, calls);
    for (const LibraryCall &call : calls) {
      if (call.ops.size() != 1)
        continue;
      std::optional<double> measured;
      if (db)
        measured = db->lookup(machine + "|" + backend->name().str() + "|" +
                              fragmentKey(call));
      double seconds =
          measured ? *measured : backend->analyticSeconds(call, target);
      if (seconds < best) {
        best = seconds;
        generated = backend->generatesCode();
      }
    }
  }
  if (std::isinf(best))
    return work.bytes() / target.memBandwidth + target.launchOverhead;
  auto ranked = op->getNumResults()
                    ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                    : RankedTensorType();
  if (generated && layoutChains && ranked && ranked.getRank() == 4)
    best += 2 * work.bytes() / target.memBandwidth;
  return best;
}

} // namespace

std::unique_ptr<cost::CostModel> placement::createBackendOpCostModel(
    const BackendRegistry &registry, cost::RooflineTarget target,
    const cost::CostDatabase *db, int threads) {
  return std::make_unique<BackendOpModel>(registry, std::move(target), db,
                                          threads);
}

std::string placement::machineKey(int threads) {
  unsigned n = threads > 0 ? unsigned(threads)
                           : std::max(1u, std::thread::hardware_concurrency());
  return llvm::sys::getHostCPUName().str() + "/" + std::to_string(n) + "t";
}

std::unique_ptr<FragmentCostModel>
placement::createAnalyticCostModel(cost::RooflineTarget target) {
  return std::make_unique<AnalyticModel>(std::move(target));
}

std::unique_ptr<FragmentCostModel> placement::createMeasuredCostModel(
    const BackendRegistry &backends, cost::CostDatabase &db,
    MeasureOptions options, std::unique_ptr<FragmentCostModel> fallback) {
  return std::make_unique<MeasuredModel>(backends, db, options,
                                         std::move(fallback));
}
