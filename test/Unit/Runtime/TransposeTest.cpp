//===- TransposeTest.cpp - The CPU device's layout-change kernel ----------===//
//
// Part of Loom. lib/Runtime/CPU/Kernels/Transpose.cpp: transposePlanes against
// a scalar transpose, exactly (a transpose moves floats, it computes none), for
// every path (one row or column, two to four rows or columns interleaved,
// 16x16 tiles along either side, elements of 16 floats moved whole), with
// tails of every length, on one
// thread and on a team of two and of three; the floats around the result
// stay untouched. Every form this CPU runs (AVX2, AVX-512: CpuKernels.h);
// skipped where it runs none.
//
//===----------------------------------------------------------------------===//

#include "KernelForms.h"

#include "gtest/gtest.h"

#include <cstring>
#include <vector>

using namespace loom::rt;
using namespace loom::rt::cpu;
using loom::artifact::CpuIsa;

namespace {

using test::kGuard;

std::vector<const CpuKernelTable *> forms() {
  return test::formsOf(&CpuKernelTable::transposePlanes);
}

void checkForm(const CpuKernelTable &form, const TransposeShape &s,
               int threads);

/// transposePlanes of \p s on a team of \p threads by every form, checked
/// element by element against the scalar transpose, with guard floats
/// around dst.
void check(const TransposeShape &s, int threads) {
  for (const CpuKernelTable *form : forms())
    checkForm(*form, s, threads);
}

void checkForm(const CpuKernelTable &form, const TransposeShape &s,
               int threads) {
  int64_t n = s.batch * s.rows * s.cols * s.block;
  std::vector<float> src(n), dst(n + 32, kGuard);
  for (int64_t i = 0; i < n; ++i)
    src[i] = float(i) * 0.5f + 1.0f;
  int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  form.transposePlanes(s, src.data(), dst.data() + 16);
  omp_set_num_threads(before);
  for (int64_t i = 0; i < 16; ++i) {
    ASSERT_EQ(dst[i], kGuard) << "before the result, float " << i;
    ASSERT_EQ(dst[16 + n + i], kGuard) << "after the result, float " << i;
  }
  int64_t e = s.block;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t r = 0; r < s.rows; ++r)
      for (int64_t c = 0; c < s.cols; ++c)
        for (int64_t f = 0; f < e; ++f) {
          int64_t base = b * s.rows * s.cols * e;
          ASSERT_EQ(dst[16 + base + (c * s.rows + r) * e + f],
                    src[base + (r * s.cols + c) * e + f])
              << cpuIsaName(form.isa) << ": batch " << s.batch << " rows "
              << s.rows << " cols " << s.cols << " block " << e << " threads "
              << threads << " at [" << b << "][" << r << "][" << c << "][" << f
              << "]";
        }
}

class TransposeTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (forms().empty())
      GTEST_SKIP() << "no level this CPU runs has a form of transposePlanes";
  }
};

TEST_F(TransposeTest, FewRowsOrColumnsEveryTail) {
  for (int64_t k = 1; k <= 5; ++k)
    for (int64_t other = 1; other <= 40; ++other)
      for (int64_t batch : {1, 2}) {
        check({batch, k, other}, 1);
        check({batch, other, k}, 1);
      }
}

TEST_F(TransposeTest, TilesEveryTail) {
  for (int64_t rows : {5, 15, 16, 17, 31, 32, 33})
    for (int64_t cols : {5, 6, 16, 17, 30, 48, 49})
      check({2, rows, cols}, 1);
}

TEST_F(TransposeTest, LayoutShapes) {
  // {N, C, H*W} is NCHW -> NHWC, {N, H*W, C} the way back, {N*C/16, 16,
  // H*W} NCHW -> nChw16c; on the calling thread and on teams of two and
  // three (the units split unevenly).
  std::vector<TransposeShape> shapes = {
      {1, 3, 224 * 224}, {2, 3, 223 * 221}, {1, 3, 299 * 299}, {1, 49, 1280},
      {1, 1280, 49},     {1, 64, 56 * 56},  {2, 56 * 56, 64},  {1, 3136, 3},
      {8, 16, 55 * 55},  {8, 55 * 55, 16},  {1, 1, 70000},     {3, 70000, 1},
      {2, 2, 40001},     {2, 40001, 4},     {1, 24, 112 * 112}};
  for (const TransposeShape &s : shapes)
    for (int threads : {1, 2, 3})
      check(s, threads);
}

TEST_F(TransposeTest, BlocksOf16) {
  // {N, H*W, C / 16, 16} is NHWC -> nChw16c, {N, C / 16, H*W, 16} the way
  // back; elements of 32 floats move whole too.
  for (int64_t rows : {1, 2, 5, 16, 17, 33})
    for (int64_t cols : {1, 3, 16, 18})
      check({2, rows, cols, 16}, 1);
  std::vector<TransposeShape> shapes = {{1, 14 * 14, 16, 16},
                                        {1, 16, 14 * 14, 16},
                                        {2, 56 * 56, 4, 16},
                                        {2, 4, 55 * 55, 16},
                                        {1, 7, 9, 32}};
  for (const TransposeShape &s : shapes)
    for (int threads : {1, 2, 3})
      check(s, threads);
}

} // namespace
