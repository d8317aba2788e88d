//===- ReadOnlyKernelInputs.cpp - Kernel arguments are never written ------===//
//
// Part of Loom. See LoomReadOnlyKernelInputs in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMREADONLYKERNELINPUTS
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;

namespace {

struct ReadOnlyKernelInputs
    : public loom::codegen::cpu::impl::LoomReadOnlyKernelInputsBase<
          ReadOnlyKernelInputs> {
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
        if (isa<TensorType>(fn.getArgument(i).getType()))
          fn.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                        readOnly);
    }
  }
};

} // namespace
