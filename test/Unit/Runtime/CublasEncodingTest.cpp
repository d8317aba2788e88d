//===- CublasEncodingTest.cpp - cublas.matmul as cuBLASLt's call ----------===//
//
// Part of Loom. What the CUDA device passes to cuBLASLt's descriptors for a
// cublas.matmul step (lib/Runtime/CUDA/CublasEncoding.h) is what the manifest
// says: the row-major product as its column-major transpose, the layouts'
// sizes, leading dimensions and batch strides, the epilogue. Where the
// toolkit's cublasLt.h is found (LOOM_HAVE_CUBLASLT_H), the ABI values the
// runtime declares are checked against it.
//
//===----------------------------------------------------------------------===//

#include "../../../lib/Runtime/CUDA/CublasEncoding.h"

#include "gtest/gtest.h"

#ifdef LOOM_HAVE_CUBLASLT_H
#include <cublasLt.h>
#endif

using namespace loom;
using namespace loom::rt::cublas;
namespace art = loom::artifact;

namespace {

art::CublasMatmulStep step(int64_t m, int64_t n, int64_t k, int64_t batch,
                           int64_t aStride, int64_t bStride,
                           art::CublasEpilogue epilogue) {
  art::CublasMatmulStep s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.batch = batch;
  s.aBatchStride = aStride;
  s.bBatchStride = bStride;
  s.epilogue = epilogue;
  s.bias = art::cublasEpilogueHasBias(epilogue) ? 2 : -1;
  return s;
}

void expectLayout(const Layout &l, uint64_t rows, uint64_t cols, int64_t ld,
                  int32_t batch, int64_t stride) {
  EXPECT_EQ(l.rows, rows);
  EXPECT_EQ(l.cols, cols);
  EXPECT_EQ(l.ld, ld);
  EXPECT_EQ(l.batch, batch);
  EXPECT_EQ(l.stride, stride);
}

} // namespace

TEST(CublasEncodingTest, RowMajorProductAsItsTranspose) {
  // d [37, 129] = a [37, 64] x b [64, 129] + bias [129], ReLU.
  Encoding e =
      encode(step(37, 129, 64, 1, 0, 0, art::CublasEpilogue::ReluBias));
  EXPECT_EQ(e.transA, kOpN);
  EXPECT_EQ(e.transB, kOpN);
  EXPECT_EQ(e.epilogue, kEpilogueReluBias);
  EXPECT_TRUE(e.bias);
  // cuBLASLt's A is b: column-major n x k, ld n; its B is a: k x m, ld k;
  // D is n x m, ld n: D's rows (the bias's length) are the step's columns.
  expectLayout(e.a, 129, 64, 129, 1, 0);
  expectLayout(e.b, 64, 37, 64, 1, 0);
  expectLayout(e.d, 129, 37, 129, 1, 37 * 129);
}

TEST(CublasEncodingTest, StridedBatches) {
  // Both operands batched: strides m * k and k * n.
  Encoding both =
      encode(step(8, 16, 32, 3, 8 * 32, 32 * 16, art::CublasEpilogue::Gelu));
  EXPECT_EQ(both.epilogue, kEpilogueGelu);
  EXPECT_FALSE(both.bias);
  expectLayout(both.a, 16, 32, 16, 3, 32 * 16);
  expectLayout(both.b, 32, 8, 32, 3, 8 * 32);
  expectLayout(both.d, 16, 8, 16, 3, 8 * 16);
  // A shared left operand: cuBLASLt's B has stride 0.
  Encoding shared =
      encode(step(8, 16, 32, 3, 0, 32 * 16, art::CublasEpilogue::Default));
  EXPECT_EQ(shared.epilogue, kEpilogueDefault);
  expectLayout(shared.a, 16, 32, 16, 3, 32 * 16);
  expectLayout(shared.b, 32, 8, 32, 3, 0);
}

TEST(CublasEncodingTest, NarrowOperands) {
  // bf16 operands with an f32 result (a product's cast back to f32 taken
  // in): cuBLASLt's A and B (the step's b and a) bf16, D f32; f32 the
  // default.
  art::CublasMatmulStep s;
  s.m = 5;
  s.n = 3;
  s.k = 7;
  EXPECT_EQ(encode(s).a.type, kDataF32);
  s.operandType = "bf16";
  Encoding e = encode(s);
  EXPECT_EQ(e.a.type, kDataBF16);
  EXPECT_EQ(e.b.type, kDataBF16);
  EXPECT_EQ(e.d.type, kDataF32);
  s.operandType = s.resultType = "f16";
  e = encode(s);
  EXPECT_EQ(e.a.type, kDataF16);
  EXPECT_EQ(e.d.type, kDataF16);
  EXPECT_EQ(e.compute, kComputeF32);
}

TEST(CublasEncodingTest, TF32Operands) {
  // tf32 operands (f32 buffers holding TF32 values): every matrix f32,
  // computed as CUBLAS_COMPUTE_32F_FAST_TF32; f32 ones as CUBLAS_COMPUTE_32F.
  art::CublasMatmulStep s;
  s.m = 5;
  s.n = 3;
  s.k = 7;
  EXPECT_EQ(encode(s).compute, kComputeF32);
  s.operandType = "tf32";
  Encoding e = encode(s);
  EXPECT_EQ(e.compute, kComputeF32FastTF32);
  EXPECT_EQ(e.a.type, kDataF32);
  EXPECT_EQ(e.b.type, kDataF32);
  EXPECT_EQ(e.d.type, kDataF32);
}

TEST(CublasEncodingTest, EveryEpilogue) {
  const std::pair<art::CublasEpilogue, uint32_t> values[] = {
      {art::CublasEpilogue::Default, kEpilogueDefault},
      {art::CublasEpilogue::Relu, kEpilogueRelu},
      {art::CublasEpilogue::Bias, kEpilogueBias},
      {art::CublasEpilogue::ReluBias, kEpilogueReluBias},
      {art::CublasEpilogue::Gelu, kEpilogueGelu},
      {art::CublasEpilogue::GeluBias, kEpilogueGeluBias}};
  for (auto [epilogue, value] : values) {
    Encoding e = encode(step(2, 3, 4, 1, 0, 0, epilogue));
    EXPECT_EQ(e.epilogue, value) << art::cublasEpilogueName(epilogue);
    EXPECT_EQ(e.bias, art::cublasEpilogueHasBias(epilogue));
    EXPECT_EQ(art::parseCublasEpilogue(art::cublasEpilogueName(epilogue)),
              epilogue);
  }
}

#ifdef LOOM_HAVE_CUBLASLT_H
// The values the runtime declares are the toolkit's.
static_assert(kOpN == CUBLAS_OP_N);
static_assert(kComputeF32 == CUBLAS_COMPUTE_32F);
static_assert(kComputeF32FastTF32 == CUBLAS_COMPUTE_32F_FAST_TF32);
static_assert(kDataF32 == CUDA_R_32F);
static_assert(kDataF16 == CUDA_R_16F);
static_assert(kDataBF16 == CUDA_R_16BF);
static_assert(kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA);
static_assert(kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(kDescEpilogue == CUBLASLT_MATMUL_DESC_EPILOGUE);
static_assert(kDescBiasPointer == CUBLASLT_MATMUL_DESC_BIAS_POINTER);
static_assert(kLayoutBatchCount == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
static_assert(kLayoutBatchStride ==
              CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(kPrefMaxWorkspace == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(kPrefMinAlignment[0] ==
              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES);
static_assert(kPrefMinAlignment[1] ==
              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES);
static_assert(kPrefMinAlignment[2] ==
              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES);
static_assert(kPrefMinAlignment[3] ==
              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES);
static_assert(kEpilogueDefault == CUBLASLT_EPILOGUE_DEFAULT);
static_assert(kEpilogueRelu == CUBLASLT_EPILOGUE_RELU);
static_assert(kEpilogueBias == CUBLASLT_EPILOGUE_BIAS);
static_assert(kEpilogueReluBias == CUBLASLT_EPILOGUE_RELU_BIAS);
static_assert(kEpilogueGelu == CUBLASLT_EPILOGUE_GELU);
static_assert(kEpilogueGeluBias == CUBLASLT_EPILOGUE_GELU_BIAS);
// The attribute types the runtime passes (cublasLt.h documents them).
static_assert(sizeof(Encoding::transA) == sizeof(int32_t));
static_assert(sizeof(Encoding::epilogue) == sizeof(uint32_t));
static_assert(sizeof(Layout::batch) == sizeof(int32_t));
static_assert(sizeof(Layout::stride) == sizeof(int64_t));

TEST(CublasEncodingTest, CheckedAgainstCublasLtH) { SUCCEED(); }
#endif
