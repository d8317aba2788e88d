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

#include "loom/Artifact/Schema.h"
#include "loom/Codegen/GPU/KernelCodegen.h"
#include "loom/Compiler/Backend.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace loom::compiler {

/// Arena slices start at multiples of this many bytes.
constexpr int64_t kArenaAlignment = 64;

/// An input or output of an entry (the schema's).
using TensorDesc = artifact::TensorDesc;

/// Where a tensor lives at run time: the schema's record, and what only
/// the compiler needs (the memory plan's liveness and aliases).
struct Buffer {
  artifact::Buffer record;
  /// Arena liveness, in step indices (first write, last read).
  int64_t firstStep = 0, lastStep = 0;
  /// An arena buffer written in place of another (the residual sum a
  /// library step accumulates into, read last by that step): the other's
  /// id, whose slice it shares; -1 for none.
  int64_t aliasOf = -1;
  /// With aliasOf: where this buffer starts in the other's slice, in bytes
  /// (0 for a residual sum; a concatenation's operand written in place,
  /// buildSchedule's concatInPlace: its position in the result).
  int64_t aliasOffset = 0;
  /// The bytes the memory plan reserves for this buffer and those aliased
  /// to it (a concatenation group can reach past the buffer's own bytes);
  /// 0: its own bytes.
  int64_t spanBytes = 0;
  /// A split's result that is its range of the split's operand (no step
  /// writes it: buildSchedule's concatInPlace).
  bool splitPiece = false;

  artifact::BufferKind kind() const { return record.kind; }
  /// What the memory plan reserves for an arena buffer that is no alias.
  int64_t extent() const { return spanBytes ? spanBytes : record.bytes; }
};

/// One step of the schedule: the schema's record (one type per kind of
/// loom/Artifact/StepKinds.def) and the fragment it computes.
struct Step {
  artifact::Step record;
  /// The fragment this step computes (null for copies and control steps).
  tg::FragmentOp fragment;

  /// The kernel record of a kernel step, else nullptr.
  artifact::KernelStep *kernel() {
    return record.getIf<artifact::KernelStep>();
  }
  const artifact::KernelStep *kernel() const {
    return record.getIf<artifact::KernelStep>();
  }
};

/// A large tg.constant that the artifact stores with the weights.
struct ConstantWeight {
  std::string name;
  tg::ConstantOp op;
};

/// The host program of one entry function.
struct EntrySchedule {
  std::string name;
  /// The world rank that runs it (the function's tg.runs_on_rank), or -1,
  /// and its tg.rank_period (0: none; artifact::Entry's).
  int64_t rank = -1, rankPeriod = 0, rankCount = 0;
  std::vector<TensorDesc> inputs, outputs;
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

/// How buildSchedule places what may share memory.
struct ScheduleOptions {
  /// A fragment that is one concatenation whose operands are contiguous
  /// ranges of its result (every dimension before the axis is 1) gets no
  /// step where its operands can be written in place: each operand's buffer
  /// is its range of the result's buffer; likewise a fragment that is one
  /// split along such an axis gets no step, each result a range of the
  /// operand's buffer (docs/Compiler.md, "Concatenations and splits in
  /// place").
  bool concatInPlace = false;
  /// A tg.update_slice of a tied argument (state: a decoder's cache) writes
  /// the argument's memory where it may (tiedInPlace); false: into a copy,
  /// copied back at the end, with a remark (docs/Decoding.md).
  bool stateInPlace = true;
};

/// Builds the schedule of \p fn, whose body holds only tg.weight,
/// tg.constant, tg.reshape and tg.fragment ops (after --tg-form-fragments).
/// Kernel steps are named "<prefix><n>" in order; their range is 1 until
/// code generation sets it. Diagnoses what it cannot schedule.
/// Library fragments are lowered by their backend in \p backends.
mlir::FailureOr<EntrySchedule>
buildSchedule(mlir::func::FuncOp fn, llvm::StringRef kernelPrefix,
              const BackendRegistry &backends = BackendRegistry::builtin(),
              const ScheduleOptions &options = {});

/// Gives the constants of \p entries that are equal (a weight folded the
/// same way in a decoder's prefill and decode) one name, the first's, so
/// that the artifact stores each once. A constant keeps its place in its
/// entry's list; the writer stores a name once.
void shareConstants(llvm::MutableArrayRef<EntrySchedule> entries);

/// Places the arena buffers of \p entry: largest first, each at the lowest
/// aligned offset that no buffer alive at the same time covers; a buffer
/// written in place of another (aliasSums) takes that one's slice.
void planArena(EntrySchedule &entry);

/// Replaces every kernel step of \p entry by the gpu.dispatch steps of its
/// kernel in \p kernels (a GPU target's launches, in order), gives each
/// kernel's scratch buffers arena slices alive over its dispatches, points
/// branches and jumps at the new step indices, and plans the arena again.
/// Diagnoses a kernel that \p kernels lacks, or a launch parameter out of
/// range.
mlir::LogicalResult
expandDispatches(EntrySchedule &entry,
                 const llvm::StringMap<codegen::gpu::DeviceKernel> &kernels);

/// The schema's entry for \p entry: its buffers and one program, on
/// manifest device \p device (docs/Artifact.md).
artifact::Entry toArtifact(const EntrySchedule &entry, int64_t device = 0);

/// A short human-readable listing of \p entry: steps, buffers and the
/// memory plan's peak (for `loom-compile --print-schedule`).
void printSchedule(const EntrySchedule &entry, llvm::raw_ostream &os);

/// The work one thread should at least get of a kernel, in FLOPs plus bytes
/// moved: about 5 us on one core of the machines measured (docs/Runtime.md),
/// the price of a fork and join of an OpenMP team when the threads are
/// awake, many times that when one of them is not running.
constexpr double kMinWorkPerThread = 65536;

/// The grain of a generated kernel (artifact::KernelStep::grain): the
/// iterations of its [0, range) that carry kMinWorkPerThread, where the
/// kernel's work is \p fragment's FLOPs (cost::workOf) plus the bytes of
/// its inputs and results, spread evenly over the range; in [1, range].
int64_t kernelGrain(tg::FragmentOp fragment, int64_t range);

/// What each step of \p entries computes, as JSON (for `loom-compile
/// --step-sources`): per entry, per step, its kind, its kernel's name, the
/// tg ops of its fragment and the names of the source nodes they came from
/// (the NameLocs the ONNX importer gives every op: node names), in order,
/// each once. Profiles (LOOM_PROFILE) are matched to a model's nodes with it.
std::string stepSourcesJSON(llvm::ArrayRef<EntrySchedule> entries);

} // namespace loom::compiler

#endif // LOOM_COMPILER_SCHEDULE_H
