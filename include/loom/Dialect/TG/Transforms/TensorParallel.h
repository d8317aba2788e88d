//===- TensorParallel.h - A decoder program split by heads and columns -*- C++ -*-===//
//
// Part of Loom. --tg-tensor-parallel="ranks=T" (docs/CacheParallel.md,
// "Tensor parallelism"): Megatron's split of a program over a world of T
// ranks. Every attention's heads (and its key/value caches) and every
// feed-forward's hidden columns are split in T blocks; rank r's program
// holds block r of each, with the weights sliced at compile time, and the
// partial sums of the products that read a split input meet in one
// all-reduce each (tg.all_gather, then a sum in rank order). Each function
// becomes T functions `<name>.rank<r>`. Registered in C++ (no Passes.td
// entry): docs/CacheParallel.md is its reference.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_TENSORPARALLEL_H
#define LOOM_DIALECT_TG_TRANSFORMS_TENSORPARALLEL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace loom::tg {

/// --tg-tensor-parallel over a world of \p ranks ranks (on a module).
std::unique_ptr<mlir::Pass> createTGTensorParallelPass(int64_t ranks);

/// Runs --tg-tensor-parallel on \p module (loom-compile --tensor-parallel=T).
mlir::LogicalResult splitTensors(mlir::ModuleOp module, int64_t ranks);

/// Whether \p fn already runs on a world of ranks (holds a tg.world_rank,
/// tg.all_gather or tg.shard_attention: --tg-cache-parallel's shards or
/// another pass's ranks), which --tg-tensor-parallel and
/// --tg-pipeline-stages do not split again.
bool runsOnWorld(mlir::func::FuncOp fn);

/// The world \p fn already runs on (W: its collectives', 1 without any),
/// its collectives moved into a world of \p outer x W (keeping their
/// groups: the W ranks contiguous) and, for a function of one rank r of W
/// (tg.runs_on_rank without tg.rank_period), its period set to W; failure
/// with an error naming \p pass where its collectives disagree or it runs
/// on one block of its world (tg.rank_count: a pipeline stage).
mlir::FailureOr<int64_t> enlargeWorld(mlir::func::FuncOp fn, int64_t outer,
                                      llvm::StringRef pass);

/// The name of rank \p rank's copy of function \p name: `<name>.rank<r>`.
std::string rankFunctionName(llvm::StringRef name, int64_t rank);

/// Registers --tg-tensor-parallel with loom-opt's pass registry.
void registerTGTensorParallelPass();

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_TRANSFORMS_TENSORPARALLEL_H
