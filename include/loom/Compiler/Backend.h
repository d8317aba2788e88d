//===- Backend.h - The backend registry -------------------------*- C++ -*-===//
//
// Part of Loom. A backend runs fragments of a tg graph. Each one declares,
// in one file of its own (lib/Compiler/Backends/), its name, the device it
// runs on, whether it generates code or calls a library, what it runs (its
// patterns over tg ops with their constraints: element types, ranks,
// shapes, attributes), how a fragment of that shape becomes a step of the
// schedule, and an analytic estimate of its time. Backends are open: the
// dialect names a fragment's backend by its registered name, and no caller
// asks for one backend by name or kind; fragment formation
// (--tg-form-fragments, fixed choices) and placement (--tg-place-backends,
// a search) ask the registry they are given for candidates, and the
// schedule builder asks the fragment's backend whether it generates code
// or lowers it to a library step. docs/Placement.md lists the patterns and
// says how to add a backend.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_BACKEND_H
#define LOOM_COMPILER_BACKEND_H

#include "loom/Artifact/Schema.h"
#include "loom/Cost/CostModel.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Support/Activation.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <vector>

namespace loom::compiler {

class Backend;
class StridedView;

/// Whether an op may join a fragment being grown (still unclaimed).
using Available = llvm::function_ref<bool(mlir::Operation *)>;

/// One fragment a backend can run: an anchor op and the single-use
/// consumers fused after it, with the roles a library call gives them.
struct LibraryCall {
  /// The backend that runs it (owned by a registry).
  const Backend *backend = nullptr;
  /// The op that starts the fragment (tg.conv, tg.matmul, or for codegen
  /// any computing op).
  mlir::Operation *anchor = nullptr;
  /// A bias: the conv's own bias operand, or the [N] operand of a tg.add
  /// after a matmul. Null when there is none.
  mlir::Value bias;
  /// The other operand of a residual tg.add after a conv (oneDNN's sum
  /// post-op). Null when there is none.
  mlir::Value sum;
  /// The factor a matrix product's result is multiplied by: 1 / c or c for
  /// a division or multiplication by a constant c of one element after it
  /// (an attention's scale after --tg-scale-after-matmul); 1 when none.
  double scale = 1;
  /// The activation applied last (loom/Support/Activations.def), with its
  /// parameters when it takes any.
  Activation activation = Activation::None;
  double alpha = 0, beta = 0;
  /// The ops the fragment computes, in order; the last one's result is the
  /// fragment's result.
  llvm::SmallVector<mlir::Operation *, 4> ops;
  /// The pattern's name, for reports: "conv+sum+relu", "matmul", ...
  std::string pattern() const;
};

/// What lowering a library fragment needs from the schedule builder.
struct StepOperands {
  /// The schedule buffer holding a value of the fragment's body (a block
  /// argument) or its result.
  llvm::function_ref<int64_t(mlir::Value)> buffer;
  /// Whether a body value is a weight (constant across runs: a library may
  /// prepack it at load).
  llvm::function_ref<bool(mlir::Value)> isWeight;
  /// The strided view of its buffer through which the step reads a body
  /// value or writes the result (transposes, slices and reshapes the
  /// schedule folded into it: docs/Compiler.md, "Views folded into matrix
  /// products"), or null: the buffer is the value's dense tensor. Given
  /// only to backends whose takesViews() accepts the call; lower() fails,
  /// without a diagnostic, when it cannot read or write those views (the
  /// schedule then computes them and lowers again without).
  llvm::function_ref<const StridedView *(mlir::Value)> view = nullptr;
  /// Whether a body value holds TF32 values: it is computed by a
  /// tg.round_tf32 (--precision=tf32, docs/Precision.md "TF32"), seen
  /// through the fragment that computes it and through ops that only move
  /// data. Null: never.
  llvm::function_ref<bool(mlir::Value)> roundedToTF32 = nullptr;
};

/// A library step: the schema's record of the call (one type per step
/// kind, loom/Artifact/StepKinds.def; docs/Artifact.md).
struct LibraryStep {
  artifact::Step record;
};

class Backend {
public:
  virtual ~Backend();
  /// The registered name: in the IR (`tg.fragment <name>`), in options,
  /// placement files, cost databases and reports.
  virtual llvm::StringRef name() const = 0;
  /// One line for reports and docs.
  virtual llvm::StringRef summary() const = 0;
  /// The kind of device its fragments run on, spelled as the artifact's
  /// devices spell it ("cpu").
  virtual llvm::StringRef device() const = 0;
  /// True when each of its fragments becomes a kernel that the target's
  /// kernel pipeline generates; false when lower() turns each into a
  /// library step.
  virtual bool generatesCode() const = 0;
  /// The ops its fragments may start at, by name ("tg.conv", ...); empty
  /// when it generates code (any computing op). Options that give a class
  /// of ops to a backend are checked against it.
  virtual std::vector<llvm::StringRef> anchorOps() const = 0;
  /// The patterns it runs, one line each, with their constraints.
  virtual std::vector<std::string> patterns() const = 0;
  /// Appends every fragment this backend runs that starts at \p anchor,
  /// longest first (each shorter one a prefix of the longest), growing only
  /// over consumers \p available accepts; none when \p anchor is not
  /// something it runs. Each names this backend.
  void candidates(mlir::Operation *anchor, Available available,
                  llvm::SmallVectorImpl<LibraryCall> &out) const;
  /// Whether lower() may be given strided views of \p call's operands and
  /// result (StepOperands::view).
  virtual bool takesViews(const LibraryCall &call) const { return false; }
  /// A code generator: whether its matrix products take transposes in
  /// place, reading a transposed operand and writing a transposed result
  /// through the permutation, so that fragment formation puts such a
  /// transpose (and the elementwise ops between) into the product's
  /// fragment (the GPU's tiled class takes any layout; docs/Codegen/GPU.md,
  /// "Transposes taken by products").
  virtual bool productsTakeTransposes() const { return false; }
  /// Turns a fragment (one of its candidates) into a library step. Called
  /// only for backends that do not generate code.
  virtual mlir::LogicalResult lower(const LibraryCall &call,
                                    const StepOperands &operands,
                                    LibraryStep &step) const = 0;
  /// Seconds \p call takes on \p target, from its work (FLOPs, bytes) and
  /// how well this backend uses the machine on it (documented per backend).
  virtual double analyticSeconds(const LibraryCall &call,
                                 const cost::RooflineTarget &target) const = 0;

protected:
  /// candidates() without the backend set: what each backend implements.
  virtual void
  collectCandidates(mlir::Operation *anchor, Available available,
                    llvm::SmallVectorImpl<LibraryCall> &out) const = 0;
};

/// A class of ops that a backend list may give to one backend: `conv` (the
/// convolutions and the ops oneDNN-like libraries keep in their layout:
/// pools, global pools, channel concatenations, adds), `matmul` (matrix
/// products), or every op.
enum class OpClass { Any, Conv, Matmul };

/// One entry of a backend list (docs/Placement.md): `NAME` gives every op
/// the backend runs to it, `conv:NAME` / `matmul:NAME` only that class.
struct BackendChoice {
  const Backend *backend = nullptr;
  OpClass ops = OpClass::Any;
  /// Whether \p op is of this entry's class.
  bool covers(mlir::Operation *op) const;
};

/// The backends compiling for one target can use: any number of library
/// backends and exactly one that generates code (the fallback of every op
/// no library takes). Adding a backend: a new file in
/// lib/Compiler/Backends/ and one line in BackendRegistry::builtin() (or
/// add() on a registry of one's own); nothing else names it.
class BackendRegistry {
public:
  /// The CPU's: codegen, onednn, openblas and loomrt.
  static const BackendRegistry &builtin();
  /// The registry of a target whose device is \p kind (the artifact's
  /// spelling): `cpu` builtin(); `cuda` codegen (the GPU kernel classes),
  /// cublas and cudnn; `vulkan` codegen alone. Null for an unknown kind.
  static const BackendRegistry *forDevice(llvm::StringRef kind);

  /// Adds \p backend. A name registered twice, or a second code
  /// generator, is a programming error (reported fatally).
  void add(std::unique_ptr<Backend> backend);
  /// Replaces the backend of the same name (tests plant faulty ones).
  void replace(std::unique_ptr<Backend> backend);
  const Backend *lookup(llvm::StringRef name) const;
  /// The backend that generates code (null only in a registry being built).
  const Backend *codeGenerator() const;
  /// The backends a comma-separated \p list names, in its order, or an
  /// error naming the first unknown one and the registered ones.
  llvm::Expected<std::vector<const Backend *>>
  parseList(llvm::StringRef list) const;
  /// A backend list with op classes (`conv:onednn,matmul:openblas`,
  /// `openblas,onednn`), or an error naming the bad entry: an unknown
  /// backend or class, or a library backend given a class it starts no
  /// fragment in.
  llvm::Expected<std::vector<BackendChoice>>
  parseChoices(llvm::StringRef list) const;
  /// The list fragments are formed by when none is given (builtin:
  /// conv:onednn,matmul:onednn,loomrt).
  llvm::StringRef defaultList() const { return defaults; }
  void setDefaultList(std::string list) { defaults = std::move(list); }
  /// The list that `--conv-backend=\p conv --matmul-backend=\p matmul`
  /// spell: their entries (those not empty) before the default list.
  std::string spellList(llvm::StringRef conv, llvm::StringRef matmul) const;
  llvm::ArrayRef<std::unique_ptr<Backend>> all() const { return backends; }

  /// The longest fragment \p backend runs from \p anchor, or nullopt.
  std::optional<LibraryCall> match(mlir::Operation *anchor,
                                   const Backend &backend,
                                   Available available = nullptr) const;
  /// The call a fragment's body is (exactly one of its backend's
  /// candidates), or nullopt (also when its backend is not registered).
  std::optional<LibraryCall> matchFragment(tg::FragmentOp fragment) const;

private:
  std::vector<std::unique_ptr<Backend>> backends;
  std::string defaults;
};

/// Loom's generated kernels for a device of kind \p device (`cpu`, `cuda`,
/// `vulkan`): the same fragments, priced by that device's kernel pipeline.
std::unique_ptr<Backend> createCodegenBackend(llvm::StringRef device = "cpu");
std::unique_ptr<Backend> createOneDNNBackend();
std::unique_ptr<Backend> createOpenBLASBackend();
std::unique_ptr<Backend> createCuBLASBackend();
std::unique_ptr<Backend> createCuDNNBackend();
/// libloomrt's own steps for tg.topk, tg.non_max_suppression, tg.nonzero.
/// libloomrt's own steps on a device of kind \p device: on the CPU the
/// dynamic ops, attention and the world's steps; on a GPU the world's steps
/// only (tg.world_rank, tg.all_gather: run on any device, staged through
/// the host).
std::unique_ptr<Backend> createLoomrtBackend(llvm::StringRef device = "cpu");

//===----------------------------------------------------------------------===//
// Helpers the backends share (Backends/Patterns.cpp)
//===----------------------------------------------------------------------===//

namespace patterns {
bool isF32(mlir::Type type);
bool allF32(mlir::Operation *op);
/// Elementwise: every result element depends on the operand elements at the
/// same (broadcast) index.
bool isElementwise(mlir::Operation *op);
/// The only op using \p v when it may join, or null.
mlir::Operation *soleUser(mlir::Value v, Available available);
/// An activation a library applies as a post-op, with its parameters.
struct PostOpActivation {
  Activation kind = Activation::None;
  double alpha = 0, beta = 0;
};
/// The library form of an f32 activation op (relu, sigmoid, tanh,
/// gelu_erf, gelu_tanh, hardswish, clip with its bounds, hardsigmoid with
/// its alpha and beta; a tg.mul of x and sigmoid(x) is swish, the last op
/// of a leaky ReLU leaky_relu with its alpha), or nullopt.
std::optional<PostOpActivation> activationOf(mlir::Operation *op);
/// The splat value of a constant, if \p v is one (or, inside a fragment,
/// the block argument a constant outside it enters as).
std::optional<double> splatOf(mlir::Value v);
/// An activation spelled as several tg ops, and those ops in order.
struct ActivationChain {
  llvm::SmallVector<mlir::Operation *, 5> ops;
  PostOpActivation activation;
};
/// The ops computing an activation of \p v when they are all that uses it
/// and may join: swish (sigmoid(v), then v * sigmoid(v)) or the leaky ReLU
/// the importer spells (relu(v) - alpha * relu(-v)); nullopt otherwise.
std::optional<ActivationChain> compoundActivationOf(mlir::Value v,
                                                    Available available);
/// Grows \p call over an activation of its current result when \p takes
/// accepts it (null: every one): one op, or the ops of a swish or a leaky
/// ReLU (compoundActivationOf); sets the call's activation and parameters.
void growActivation(LibraryCall &call, Available available,
                    llvm::function_ref<bool(Activation)> takes = nullptr);
/// The other operand of a tg.add using \p v, when the add keeps \p v's
/// type; null otherwise.
mlir::Value addendOf(mlir::Operation *add, mlir::Value v);
/// True when \p bias is a bias over the last dimension of \p result: shape
/// [N], or all ones but the last dimension N.
bool isRowBias(mlir::Value bias, mlir::RankedTensorType result);
/// A library step's spelling of an element type it computes on
/// (artifact::LibraryElementTypes): "f32", "bf16" or "f16"; empty for
/// another type.
std::string libraryElementType(mlir::Type t);
/// Appends to \p call the tg.cast to f32 of its bf16 or f16 result
/// (--precision's policy, docs/Precision.md) when that cast is the result's
/// only user and may join: a library that accumulates in f32 writes that
/// accumulator. Returns whether it did.
bool appendWidening(LibraryCall &call, Available available);
/// \p matmul with the tg.add of a row bias after it (isRowBias) when that
/// add is its only user and may join: the start every library's matmul
/// fragment grows from. With \p widen, the product's cast back to f32
/// joins first (appendWidening), the bias added to the f32 result.
LibraryCall matmulWithBias(tg::MatmulOp matmul, Available available,
                           bool widen = false);
/// Appends to \p out every prefix of \p longest that ends after its anchor
/// or a role, longest first (the roles the prefix keeps set again).
void addPrefixes(const LibraryCall &longest,
                 llvm::SmallVectorImpl<LibraryCall> &out);
/// Roofline seconds of \p ops as one fragment: each op's FLOPs at
/// \p efficiency of the target's peak for it (cost::peakFlopsOf: with
/// \p tensorCores, the tensor-core rate of a narrow or TF32 product), the
/// fragment's inputs and outputs over its memory bandwidth, plus one
/// launch.
double rooflineSeconds(llvm::ArrayRef<mlir::Operation *> ops,
                       const cost::RooflineTarget &target, double efficiency,
                       bool tensorCores = false);
} // namespace patterns

} // namespace loom::compiler

#endif // LOOM_COMPILER_BACKEND_H
