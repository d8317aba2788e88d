//===- PetTest.cpp - PET's index arithmetic and regions -------------------===//
//
// Part of Loom. The pieces of LoomPet that are plain arithmetic: windows,
// PET's padding, the wrong rows of split-to-batch and the boxes of a mask.
// The generator checks wrongRows against evaluation on every instance it
// enumerates (test/Pet/rulegen-partial.test); these pin the cases the docs
// describe.
//
//===----------------------------------------------------------------------===//

#include "loom/Pet/Pet.h"

#include <gtest/gtest.h>

using namespace loom::pet;

namespace {

std::vector<int> wrongIndices(const std::vector<bool> &rows) {
  std::vector<int> out;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i])
      out.push_back(int(i));
  return out;
}

TEST(PetTest, OutSize) {
  Window same{3, 1, 1, 1, 1};
  EXPECT_EQ(same.outSize(16), 16);
  Window strided{5, 2, 1, 2, 2};
  EXPECT_EQ(strided.outSize(32), 16);
  Window dilated{3, 1, 2, 0, 0};
  EXPECT_EQ(dilated.outSize(4), 0); // the window (5 rows) does not fit
}

TEST(PetTest, PadRows) {
  EXPECT_EQ(padRows(32, {2, 2, Fold::SplitConcat}), 0);
  EXPECT_EQ(padRows(31, {2, 2, Fold::SplitConcat}), 1);
  EXPECT_EQ(padRows(31, {2, 4, Fold::SplitConcat}), 1);
  EXPECT_EQ(padRows(29, {2, 4, Fold::SplitConcat}), 3);
}

TEST(PetTest, WrongRowsOfTheCanonicalExample) {
  // A 3x3 convolution, pads 1, 8 rows in two pieces: rows 3 and 4.
  Window w{3, 1, 1, 1, 1};
  EXPECT_EQ(wrongIndices(wrongRows(w, 8, {2, 2, Fold::SplitConcat})),
            (std::vector<int>{3, 4}));
  // Four pieces of 64: two rows at each of the three cuts.
  EXPECT_EQ(wrongIndices(wrongRows(w, 64, {2, 4, Fold::SplitConcat})),
            (std::vector<int>{15, 16, 31, 32, 47, 48}));
  // No halo, nothing wrong: a 1x1 convolution.
  Window pointwise{1, 1, 1, 0, 0};
  EXPECT_TRUE(
      wrongIndices(wrongRows(pointwise, 8, {2, 2, Fold::SplitConcat}))
          .empty());
}

TEST(PetTest, WrongRowsFollowStrideAndDilation) {
  Window strided{5, 2, 1, 2, 2};
  EXPECT_EQ(wrongIndices(wrongRows(strided, 32, {2, 2, Fold::SplitConcat})),
            (std::vector<int>{7, 8}));
  Window dilated{3, 1, 2, 2, 2};
  EXPECT_EQ(wrongIndices(wrongRows(dilated, 64, {2, 2, Fold::SplitConcat})),
            (std::vector<int>{30, 31, 32, 33}));
}

TEST(PetTest, PaddedRowsAreWrongOnlyWhenPaddingIsNotZero) {
  // 31 rows padded to 32: a convolution's zero padding equals the zero row.
  Window conv{3, 1, 1, 1, 1};
  EXPECT_EQ(wrongIndices(wrongRows(conv, 31, {2, 2, Fold::SplitConcat})),
            (std::vector<int>{15, 16}));
  // A max pool pads with -inf: its last row reads the zero row instead.
  Window pool{3, 1, 1, 1, 1};
  pool.padIsZero = false;
  EXPECT_EQ(wrongIndices(wrongRows(pool, 31, {2, 2, Fold::SplitConcat})),
            (std::vector<int>{15, 16, 30}));
}

TEST(PetTest, BoxesOfRows) {
  RowBoxes b = boxesOfRows({false, false, true, true, false}, {1, 3, 5, 2}, 2);
  ASSERT_EQ(b.equal.size(), 2u);
  ASSERT_EQ(b.wrong.size(), 1u);
  EXPECT_EQ(b.equal[0].str(), "[0:1, 0:3, 0:2, 0:2]");
  EXPECT_EQ(b.wrong[0].str(), "[0:1, 0:3, 2:4, 0:2]");
  EXPECT_EQ(b.equal[1].str(), "[0:1, 0:3, 4:5, 0:2]");
  EXPECT_EQ(b.wrong[0].numElements(), 12);
}

TEST(PetTest, BoxesOfMaskAreTheCoarsestConstantGrid) {
  // A 3x4 mask, true on rows 1..2 of columns 2..3.
  std::vector<bool> mask = {false, false, false, false, //
                            false, false, true,  true,  //
                            false, false, true,  true};
  auto boxes = boxesOfMask(mask, {3, 4});
  ASSERT_EQ(boxes.size(), 4u);
  EXPECT_EQ(boxes[0].first.str(), "[0:1, 0:2]");
  EXPECT_FALSE(boxes[0].second);
  EXPECT_EQ(boxes[1].first.str(), "[0:1, 2:4]");
  EXPECT_FALSE(boxes[1].second);
  EXPECT_EQ(boxes[2].first.str(), "[1:3, 0:2]");
  EXPECT_FALSE(boxes[2].second);
  EXPECT_EQ(boxes[3].first.str(), "[1:3, 2:4]");
  EXPECT_TRUE(boxes[3].second);
}

TEST(PetTest, Folds) {
  EXPECT_EQ(foldName(Fold::SplitConcat), "split-concat");
  EXPECT_EQ(*parseFold("reshape-transpose"), Fold::ReshapeTranspose);
  EXPECT_TRUE(mlir::failed(parseFold("zigzag")));
}

} // namespace
