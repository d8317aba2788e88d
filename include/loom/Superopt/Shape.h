//===- Shape.h - Interned tensor shapes of the rule generator ---*- C++ -*-===//
//
// Part of Loom. The rule generator works on small, concrete shapes. Every
// shape it meets (of an input, of an op result, of a term of an axiom) is
// interned once in a ShapeTable and named by a small integer, so that graphs,
// memo tables and Z3 sorts refer to shapes cheaply.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_SHAPE_H
#define LOOM_SUPEROPT_SHAPE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "loom/Support/Shapes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom::superopt {

using Shape = llvm::SmallVector<int64_t, 4>;
using ShapeId = uint16_t;

/// Interns shapes. Not thread-safe for intern(); the generator interns every
/// shape before it starts worker threads, which only call get()/str().
class ShapeTable {
public:
  /// The id of \p shape, creating it on first use.
  ShapeId intern(llvm::ArrayRef<int64_t> shape);
  /// The id of \p shape if it was interned before.
  std::optional<ShapeId> lookup(llvm::ArrayRef<int64_t> shape) const;
  llvm::ArrayRef<int64_t> get(ShapeId id) const { return shapes[id]; }
  int64_t rank(ShapeId id) const { return shapes[id].size(); }
  int64_t numElements(ShapeId id) const;
  size_t size() const { return shapes.size(); }
  /// `2x4`, or `scalar` for rank 0.
  std::string str(ShapeId id) const;

private:
  std::vector<Shape> shapes;
  std::map<std::vector<int64_t>, ShapeId> ids;
};

/// `2x4` / `scalar`: loom::shapeString (Support/Shapes.h).
using loom::shapeString;

/// The row-major multi-index of element \p i of \p shape, as `[a,b]`.
std::string indexString(llvm::ArrayRef<int64_t> shape, int64_t i);

/// The f32 tensor type of \p shape.
mlir::RankedTensorType tensorTypeOf(mlir::MLIRContext *context,
                                    llvm::ArrayRef<int64_t> shape);

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_SHAPE_H
