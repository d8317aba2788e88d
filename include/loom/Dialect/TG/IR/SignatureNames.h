//===- SignatureNames.h - The names of a function's inputs and outputs -*- C++
//-*-===//
//
// Part of Loom. A function's argument or result is named by its `tg.name`
// attribute (the ONNX importer's and loom-zoo's names: `input_ids`,
// `cache.0.key`, `logits`), else by its position (`arg3`, `result0`). The
// artifact's manifest names an entry's inputs and outputs so
// (docs/Artifact.md), and the tools that match an entry with its source
// function match by these names.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_SIGNATURENAMES_H
#define LOOM_DIALECT_TG_IR_SIGNATURENAMES_H

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/Twine.h"

#include <string>

namespace loom::tg {

/// The name of argument or result \p i with attributes \p attrs: its
/// `tg.name`, else \p fallback ("arg" or "result") and \p i.
inline std::string signatureName(mlir::DictionaryAttr attrs,
                                 llvm::StringRef fallback, unsigned i) {
  if (attrs)
    if (auto name = attrs.getAs<mlir::StringAttr>("tg.name"))
      return name.getValue().str();
  return (fallback + llvm::Twine(i)).str();
}

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_SIGNATURENAMES_H
