//===- Passes.h - CPU code generation: passes and pipeline ------*- C++ -*-===//
//
// Part of Loom. The CPU kernel pipeline (docs/Codegen/CPU.md): the passes of
// Passes.td, and the stages that compose them with upstream passes into
// `loom-cpu-kernel-pipeline`, the pipeline loom-compile runs on a module of
// outlined kernel functions (one per codegen fragment, on tg tensors) to get
// LLVM dialect functions with the artifact's calling convention. Each stage
// adds pass objects with typed options (as IREE's LLVMCPU/Passes.cpp does),
// and each is registered as a named pipeline of its own so that loom-opt can
// run any prefix:
//
//   loom-cpu-linalg       tg ops to linalg on tensors, elementwise fusion
//   loom-cpu-tile         thread tiles (scf.forall) and cache tiles
//   loom-cpu-vectorize    register tiles of contractions (vector.contract)
//   loom-cpu-bufferize    one-shot bufferization, results to out-parameters
//   loom-cpu-parallelize  the forall as the [begin, end) calling convention
//   loom-cpu-vectorize-buffers
//                         strided copies to linalg, convolutions as rows of
//                         vector FMAs, innermost loops chosen for LLVM
//   loom-cpu-lower        loops, vectors, math, memrefs to the LLVM dialect
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CODEGEN_CPU_PASSES_H
#define LOOM_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace loom::codegen::cpu {

#define GEN_PASS_DECL
#include "loom/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Codegen/CPU/Passes.h.inc"

/// The width of the vector registers kernels are tiled for.
enum class VectorWidth {
  /// AVX2 (16 registers): 6x16 register tiles, rows of 8-float vectors.
  Bits256 = 256,
  /// AVX-512 (32 registers): 8x32 register tiles, rows of 16-float vectors.
  Bits512 = 512,
};

/// The options of `loom-cpu-kernel-pipeline` and of each of its stages. The
/// CPU target (include/loom/Target/Target.h) sets vector-width from its
/// features: 512 where it has avx512f, 256 otherwise.
struct CPUKernelPipelineOptions
    : public mlir::PassPipelineOptions<CPUKernelPipelineOptions> {
  Option<VectorWidth> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Bits of a vector register the kernels are tiled for"),
      llvm::cl::init(VectorWidth::Bits512),
      llvm::cl::values(
          clEnumValN(VectorWidth::Bits256, "256", "AVX2: 16 registers"),
          clEnumValN(VectorWidth::Bits512, "512", "AVX-512: 32 registers"))};
  Option<int64_t> minIterations{
      *this, "min-iterations",
      llvm::cl::desc("Iterations a kernel's thread loop should have at least "
                     "(loom-parallelize-kernels)"),
      llvm::cl::init(64)};

  /// The register tile of loom-register-tiles for vectorWidth.
  LoomRegisterTilesOptions registerTiles() const;
  /// The vectors of loom-vectorize-convs for vectorWidth.
  LoomVectorizeConvsOptions convolutionRows() const;
  /// The vectors of loom-vectorize-rows for vectorWidth.
  LoomVectorizeRowsOptions rowVectors() const;
};

//===----------------------------------------------------------------------===//
// Team kernels (docs/Compiler.md, "Recurrences")
//===----------------------------------------------------------------------===//

/// A unit attribute loom-register-tiles puts on the loops over a product's
/// parallel dimensions (each iteration writes a tile of its own).
inline constexpr llvm::StringLiteral kParallelTilesAttr = "loom.parallel_tiles";
/// A unit attribute on a kernel function that every thread of a team calls
/// (loom-team-kernels): `[begin, end)` is then (thread, team size), and a
/// third argument is the team (`loom_team *`, include/loom-c/ArtifactABI.h).
inline constexpr llvm::StringLiteral kTeamAttr = "loom.team";
/// The function a team kernel calls to wait for every thread of its team
/// (loom-team-calls makes it a call through the team).
inline constexpr llvm::StringLiteral kTeamBarrier = "loom_team_barrier";

//===----------------------------------------------------------------------===//
// Stages, in the order the pipeline runs them (on a module of kernels)
//===----------------------------------------------------------------------===//

void addLinalgStage(mlir::OpPassManager &pm,
                    const CPUKernelPipelineOptions &options);
void addTileStage(mlir::OpPassManager &pm,
                  const CPUKernelPipelineOptions &options);
void addVectorizeStage(mlir::OpPassManager &pm,
                       const CPUKernelPipelineOptions &options);
void addBufferizeStage(mlir::OpPassManager &pm,
                       const CPUKernelPipelineOptions &options);
void addParallelizeStage(mlir::OpPassManager &pm,
                         const CPUKernelPipelineOptions &options);
void addVectorizeBuffersStage(mlir::OpPassManager &pm,
                              const CPUKernelPipelineOptions &options);
void addLowerStage(mlir::OpPassManager &pm,
                   const CPUKernelPipelineOptions &options);

/// Every stage in order: `loom-cpu-kernel-pipeline`, what loom-compile runs.
void buildCPUKernelPipeline(mlir::OpPassManager &pm,
                            const CPUKernelPipelineOptions &options);

/// Registers the passes of Passes.td, `loom-cpu-kernel-pipeline` and one
/// named pipeline per stage (`loom-cpu-linalg`, ..., `loom-cpu-lower`).
void registerCPUCodegenPasses();

} // namespace loom::codegen::cpu

#endif // LOOM_CODEGEN_CPU_PASSES_H
