//===- TGTraits.h - What kind of computation a tg op is ---------*- C++ -*-===//
//
// Part of Loom. The C++ classes of the traits declared in TGTraits.td (read
// their contracts there).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGTRAITS_H
#define LOOM_DIALECT_TG_IR_TGTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace loom::tg {

#define LOOM_TG_MARKER_TRAIT(Name)                                             \
  template <typename ConcreteType>                                             \
  class Name : public mlir::OpTrait::TraitBase<ConcreteType, Name> {};

LOOM_TG_MARKER_TRAIT(Elementwise)
LOOM_TG_MARKER_TRAIT(Structured)
LOOM_TG_MARKER_TRAIT(ComputesNothing)
LOOM_TG_MARKER_TRAIT(ComputesInRegions)
LOOM_TG_MARKER_TRAIT(CheapToRecompute)
LOOM_TG_MARKER_TRAIT(ResultTypeGiven)
LOOM_TG_MARKER_TRAIT(ReadsWorld)
LOOM_TG_MARKER_TRAIT(KeptUnfolded)
#undef LOOM_TG_MARKER_TRAIT

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

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_TGTRAITS_H
