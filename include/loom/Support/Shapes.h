//===- Shapes.h - Shape arithmetic shared by all of Loom --------*- C++ -*-===//
//
// Part of Loom. Element counts, row-major strides, and the broadcast rule of
// tg's elementwise ops and tg.matmul's batch dimensions, written once:
// shapes are aligned on the right and each pair of dimensions must be equal
// or one of them 1. The verifier, the interpreter's kernels and the ONNX
// importer's folding all use these.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_SHAPES_H
#define LOOM_SUPPORT_SHAPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cstdint>
#include <optional>
#include <string>

namespace loom {

/// \p shape as `2x3x4` (`scalar` for rank 0), for diagnostics and tables.
inline std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

/// Number of elements of \p shape (1 for rank 0), or -1 when a dimension is
/// negative or the product overflows int64_t.
inline int64_t checkedNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    auto m = llvm::checkedMul(n, d);
    if (!m)
      return -1;
    n = *m;
  }
  return n;
}

/// Row-major strides (in elements) of \p shape.
inline llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

/// The numpy broadcast of two shapes, or nullopt when they do not broadcast.
inline std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// True when \p from broadcasts to exactly \p to.
inline bool isBroadcastableTo(llvm::ArrayRef<int64_t> from,
                              llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[offset + i])
      return false;
  return true;
}

/// Element strides for reading a row-major tensor of shape \p shape as if
/// broadcast to \p target (which it must broadcast to): 0 along broadcast
/// dimensions.
inline llvm::SmallVector<int64_t>
broadcastStrides(llvm::ArrayRef<int64_t> shape,
                 llvm::ArrayRef<int64_t> target) {
  llvm::SmallVector<int64_t> result(target.size(), 0);
  size_t lead = target.size() - shape.size();
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    result[lead + d] = shape[d] == 1 ? 0 : stride;
    stride *= shape[d];
  }
  return result;
}

} // namespace loom

#endif // LOOM_SUPPORT_SHAPES_H
