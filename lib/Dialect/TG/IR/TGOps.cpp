//===- TGOps.cpp - Tensor graph operations
//---------------------------------===//
//
// Part of Loom. The op classes generated from TGOps.td, and the facts their
// family classes define there. Each op's own C++ (type inference entry,
// verifier, folders, evaluation, work, ONNX export) is in the file of its
// family: ConstantOps, ElementwiseOps, LinearOps, PoolingOps,
// DataMovementOps, ResizeOps, ReductionOps; shape rules in TypeInference.cpp.
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace loom::tg;

#define GET_OP_CLASSES
#include "loom/Dialect/TG/IR/TGOps.cpp.inc"
