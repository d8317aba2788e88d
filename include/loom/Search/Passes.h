//===- Passes.h - Graph superoptimisation passes ----------------*- C++ -*-===//
//
// Part of Loom. --tg-superopt (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_PASSES_H
#define LOOM_SEARCH_PASSES_H

#include "loom/Search/SearchContext.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace loom::search {

#define GEN_PASS_DECL
#include "loom/Search/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "loom/Search/Passes.h.inc"

} // namespace loom::search

#endif // LOOM_SEARCH_PASSES_H
