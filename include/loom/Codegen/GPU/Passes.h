//===- Passes.h - GPU code generation: passes and pipeline ------*- C++ -*-===//
//
// Part of Loom. The GPU kernel pipeline (docs/Codegen/GPU.md): the passes of
// Passes.td, and the stages that compose them with upstream passes into
// `loom-gpu-kernel-pipeline`, the pipeline loom-compile runs for a GPU target
// on the module of outlined kernel functions (one per codegen fragment, on
// tg tensors, as the CPU pipeline takes them). Its result: each kernel
// function a host function of `gpu.launch_func` calls with constant launch
// sizes over its parameters, and one gpu.module `loom_kernels` holding every
// kernel, lowered for the device API (a `spirv.module` for Vulkan; a
// `gpu.binary` of PTX per chip for CUDA). Each stage is a named pipeline:
//
//   loom-gpu-linalg     tg ops to linalg on tensors, elementwise fusion
//   loom-gpu-bufferize  one-shot bufferization, results to out-parameters
//   loom-gpu-map        scratch buffers to parameters, linalg ops of a kernel
//                       class and loops to gpu.launch, kernels outlined
//                       into one gpu.module
//   loom-gpu-lower      the gpu.module to SPIR-V (vulkan) or PTX (cuda)
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CODEGEN_GPU_PASSES_H
#define LOOM_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace loom::codegen::gpu {

#define GEN_PASS_DECL
#include "loom/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Codegen/GPU/Passes.h.inc"

/// The programming interface the kernels are lowered for.
enum class DeviceAPI {
  /// SPIR-V compute shaders for Vulkan 1.3 (storage buffers of descriptor
  /// set 0, subgroups of any width).
  Vulkan,
  /// PTX for NVIDIA GPUs, one per chip (NVVM, bare-pointer parameters).
  Cuda,
};

/// The gpu.module every kernel is outlined into (loom-gpu-merge-modules).
constexpr const char *kKernelModuleName = "loom_kernels";

/// The options of `loom-gpu-kernel-pipeline` and of each of its stages. The
/// GPU targets (include/loom/Target/Target.h) set api and chips.
struct GPUKernelPipelineOptions
    : public mlir::PassPipelineOptions<GPUKernelPipelineOptions> {
  Option<DeviceAPI> api{
      *this, "api", llvm::cl::desc("The device API the kernels are for"),
      llvm::cl::init(DeviceAPI::Vulkan),
      llvm::cl::values(
          clEnumValN(DeviceAPI::Vulkan, "vulkan", "SPIR-V for Vulkan 1.3"),
          clEnumValN(DeviceAPI::Cuda, "cuda", "PTX for NVIDIA GPUs"))};
  ListOption<std::string> chips{
      *this, "chips",
      llvm::cl::desc("cuda: the chips to generate PTX for (sm_80, sm_90a; "
                     "validated by the target, not here)")};
  Option<std::string> toolkit{
      *this, "toolkit", llvm::cl::desc("cuda: the CUDA toolkit (libdevice)"),
      llvm::cl::init("/usr/local/cuda")};
  Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of a mapped loop nest"),
      llvm::cl::init(128)};
  Option<bool> genericOnly{
      *this, "generic-only",
      llvm::cl::desc("Map every loop nest in the generic class (one thread "
                     "per iteration), for comparison with the kernel "
                     "classes"),
      llvm::cl::init(false)};
  Option<int64_t> largeTileBlocks{
      *this, "large-tile-blocks",
      llvm::cl::desc("The tiled products and convolutions take 64 x 64 "
                     "output tiles where that makes at least this many "
                     "workgroups, else 16 x 16 (negative: always 16 x 16); "
                     "tensor-core products 64 x 64, else 32 x 32"),
      llvm::cl::init(264)};
  Option<bool> emulateTensorCores{
      *this, "emulate-tensor-cores",
      llvm::cl::desc("Products in bf16 or f16 take the tensor-core form on "
                     "any API, each mma.sync computed through workgroup "
                     "memory (to check the form where no GPU is: lavapipe)"),
      llvm::cl::init(false)};
  Option<bool> wgmma{
      *this, "wgmma",
      llvm::cl::desc("bf16 and f16 products on tensor cores take the "
                     "warpgroup form (wgmma.mma_async; CUDA with every chip "
                     "sm_90a, or with emulate-tensor-cores)"),
      llvm::cl::init(false)};
};

/// The PTX ISA version a chip's code is generated with: `+ptx<N>` for
/// nvvm-attach-target, or an empty string for a chip the pipeline does not
/// support (CUDA 13's ptxas supports sm_75 and later; Loom: sm_80, sm_86,
/// sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_120). The one list of chips.
llvm::StringRef ptxFeaturesOf(llvm::StringRef chip);
/// The supported chips, for messages: "sm_80, sm_86, ...".
std::string supportedChips();

/// The linalg stage: the selection class (not with generic-only), then tg
/// to linalg.
void addLinalgStage(mlir::OpPassManager &pm,
                    const GPUKernelPipelineOptions &options);
/// The selection class (docs/Codegen/GPU.md, "Selections"): top-k, NMS and
/// nonzero on tg tensors as parallel launches, before tg to linalg.
void addSelectionClass(mlir::OpPassManager &pm,
                       const GPUKernelPipelineOptions &options);
void addBufferizeStage(mlir::OpPassManager &pm,
                       const GPUKernelPipelineOptions &options);
void addMapStage(mlir::OpPassManager &pm,
                 const GPUKernelPipelineOptions &options);
/// The kernel classes the map stage runs (docs/Codegen/GPU.md, "Kernel
/// classes"), each a named pipeline too: recurrences (always: no other
/// class maps a sequential loop of structured ops), matrix products,
/// convolutions, row groups and row reductions (none where block-size is
/// below 32 or above 1024), and the generic class, which maps every loop nest the others left.
void addRecurrenceClass(mlir::OpPassManager &pm,
                        const GPUKernelPipelineOptions &options);
void addMatmulClass(mlir::OpPassManager &pm,
                    const GPUKernelPipelineOptions &options);
void addConvClass(mlir::OpPassManager &pm,
                  const GPUKernelPipelineOptions &options);
void addRowGroupClass(mlir::OpPassManager &pm,
                      const GPUKernelPipelineOptions &options);
void addRowReductionClass(mlir::OpPassManager &pm,
                          const GPUKernelPipelineOptions &options);
void addGenericClass(mlir::OpPassManager &pm,
                     const GPUKernelPipelineOptions &options);
void addLowerStage(mlir::OpPassManager &pm,
                   const GPUKernelPipelineOptions &options);

/// Every stage in order: `loom-gpu-kernel-pipeline`, what loom-compile runs
/// for a GPU target.
void buildGPUKernelPipeline(mlir::OpPassManager &pm,
                            const GPUKernelPipelineOptions &options);

/// Registers what the pipeline needs in a context beyond the dialects: the
/// NVVM and SPIR-V target attributes' serialisation, and the translations
/// of the LLVM, NVVM and GPU dialects to LLVM IR.
void registerGPUCodegenDialects(mlir::DialectRegistry &registry);

/// Registers the passes of Passes.td, `loom-gpu-kernel-pipeline`, one
/// named pipeline per stage (`loom-gpu-linalg`, ..., `loom-gpu-lower`) and
/// one per kernel class (`loom-gpu-matmul-class`, `loom-gpu-conv-class`,
/// `loom-gpu-row-group-class`, `loom-gpu-row-reduction-class`,
/// `loom-gpu-generic-class`).
void registerGPUCodegenPasses();

} // namespace loom::codegen::gpu

#endif // LOOM_CODEGEN_GPU_PASSES_H
