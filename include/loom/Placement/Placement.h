//===- Placement.h - Placing fragments on backends --------------*- C++ -*-===//
//
// Part of Loom. Collage-style backend placement (docs/Placement.md): every
// op some library backend runs is a site; each registered backend offers
// fragments starting there (its patterns); a cost model prices every
// fragment (measured: compiled and timed on this machine, cached by
// fragment, shapes, backend and machine; analytic: rooflines); a search
// picks one per site, then fragments are formed as placed. A placement is
// data: written and read as JSON, reported per fragment with its
// alternatives.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLACEMENT_PLACEMENT_H
#define LOOM_PLACEMENT_PLACEMENT_H

#include "loom/Compiler/Backend.h"
#include "loom/Cost/CostModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace loom::placement {

using compiler::LibraryCall;

/// Two whole artifacts timed in turn on this machine still differ by a few
/// percent from how each runs alone (BERT-base, docs/Placement.md): a
/// challenger replaces the baseline (a fixed backend set, the graph as
/// written) only when its median is below this fraction of the baseline's.
constexpr double kMeasurableGain = 0.95;

/// A fragment to price: its key (the printed fragment as a function: ops,
/// types, attributes, backend; no locations, no weight values) and its
/// time once priced.
struct CostRequest {
  const LibraryCall *call = nullptr;
  std::string key;
  double seconds = std::numeric_limits<double>::infinity();
  /// "measured", "cached", "analytic", or "analytic (budget)".
  std::string source;
};

/// One cost interface, two implementations.
class FragmentCostModel {
public:
  virtual ~FragmentCostModel();
  virtual std::string name() const = 0;
  /// Prices every request (in one batch: the measured model compiles them
  /// into one artifact). Fails only on an error worth stopping for.
  virtual mlir::LogicalResult estimate(mlir::ModuleOp context,
                                       llvm::MutableArrayRef<CostRequest>
                                           requests) = 0;
};

/// Rooflines (for targets that are not present): each fragment's
/// backend's analyticSeconds on \p target.
std::unique_ptr<FragmentCostModel>
createAnalyticCostModel(cost::RooflineTarget target);

struct MeasureOptions {
  /// Threads the probes run on (0: all).
  int threads = 0;
  /// Seconds the measurement may take; past it, unmeasured fragments get
  /// analytic costs.
  double budgetSeconds = 60;
  /// Where progress goes (null: nowhere).
  llvm::raw_ostream *progress = nullptr;
};

/// Compiles every uncached fragment as one entry of a probe artifact,
/// times each on this machine (median of runs on random inputs) and
/// records it in \p db under "<machine>|<key>"; \p fallback prices what
/// the budget leaves.
std::unique_ptr<FragmentCostModel>
createMeasuredCostModel(const compiler::BackendRegistry &backends,
                        cost::CostDatabase &db, MeasureOptions options,
                        std::unique_ptr<FragmentCostModel> fallback);

/// This machine, for cost-database keys: CPU name, features that matter,
/// threads.
std::string machineKey(int threads);

/// The printed probe function of \p call (the cost key without backend
/// and machine), built in \p scratch.
std::string fragmentKey(const LibraryCall &call);

/// The search's cost of an op as the placement would run it (for
/// tg-superopt in loom-compile, docs/Superopt/Search.md): the cheapest of
/// the op alone as a fragment of each backend of \p registry that runs it
/// (its time in \p db under this machine and \p threads when the placement
/// measured that fragment, else the backend's analyticSeconds on
/// \p target), plus, for an op generated code would run on a rank-4
/// tensor while a library backend anchors fragments, the two layout
/// changes it costs inside a library's layout chain (its bytes read and
/// written once more each way, docs/Placement.md). Ops that launch no
/// kernel cost nothing. \p db may be null.
std::unique_ptr<cost::CostModel>
createBackendOpCostModel(const compiler::BackendRegistry &registry,
                         cost::RooflineTarget target,
                         const cost::CostDatabase *db, int threads);

struct PlaceOptions {
  /// The backends to choose among (codegen always included); empty: all.
  std::vector<std::string> backends;
  FragmentCostModel *costModel = nullptr;
  /// A placement to apply instead of searching (JSON, docs/Placement.md).
  std::string placementIn;
  /// Where to write the placement (empty: nowhere).
  std::string placementOut;
  /// Where to print the report (null: nowhere).
  llvm::raw_ostream *report = nullptr;
  llvm::raw_ostream *progress = nullptr;
  const compiler::BackendRegistry *registry = nullptr;
  /// After the cover search: compile and time the whole model under the
  /// cover, under each fixed backend set and under close alternatives, and
  /// keep the fastest (needs this machine; the measured model turns it on).
  bool endToEnd = false;
  /// Seconds the whole search may take (the end-to-end level stops there).
  double budgetSeconds = 60;
  /// Threads the end-to-end runs use (0: all).
  int threads = 0;
  /// Where end-to-end times are cached (under the machine, a hash of the
  /// module and of the placement); null: not cached.
  cost::CostDatabase *db = nullptr;
};

/// The outcome of checking one fragment against the interpreter.
struct FragmentCheck {
  std::string backend, pattern;
  /// The anchor's location.
  std::string where;
  /// Largest |compiled - interpreted| over max(1, largest |interpreted|).
  double error = 0;
  bool passed = false;
  /// Why it could not be checked (empty when it ran).
  std::string note;
};

/// The fragment check: every fragment every backend of \p registry offers
/// at any op of \p module (each pattern and each shorter prefix), compiled
/// into one probe artifact through that backend's lowering, run on random
/// inputs and compared with the reference interpreter on the same inputs.
/// A backend whose pattern and lowering disagree fails here. Fails (with a
/// diagnostic) only when the probes cannot be built or compiled at all.
mlir::FailureOr<std::vector<FragmentCheck>>
checkFragments(mlir::ModuleOp module,
               const compiler::BackendRegistry &registry, double tolerance);

/// Places and forms the fragments of every function of \p module.
mlir::LogicalResult placeBackends(mlir::ModuleOp module,
                                  const PlaceOptions &options);

} // namespace loom::placement

#endif // LOOM_PLACEMENT_PLACEMENT_H
