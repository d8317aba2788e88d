//===- Shape.cpp - Interned tensor shapes of the rule generator -----------===//
//
// Part of Loom. See Shape.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/Shape.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;

ShapeId ShapeTable::intern(ArrayRef<int64_t> shape) {
  std::vector<int64_t> key(shape.begin(), shape.end());
  auto it = ids.find(key);
  if (it != ids.end())
    return it->second;
  ShapeId id = static_cast<ShapeId>(shapes.size());
  shapes.emplace_back(shape.begin(), shape.end());
  ids.emplace(std::move(key), id);
  return id;
}

std::optional<ShapeId> ShapeTable::lookup(ArrayRef<int64_t> shape) const {
  auto it = ids.find(std::vector<int64_t>(shape.begin(), shape.end()));
  if (it == ids.end())
    return std::nullopt;
  return it->second;
}

int64_t ShapeTable::numElements(ShapeId id) const {
  int64_t n = 1;
  for (int64_t d : shapes[id])
    n *= d;
  return n;
}

std::string ShapeTable::str(ShapeId id) const { return shapeString(get(id)); }

std::string superopt::indexString(ArrayRef<int64_t> shape, int64_t i) {
  SmallVector<int64_t, 4> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

RankedTensorType superopt::tensorTypeOf(MLIRContext *context,
                                        ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, Float32Type::get(context));
}
