// RUN: loom-opt %S/../../Tools/loom-generate/Inputs/tiny-decoder.mlir --tg-cache-parallel="ranks=2" | FileCheck %s
// RUN: loom-opt %S/../../Tools/loom-generate/Inputs/tiny-decoder.mlir --tg-cache-parallel="ranks=4" | FileCheck %s --check-prefix=FOUR
// RUN: loom-opt %s -split-input-file -verify-diagnostics --tg-cache-parallel="ranks=2"
// RUN: not loom-opt %s -split-input-file --tg-cache-parallel="ranks=1" 2>&1 | FileCheck %s --check-prefix=ONE
//
// --tg-cache-parallel (docs/CacheParallel.md) on a one-layer decoder (12
// positions): every cache becomes a shard of 12 / 2 + 1 positions, each call's
// rows that this rank owns gathered and written at its offset in the shard,
// the attention a shard attention whose (output, log-sum-exp) every rank
// gathers and merges. Then the programs it refuses.

// CHECK-LABEL: func.func @prefill
// CHECK-SAME: %{{.*}}: tensor<2x2x7x4xf32> {tg.name = "cache.0.key", tg.tied_result = 0 : i64}
// CHECK-SAME: %{{.*}}: tensor<2x2x7x4xf32> {tg.name = "cache.0.value", tg.tied_result = 1 : i64}
// CHECK-SAME: -> (tensor<2x2x7x4xf32> {tg.name = "cache.0.key"}, tensor<2x2x7x4xf32> {tg.name = "cache.0.value"}, tensor<2x16xf32> {tg.name = "logits"})
// CHECK: %[[RANK:.*]] = tg.world_rank {{ *}}{ranks = 2 : i64} : () -> tensor<i64>
// One write plan for the keys and values (their offsets are one value):
// the 6 prompt rows, 3 of them this rank's.
// CHECK-COUNT-1: tg.mod
// CHECK: tg.gather {{.*}} : (tensor<24x4xf32>, tensor<2x2x3xi64>) -> tensor<2x2x3x4xf32>
// CHECK: tg.update_slice %{{.*}} {axis = 2 : i64} : (tensor<2x2x7x4xf32>, tensor<2x2x3x4xf32>, tensor<i64>) -> tensor<2x2x7x4xf32>
// CHECK: tg.gather {{.*}} : (tensor<24x4xf32>, tensor<2x2x3xi64>) -> tensor<2x2x3x4xf32>
// CHECK: tg.update_slice %{{.*}} {axis = 2 : i64} : (tensor<2x2x7x4xf32>, tensor<2x2x3x4xf32>, tensor<i64>) -> tensor<2x2x7x4xf32>
// CHECK: %{{.*}}, %[[LSE:.*]] = tg.shard_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[RANK]] {causal = true, scale = 5.000000e-01 : f64, shards = 2 : i64}
// CHECK-SAME: -> (tensor<2x2x6x4xf32>, tensor<2x2x6xf32>)
// CHECK: tg.concat {{.*}} -> tensor<2x2x6x5xf32>
// CHECK: tg.all_gather %{{.*}} {ranks = 2 : i64} : (tensor<2x2x6x5xf32>) -> tensor<2x2x2x6x5xf32>
// CHECK: tg.reduce_max
// CHECK: tg.exp
// CHECK: tg.reduce_sum
// CHECK: tg.reduce_sum
// CHECK: tg.div
// CHECK-NOT: tg.attention
// CHECK-LABEL: func.func @decode
// CHECK: tg.update_slice %{{.*}} : (tensor<2x2x7x4xf32>, tensor<2x2x1x4xf32>, tensor<2xi64>) -> tensor<2x2x7x4xf32>
// CHECK: tg.shard_attention
// CHECK: tg.all_gather %{{.*}} {ranks = 2 : i64} : (tensor<2x2x1x5xf32>) -> tensor<2x2x2x1x5xf32>
// CHECK-NOT: tg.attention

// FOUR: tensor<2x2x4x4xf32> {tg.name = "cache.0.key"
// FOUR: tg.gather {{.*}} -> tensor<2x2x2x4xf32>
// FOUR: tg.all_gather %{{.*}} {ranks = 4 : i64} : (tensor<2x2x6x5xf32>) -> tensor<4x2x2x6x5xf32>

// ONE: error: --tg-cache-parallel needs ranks=P with P in 2..4096, got 1

// An attention over caches that are inputs, not tied state.
func.func @not_tied(%q: tensor<1x1x1x4xf32>, %k: tensor<1x1x8x4xf32>, %len: tensor<1xi64>) -> tensor<1x1x1x4xf32> {
  // expected-error@+1 {{--tg-cache-parallel: the attention's keys are not a tied cache [B, heads, C, D] updated once along axis 2}}
  %o = tg.attention %q, %k, %k, %len {scale = 1.0 : f64} : (tensor<1x1x1x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1xi64>) -> tensor<1x1x1x4xf32>
  return %o : tensor<1x1x1x4xf32>
}

// -----
// An updated cache read by something else than attentions.
func.func @other_reader(%q: tensor<1x1x1x4xf32>, %new: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>,
                        %k: tensor<1x1x8x4xf32> {tg.tied_result = 0 : i64}, %v: tensor<1x1x8x4xf32> {tg.tied_result = 1 : i64})
    -> (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1x1x8x4xf32>) {
  %k1 = tg.update_slice %k, %new, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %v1 = tg.update_slice %v, %new, %pos {axis = 2 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x8x4xf32>
  %twice = tg.add %k1, %k1 : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
  // expected-error@+1 {{the attention's keys are not a tied cache}}
  %o = tg.attention %q, %k1, %v1, %pos {scale = 1.0 : f64} : (tensor<1x1x1x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1xi64>) -> tensor<1x1x1x4xf32>
  return %k1, %v1, %o, %twice : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x1x4xf32>, tensor<1x1x8x4xf32>
}

// -----
// A capacity that the ranks do not divide.
func.func @capacity(%q: tensor<1x1x1x4xf32>, %new: tensor<1x1x1x4xf32>, %pos: tensor<1xi64>,
                    %k: tensor<1x1x9x4xf32> {tg.tied_result = 0 : i64}, %v: tensor<1x1x9x4xf32> {tg.tied_result = 1 : i64})
    -> (tensor<1x1x9x4xf32>, tensor<1x1x9x4xf32>, tensor<1x1x1x4xf32>) {
  %k1 = tg.update_slice %k, %new, %pos {axis = 2 : i64} : (tensor<1x1x9x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x9x4xf32>
  %v1 = tg.update_slice %v, %new, %pos {axis = 2 : i64} : (tensor<1x1x9x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x1x9x4xf32>
  // expected-error@+1 {{the cache capacity 9 is not a multiple of ranks=2}}
  %o = tg.attention %q, %k1, %v1, %pos {scale = 1.0 : f64} : (tensor<1x1x1x4xf32>, tensor<1x1x9x4xf32>, tensor<1x1x9x4xf32>, tensor<1xi64>) -> tensor<1x1x1x4xf32>
  return %k1, %v1, %o : tensor<1x1x9x4xf32>, tensor<1x1x9x4xf32>, tensor<1x1x1x4xf32>
}
