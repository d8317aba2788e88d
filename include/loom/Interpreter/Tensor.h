//===- Tensor.h - Dense tensors of the reference interpreter ----*- C++ -*-===//
//
// Part of the Loom project.
//
//===----------------------------------------------------------------------===//
//
// Tensor<D> is a dense, row-major tensor of statically known shape whose
// elements are scalars of the number domain D (see Domain.h). A rank-0 tensor
// (empty shape) holds one element.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_TENSOR_H
#define LOOM_INTERPRETER_TENSOR_H

#include "loom/Interpreter/Domain.h"
#include "loom/Support/Shapes.h"

#include "llvm/ADT/ArrayRef.h"

#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

namespace loom {
namespace interp {

/// Number of elements of a tensor of shape \p shape (1 for rank 0).
inline int64_t numElementsOf(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    assert(d >= 0 && "negative dimension");
    n *= d;
  }
  return n;
}

/// Row-major strides (in elements) of a tensor of shape \p shape.
inline std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  auto strides = rowMajorStrides(shape);
  return std::vector<int64_t>(strides.begin(), strides.end());
}

/// A dense row-major tensor over the number domain \p D.
template <class D> struct Tensor {
  using Domain = D;
  using T = typename D::T;

  std::vector<int64_t> shape;
  std::vector<T> data;

  Tensor() = default;
  /// A zero-filled tensor of shape \p shape.
  explicit Tensor(std::vector<int64_t> shape)
      : shape(std::move(shape)),
        data(static_cast<size_t>(numElementsOf(this->shape)), D::zero()) {}
  /// A tensor of shape \p shape holding \p data (row-major).
  Tensor(std::vector<int64_t> shape, std::vector<T> data)
      : shape(std::move(shape)), data(std::move(data)) {
    assert(static_cast<int64_t>(this->data.size()) ==
               numElementsOf(this->shape) &&
           "data size does not match shape");
  }

  int64_t numElements() const { return static_cast<int64_t>(data.size()); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }

  /// A tensor of D::random values drawn from a generator seeded with \p seed;
  /// the same (shape, seed) always gives the same tensor.
  static Tensor random(std::vector<int64_t> shape, uint64_t seed) {
    Tensor t(std::move(shape));
    uint64_t state = seed;
    for (T &v : t.data)
      v = D::random(state);
    return t;
  }

  /// A tensor of shape \p shape whose elements are D::fromDouble(\p values).
  static Tensor fromDoubles(std::vector<int64_t> shape,
                            llvm::ArrayRef<double> values) {
    assert(static_cast<int64_t>(values.size()) == numElementsOf(shape) &&
           "value count does not match shape");
    std::vector<T> data;
    data.reserve(values.size());
    for (double v : values)
      data.push_back(D::fromDouble(v));
    return Tensor(std::move(shape), std::move(data));
  }

  /// The elements as doubles (D::toDouble), row-major.
  std::vector<double> toDoubles() const {
    std::vector<double> out;
    out.reserve(data.size());
    for (const T &v : data)
      out.push_back(D::toDouble(v));
    return out;
  }
};

} // namespace interp
} // namespace loom

#endif // LOOM_INTERPRETER_TENSOR_H
