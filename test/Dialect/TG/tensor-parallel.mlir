// RUN: loom-opt %S/../../Tools/loom-generate/Inputs/tiny-decoder.mlir --tg-tensor-parallel="ranks=2" | FileCheck %s
// RUN: loom-opt %s -split-input-file -verify-diagnostics --tg-tensor-parallel="ranks=2"
// RUN: not loom-opt %s -split-input-file --tg-tensor-parallel="ranks=1" 2>&1 | FileCheck %s --check-prefix=ONE
//
// --tg-tensor-parallel (docs/CacheParallel.md, "Tensor parallelism") on a
// one-layer decoder (2 heads of 4, a vocabulary of 16): every function
// becomes one per rank; rank 1's holds the second head (columns 4..8 of the
// query, key and value weights, rows 4..8 of the output projection), a
// cache of that head, one all-reduce (a gather summed in rank order) after
// the output projection, and the second half of the vocabulary's columns,
// gathered into the whole logits. Then the programs it refuses.

// CHECK-LABEL: func.func @prefill.rank0
// CHECK-SAME: tensor<2x1x12x4xf32> {tg.name = "cache.0.key", tg.tied_result = 0 : i64}
// CHECK: tg.slice %{{.*}} {limits = array<i64: 8, 4>, starts = array<i64: 0, 0>} : (tensor<8x8xf32>) -> tensor<8x4xf32>
// CHECK-LABEL: func.func @prefill.rank1
// CHECK-LABEL: func.func @decode.rank0
// CHECK-LABEL: func.func @decode.rank1
// CHECK-SAME: %{{.*}}: tensor<2x1x12x4xf32> {tg.name = "cache.0.key", tg.tied_result = 0 : i64}
// CHECK-SAME: %{{.*}}: tensor<2x1x12x4xf32> {tg.name = "cache.0.value", tg.tied_result = 1 : i64}
// CHECK-SAME: -> (tensor<2x1x12x4xf32> {tg.name = "cache.0.key"}, tensor<2x1x12x4xf32> {tg.name = "cache.0.value"}, tensor<2x16xf32> {tg.name = "logits"})
// CHECK-SAME: attributes {tg.runs_on_rank = 1 : i64}
// CHECK-COUNT-3: tg.slice %{{.*}} {limits = array<i64: 8, 8>, starts = array<i64: 0, 4>} : (tensor<8x8xf32>) -> tensor<8x4xf32>
// CHECK: tg.attention {{.*}} : (tensor<2x1x1x4xf32>, tensor<2x1x12x4xf32>, tensor<2x1x12x4xf32>, tensor<2xi64>) -> tensor<2x1x1x4xf32>
// CHECK: tg.slice %{{.*}} {limits = array<i64: 8, 8>, starts = array<i64: 4, 0>} : (tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[PARTIAL:.*]] = tg.matmul %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
// CHECK: %[[ALL:.*]] = tg.all_gather %[[PARTIAL]] {ranks = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x2x8xf32>
// CHECK: %[[SUM:.*]] = tg.reduce_sum %[[ALL]] {axes = array<i64: 0>, keepdims = false}
// CHECK: tg.slice %{{.*}} {limits = array<i64: 8, 16>, starts = array<i64: 0, 8>} : (tensor<8x16xf32>) -> tensor<8x8xf32>
// CHECK: tg.matmul %[[SUM]], %{{.*}} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK: tg.all_gather
// CHECK: tg.transpose %{{.*}} {perm = array<i64: 1, 0, 2>} : (tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
// CHECK: tg.reshape %{{.*}} : (tensor<2x2x8xf32>) -> tensor<2x16xf32>
// CHECK-NOT: func.func @decode(

// ONE: error: --tg-tensor-parallel needs ranks=T with T in 2..4096, got 1

// Key/value heads the ranks do not divide (one head shared by two query
// heads).
func.func @one_kv_head(%x: tensor<1x1x8xf32>, %len: tensor<1xi64>) -> tensor<1x1x2x4xf32> {
  %wq = tg.weight "wq" : tensor<8x8xf32>
  %wk = tg.weight "wk" : tensor<8x4xf32>
  %q0 = tg.matmul %x, %wq : (tensor<1x1x8xf32>, tensor<8x8xf32>) -> tensor<1x1x8xf32>
  %q = tg.reshape %q0 : (tensor<1x1x8xf32>) -> tensor<1x2x1x4xf32>
  %k0 = tg.matmul %x, %wk : (tensor<1x1x8xf32>, tensor<8x4xf32>) -> tensor<1x1x4xf32>
  %k = tg.reshape %k0 : (tensor<1x1x4xf32>) -> tensor<1x1x1x4xf32>
  // expected-error@+1 {{--tg-tensor-parallel: the attention's 1 key/value heads are not a multiple of ranks=2}}
  %o = tg.attention %q, %k, %k, %len {scale = 0.5 : f64} : (tensor<1x2x1x4xf32>, tensor<1x1x1x4xf32>, tensor<1x1x1x4xf32>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  %r = tg.reshape %o : (tensor<1x2x1x4xf32>) -> tensor<1x1x2x4xf32>
  return %r : tensor<1x1x2x4xf32>
}

// -----
// Queries that are an input of the function: the caller holds them whole.
// expected-note@+1 {{here}}
func.func @query_input(%q: tensor<1x2x1x4xf32>, %x: tensor<1x1x8xf32>, %len: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  %wk = tg.weight "wk" : tensor<8x8xf32>
  %k0 = tg.matmul %x, %wk : (tensor<1x1x8xf32>, tensor<8x8xf32>) -> tensor<1x1x8xf32>
  %k = tg.reshape %k0 : (tensor<1x1x8xf32>) -> tensor<1x2x1x4xf32>
  // expected-error@+1 {{--tg-tensor-parallel: the attention cannot be split by heads: input #0 would be split, and it is not state tied to a result}}
  %o = tg.attention %q, %k, %k, %len {scale = 0.5 : f64} : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  return %o : tensor<1x2x1x4xf32>
}

// -----
// Heads whose keys pass a normalisation over the split dimension.
func.func @norm_over_heads(%x: tensor<1x1x8xf32>, %len: tensor<1xi64>) -> tensor<1x2x1x4xf32> {
  %wk = tg.weight "wk" : tensor<8x8xf32>
  %k0 = tg.matmul %x, %wk : (tensor<1x1x8xf32>, tensor<8x8xf32>) -> tensor<1x1x8xf32>
  // expected-note@+1 {{here}}
  %m = tg.reduce_mean %k0 {axes = array<i64: -1>} : (tensor<1x1x8xf32>) -> tensor<1x1x1xf32>
  %c = tg.sub %k0, %m : (tensor<1x1x8xf32>, tensor<1x1x1xf32>) -> tensor<1x1x8xf32>
  %k = tg.reshape %c : (tensor<1x1x8xf32>) -> tensor<1x2x1x4xf32>
  // expected-error@+1 {{the attention cannot be split by heads: 'tg.reduce_mean' would read a split value}}
  %o = tg.attention %k, %k, %k, %len {scale = 0.5 : f64} : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>, tensor<1xi64>) -> tensor<1x2x1x4xf32>
  return %o : tensor<1x2x1x4xf32>
}

// -----
// The attribute the pass sets: a non-negative rank on a function.
// expected-error@+1 {{'tg.runs_on_rank' is a non-negative integer on a function}}
func.func @negative() attributes {tg.runs_on_rank = -1 : i64} {
  return
}

// -----
// The period the cache-parallel pass sets needs a rank.
// expected-error@+1 {{'tg.rank_period' is a positive integer on a function with 'tg.runs_on_rank'}}
func.func @period_alone() attributes {tg.rank_period = 2 : i64} {
  return
}

// -----
// The count the pipeline-stage pass sets (one block of a world) needs a
// period.
// expected-error@+1 {{'tg.rank_count' is a positive integer on a function with 'tg.rank_period'}}
func.func @count_alone() attributes {tg.runs_on_rank = 4 : i64, tg.rank_count = 2 : i64} {
  return
}

// -----
// A program on a world already (--tg-cache-parallel's): split first.
// expected-error@+1 {{--tg-tensor-parallel: the function already runs on a world of ranks; split it before --tg-cache-parallel shards its caches and --tg-pipeline-stages stages it}}
func.func @sharded(%x: tensor<2x3xf32>) -> tensor<2x2x3xf32> {
  %all = tg.all_gather %x {ranks = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x2x3xf32>
  return %all : tensor<2x2x3xf32>
}

// -----
// expected-error@+1 {{--tg-tensor-parallel: nothing in the module splits}}
module {
  func.func @elementwise(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = tg.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
