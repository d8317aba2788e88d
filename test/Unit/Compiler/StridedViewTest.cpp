//===- StridedViewTest.cpp - Views folded into matrix products -------------===//
//
// Part of Loom. The strided views the schedule folds into oneDNN matrix
// products (docs/Compiler.md, "Views folded into matrix products"): an
// attention's Q, K and V read from the packed sequence-first QKV product,
// factors cut where sizes divide, and batches no one primitive can take.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/StridedView.h"

#include <gtest/gtest.h>

using namespace loom;
using namespace loom::compiler;

namespace {

using Dims = std::vector<int64_t>;

/// Q of a sequence-first attention: [S, B, 3E] sliced to its first E, split
/// into H heads of D, heads to the front: [B*H, S, D].
StridedView queries(int64_t s, int64_t b, int64_t h, int64_t d,
                    int64_t start) {
  int64_t e = h * d;
  StridedView v = StridedView::dense({s, b, 3 * e});
  EXPECT_TRUE(v.slice({0, 0, start}, {1, 1, 1}, {s, b, e}));
  EXPECT_TRUE(v.reshape({s, b * h, d}));
  v.transpose({1, 0, 2});
  return v;
}

TEST(StridedView, HeadsOfThePackedProduct) {
  StridedView q = queries(256, 4, 8, 64, 0);
  EXPECT_EQ(q.shape(), (llvm::SmallVector<int64_t>{32, 256, 64}));
  // The batch of 32 heads is 4 batches of 8 heads: no single stride.
  EXPECT_FALSE(q.single(0));
  EXPECT_EQ(q.single(1)->stride, 4 * 1536);
  EXPECT_EQ(q.single(2)->stride, 1);
  EXPECT_FALSE(q.isDense());
  EXPECT_TRUE(StridedView::dense({2, 3}).isDense());
}

TEST(StridedView, ProductOperands) {
  StridedView q = queries(256, 4, 8, 64, 0);
  StridedView k = queries(256, 4, 8, 64, 512);
  k.transpose({0, 2, 1});
  StridedView dst = StridedView::dense({32, 256, 256});
  auto ops = matmulOperands(q, k, dst);
  ASSERT_TRUE(ops);
  const auto &[src, weights, out] = *ops;
  EXPECT_EQ(src.dims, (Dims{4, 8, 256, 64}));
  EXPECT_EQ(src.strides, (Dims{1536, 64, 6144, 1}));
  EXPECT_EQ(src.offset, 0);
  EXPECT_EQ(weights.dims, (Dims{4, 8, 64, 256}));
  EXPECT_EQ(weights.strides, (Dims{1536, 64, 1, 6144}));
  EXPECT_EQ(weights.offset, 512);
  // The dense result cut like the others: 32 as 4 x 8.
  EXPECT_EQ(out.dims, (Dims{4, 8, 256, 256}));
  EXPECT_EQ(out.strides, (Dims{8 * 65536, 65536, 256, 1}));
}

TEST(StridedView, ReshapeCutsWhereSizesDivide) {
  StridedView v = StridedView::dense({6, 4});
  v.transpose({1, 0}); // [4, 6], strides 1, 4
  EXPECT_TRUE(v.reshape({2, 2, 6}));
  EXPECT_EQ(v.single(0)->stride, 2);
  EXPECT_EQ(v.single(2)->stride, 4);
  StridedView w = StridedView::dense({3, 2});
  w.transpose({1, 0}); // [2, 3]: factors (2, 1), (3, 2)
  // Six elements as [3, 2] would cut the outer factor of 2 by 3.
  EXPECT_FALSE(w.reshape({3, 2}));
}

TEST(StridedView, BatchesCutDifferently) {
  // Batch 6 as 3 x 2 against 2 x 3: no common cut.
  StridedView a = StridedView::dense({5, 2, 3, 4});
  a.transpose({2, 1, 0, 3});
  ASSERT_TRUE(a.reshape({6, 5, 4}));
  StridedView b = StridedView::dense({4, 3, 2, 5});
  b.transpose({2, 1, 0, 3});
  ASSERT_TRUE(b.reshape({6, 4, 5}));
  EXPECT_FALSE(matmulOperands(a, b, StridedView::dense({6, 5, 5})));
}

} // namespace
