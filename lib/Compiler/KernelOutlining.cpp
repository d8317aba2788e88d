//===- KernelOutlining.cpp - Codegen fragments as kernel functions --------===//
//
// Part of Loom. See KernelOutlining.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/KernelOutlining.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

OwningOpRef<ModuleOp> compiler::outlineKernels(const EntrySchedule &entry,
                                               MLIRContext *context) {
  OpBuilder b(context);
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(kernels->getBody());
  for (const Step &step : entry.steps) {
    const artifact::KernelStep *kernel = step.kernel();
    if (!kernel)
      continue;
    tg::FragmentOp fragment = step.fragment;
    Block &body = fragment.getBody().front();
    auto fn = func::FuncOp::create(
        b, fragment.getLoc(), kernel->name,
        b.getFunctionType(body.getArgumentTypes(), fragment.getResultTypes()));
    Block *block = fn.addEntryBlock();
    IRMapping mapping;
    mapping.map(body.getArguments(), block->getArguments());
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    for (Operation &op : body.without_terminator())
      inner.clone(op, mapping);
    SmallVector<Value> results =
        llvm::map_to_vector(body.getTerminator()->getOperands(),
                            [&](Value v) { return mapping.lookup(v); });
    func::ReturnOp::create(inner, fragment.getLoc(), results);
  }
  return kernels;
}
