//===- TGOps.h - Tensor graph operations ------------------------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGOPS_H
#define LOOM_DIALECT_TG_IR_TGOPS_H

#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/IR/TGInterfaces.h"
#include "loom/Dialect/TG/IR/TypeInference.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace loom::tg {
/// Op trait: run the op's `inferReturnTypes` with its location during
/// verification, so that each shape rule reports its own diagnostic.
template <typename ConcreteType>
class VerifyByInference
    : public mlir::OpTrait::TraitBase<ConcreteType, VerifyByInference> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    llvm::SmallVector<mlir::Type> inferred;
    return ConcreteType::inferReturnTypes(
        op->getContext(), op->getLoc(), op->getOperands(),
        op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
        op->getRegions(), inferred);
  }
};

/// Op trait: the op's result type is written in the IR and checked by its
/// verifier (its shape rule), not inferred.
template <typename ConcreteType>
class ResultTypeGiven
    : public mlir::OpTrait::TraitBase<ConcreteType, ResultTypeGiven> {};
} // namespace loom::tg

#include "loom/Dialect/TG/IR/TGEnums.h"

#define GET_ATTRDEF_CLASSES
#include "loom/Dialect/TG/IR/TGAttrs.h.inc"

#define GET_OP_CLASSES
#include "loom/Dialect/TG/IR/TGOps.h.inc"

#endif // LOOM_DIALECT_TG_IR_TGOPS_H
