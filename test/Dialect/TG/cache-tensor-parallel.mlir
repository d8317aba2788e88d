// RUN: loom-opt %S/../../Tools/loom-generate/Inputs/tiny-decoder.mlir --tg-tensor-parallel="ranks=2" --tg-cache-parallel="ranks=3" | FileCheck %s
//
// --tg-tensor-parallel then --tg-cache-parallel (docs/CacheParallel.md, "CP x
// TP"): the one-layer decoder (2 heads of 4, a cache of 12 positions) on a
// world of 3 cache shards x 2 tensor-parallel ranks, world rank w = 2 * shard
// + t. Each tensor-parallel rank's function runs on the world ranks t, t + 2,
// t + 4 (tg.rank_period = 2); it holds its head's cache sharded by position
// (12 / 3 + 1 positions); the shard's index is a group of stride 2, the
// shards' partial attentions are gathered over that group, and the
// all-reduces stay within the tensor-parallel ranks of the shard (stride 1)
// in the world of 6.

// CHECK-LABEL: func.func @prefill.rank0
// CHECK-SAME: tensor<2x1x5x4xf32> {tg.name = "cache.0.key", tg.tied_result = 0 : i64}
// CHECK-SAME: attributes {tg.rank_period = 2 : i64, tg.runs_on_rank = 0 : i64}
// CHECK: tg.world_rank {ranks = 3 : i64, stride = 2 : i64} : () -> tensor<i64>
// CHECK: tg.shard_attention {{.*}}shards = 3 : i64
// CHECK: tg.all_gather %{{.*}} {ranks = 3 : i64, stride = 2 : i64} : (tensor<2x1x6x5xf32>) -> tensor<3x2x1x6x5xf32>
// CHECK: tg.all_gather %{{.*}} {ranks = 2 : i64, world = 6 : i64} : (tensor<2x8xf32>) -> tensor<2x2x8xf32>
// CHECK-LABEL: func.func @prefill.rank1
// CHECK-SAME: attributes {tg.rank_period = 2 : i64, tg.runs_on_rank = 1 : i64}
// CHECK-LABEL: func.func @decode.rank0
// CHECK-LABEL: func.func @decode.rank1
// CHECK-SAME: attributes {tg.rank_period = 2 : i64, tg.runs_on_rank = 1 : i64}
// CHECK-NOT: tg.all_gather %{{.*}} {ranks = 2 : i64} :
