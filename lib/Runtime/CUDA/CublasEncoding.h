//===- CublasEncoding.h - A cublas.matmul step as cuBLASLt's call -*- C++
//-*-===//
//
// Part of Loom. What the CUDA device passes to cuBLASLt for a cublas.matmul
// step (docs/Artifact.md): the step is row-major, cuBLASLt column-major, so
// the product d = a x b is computed as its transpose, d^T (n x m) = b^T
// (n x k) x a^T (k x m): a row-major matrix is the column-major layout of
// its transpose with the same leading dimension. cuBLASLt's A is then the
// step's b, its B the step's a, no operand transposed, and its bias (one
// element per row of D, which are the step's columns) is the step's [n]
// bias. Plain data, no CUDA types: test/Unit/Runtime/CublasEncodingTest.cpp
// checks it against the manifest and against cublasLt.h's values.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CUBLASENCODING_H
#define LOOM_LIB_RUNTIME_CUBLASENCODING_H

#include "loom/Artifact/Schema.h"

#include <cstdint>

namespace loom::rt::cublas {

// cuBLASLt's ABI values (cublasLt.h, cublas_api.h, library_types.h of CUDA
// 12 and 13), declared here so that libloomrt builds without the toolkit.
constexpr int32_t kOpN = 0;               // CUBLAS_OP_N
constexpr int32_t kComputeF32 = 68;       // CUBLAS_COMPUTE_32F
constexpr int32_t kComputeF32FastTF32 = 77; // CUBLAS_COMPUTE_32F_FAST_TF32
constexpr int32_t kDataF32 = 0;           // CUDA_R_32F
constexpr int32_t kDataF16 = 2;           // CUDA_R_16F
constexpr int32_t kDataBF16 = 14;         // CUDA_R_16BF
constexpr int32_t kDescTransA = 3;        // CUBLASLT_MATMUL_DESC_TRANSA
constexpr int32_t kDescTransB = 4;        // CUBLASLT_MATMUL_DESC_TRANSB
constexpr int32_t kDescEpilogue = 7;      // CUBLASLT_MATMUL_DESC_EPILOGUE
constexpr int32_t kDescBiasPointer = 8;   // CUBLASLT_MATMUL_DESC_BIAS_POINTER
constexpr int32_t kLayoutBatchCount = 5;  // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT
constexpr int32_t kLayoutBatchStride = 6; // ..._STRIDED_BATCH_OFFSET
// CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES (uint64_t).
constexpr int32_t kPrefMaxWorkspace = 1;
// CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES (uint32_t, default 256).
constexpr int32_t kPrefMinAlignment[4] = {5, 6, 7, 8};
/// The alignment the runtime guarantees a buffer: arena slices start at
/// multiples of 64 bytes (docs/Artifact.md), staged ones at 256. The
/// heuristic is told so, or it may pick an algorithm that refuses them.
constexpr uint32_t kBufferAlignment = 64;
// cublasLtEpilogue_t.
constexpr uint32_t kEpilogueDefault = 1, kEpilogueRelu = 2, kEpilogueBias = 4,
                   kEpilogueReluBias = 6, kEpilogueGelu = 32,
                   kEpilogueGeluBias = 36;

/// One matrix as cublasLtMatrixLayoutCreate and its batch attributes take
/// it: elements of cudaDataType_t type, column-major rows x cols with
/// leading dimension ld, batch matrices stride elements apart.
struct Layout {
  int32_t type = kDataF32;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;
};

/// The whole call: the descriptors' attributes and which of the step's
/// buffers is cuBLASLt's A and B.
struct Encoding {
  /// cublasComputeType_t: CUBLAS_COMPUTE_32F, or ..._FAST_TF32 for tf32
  /// operands (which hold TF32 values, so that the library's own
  /// conversion of them changes nothing: docs/Precision.md, "TF32").
  int32_t compute = kComputeF32;
  int32_t transA = kOpN, transB = kOpN;
  uint32_t epilogue = kEpilogueDefault;
  /// cuBLASLt's A is the step's b, its B the step's a (see above).
  Layout a, b, d;
  /// Whether CUBLASLT_MATMUL_DESC_BIAS_POINTER is set (to the step's bias).
  bool bias = false;
};

/// cublasLtEpilogue_t of \p e.
uint32_t epilogueValue(artifact::CublasEpilogue e);

/// cudaDataType_t of a step's element type (f32, bf16, f16, and tf32 held
/// in f32; the reader admits no other).
int32_t dataType(const std::string &dtype);

/// The call that computes \p step: f32 accumulation (CUBLAS_COMPUTE_32F,
/// or CUBLAS_COMPUTE_32F_FAST_TF32 for tf32 operands; f32 alpha and beta)
/// whatever the matrices hold.
Encoding encode(const artifact::CublasMatmulStep &step);

} // namespace loom::rt::cublas

#endif // LOOM_LIB_RUNTIME_CUBLASENCODING_H
