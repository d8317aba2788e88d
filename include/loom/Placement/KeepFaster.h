//===- KeepFaster.h - Compile versions of a model, keep the fastest -*- C++ -*-===//
//
// Part of Loom. The end-to-end decision loom-compile makes between the graph
// as written and the graph tg-superopt rewrote (docs/Compiler.md): each
// version compiled with the same options, the artifacts run in turn on the
// same random inputs on this machine, their outputs compared, and the
// fastest kept only when it beats the first (the baseline) measurably.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PLACEMENT_KEEPFASTER_H
#define LOOM_PLACEMENT_KEEPFASTER_H

#include "loom/Compiler/Compiler.h"
#include "loom/Cost/CostModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/JSON.h"

#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <string>
#include <vector>

namespace loom::placement {

/// One version of a model (the first of a list is the baseline).
struct ModelVersion {
  std::string name;
  mutable mlir::ModuleOp module;
};

/// What was measured of one version.
struct VersionTiming {
  std::string name;
  /// Median seconds of one whole run (every entry once), timed in turn with
  /// the other versions; infinity when it did not compile or run.
  double seconds = std::numeric_limits<double>::infinity();
  size_t runs = 0;
  double compileSeconds = 0;
  /// Largest difference of its outputs from the baseline's on the same
  /// inputs, relative to max(1, largest |baseline output|) per output.
  double error = 0;
  /// Largest difference of its outputs from the interpreter's on the graph
  /// as given (the baseline's module, before the compile-time passes) on
  /// the same inputs, measured the same way (integers exact; outputs of
  /// data-dependent length not compared); nullopt when it was not measured
  /// (the interpreter could not run the graph: KeepFasterResult::givenNote).
  std::optional<double> givenError;
  /// Its time came from KeepFasterOptions::db.
  bool cached = false;
  /// Why it has no time, or why it was not kept although faster.
  std::string note;
};

struct KeepFasterResult {
  std::vector<VersionTiming> versions;
  /// The index of the version in the output.
  size_t kept = 0;
  /// The runs in turn stopped before their budget (turnsDecided).
  bool decidedEarly = false;
  /// The versions were compiled concurrently (KeepFasterOptions), in this
  /// many seconds of wall time together.
  bool concurrentCompiles = false;
  double compileWallSeconds = 0;
  /// Why the outputs were not compared with the graph as given (empty: they
  /// were).
  std::string givenNote;
  llvm::json::Value toJSON() const;
};

class BackgroundCompile;

struct KeepFasterOptions {
  /// Threads the artifacts run on (0: all).
  int threads = 0;
  /// A version whose outputs differ from the baseline's by more than this
  /// (relative, see VersionTiming::error) is not kept.
  double tolerance = 1e-4;
  /// Where progress lines go (null: nowhere).
  llvm::raw_ostream *progress = nullptr;
  /// The JSON cost database (cost::CostDatabase) the medians are cached in
  /// (empty: none; read after the versions are compiled, which may write
  /// to it too, as --backends=auto does), under the machine, the
  /// version's name, a hash of the baseline and one of the version (printed
  /// without locations). When every version is there, the artifacts run once
  /// each, for their outputs, and the cached times decide (a warm compile
  /// measures nothing; a test can plant times to force a decision).
  std::string db;
  /// Compile the versions on threads of their own, each with its own
  /// target, where compiling measures nothing (no --backends=auto search)
  /// and prints no stage timings; false: one after the other.
  bool concurrentCompiles = true;
  /// The baseline, already being compiled (with the same options) on a
  /// thread of its own: it is waited for instead of compiled (null: the
  /// baseline is compiled with the others).
  BackgroundCompile *baseline = nullptr;
  /// The timer the versions' compiles ("compile: NAME", with their stages),
  /// their loading and the runs in turn nest under (loom-compile
  /// --time-phases; a null timer: untimed).
  PhaseTimer timing;
};

/// A module compiled into a temporary artifact on a thread of its own,
/// with a target of its own, while the caller does something else:
/// loom-compile compiles the graph as written while tg-superopt searches,
/// so that the search costs no wall time on a machine with a core to
/// spare, and the artifact is the output when no rule fired.
class BackgroundCompile {
public:
  /// Starts compiling a clone of \p module (\p weights, \p options) into a
  /// temporary beside \p outputPath; null (nothing started) where the
  /// compile should not overlap other work: options that measure while
  /// compiling (the placement search), print, or write more than the
  /// artifact, or a target that cannot be created again.
  static std::unique_ptr<BackgroundCompile>
  start(mlir::ModuleOp module, const safetensors::File *weights,
        const compiler::CompileOptions &options, llvm::StringRef outputPath);
  /// Waits for the thread; removes the temporary unless it was taken.
  ~BackgroundCompile();

  /// Waits for the compile: the seconds it took, or nullopt where it
  /// failed (diagnosed).
  std::optional<double> wait();
  /// Waits, and hands over the temporary artifact (its path; the caller
  /// removes or moves it).
  std::string take();

private:
  BackgroundCompile() = default;
  mlir::OwningOpRef<mlir::ModuleOp> copy;
  compiler::CompileOptions options;
  const safetensors::File *weights = nullptr;
  std::string path;
  std::optional<double> seconds;
  std::thread thread;
};

/// How long the versions are timed in turn: at least kMinTurnRounds rounds
/// and at least half of \p baselineCompileSeconds (between kMinTurnSeconds
/// and kMaxTurnSeconds) of runs, so that measuring costs a fraction of
/// the compile it decides about (docs/Compiler.md states the statistics).
constexpr size_t kMinTurnRounds = 7;
constexpr double kMinTurnSeconds = 0.1, kMaxTurnSeconds = 1.0;
double turnSeconds(double baselineCompileSeconds);

/// Where one version stands against the baseline after some rounds in
/// turn: round r pairs the baseline's r-th run with the version's, and the
/// round counts for the version when its run took under kMeasurableGain
/// times the baseline's. A sign test (no assumption on the noise's shape,
/// so a load spike is one round, not a shifted mean) of "the median of
/// these paired ratios is kMeasurableGain": Faster when so many rounds
/// counted that a fair coin would do as well with probability at most
/// kTurnStopAlpha, NotFaster when so few did, else Undecided (and always
/// before kMinTurnRounds rounds). At least 10 rounds all one way decide.
enum class TurnVerdict { Faster, NotFaster, Undecided };
constexpr double kTurnStopAlpha = 1e-3;
TurnVerdict turnVerdict(llvm::ArrayRef<double> baseline,
                        llvm::ArrayRef<double> version);

/// Whether the runs in turn may stop before their budget: every version
/// (\p times[i], the seconds of each of its runs; \p times[0] the
/// baseline's) is Faster or NotFaster, and at most one is Faster (else
/// the budget decides between them). A version with fewer runs than the
/// baseline failed to run and is decided; so is everything when the
/// baseline has no runs.
bool turnsDecided(llvm::ArrayRef<std::vector<double>> times);

/// Compiles every version (cloned; \p weights are every version's weights)
/// with \p compile into a temporary beside \p outputPath, times the
/// artifacts in turn on this machine, and writes to \p outputPath the
/// fastest version whose outputs agree with the baseline's and with the
/// interpreter's on the graph as given (the baseline's module: no
/// compile-time pass has changed it; a baseline that disagrees is warned
/// about, since a compile-time pass, the generated code or the runtime then
/// changes the answer), when its median
/// is below kMeasurableGain times the baseline's, else the baseline. A
/// version whose graph is the baseline's (printed without locations) is
/// neither compiled nor timed (its note says so). The
/// winner's artifact is moved into place, or compiled again with \p compile
/// when the options write more than the artifact (external weights,
/// schedules, kernel dumps). Fails (diagnosed) only when the baseline does
/// not compile or the output cannot be written.
mlir::FailureOr<KeepFasterResult>
compileKeepFaster(llvm::ArrayRef<ModelVersion> versions,
                  const safetensors::File *weights,
                  const compiler::CompileOptions &compile,
                  llvm::StringRef outputPath, const KeepFasterOptions &options);

} // namespace loom::placement

#endif // LOOM_PLACEMENT_KEEPFASTER_H
