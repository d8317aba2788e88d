//===- Schedule.h - The host program of a compiled entry --------*- C++ -*-===//
//
// Part of Loom. After --tg-form-fragments, an entry function is a sequence
// of fragments over values. buildSchedule turns it into the data the
// artifact carries (docs/Artifact.md): the entry's signature, its buffers
// (inputs, outputs, weights, and arena slices placed by a static memory
// plan) and its steps (one per fragment, plus copies).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_SCHEDULE_H
#define LOOM_COMPILER_SCHEDULE_H

#include "loom/Compiler/Backend.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

#include <string>
#include <vector>

namespace loom::compiler {

/// Arena slices start at multiples of this many bytes.
constexpr int64_t kArenaAlignment = 64;

/// An input or output of an entry.
struct TensorDesc {
  std::string name;
  std::string dtype; ///< MLIR spelling: f32, i64, ...
  llvm::SmallVector<int64_t> shape;
};

/// Where a tensor lives at run time.
struct Buffer {
  enum class Kind { Input, Output, Weight, Arena };
  Kind kind = Kind::Arena;
  /// Input / output position.
  int64_t index = 0;
  /// Weight name (in the artifact's weights).
  std::string weight;
  /// Arena slice.
  int64_t offset = 0, bytes = 0;
  /// Arena liveness, in step indices (first write, last read).
  int64_t firstStep = 0, lastStep = 0;
  /// An arena buffer written in place of another (the residual sum a
  /// library step accumulates into, read last by that step): the other's
  /// id, whose slice it shares; -1 for none.
  int64_t aliasOf = -1;
};

/// One step of the schedule.
struct Step {
  /// "kernel", "onednn.conv2d", "onednn.matmul", "openblas.sgemm", "copy".
  std::string op;
  /// kernel: its name, positional buffer ids and parallel trip count.
  std::string kernel;
  llvm::SmallVector<int64_t> args;
  int64_t range = 1;
  /// Library steps and copy: named buffer ids, and attributes.
  llvm::json::Object namedArgs, attrs;
  /// The fragment this step computes (null for copies).
  tg::FragmentOp fragment;
};

/// A large tg.constant that the artifact stores with the weights.
struct ConstantWeight {
  std::string name;
  tg::ConstantOp op;
};

/// The host program of one entry function.
struct EntrySchedule {
  std::string name;
  llvm::SmallVector<TensorDesc> inputs, outputs;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  /// The arena's size: the peak of the memory plan.
  int64_t arenaBytes = 0;
  /// The sum of the arena slices' sizes (what a plan without reuse needs).
  int64_t unplannedBytes = 0;
  /// The tg.weight tensors the entry reads, by name.
  llvm::SmallVector<std::string> weights;
  std::vector<ConstantWeight> constants;
};

/// Builds the schedule of \p fn, whose body holds only tg.weight,
/// tg.constant, tg.reshape and tg.fragment ops (after --tg-form-fragments).
/// Kernel steps are named "<prefix><n>" in order; their range is 1 until
/// code generation sets it. Diagnoses what it cannot schedule.
/// Library fragments are lowered by their backend in \p backends.
mlir::FailureOr<EntrySchedule>
buildSchedule(mlir::func::FuncOp fn, llvm::StringRef kernelPrefix,
              const BackendRegistry &backends = BackendRegistry::builtin());

/// The manifest's JSON for \p entry (docs/Artifact.md).
llvm::json::Value toJSON(const EntrySchedule &entry);

/// A short human-readable listing of \p entry: steps, buffers and the
/// memory plan's peak (for `loom-compile --print-schedule`).
void printSchedule(const EntrySchedule &entry, llvm::raw_ostream &os);

} // namespace loom::compiler

#endif // LOOM_COMPILER_SCHEDULE_H
