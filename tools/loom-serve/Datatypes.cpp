//===- Datatypes.cpp - KServe v2 datatypes of Loom's element types --------===//
//
// Part of Loom. See Datatypes.h.
//
//===----------------------------------------------------------------------===//

#include "Datatypes.h"

using namespace loom;

llvm::StringRef serve::kserveDatatype(ElemKind kind) {
  switch (kind) {
  case ElemKind::F64:
    return "FP64";
  case ElemKind::F32:
    return "FP32";
  case ElemKind::F16:
    return "FP16";
  case ElemKind::BF16:
    return "BF16";
  case ElemKind::I64:
    return "INT64";
  case ElemKind::I32:
    return "INT32";
  case ElemKind::I1:
    return "BOOL";
  }
  return "";
}

std::optional<ElemKind> serve::elemKindOfKserve(llvm::StringRef name) {
  for (const ElementTypeInfo &info : allElementTypes())
    if (kserveDatatype(info.kind) == name)
      return info.kind;
  return std::nullopt;
}
