//===- Probe.h - A fragment as a function of its own ------------*- C++ -*-===//
//
// Part of Loom. Internal to lib/Placement.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_PLACEMENT_PROBE_H
#define LOOM_LIB_PLACEMENT_PROBE_H

#include "loom-c/Runtime.h"
#include "loom/Compiler/Backend.h"
#include "loom/Support/PhaseTimer.h"
#include "loom/Support/SafeTensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <random>

namespace loom::placement {

/// Random weights shared by the probes of one artifact: one tensor per
/// type (values do not change a fragment's time or its check), so a model
/// with many 64 MB layers does not make a probe artifact of gigabytes.
struct ProbeWeights {
  safetensors::Writer writer;
  llvm::StringSet<> added;
  std::mt19937 rng{12345};
};

/// Appends to \p module a public function \p name computing \p call's ops:
/// activations as arguments, weights and large constants as tg.weight ops,
/// small constants copied; the last op's results returned. With
/// \p weights, a weight is named after its type and filled with random
/// values there; without, weights are named w0, w1, ... (the cost key).
/// With \p formFragment, the ops are then formed into the one fragment
/// \p call places.
mlir::func::FuncOp buildProbe(const compiler::LibraryCall &call,
                              mlir::ModuleOp module, llvm::StringRef name,
                              ProbeWeights *weights, bool formFragment,
                              const compiler::BackendRegistry &registry);

/// A probe artifact: one entry "p<i>" per fragment, compiled in a context
/// of its own (a pass may not load the dialects code generation needs) and
/// loaded with the runtime.
struct ProbeArtifact {
  /// The probe module as built (fragments formed) and its random weights.
  std::string text, weights;
  loom_model *model = nullptr;
  loom_context *context = nullptr;
  ProbeArtifact() = default;
  ProbeArtifact(const ProbeArtifact &) = delete;
  ~ProbeArtifact();
};

/// Builds, compiles and loads the probes of \p calls (built in \p module's
/// context). On failure returns null and sets \p error to the first
/// diagnostic.
std::unique_ptr<ProbeArtifact>
compileProbes(llvm::ArrayRef<const compiler::LibraryCall *> calls,
              mlir::ModuleOp module, const compiler::BackendRegistry &registry,
              int threads, std::string &error);

/// Parses \p text (a tg module) in a context of its own, lets \p prepare
/// (may be null) change it, compiles it with the weights \p weights (a
/// safetensors file) and loads it.
std::unique_ptr<ProbeArtifact> compileModuleText(
    llvm::StringRef text, std::string weights,
    const compiler::BackendRegistry &registry, int threads,
    llvm::function_ref<mlir::LogicalResult(mlir::ModuleOp)> prepare,
    std::string &error);

/// Loads the artifact at \p path into \p artifact (model and context, the
/// runtime on \p threads threads); false with \p error set when it does not
/// load.
bool loadInto(ProbeArtifact &artifact, llvm::StringRef path, int threads,
              std::string &error);

/// Random values for every tg.weight of \p module, as a safetensors file.
std::string randomWeights(mlir::ModuleOp module);

/// Random inputs for \p entry (f32 uniform in [-1, 1], other types zero)
/// and room for its outputs.
struct ProbeBuffers {
  std::vector<std::vector<uint8_t>> inputs, outputs;
  std::vector<const void *> in;
  std::vector<void *> out;
};
std::optional<ProbeBuffers> makeBuffers(const loom_model *model, int64_t entry,
                                        std::mt19937 &rng);

/// How many runs a time is the median of: after one warm-up, at least
/// minRuns, more while they take under minSeconds in all, at most maxRuns;
/// one when the warm-up took over slowRun seconds.
struct TimingPolicy {
  size_t minRuns = 3, maxRuns = 15;
  double minSeconds = 0.05, slowRun = 0.2;
};

/// Seconds per run of \p entry under \p policy; nullopt when a run fails.
std::optional<double> medianSeconds(ProbeArtifact &probe, int64_t entry,
                                    std::mt19937 &rng,
                                    const TimingPolicy &policy = {});

/// How long artifacts are timed in turn: one whole run of each (every
/// entry once), then again, at least minRounds rounds, more while all the
/// runs took under minSeconds, at most maxRounds. A 20 us model gets
/// thousands of rounds, so that its noise stays small beside the few
/// percent that decide between two artifacts.
struct TurnPolicy {
  size_t minRounds = 10, maxRounds = 4000;
  double minSeconds = 1.0;
  /// When set, asked after every round from minRounds on with each
  /// artifact's run times so far (in round order): true stops the runs
  /// before the budget (KeepFaster's turnsDecided).
  std::function<bool(llvm::ArrayRef<std::vector<double>>)> decided = {};
  /// The "first runs" (inputs made, one warm-up run each) and "rounds"
  /// nest under it (a null timer: untimed).
  PhaseTimer timing = {};
};

/// The median of an artifact's whole runs, and what its last run wrote.
struct TimedArtifact {
  /// Nullopt when it failed to run.
  std::optional<double> median;
  size_t runs = 0;
  /// The runs stopped before the budget: TurnPolicy::decided said so.
  bool decided = false;
  /// Per entry, per output: the bytes its last run wrote.
  std::vector<std::vector<std::vector<uint8_t>>> outputs;
  /// Per entry, per input: the bytes it ran on.
  std::vector<std::vector<std::vector<uint8_t>>> inputs;
};

/// Times \p artifacts in turn (TurnPolicy), so that the machine's drift falls
/// on all of them alike, after one warm-up run each. With \p shareInputs,
/// every artifact runs on the first one's random inputs (each entry must
/// take inputs of the same sizes; an artifact whose entries differ fails),
/// so that their outputs can be compared.
std::vector<TimedArtifact> timeInTurn(llvm::ArrayRef<ProbeArtifact *> artifacts,
                                      bool shareInputs,
                                      const TurnPolicy &policy = {});

} // namespace loom::placement

#endif // LOOM_LIB_PLACEMENT_PROBE_H
