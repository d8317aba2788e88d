//===- Passes.cpp - The GPU kernel pipeline as named stages ---------------===//
//
// Part of Loom. See Passes.h and docs/Codegen/GPU.md. Every stage adds pass
// objects with typed options; nothing here is parsed from text.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "loom/Codegen/CPU/Passes.h"
#include "loom/Codegen/Stages.h"
#include "loom/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRVPass.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRVPass.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/SPIRV/Target.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace loom;
using namespace loom::codegen;
using namespace loom::codegen::gpu;

namespace {

/// What follows each rewriting pass.
/// The chips the CUDA path generates code for, with the PTX ISA each is
/// generated with (LLVM's default, PTX 6.0, does not support sm_80 and
/// aborts the process instead of diagnosing it).
struct Chip {
  const char *name, *ptx;
};
constexpr Chip kChips[] = {{"sm_80", "+ptx80"},
                           {"sm_86", "+ptx80"},
                           {"sm_89", "+ptx80"},
                           {"sm_90", "+ptx80"},
                           {"sm_90a", "+ptx80"}};

/// Vulkan 1.3 as every conformant device has it (lavapipe included): the
/// shader capabilities the kernels use, nothing vendor-specific.
void addVulkanLowering(OpPassManager &pm) {
  GpuSPIRVAttachTargetOptions spirv;
  spirv.spirvVersion = "v1.3";
  // Subgroup builtins and arithmetic: the row-reduction class (every
  // Vulkan 1.1+ device has them in compute shaders; lavapipe does). Float64:
  // the importer's exact integer arithmetic and gather indices past 2^24
  // (detectors' post-processing); optional in Vulkan, so required only by
  // the modules that use it (the VCE triple) and checked against the
  // device's shaderFloat64 at load. Float16 and 16-bit storage: f16
  // tensors (--precision=f16, f16 models) held as f16 in their buffers;
  // without them the SPIR-V conversion would widen f16 to f32 in the
  // kernels while the buffers hold 2-byte elements.
  spirv.spirvCapabilities = {"Shader",
                             "Int64",
                             "Float64",
                             "Float16",
                             "Int8",
                             "Int16",
                             "StorageBuffer8BitAccess",
                             "StorageBuffer16BitAccess",
                             "GroupNonUniform",
                             "GroupNonUniformArithmetic"};
  spirv.spirvExtensions = {"SPV_KHR_storage_buffer_storage_class",
                           "SPV_KHR_8bit_storage", "SPV_KHR_16bit_storage"};
  spirv.clientApi = "Vulkan";
  pm.addPass(createGpuSPIRVAttachTarget(spirv));
  pm.addPass(createLoomGPUSPIRVEntryPoints());
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(createLoomGPUSPIRVForms());
  // SPIR-V has no erf: transcendental functions as polynomials (as on the
  // CPU), the rest (sqrt, fma) as GLSL extended instructions.
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(cpu::createLoomApproximateMath());
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(createConvertMathToSPIRVPass());
  pm.addPass(createConvertGPUToSPIRVPass(/*mapMemorySpace=*/true));
  // Barriers that order storage buffers too, entry points and their
  // interface (storage buffers 0..n-1 of set 0), and the version,
  // capabilities and extensions the module uses.
  OpPassManager &spirvModule = pm.nest<spirv::ModuleOp>();
  spirvModule.addPass(createLoomGPUSPIRVBarriers());
  spirvModule.addPass(spirv::createSPIRVLowerABIAttributesPass());
  spirvModule.addPass(spirv::createSPIRVUpdateVCEPass());
  addCleanup(pm);
}

void addCudaLowering(OpPassManager &pm,
                     const GPUKernelPipelineOptions &options) {
  for (const std::string &chip : options.chips) {
    GpuNVVMAttachTargetOptions nvvm;
    nvvm.chip = chip;
    nvvm.features = ptxFeaturesOf(chip).str();
    nvvm.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(nvvm));
  }
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(createLoomGPUNVVMForms());
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  nvvm.indexBitwidth = 64;
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
  // NVVM ops with no LLVM intrinsic (wgmma.mma_async) as inline PTX.
  pm.addNestedPass<mlir::gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

} // namespace

StringRef loom::codegen::gpu::ptxFeaturesOf(StringRef chip) {
  for (const Chip &c : kChips)
    if (chip == c.name)
      return c.ptx;
  return "";
}

std::string loom::codegen::gpu::supportedChips() {
  std::string out;
  for (const Chip &c : kChips)
    out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

void loom::codegen::gpu::addSelectionClass(
    OpPassManager &pm, const GPUKernelPipelineOptions &options) {
  LoomGPUMapSelectionsOptions selections;
  selections.blockSize = options.blockSize;
  pm.addPass(createLoomGPUMapSelections(selections));
}

void loom::codegen::gpu::addLinalgStage(
    OpPassManager &pm, const GPUKernelPipelineOptions &options) {
  // The selection class maps top-k, NMS and nonzero on tensors, before
  // they lower to single-thread scf loops (none with generic-only).
  if (!options.genericOnly)
    addSelectionClass(pm, options);
  addTGToLinalg(pm);
  // Transposes fused into the ops that read them (a product reading a
  // transposed operand in place).
  pm.addPass(createLoomGPUFoldTransposes());
  pm.addPass(createLinalgElementwiseOpFusionPass());
  addCleanup(pm);
}

void loom::codegen::gpu::addBufferizeStage(OpPassManager &pm,
                                           const GPUKernelPipelineOptions &) {
  addBufferizeToOutParams(pm);
  addCleanup(pm);
}

void loom::codegen::gpu::addRecurrenceClass(
    OpPassManager &pm, const GPUKernelPipelineOptions &options) {
  LoomGPUMapRecurrencesOptions recurrences;
  recurrences.blockSize = options.blockSize;
  pm.addPass(createLoomGPUMapRecurrences(recurrences));
}

void loom::codegen::gpu::addMatmulClass(
    OpPassManager &pm, const GPUKernelPipelineOptions &options) {
  LoomGPUMapMatmulsOptions matmuls;
  matmuls.largeTileBlocks = options.largeTileBlocks;
  matmuls.tensorCores = options.api.getValue() == DeviceAPI::Cuda;
  matmuls.emulateTensorCores = options.emulateTensorCores;
  matmuls.wgmma = options.wgmma;
  pm.addPass(createLoomGPUMapMatmuls(matmuls));
}

void loom::codegen::gpu::addConvClass(OpPassManager &pm,
                                      const GPUKernelPipelineOptions &options) {
  LoomGPUMapConvsOptions convs;
  convs.largeTileBlocks = options.largeTileBlocks;
  convs.tensorCores = options.api.getValue() == DeviceAPI::Cuda;
  convs.emulateTensorCores = options.emulateTensorCores;
  convs.wgmma = options.wgmma;
  pm.addPass(createLoomGPUMapConvs(convs));
}

/// Whether the row classes run: they need 32 threads or more per
/// workgroup (a block size past 1024 is loom-gpu-map-to-launches's error).
static bool rowClassesRun(const GPUKernelPipelineOptions &options) {
  return options.blockSize >= 32 && options.blockSize <= 1024;
}

void loom::codegen::gpu::addRowGroupClass(
    OpPassManager &pm, const GPUKernelPipelineOptions &options) {
  if (!rowClassesRun(options))
    return;
  LoomGPUMapRowGroupsOptions groups;
  groups.blockSize = options.blockSize;
  pm.addPass(createLoomGPUMapRowGroups(groups));
}

void loom::codegen::gpu::addRowReductionClass(
    OpPassManager &pm, const GPUKernelPipelineOptions &options) {
  if (!rowClassesRun(options))
    return;
  LoomGPUMapRowReductionsOptions rows;
  rows.blockSize = options.blockSize;
  pm.addPass(createLoomGPUMapRowReductions(rows));
}

void loom::codegen::gpu::addGenericClass(
    OpPassManager &pm, const GPUKernelPipelineOptions &options) {
  pm.addPass(createLoomGPUParallelFirst());
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  pm.addPass(memref::createFoldMemRefAliasOpsPass());
  addCleanup(pm);
  LoomGPUMapToLaunchesOptions launches;
  launches.blockSize = options.blockSize;
  pm.addPass(createLoomGPUMapToLaunches(launches));
}

void loom::codegen::gpu::addMapStage(OpPassManager &pm,
                                     const GPUKernelPipelineOptions &options) {
  pm.addPass(createLoomGPUHoistScratch());
  // One choice of class per op, recorded on it (docs/Codegen/GPU.md,
  // "Kernel classes"); then each class maps the ops that record it, and
  // the generic class what is left. Recurrences with generic-only too: no
  // other class maps a sequential loop of structured ops, and inside one
  // the ops are mapped as the generic class maps them.
  LoomGPUSelectKernelClassesOptions select;
  select.blockSize = options.blockSize;
  select.genericOnly = options.genericOnly;
  pm.addPass(createLoomGPUSelectKernelClasses(select));
  addRecurrenceClass(pm, options);
  if (!options.genericOnly) {
    addMatmulClass(pm, options);
    addConvClass(pm, options);
    addRowGroupClass(pm, options);
    addRowReductionClass(pm, options);
  }
  addGenericClass(pm, options);
  pm.addPass(createLowerAffinePass());
  // floordivsi and friends (grouped convolutions' indexing) as the basic
  // integer ops both SPIR-V and NVVM have.
  pm.addPass(arith::createArithExpandOpsPass());
  // TF32 roundings on their bits, now that the tiled classes have read them.
  pm.addPass(createExpandTF32Roundings());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createLoomGPUMergeModules());
  addCleanup(pm);
}

void loom::codegen::gpu::addLowerStage(
    OpPassManager &pm, const GPUKernelPipelineOptions &options) {
  switch (options.api.getValue()) {
  case DeviceAPI::Vulkan:
    return addVulkanLowering(pm);
  case DeviceAPI::Cuda:
    return addCudaLowering(pm, options);
  }
  llvm_unreachable("unknown device API");
}

void loom::codegen::gpu::buildGPUKernelPipeline(
    OpPassManager &pm, const GPUKernelPipelineOptions &options) {
  addLinalgStage(pm, options);
  addBufferizeStage(pm, options);
  addMapStage(pm, options);
  addLowerStage(pm, options);
}

void loom::codegen::gpu::registerGPUCodegenDialects(DialectRegistry &registry) {
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // The staging's vector loads (Tiles.cpp) to LLVM inside convert-gpu-to-
  // nvvm, which lowers every loaded dialect through this interface.
  vector::registerConvertVectorToLLVMInterface(registry);
  spirv::registerSPIRVTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
}

void loom::codegen::gpu::registerGPUCodegenPasses() {
  // Registering a pipeline twice is fatal: once per process.
  static bool registered = false;
  if (registered)
    return;
  registered = true;
  registerCodegenGPUPasses();
  static const NamedStage<GPUKernelPipelineOptions> stages[] = {
      {"loom-gpu-kernel-pipeline",
       "The GPU kernel pipeline: outlined kernels on tg tensors to launches "
       "of SPIR-V or PTX kernels (what loom-compile runs for a GPU target)",
       buildGPUKernelPipeline},
      {"loom-gpu-linalg",
       "GPU kernel stage 1: tg to linalg on tensors, elementwise fusion",
       addLinalgStage},
      {"loom-gpu-bufferize",
       "GPU kernel stage 2: one-shot bufferization, results to out-params",
       addBufferizeStage},
      {"loom-gpu-map",
       "GPU kernel stage 3: scratch to parameters, loop nests to launches, "
       "kernels outlined into one gpu.module",
       addMapStage},
      {"loom-gpu-selection-class",
       "GPU kernel class (in loom-gpu-linalg): tg.topk, tg.nonzero and "
       "tg.non_max_suppression as parallel launches (bitonic sorts, "
       "workgroup scans, IoU bitmasks) within lavapipe's loop limit",
       addSelectionClass},
      {"loom-gpu-recurrence-class",
       "GPU kernel class (in loom-gpu-map): a recurrence (tg.scan's loop "
       "over its steps) as one launch of one workgroup, a barrier after "
       "each op of a step",
       addRecurrenceClass},
      {"loom-gpu-matmul-class",
       "GPU kernel class (in loom-gpu-map): matrix products as 16 x 16 "
       "tiles staged in workgroup memory",
       addMatmulClass},
      {"loom-gpu-conv-class",
       "GPU kernel class (in loom-gpu-map): convolutions as implicit GEMM "
       "over the matrix-product tiles (filter and input patches staged in "
       "workgroup memory)",
       addConvClass},
      {"loom-gpu-row-group-class",
       "GPU kernel class (in loom-gpu-map): runs of ops over the same rows "
       "(a layer norm, a softmax) as one launch of a workgroup per row, a "
       "barrier between two ops",
       addRowGroupClass},
      {"loom-gpu-row-reduction-class",
       "GPU kernel class (in loom-gpu-map): row reductions as a workgroup "
       "per row, subgroup reductions and a workgroup-memory stage",
       addRowReductionClass},
      {"loom-gpu-generic-class",
       "GPU kernel class (in loom-gpu-map): every loop nest left as one "
       "thread per iteration",
       addGenericClass},
      {"loom-gpu-lower",
       "GPU kernel stage 4: the gpu.module to SPIR-V (vulkan) or PTX (cuda)",
       addLowerStage},
  };
  registerStagePipelines<GPUKernelPipelineOptions>(stages);
}
