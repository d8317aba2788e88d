//===- KernelCodegen.h - Codegen fragments to machine code ------*- C++ -*-===//
//
// Part of Loom. Every codegen fragment of a schedule becomes one kernel
// function with the artifact's calling convention (docs/Artifact.md). The
// stages, each a pass or upstream pipeline that loom-opt can run alone:
//
//   outline       each fragment's body as `func.func @kN` on tensors
//   to-linalg     --convert-tg-to-linalg (each op's LinalgLoweringOpInterface)
//   fuse          --linalg-fuse-elementwise-ops
//   parallelize   --loom-parallelize-kernels (scf.forall over the result;
//                 cache tiles of contractions)
//   registers     --loom-register-tiles (vector.contract register tiles)
//   bufferize     one-shot bufferization of whole functions, results to
//                 out-parameters, buffer deallocation
//   range         --loom-forall-to-range ([begin, end) over the forall)
//   to-llvm       loops, vector ops (contractions as outer products),
//                 math approximations, LLVM dialect with bare
//                 pointers for memrefs
//   translate     LLVM IR, plus `void kN(void *const *bufs, i64, i64)`
//                 entry points that unpack the buffer array
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COMPILER_KERNELCODEGEN_H
#define LOOM_COMPILER_KERNELCODEGEN_H

#include "loom/Compiler/Schedule.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/Module.h"

#include <memory>

namespace loom::compiler {

/// Builds a module with one function per codegen step of \p entry (its
/// fragment's body, named after the step's kernel), on tensors.
mlir::OwningOpRef<mlir::ModuleOp> outlineKernels(const EntrySchedule &entry,
                                                 mlir::MLIRContext *context);

/// Adds the stages from to-linalg to to-llvm to \p pm (on a kernels
/// module); \p wideVectors: the target has 512-bit vectors (AVX-512), which
/// sizes the register tiles. Fails, with a diagnostic, when a pass is not
/// registered.
mlir::LogicalResult buildKernelLoweringPipeline(mlir::OpPassManager &pm,
                                                mlir::Location loc,
                                                bool wideVectors);

/// Translates the lowered \p kernels to LLVM IR in \p context, adds the
/// artifact entry points, and sets each kernel step's range in \p entries
/// from the `loom.range` its function carries. Diagnoses failures.
mlir::FailureOr<std::unique_ptr<llvm::Module>>
translateKernels(mlir::ModuleOp kernels, llvm::LLVMContext &context,
                 llvm::MutableArrayRef<EntrySchedule> entries);

} // namespace loom::compiler

#endif // LOOM_COMPILER_KERNELCODEGEN_H
