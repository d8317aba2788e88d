//===- StridedView.h - A tensor as strided elements of a buffer -*- C++ -*-===//
//
// Part of Loom. The data movement of an attention (the packed QKV product
// sliced into Q, K and V, heads split and merged by reshapes and
// transposes) as views that a library step reads or writes through
// strides instead of copies (docs/Compiler.md, "Views folded into matrix
// products").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_STRIDEDVIEW_H
#define LOOM_COMPILER_STRIDEDVIEW_H

#include "loom/Artifact/Schema.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <optional>

namespace loom::compiler {

/// A tensor whose elements sit in a buffer at strides: each dimension is a
/// product of factors (outermost first), each factor a size and a stride in
/// elements, so a reshape that merges dimensions of different strides (a
/// sequence-first [S, B, H*D] product read as [S, B*H, D]) stays exact.
class StridedView {
public:
  struct Factor {
    int64_t size, stride;
  };

  /// The dense row-major tensor of \p shape at offset 0.
  static StridedView dense(llvm::ArrayRef<int64_t> shape);

  /// The view's shape (each dimension the product of its factors).
  llvm::SmallVector<int64_t> shape() const;
  int64_t offset() const { return start; }

  /// result[i...] = this[perm applied]: tg.transpose's permutation.
  void transpose(llvm::ArrayRef<int64_t> perm);
  /// The same elements in row-major order as \p shape. False (the view
  /// unchanged in meaning but unusable) when a factor would have to be cut
  /// where the sizes do not divide.
  [[nodiscard]] bool reshape(llvm::ArrayRef<int64_t> shape);
  /// tg.slice: \p starts and \p steps per dimension, the result \p shape.
  /// False when a dimension made of several factors is not taken whole.
  [[nodiscard]] bool slice(llvm::ArrayRef<int64_t> starts,
                           llvm::ArrayRef<int64_t> steps,
                           llvm::ArrayRef<int64_t> shape);
  /// Dimension \p dim as one size and stride, when its factors merge.
  std::optional<Factor> single(size_t dim) const;
  /// Whether it is the dense row-major tensor of its shape at offset 0.
  bool isDense() const;
  /// The factors of dimension \p dim, outermost first.
  llvm::ArrayRef<Factor> factors(size_t dim) const { return dims[dim]; }

private:
  llvm::SmallVector<llvm::SmallVector<Factor, 2>, 4> dims;
  int64_t start = 0;
};

/// The operands of a batched matrix product src [..., M, K] x weights
/// [..., K, N] -> dst [..., M, N] (each of the same rank, batch dimensions
/// equal or 1 in src or weights) as oneDNN memory descriptors: every batch
/// dimension cut where any operand's factors are (so each becomes one
/// stride), M, K and N one stride each. nullopt when that is impossible.
std::optional<std::array<artifact::StridedOperand, 3>>
matmulOperands(const StridedView &src, const StridedView &weights,
               const StridedView &dst);

} // namespace loom::compiler

#endif // LOOM_COMPILER_STRIDEDVIEW_H
