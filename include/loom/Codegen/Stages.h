//===- Stages.h - What every target's kernel pipeline shares ----*- C++ -*-===//
//
// Part of Loom. A target's kernel pipeline is a list of named stages
// (docs/Codegen/CPU.md, docs/Codegen/GPU.md), each registered as a pass
// pipeline `loom-<target>-<stage>` so that loom-opt runs what loom-compile
// runs. The pieces here are the same for every target: the cleanup between
// passes, the first stage (tg to linalg on tensors), bufferization to the
// out-parameter ABI, and the registration.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CODEGEN_STAGES_H
#define LOOM_CODEGEN_STAGES_H

#include "loom/Codegen/CPU/Passes.h"
#include "loom/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ArrayRef.h"

namespace loom::codegen {

/// Canonicalization and CSE, after a pass that leaves dead or repeated IR.
inline void addCleanup(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

/// The first stage of every kernel pipeline: tg to linalg on tensors, then
/// elementwise fusion (\p options: convert-tg-to-linalg's, per target).
inline void addTGToLinalg(mlir::OpPassManager &pm,
                          const ConvertTGToLinalgOptions &options = {}) {
  pm.addPass(createConvertTGToLinalg(options));
  addCleanup(pm);
  pm.addPass(mlir::createLinalgElementwiseOpFusionPass());
  addCleanup(pm);
}

/// One-shot bufferization of whole kernels (identity layouts at function
/// boundaries, the arguments read-only: a kernel never writes the
/// runtime's buffers it reads), then results turned into out-parameters
/// with static allocations hoisted: the kernel ABI every target lowers
/// from.
inline void addBufferizeToOutParams(mlir::OpPassManager &pm) {
  namespace bz = mlir::bufferization;
  pm.addPass(cpu::createLoomReadOnlyKernelInputs());
  bz::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bz::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bz::createOneShotBufferizePass(bufferize));
  bz::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bz::createBufferResultsToOutParamsPass(outParams));
}

/// A stage (or a whole pipeline) registered under \p name.
template <typename Options> struct NamedStage {
  const char *name, *summary;
  void (*add)(mlir::OpPassManager &, const Options &);
};

/// Registers each of \p stages as a pass pipeline taking \p Options.
template <typename Options>
void registerStagePipelines(llvm::ArrayRef<NamedStage<Options>> stages) {
  for (const NamedStage<Options> &stage : stages)
    mlir::PassPipelineRegistration<Options>(
        stage.name, stage.summary,
        [add = stage.add](mlir::OpPassManager &pm, const Options &options) {
          add(pm, options);
        });
}

} // namespace loom::codegen

#endif // LOOM_CODEGEN_STAGES_H
