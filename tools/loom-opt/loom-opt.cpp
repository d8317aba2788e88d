//===- loom-opt.cpp - Loom's mlir-opt ---------------------------------------===//
//
// Part of Loom. Every MLIR dialect and pass plus Loom's own, with all of
// mlir-opt's flags.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/Autodiff.h"
#include "loom/Autodiff/Passes.h"
#include "loom/Codegen/CPU/Passes.h"
#include "loom/Codegen/GPU/Passes.h"
#include "loom/Compiler/Passes.h"
#include "loom/Conversion/Passes.h"
#include "loom/Dialect/Pipe/IR/PipeDialect.h"
#include "loom/Dialect/Pipe/Transforms/Passes.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/Transforms/CacheInPlace.h"
#include "loom/Dialect/TG/Transforms/CacheParallel.h"
#include "loom/Dialect/TG/Transforms/LengthRanges.h"
#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Transforms/PipelineStages.h"
#include "loom/Dialect/TG/Transforms/TensorParallel.h"
#include "loom/Pet/Passes.h"
#include "loom/Pipeline/Passes.h"
#include "loom/Placement/Passes.h"
#include "loom/Search/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  loom::tg::registerTGPasses();
  loom::tg::registerTGCacheInPlacePass();
  loom::tg::registerTGCacheParallelPass();
  loom::tg::registerTGTensorParallelPass();
  loom::tg::registerTGPipelineStagesPass();
  loom::search::registerSearchPasses();
  loom::pet::registerPetPasses();
  loom::pipe::registerPipePasses();
  loom::compiler::registerCompilerPasses();
  loom::registerConversionPasses();
  loom::codegen::cpu::registerCPUCodegenPasses();
  loom::codegen::gpu::registerGPUCodegenPasses();
  loom::placement::registerPlacementPasses();
  loom::autodiff::registerAutodiffPasses();
  loom::pipeline::registerPipelinePasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  loom::codegen::gpu::registerGPUCodegenDialects(registry);
  registry.insert<loom::tg::TGDialect>();
  registry.insert<loom::pipe::PipeDialect>();
  loom::tg::registerTGGradientInterfaceModels(registry);
  loom::tg::registerTGLengthRangeModels(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Loom optimizer driver: every MLIR and Loom dialect and pass\n",
      registry));
}
