//===- Passes.cpp - The CPU kernel pipeline as named stages ---------------===//
//
// Part of Loom. See Passes.h and docs/Codegen/CPU.md. Every stage adds pass
// objects with typed options; nothing here is parsed from text, so a pass
// that is not linked in fails to build rather than to run.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "loom/Codegen/Stages.h"
#include "loom/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace loom;
using namespace loom::codegen;
using namespace loom::codegen::cpu;

namespace {

bool wide(const CPUKernelPipelineOptions &options) {
  switch (options.vectorWidth.getValue()) {
  case VectorWidth::Bits256:
    return false;
  case VectorWidth::Bits512:
    return true;
  }
  llvm_unreachable("unknown vector width");
}

/// What follows each rewriting pass of the tensor stages.
} // namespace

LoomRegisterTilesOptions CPUKernelPipelineOptions::registerTiles() const {
  // 8x32 f32 is 16 of AVX-512's 32 registers; 6x16 is 12 of AVX2's 16.
  LoomRegisterTilesOptions tiles;
  tiles.rowsPerTile = wide(*this) ? 8 : 6;
  tiles.vectorColumns = wide(*this) ? 32 : 16;
  return tiles;
}

LoomVectorizeConvsOptions CPUKernelPipelineOptions::convolutionRows() const {
  // 16-float vectors and 16 accumulators on AVX-512 (32 registers), 8 and 8
  // on AVX2 (16).
  LoomVectorizeConvsOptions rows;
  rows.lanes = wide(*this) ? 16 : 8;
  rows.accumulators = wide(*this) ? 16 : 8;
  return rows;
}

LoomVectorizeRowsOptions CPUKernelPipelineOptions::rowVectors() const {
  LoomVectorizeRowsOptions rows;
  rows.lanes = wide(*this) ? 16 : 8;
  rows.minWidth = 8;
  return rows;
}

void cpu::addLinalgStage(OpPassManager &pm, const CPUKernelPipelineOptions &) {
  // Each softmax exponential once, stored: the rows of a kernel's tile stay
  // in cache, and exp's polynomial costs more than a load.
  ConvertTGToLinalgOptions linalg;
  linalg.softmaxStoresExponentials = true;
  addTGToLinalg(pm, linalg);
}

void cpu::addTileStage(OpPassManager &pm,
                       const CPUKernelPipelineOptions &options) {
  LoomParallelizeKernelsOptions threads;
  threads.minIterations = options.minIterations;
  pm.addPass(createLoomParallelizeKernels(threads));
  addCleanup(pm);
}

void cpu::addVectorizeStage(OpPassManager &pm,
                            const CPUKernelPipelineOptions &options) {
  pm.addPass(createLoomRegisterTiles(options.registerTiles()));
  addCleanup(pm);
}

void cpu::addBufferizeStage(OpPassManager &pm,
                            const CPUKernelPipelineOptions &) {
  pm.addPass(createLoomPrivateTemporaries());
  addBufferizeToOutParams(pm);
  bufferization::buildBufferDeallocationPipeline(
      pm, bufferization::BufferDeallocationPipelineOptions());
}

void cpu::addParallelizeStage(OpPassManager &pm,
                              const CPUKernelPipelineOptions &) {
  pm.addPass(createLoomTeamKernels());
  pm.addPass(createLoomForallToRange());
}

void cpu::addVectorizeBuffersStage(OpPassManager &pm,
                                   const CPUKernelPipelineOptions &options) {
  pm.addPass(createLoomStridedCopiesToLinalg());
  pm.addPass(createLoomVectorizeConvs(options.convolutionRows()));
  pm.addPass(createLoomVectorizableLoopOrder());
  pm.addPass(createLoomVectorizeRows(options.rowVectors()));
}

void cpu::addLowerStage(OpPassManager &pm, const CPUKernelPipelineOptions &) {
  pm.addPass(createExpandTF32Roundings());
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  ConvertVectorToLLVMPassOptions vectors;
  vectors.vectorContractLowering = vector::VectorContractLowering::OuterProduct;
  pm.addPass(createConvertVectorToLLVMPass(vectors));
  pm.addPass(createUBToLLVMConversionPass());
  pm.addNestedPass<func::FuncOp>(createLoomApproximateMath());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Allocations call the generic functions, which loom-cache-temporaries
  // defines below (large temporaries re-used across calls).
  FinalizeMemRefToLLVMConversionPassOptions memrefs;
  memrefs.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefs));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions functions;
  functions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(functions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createLoomCacheTemporaries());
  pm.addPass(createLoomTeamCalls());
}

void cpu::buildCPUKernelPipeline(OpPassManager &pm,
                                 const CPUKernelPipelineOptions &options) {
  addLinalgStage(pm, options);
  addTileStage(pm, options);
  addVectorizeStage(pm, options);
  addBufferizeStage(pm, options);
  addParallelizeStage(pm, options);
  addVectorizeBuffersStage(pm, options);
  addLowerStage(pm, options);
}

void cpu::registerCPUCodegenPasses() {
  // Registering a pipeline twice is fatal: once per process.
  static bool registered = false;
  if (registered)
    return;
  registered = true;
  registerCodegenCPUPasses();
  static const NamedStage<CPUKernelPipelineOptions> stages[] = {
      {"loom-cpu-kernel-pipeline",
       "The CPU kernel pipeline: outlined kernels on tg tensors to LLVM "
       "(what loom-compile runs)",
       buildCPUKernelPipeline},
      {"loom-cpu-linalg",
       "CPU kernel stage 1: tg to linalg on tensors, elementwise fusion",
       addLinalgStage},
      {"loom-cpu-tile",
       "CPU kernel stage 2: thread tiles (scf.forall) and cache tiles",
       addTileStage},
      {"loom-cpu-vectorize",
       "CPU kernel stage 3: register tiles of contractions (vector.contract)",
       addVectorizeStage},
      {"loom-cpu-bufferize",
       "CPU kernel stage 4: one-shot bufferization, results to out-params",
       addBufferizeStage},
      {"loom-cpu-parallelize",
       "CPU kernel stage 5: the thread loop as [begin, end) arguments, "
       "large recurrences as team kernels",
       addParallelizeStage},
      {"loom-cpu-vectorize-buffers",
       "CPU kernel stage 6: strided copies, convolution rows of vector FMAs, "
       "loop order for LLVM's vectoriser",
       addVectorizeBuffersStage},
      {"loom-cpu-lower", "CPU kernel stage 7: everything to the LLVM dialect",
       addLowerStage},
  };
  registerStagePipelines<CPUKernelPipelineOptions>(stages);
}
