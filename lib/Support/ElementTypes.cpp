//===- ElementTypes.cpp - The element types of tg tensors -----------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/ElementTypes.h"

#include "llvm/ADT/STLExtras.h"

using namespace loom;

static constexpr ElementTypeInfo kElementTypes[] = {
#define LOOM_ELEMENT_TYPE(Kind, MLIRName, STDType, ONNX, Bits, IsFloat)        \
  {ElemKind::Kind, MLIRName, safetensors::DType::STDType, ONNX, Bits, IsFloat},
#include "loom/Support/ElementTypes.def"
};

llvm::ArrayRef<ElementTypeInfo> loom::allElementTypes() {
  return kElementTypes;
}

const ElementTypeInfo &loom::elementTypeInfo(ElemKind kind) {
  return kElementTypes[static_cast<unsigned>(kind)];
}

std::optional<ElemKind> loom::elemKindOfDType(safetensors::DType dtype) {
  for (const ElementTypeInfo &info : kElementTypes)
    if (info.dtype == dtype)
      return info.kind;
  return std::nullopt;
}

std::optional<ElemKind> loom::elemKindOfONNX(int32_t onnxDataType) {
  for (const ElementTypeInfo &info : kElementTypes)
    if (info.onnxDataType == onnxDataType)
      return info.kind;
  return std::nullopt;
}
