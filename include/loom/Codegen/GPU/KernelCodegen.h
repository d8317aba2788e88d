//===- KernelCodegen.h - Lowered GPU kernels as a device image --*- C++ -*-===//
//
// Part of Loom. What the GPU kernel pipeline's result (Passes.h) becomes in
// an artifact (docs/Artifact.md): the device image (one SPIR-V module for
// Vulkan; for CUDA one fatbin holding a cubin per chip, compiled by ptxas,
// and each chip's PTX) and, for each kernel function (codegen fragment),
// the launches it is: the gpu.dispatch steps the schedule writes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CODEGEN_GPU_KERNELCODEGEN_H
#define LOOM_CODEGEN_GPU_KERNELCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <string>
#include <vector>

namespace loom::codegen::gpu {

/// One launch of a kernel function: entry point \p kernel of the image on a
/// grid of \p block-sized workgroups, its parameters the kernel function's
/// parameters \p params, in order (inputs, outputs, then scratch buffers).
struct Launch {
  std::string kernel;
  std::array<int64_t, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  int64_t sharedBytes = 0;
  std::vector<int64_t> params;
};

/// What a kernel function is on a GPU: its launches in order, and the bytes
/// of each of its scratch parameters (after its inputs and outputs).
struct DeviceKernel {
  std::vector<Launch> launches;
  std::vector<int64_t> scratchBytes;
};

/// The launches of the kernel functions \p names of \p lowered.
/// Diagnoses at \p lowered a function that is missing, a launch size that
/// is not a constant, or a launch operand that is not a parameter.
mlir::FailureOr<llvm::StringMap<DeviceKernel>>
collectLaunches(mlir::ModuleOp lowered, llvm::ArrayRef<std::string> names);

/// Vulkan: the one spirv.module of \p lowered, serialised (SPIR-V words,
/// little-endian bytes).
mlir::FailureOr<std::string> serializeSPIRV(mlir::ModuleOp lowered);

/// Vulkan: the capabilities the spirv.modules of \p lowered declare (their
/// version-capabilities-extensions triples, which spirv-update-vce made the
/// ones the code uses), in SPIR-V's spelling ("Float64"), sorted.
std::vector<std::string> spirvCapabilities(mlir::ModuleOp lowered);

/// PTX for one chip.
struct ChipPTX {
  std::string chip, ptx;
};

/// CUDA: the PTX of each chip of the gpu.binary of \p lowered.
mlir::FailureOr<std::vector<ChipPTX>> ptxByChip(mlir::ModuleOp lowered);

/// CUDA: one fatbin of every chip's PTX (\p ptx) compiled by ptxas from
/// \p toolkit to a cubin, bundled with the PTX by fatbinary. Diagnoses at
/// \p loc a tool that fails.
mlir::FailureOr<std::string> buildFatbin(mlir::Location loc,
                                         llvm::ArrayRef<ChipPTX> ptx,
                                         llvm::StringRef toolkit);

} // namespace loom::codegen::gpu

#endif // LOOM_CODEGEN_GPU_KERNELCODEGEN_H
