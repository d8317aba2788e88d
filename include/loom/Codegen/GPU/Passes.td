//===- Passes.td - GPU code generation passes ---------------*- tablegen -*-===//
//
// Part of Loom. The passes of the GPU kernel pipeline (lib/Codegen/GPU,
// docs/Codegen/GPU.md) that upstream MLIR does not have: they turn the
// bufferized kernels of codegen fragments into gpu.launch_func calls of
// gpu.func kernels with static launch sizes, in one gpu.module. The pipeline
// that composes them with upstream passes is C++ (Passes.h,
// `--loom-gpu-kernel-pipeline`). Alphabetical.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CODEGEN_GPU_PASSES_TD
#define LOOM_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomGPUHoistScratch : Pass<"loom-gpu-hoist-scratch", "mlir::ModuleOp"> {
  let summary = "Turn a kernel function's temporary buffers into parameters";
  let description = [{
    On bufferized kernel functions (one per codegen fragment): every
    statically shaped `memref.alloc` in a function's body becomes a new
    parameter appended after the existing ones (its deallocations are
    dropped), and the function records the bytes of each in the
    `loom.scratch` array attribute, in parameter order. A GPU kernel cannot
    allocate device memory: the schedule gives each scratch parameter an
    arena slice of the device. Every `memref.copy` becomes a `linalg.copy`
    (so that it is mapped to threads like every other linalg op). A dynamic
    allocation is an error.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LoomGPUMapToLaunches : Pass<"loom-gpu-map-to-launches", "mlir::ModuleOp"> {
  let summary = "Map each top-level loop nest of a kernel function to a gpu.launch";
  let description = [{
    On kernel functions after `convert-linalg-to-parallel-loops`: each
    top-level `scf.parallel` with constant bounds becomes one `gpu.launch`
    whose threads each run one iteration (the iteration space linearised,
    `block-size` threads per block, blocks along x and then y so that no
    grid dimension exceeds 65535, a guard for the last block), and each run
    of other top-level ops that touch memory (a sequential loop: a full
    reduction; the loads and stores of a loop canonicalised away), with the
    pure ops computing on their values, becomes a `gpu.launch` of one
    thread. A parallel loop that uses a value such a run computes is an
    error. Pure ops the body
    uses (constants, views of the parameters) are cloned into it, so that
    a launch captures only the function's parameters. Launch sizes are
    constants: what `gpu-kernel-outlining` records as known sizes and the
    schedule writes into `gpu.dispatch` steps.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "Threads per block (at most 1024)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def LoomGPUMergeModules : Pass<"loom-gpu-merge-modules", "mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    After `gpu-kernel-outlining` (one gpu.module per launch): moves every
    gpu.func into the gpu.module `loom_kernels` and points each
    `gpu.launch_func` at it, so that a device image is one module whose
    entry points are the kernels (one SPIR-V module, one PTX module per
    chip). Each kernel is renamed after the module outlining put it in
    (`<function>_kernel`, `<function>_kernel_0`, ...: unique).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LoomGPUSPIRVEntryPoints : Pass<"loom-gpu-spirv-entry-points", "mlir::ModuleOp"> {
  let summary = "Give each kernel the SPIR-V entry point ABI of its block size";
  let description = [{
    Before `convert-gpu-to-spirv`, which makes only kernels with a
    `spirv.entry_point_abi` entry points: sets it on every gpu.func kernel
    from its `known_block_size` (what outlining recorded from the launch's
    constant sizes), as the workgroup size of the entry point's LocalSize
    execution mode. A kernel without known block sizes is an error.
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

#endif // LOOM_CODEGEN_GPU_PASSES_TD
