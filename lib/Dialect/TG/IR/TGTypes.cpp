//===- TGTypes.cpp - Element types of tg tensors as MLIR types ------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace loom;

std::optional<ElemKind> tg::elemKindOf(Type type) {
  Type e = getElementTypeOrSelf(type);
  for (const ElementTypeInfo &info : allElementTypes())
    if (getElementType(e.getContext(), info.kind) == e)
      return info.kind;
  return std::nullopt;
}

Type tg::getElementType(MLIRContext *context, ElemKind kind) {
  Builder b(context);
  switch (kind) {
  case ElemKind::F64:
    return b.getF64Type();
  case ElemKind::F32:
    return b.getF32Type();
  case ElemKind::F16:
    return b.getF16Type();
  case ElemKind::BF16:
    return b.getBF16Type();
  case ElemKind::I64:
  case ElemKind::I32:
  case ElemKind::I1:
    return b.getIntegerType(elementTypeInfo(kind).bits);
  }
  llvm_unreachable("unknown element kind");
}
