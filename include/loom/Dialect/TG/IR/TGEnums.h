//===- TGEnums.h - Enumerated attributes of tg ------------------*- C++ -*-===//
//
// Part of Loom. The C++ enums generated from TGAttrs.td (activations, resize
// options), usable without the rest of the dialect: the interpreter's kernels
// take these enums, so each vocabulary is one list. The convolution's fused
// `activation` is a subset of Loom's activations (loom/Support/
// Activations.def); TGActivation.h maps it into them.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGENUMS_H
#define LOOM_DIALECT_TG_IR_TGENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "loom/Dialect/TG/IR/TGEnums.h.inc"

#endif // LOOM_DIALECT_TG_IR_TGENUMS_H
