//===- ElementTypes.h - The element types of tg tensors ---------*- C++ -*-===//
//
// Part of Loom. ElemKind and the table that maps it to safetensors dtypes
// and ONNX data types, all expanded from ElementTypes.def. The mapping to
// MLIR types is in loom/Dialect/TG/IR/TGTypes.h (this library has no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_ELEMENTTYPES_H
#define LOOM_SUPPORT_ELEMENTTYPES_H

#include "loom/Support/SafeTensors.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace loom {

/// An element type a tg tensor can have.
enum class ElemKind : uint8_t {
#define LOOM_ELEMENT_TYPE(Kind, MLIRName, DType, ONNX, Bits, IsFloat) Kind,
#include "loom/Support/ElementTypes.def"
};

/// Everything Loom knows about one element type.
struct ElementTypeInfo {
  ElemKind kind;
  /// The MLIR builtin type's spelling ("f32", "i1").
  llvm::StringLiteral mlirName;
  safetensors::DType dtype;
  /// onnx::TensorProto::DataType.
  int32_t onnxDataType;
  unsigned bits;
  bool isFloat;
};

/// All element types, in ElementTypes.def order.
llvm::ArrayRef<ElementTypeInfo> allElementTypes();
/// The row of \p kind.
const ElementTypeInfo &elementTypeInfo(ElemKind kind);
/// The element type stored as safetensors \p dtype, if tg has one (I16, I8
/// and U8 files have none).
std::optional<ElemKind> elemKindOfDType(safetensors::DType dtype);
/// The element type of ONNX data type \p onnxDataType, if tg has one.
std::optional<ElemKind> elemKindOfONNX(int32_t onnxDataType);

} // namespace loom

#endif // LOOM_SUPPORT_ELEMENTTYPES_H
