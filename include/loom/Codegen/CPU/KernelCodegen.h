//===- KernelCodegen.h - Lowered CPU kernels to LLVM IR ---------*- C++ -*-===//
//
// Part of Loom. The last step of CPU code generation: the kernels that
// `--loom-cpu-kernel-pipeline` (Passes.h) lowered to the LLVM dialect become
// an LLVM module with the artifact's calling convention (docs/Artifact.md):
// each kernel `kN.impl(ptr..., i64 begin, i64 end)`, internal, its pointers
// `noalias` and its floating point reassociable, behind an entry point
// `void kN(void *const *bufs, i64 begin, i64 end)` that unpacks the buffer
// array.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CODEGEN_CPU_KERNELCODEGEN_H
#define LOOM_CODEGEN_CPU_KERNELCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Module.h"

#include "llvm/ADT/StringSet.h"

#include <memory>
#include <string>

namespace loom::codegen::cpu {

/// Registers the LLVM IR translations translateKernels uses in \p context
/// (once; later calls only read the context): done before compiles run on
/// several threads of one context, so that none of them changes it.
void registerKernelTranslations(mlir::MLIRContext &context);

/// Translates the lowered \p kernels to LLVM IR in \p context and adds the
/// entry points of the kernels \p names; sets \p ranges to the `loom.range`
/// (the iterations the runtime may split over threads) each kernel carries
/// and \p teams to the team kernels (`loom.team`, loom-team-kernels), whose
/// entry points also pass the team, the pointer after the buffers.
/// Diagnoses a kernel that was not generated.
mlir::FailureOr<std::unique_ptr<llvm::Module>>
translateKernels(mlir::ModuleOp kernels, llvm::LLVMContext &context,
                 llvm::ArrayRef<std::string> names,
                 llvm::StringMap<int64_t> &ranges, llvm::StringSet<> &teams);

} // namespace loom::codegen::cpu

#endif // LOOM_CODEGEN_CPU_KERNELCODEGEN_H
