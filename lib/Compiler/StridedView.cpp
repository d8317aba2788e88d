//===- StridedView.cpp - A tensor as strided elements of a buffer ---------===//
//
// Part of Loom. See StridedView.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/StridedView.h"

#include <algorithm>
#include <deque>

using namespace loom;
using namespace loom::compiler;

StridedView StridedView::dense(llvm::ArrayRef<int64_t> shape) {
  StridedView v;
  v.dims.resize(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    v.dims[i].push_back({shape[i], stride});
    stride *= shape[i];
  }
  return v;
}

llvm::SmallVector<int64_t> StridedView::shape() const {
  llvm::SmallVector<int64_t> out;
  for (const auto &factors : dims) {
    int64_t n = 1;
    for (Factor f : factors)
      n *= f.size;
    out.push_back(n);
  }
  return out;
}

void StridedView::transpose(llvm::ArrayRef<int64_t> perm) {
  decltype(dims) permuted;
  for (int64_t p : perm)
    permuted.push_back(dims[p]);
  dims = std::move(permuted);
}

bool StridedView::reshape(llvm::ArrayRef<int64_t> shape) {
  // The factors in row-major order, units dropped (they move nothing).
  std::deque<Factor> flat;
  for (const auto &factors : dims)
    for (Factor f : factors)
      if (f.size != 1)
        flat.push_back(f);
  decltype(dims) out(shape.size());
  for (auto [i, size] : llvm::enumerate(shape)) {
    int64_t have = 1;
    while (have < size) {
      if (flat.empty())
        return false;
      Factor f = flat.front();
      flat.pop_front();
      if (have * f.size <= size) {
        out[i].push_back(f);
        have *= f.size;
        continue;
      }
      // Cut f: its outer part completes this dimension.
      int64_t need = size / have;
      if (size % have != 0 || f.size % need != 0)
        return false;
      int64_t inner = f.size / need;
      out[i].push_back({need, f.stride * inner});
      flat.push_front({inner, f.stride});
      have = size;
    }
    if (have != size)
      return false;
    if (out[i].empty())
      out[i].push_back({1, 1});
  }
  if (!flat.empty())
    return false;
  dims = std::move(out);
  return true;
}

bool StridedView::slice(llvm::ArrayRef<int64_t> starts,
                        llvm::ArrayRef<int64_t> steps,
                        llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> before = this->shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (starts[i] == 0 && steps[i] == 1 && shape[i] == before[i])
      continue;
    std::optional<Factor> f = single(i);
    if (!f)
      return false;
    start += starts[i] * f->stride;
    dims[i] = {{shape[i], f->stride * steps[i]}};
  }
  return true;
}

std::optional<StridedView::Factor> StridedView::single(size_t dim) const {
  std::optional<Factor> merged;
  for (Factor f : dims[dim]) {
    if (f.size == 1)
      continue;
    if (!merged) {
      merged = f;
      continue;
    }
    if (merged->stride != f.size * f.stride)
      return std::nullopt;
    merged = Factor{merged->size * f.size, f.stride};
  }
  return merged ? merged : Factor{1, 1};
}

bool StridedView::isDense() const {
  if (start != 0)
    return false;
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    std::optional<Factor> f = single(i);
    if (!f || (f->size != 1 && f->stride != stride))
      return false;
    stride *= f->size;
  }
  return true;
}

/// The sizes, from the innermost factor out, at which dimension \p dim of
/// \p view has a factor boundary (cumulative products; the last one is the
/// dimension's size; none for a dimension of 1).
static llvm::SmallVector<int64_t> boundaries(const StridedView &view,
                                             size_t dim) {
  llvm::SmallVector<int64_t> out;
  int64_t n = 1;
  llvm::ArrayRef<StridedView::Factor> f = view.factors(dim);
  for (size_t i = f.size(); i-- > 0;) {
    if (f[i].size == 1)
      continue;
    n *= f[i].size;
    out.push_back(n);
  }
  return out;
}

std::optional<std::array<artifact::StridedOperand, 3>>
compiler::matmulOperands(const StridedView &src, const StridedView &weights,
                         const StridedView &dst) {
  std::array<StridedView, 3> views = {src, weights, dst};
  size_t rank = dst.shape().size();
  if (rank < 2 || src.shape().size() != rank ||
      weights.shape().size() != rank)
    return std::nullopt;
  // Cut each batch dimension at every operand's factor boundaries; a
  // dimension of 1 (broadcast) has none.
  llvm::SmallVector<llvm::SmallVector<int64_t>> batch(rank - 2);
  for (size_t d = 0; d + 2 < rank; ++d) {
    llvm::SmallVector<int64_t> cuts;
    for (const StridedView &v : views)
      llvm::append_range(cuts, boundaries(v, d));
    llvm::sort(cuts);
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    int64_t inner = 1;
    for (int64_t c : cuts) {
      if (c % inner != 0)
        return std::nullopt;
      batch[d].insert(batch[d].begin(), c / inner);
      inner = c;
    }
    if (batch[d].empty())
      batch[d].push_back(1);
  }
  std::array<artifact::StridedOperand, 3> out;
  for (auto [k, v] : llvm::enumerate(views)) {
    llvm::SmallVector<int64_t> shape = v.shape(), refined;
    for (size_t d = 0; d + 2 < rank; ++d) {
      if (shape[d] == 1 && batch[d].size() > 1)
        refined.append(batch[d].size(), 1); // broadcast
      else
        llvm::append_range(refined, batch[d]);
    }
    refined.append({shape[rank - 2], shape[rank - 1]});
    StridedView cut = v;
    if (!cut.reshape(refined))
      return std::nullopt;
    artifact::StridedOperand &o = out[k];
    o.offset = cut.offset();
    o.dims.assign(refined.begin(), refined.end());
    o.strides.resize(refined.size());
    for (size_t d = refined.size(); d-- > 0;) {
      std::optional<StridedView::Factor> f = cut.single(d);
      if (!f)
        return std::nullopt;
      // A dimension of 1 takes the stride a dense layout would give it
      // (oneDNN recognises plain layouts by their strides).
      bool last = d + 1 == refined.size();
      o.strides[d] = f->size != 1 ? f->stride
                     : last       ? 1
                                  : o.strides[d + 1] * o.dims[d + 1];
    }
  }
  return out;
}
