//===- Pet.h - Partially equivalent transformations (PET) -------*- C++ -*-===//
//
// Part of Loom. PET (Wang et al., OSDI'21): transformations of a tg program
// that agree with it on only part of the output, the output regions (boxes)
// where they agree, proved, and correction kernels that recompute the other
// regions with the original program on just the input window they need.
// docs/Superopt/PET.md states the contract.
//
// The transformation Loom implements is PET's canonical one: a sliding-window
// operator (tg.conv, tg.avgpool, tg.maxpool) whose input is cut into
// `parts` equal pieces along one spatial dimension, the pieces folded into
// the batch, the operator run once on the folded tensor, and the pieces of its
// result unfolded back. Every output row whose window crosses a cut reads the
// operator's zero (or -inf) padding instead of the neighbouring piece: those
// rows are wrong, the others are equal. An extent not divisible by `parts`
// is first padded with rows of zeros (PET's padding to a friendly shape).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PET_PET_H
#define LOOM_PET_PET_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::pet {

/// A box of an output tensor: the elements with lo[i] <= index[i] < hi[i].
struct Box {
  llvm::SmallVector<int64_t, 4> lo, hi;
  int64_t numElements() const;
  /// `[0:1, 0:3, 4:6, 0:8]`.
  std::string str() const;
};

/// How the pieces are moved into the batch and back (PET's layout ops).
enum class Fold {
  /// tg.split along the spatial dim, tg.concat on the batch; after the
  /// operator tg.split on the batch, tg.concat along the spatial dim.
  SplitConcat,
  /// tg.reshape (the dim into [parts, dim / parts]), tg.transpose (parts to
  /// the front), tg.reshape (parts into the batch); the inverse after.
  ReshapeTranspose,
};
llvm::StringRef foldName(Fold fold);
/// Parses `split-concat` or `reshape-transpose`.
mlir::FailureOr<Fold> parseFold(llvm::StringRef name);

/// The transformation: `parts` pieces of input dimension `dim` (a spatial
/// dimension, >= 2) folded into the batch, by `fold`.
struct SplitToBatch {
  unsigned dim = 2;
  int64_t parts = 2;
  Fold fold = Fold::SplitConcat;
  std::string str() const;
};

/// The index arithmetic of a sliding-window operator along one dimension.
struct Window {
  int64_t kernel = 1, stride = 1, dilation = 1, padLo = 0, padHi = 0;
  /// Whether the op's padding reads as a zero element (tg.conv; tg.avgpool
  /// counting padding): then rows of zeros appended to the input change
  /// nothing. Not for tg.maxpool (-inf) nor a tg.avgpool counting only real
  /// elements.
  bool padIsZero = true;
  /// Output extent for an input extent (0 when the window does not fit).
  int64_t outSize(int64_t in) const;
};

/// The window of \p op (tg.conv, tg.avgpool or tg.maxpool with a ranked,
/// static input) along input dimension \p dim; a failure says why in \p why.
mlir::FailureOr<Window> windowOf(mlir::Operation *op, unsigned dim,
                                 std::string &why);

/// PET's padding to a friendly shape: the rows of zeros appended to input
/// dimension t.dim to make its extent \p extent divisible by t.parts.
int64_t padRows(int64_t extent, const SplitToBatch &t);

/// Whether \p t applies to \p op: a sliding-window op, `dim` spatial, and,
/// after padRows of zeros, pieces whose outputs line up (the op on a piece
/// gives exactly `1 / parts` of its output on the padded input). Otherwise
/// why not.
mlir::LogicalResult checkApplicable(mlir::Operation *op, const SplitToBatch &t,
                                    std::string &why);

/// The rows of the output along t.dim that the folded program computes
/// wrong, from the index arithmetic alone: row r (piece q, local row o) is
/// right iff every tap of its window reads, in the piece, the same input
/// row the original reads, or both read padding (or, when w.padIsZero, one
/// reads padding and the other an appended row of zeros). True marks a
/// wrong row; one entry per output row of the original.
std::vector<bool> wrongRows(const Window &w, int64_t inExtent,
                            const SplitToBatch &t);

/// The output boxes (full along every other dimension) of the runs of equal
/// and of wrong rows, in order.
struct RowBoxes {
  std::vector<Box> equal, wrong;
};
RowBoxes boxesOfRows(const std::vector<bool> &wrong,
                     llvm::ArrayRef<int64_t> outShape, unsigned dim);

/// Builds the folded program for \p op before it (no corrections) and
/// returns its result (the op itself is left in place). \p op must pass
/// checkApplicable.
mlir::Value buildFolded(mlir::OpBuilder &b, mlir::Operation *op,
                        const SplitToBatch &t);

/// Builds the corrected program: the folded result, its wrong boxes
/// recomputed by \p op's own computation on just the input window each needs
/// (a tg.slice of the input and the op with the padding the window needs),
/// and the right pieces of the folded result and the corrections joined by a
/// tg.concat along t.dim. Corrections of equal window shape are fused into
/// one op over the batch when \p fuse. Returns the corrected value and, in
/// \p corrections, the number of correction ops built.
mlir::Value buildCorrected(mlir::OpBuilder &b, mlir::Operation *op,
                           const SplitToBatch &t, bool fuse,
                           unsigned *corrections = nullptr);

//===----------------------------------------------------------------------===//
// Regions: found by evaluation, proved by PET's multi-linear argument
//===----------------------------------------------------------------------===//

/// Whether every op of \p fn computes a polynomial of its arguments that is
/// of degree at most one in each argument tensor's elements (tg.conv without
/// an activation, tg.avgpool, tg.matmul, add/sub, the layout ops and
/// constant padding); otherwise names the first op that does not. PET's
/// argument (and so a proof of a region) needs it.
bool isMultiLinear(mlir::func::FuncOp fn, std::string *why = nullptr);

/// Per output element of result 0, whether @target differs from @source on
/// random inputs (exact arithmetic modulo 2^61-1 when both are multi-linear,
/// else f64 on random reals). Fails (diagnosed) when a program does not run.
mlir::FailureOr<std::vector<bool>> differingElements(mlir::func::FuncOp source,
                                                     mlir::func::FuncOp target,
                                                     uint64_t seed);

/// The coarsest partition of an output of \p shape into boxes on which
/// \p mask is constant: cuts along each dimension where the mask's slice
/// changes; returns (box, value) pairs.
std::vector<std::pair<Box, bool>> boxesOfMask(const std::vector<bool> &mask,
                                              llvm::ArrayRef<int64_t> shape);

/// The verdict on one claimed-equal box.
struct RegionProof {
  bool proved = false;
  /// `multilinear` (PET's theorem: `trials` evaluations on independent
  /// uniform residues modulo P = 2^61-1 agreed on every element; the chance
  /// that two different multi-linear programs of `degree` agree that often is
  /// at most (degree / P)^trials) or `tested` (not multi-linear: f64 random
  /// tests only, not a proof).
  std::string method;
  unsigned trials = 0, degree = 0;
  double errorBound = 1;
  /// Why not proved: the first differing element.
  std::string detail;
};

/// Proves that @target equals @source on \p box of result 0 by PET's
/// multi-linear argument (`trials` independent evaluations).
RegionProof proveBox(mlir::func::FuncOp source, mlir::func::FuncOp target,
                     const Box &box, unsigned trials, uint64_t seed);

//===----------------------------------------------------------------------===//
// The generator (loom-rulegen --partial) and the checker of its files
//===----------------------------------------------------------------------===//

struct PartialGenOptions {
  uint64_t seed = 1;
  /// Independent evaluations per claimed-equal box.
  unsigned trials = 4;
  /// Operators to enumerate: conv, conv_relu, avgpool, maxpool.
  std::vector<std::string> ops = {"conv", "conv_relu", "avgpool", "maxpool"};
  llvm::raw_ostream *log = nullptr;
};

struct PartialGenStats {
  /// Instances built; of them: the pieces do not line up; equal everywhere
  /// (not partial); wrong everywhere; partial, of which proved, tested only
  /// (not multi-linear), not proved; regions found unlike the index
  /// arithmetic predicts (a bug: none expected).
  unsigned enumerated = 0, shapeMismatch = 0, fullyEquivalent = 0,
           nowhereEqual = 0, partial = 0, proved = 0, tested = 0,
           unproved = 0, regionMismatch = 0, boxesProved = 0;
  double seconds = 0;
};

/// Enumerates the split-to-batch transformations of small instances of the
/// chosen operators (kernel, stride, dilation, padding, spatial dim, parts,
/// fold), finds each one's regions by evaluation, checks them against the
/// index arithmetic (wrongRows), proves the equal boxes, builds and proves
/// the corrected program, and returns a rules module of the partial rules
/// proved (docs/Superopt/PET.md, "File format"). Fails (diagnosed) on an
/// internal error only.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
generatePartialRules(mlir::MLIRContext *context,
                     const PartialGenOptions &options, PartialGenStats &stats);

/// Re-proves every rule of a partial rules file: each box its `loom.pet.equal`
/// claims, and @corrected against @source everywhere. Returns the number of
/// rules that failed (each diagnosed at the rule); a malformed file is a
/// failure.
mlir::FailureOr<unsigned> verifyPartialRules(mlir::ModuleOp file,
                                             const PartialGenOptions &options);

/// The proof a pass gives an application before it keeps it.
struct SmallProof {
  bool proved = false;
  std::string method, detail;
  double errorBound = 1;
  /// Boxes of the small instance: equal (proved) and corrected.
  size_t equal = 0, wrong = 0;
};

/// Proves \p t on \p op's own window attributes at a small shape (batch 1,
/// few channels, a short piece of the same residue modulo the stride, so that
/// the rows near a cut are those of the real shape): the equal boxes the
/// index arithmetic predicts, and the corrected program everywhere.
SmallProof proveAtSmallShape(mlir::Operation *op, const SplitToBatch &t,
                             const PartialGenOptions &options);

} // namespace loom::pet

#endif // LOOM_PET_PET_H
