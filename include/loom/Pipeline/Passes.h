//===- Passes.h - Pipeline partitioning passes ------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINE_PASSES_H
#define LOOM_PIPELINE_PASSES_H

#include "loom/Dialect/TG/IR/TGDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::pipeline {

#define GEN_PASS_DECL
#include "loom/Pipeline/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Pipeline/Passes.h.inc"

} // namespace loom::pipeline

#endif // LOOM_PIPELINE_PASSES_H
