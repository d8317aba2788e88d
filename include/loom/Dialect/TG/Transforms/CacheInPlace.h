//===- CacheInPlace.h - A concatenated KV cache made a tied one -*- C++ -*-===//
//
// Part of Loom. --tg-cache-in-place (docs/Decoding.md "Exports with a
// concatenated cache"): rewrites the `present = concat(past, new)` cache of
// a decoder exported to ONNX into a cache of fixed capacity updated in place
// (tg.update_slice, tg.tied_result) read by tg.attention up to a run-time
// live length. Registered in C++ (no Passes.td entry), so it is documented
// by hand in docs/Decoding.md.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_CACHEINPLACE_H
#define LOOM_DIALECT_TG_TRANSFORMS_CACHEINPLACE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace loom::safetensors {
class File;
} // namespace loom::safetensors

namespace loom::tg {

/// --tg-cache-in-place with caches of \p capacity positions, the live
/// length an i64 input `past_length` of rank 0 or, with \p perSequence, [B].
std::unique_ptr<mlir::Pass> createTGCacheInPlacePass(int64_t capacity,
                                                     bool perSequence = false);

/// Runs --tg-cache-in-place on every function of \p module: what
/// loom-compile --cache-in-place=C and loom-translate --cache-in-place=C do
/// to an imported model. With \p weights, small computations on weights
/// are folded first (--tg-fold-weights up to 1 MiB a result): an exporter's
/// causal mask sliced from a large table stored as an initializer (GPT-2's
/// `bias`, 1024 x 1024) becomes the constant the pass reads. Its remarks go
/// to the context's handler.
mlir::LogicalResult makeCachesInPlace(mlir::ModuleOp module, int64_t capacity,
                                      const safetensors::File *weights,
                                      bool perSequence = false);

/// Registers --tg-cache-in-place with loom-opt's pass registry.
void registerTGCacheInPlacePass();

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_TRANSFORMS_CACHEINPLACE_H
