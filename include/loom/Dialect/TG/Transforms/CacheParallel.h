//===- CacheParallel.h - A decoder program sharded by cache position -*- C++ -*-===//
//
// Part of Loom. --tg-cache-parallel="ranks=P" (docs/CacheParallel.md): the
// program of one rank of P that hold a decoder's key/value caches sharded
// round-robin by position, each attending over its shard, the partial
// attentions gathered and merged by their log-sum-exp. Registered in C++
// (no Passes.td entry): docs/CacheParallel.md is its reference.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_CACHEPARALLEL_H
#define LOOM_DIALECT_TG_TRANSFORMS_CACHEPARALLEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace loom::tg {

/// --tg-cache-parallel over a world of \p ranks ranks (on a func.func).
std::unique_ptr<mlir::Pass> createTGCacheParallelPass(int64_t ranks);

/// Runs --tg-cache-parallel on every function of \p module (loom-compile
/// --cache-parallel=P).
mlir::LogicalResult shardCaches(mlir::ModuleOp module, int64_t ranks);

/// Registers --tg-cache-parallel with loom-opt's pass registry.
void registerTGCacheParallelPass();

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_TRANSFORMS_CACHEPARALLEL_H
