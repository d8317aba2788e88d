//===- CublasEncoding.cpp - A cublas.matmul step as cuBLASLt's call -------===//
//
// Part of Loom. See CublasEncoding.h.
//
//===----------------------------------------------------------------------===//

#include "CUDA/CublasEncoding.h"

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;

uint32_t cublas::epilogueValue(art::CublasEpilogue e) {
  switch (e) {
  case art::CublasEpilogue::Default:
    return kEpilogueDefault;
  case art::CublasEpilogue::Relu:
    return kEpilogueRelu;
  case art::CublasEpilogue::Bias:
    return kEpilogueBias;
  case art::CublasEpilogue::ReluBias:
    return kEpilogueReluBias;
  case art::CublasEpilogue::Gelu:
    return kEpilogueGelu;
  case art::CublasEpilogue::GeluBias:
    return kEpilogueGeluBias;
  }
  return kEpilogueDefault;
}

int32_t cublas::dataType(const std::string &dtype) {
  if (dtype == "bf16")
    return kDataBF16;
  if (dtype == "f16")
    return kDataF16;
  return kDataF32;
}

cublas::Encoding cublas::encode(const art::CublasMatmulStep &s) {
  Encoding e;
  e.epilogue = epilogueValue(s.epilogue);
  e.bias = art::cublasEpilogueHasBias(s.epilogue);
  auto batch = int32_t(s.batch);
  // Row-major b [k, n] is column-major n x k, ld n; a [m, k] is k x m, ld
  // k; d [m, n] is n x m, ld n.
  int32_t in = dataType(s.operandType), out = dataType(s.resultType);
  if (s.operandType == "tf32")
    e.compute = kComputeF32FastTF32;
  e.a = {in, uint64_t(s.n), uint64_t(s.k), s.n, batch, s.bBatchStride};
  e.b = {in, uint64_t(s.k), uint64_t(s.m), s.k, batch, s.aBatchStride};
  e.d = {out, uint64_t(s.n), uint64_t(s.m), s.n, batch, s.m * s.n};
  return e;
}
