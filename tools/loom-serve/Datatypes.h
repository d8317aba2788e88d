//===- Datatypes.h - KServe v2 datatypes of element types -------*- C++ -*-===//
//
// Part of Loom. The KServe v2 protocol's spelling of each element type of
// ElementTypes.def ("FP32", "INT64", "BOOL"), both ways.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_DATATYPES_H
#define LOOM_TOOLS_LOOMSERVE_DATATYPES_H

#include "loom/Support/ElementTypes.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace loom::serve {

/// The KServe v2 datatype of \p kind.
llvm::StringRef kserveDatatype(ElemKind kind);
/// The element type KServe v2 datatype \p name stands for, if Loom has it.
std::optional<ElemKind> elemKindOfKserve(llvm::StringRef name);

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_DATATYPES_H
