// RUN: loom-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// tg.world_rank, tg.all_gather and tg.shard_attention (TGWorldOps.td): their
// syntax and the rules their verifiers keep.

// CHECK-LABEL: func.func @world
// CHECK: tg.world_rank {ranks = 4 : i64} : () -> tensor<i64>
// CHECK: tg.all_gather %{{.*}} {ranks = 4 : i64} : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
// CHECK: tg.shard_attention %{{.*}} {causal = true, scale = 1.250000e-01 : f64, shards = 4 : i64}
func.func @world(%x: tensor<2x3xf32>, %q: tensor<1x8x1x64xf32>, %k: tensor<1x2x9x64xf32>, %len: tensor<1xi64>)
    -> (tensor<4x2x3xf32>, tensor<1x8x1x64xf32>, tensor<1x8x1xf32>) {
  %r = tg.world_rank {ranks = 4 : i64} : () -> tensor<i64>
  %all = tg.all_gather %x {ranks = 4 : i64} : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %o, %l = tg.shard_attention %q, %k, %k, %len, %r {scale = 0.125 : f64, causal = true, shards = 4 : i64}
      : (tensor<1x8x1x64xf32>, tensor<1x2x9x64xf32>, tensor<1x2x9x64xf32>, tensor<1xi64>, tensor<i64>)
      -> (tensor<1x8x1x64xf32>, tensor<1x8x1xf32>)
  return %all, %o, %l : tensor<4x2x3xf32>, tensor<1x8x1x64xf32>, tensor<1x8x1xf32>
}

// A world of 2 cache shards x 2 tensor-parallel ranks: the shard's index
// (a group of stride 2) and a gather over the tensor-parallel ranks.
// A gather rooted at rank 1 (a broadcast of its block).
// CHECK-LABEL: func.func @rooted
// CHECK: tg.all_gather %{{.*}} {ranks = 3 : i64, root = 1 : i64} : (tensor<2x3xf32>) -> tensor<3x2x3xf32>
func.func @rooted(%x: tensor<2x3xf32>) -> tensor<3x2x3xf32> {
  %all = tg.all_gather %x {ranks = 3 : i64, root = 1 : i64} : (tensor<2x3xf32>) -> tensor<3x2x3xf32>
  return %all : tensor<3x2x3xf32>
}

// CHECK-LABEL: func.func @groups
// CHECK: tg.world_rank {ranks = 2 : i64, stride = 2 : i64} : () -> tensor<i64>
// CHECK: tg.all_gather %{{.*}} {ranks = 2 : i64, world = 4 : i64} : (tensor<2x3xf32>) -> tensor<2x2x3xf32>
func.func @groups(%x: tensor<2x3xf32>) -> (tensor<i64>, tensor<2x2x3xf32>) {
  %r = tg.world_rank {ranks = 2 : i64, stride = 2 : i64} : () -> tensor<i64>
  %all = tg.all_gather %x {ranks = 2 : i64, world = 4 : i64} : (tensor<2x3xf32>) -> tensor<2x2x3xf32>
  return %r, %all : tensor<i64>, tensor<2x2x3xf32>
}

// -----
func.func @bad_world(%x: tensor<2x3xf32>) -> tensor<2x2x3xf32> {
  // expected-error@+1 {{world 6 is not a multiple of ranks * stride = 4 (0: the group's)}}
  %all = tg.all_gather %x {ranks = 2 : i64, stride = 2 : i64, world = 6 : i64} : (tensor<2x3xf32>) -> tensor<2x2x3xf32>
  return %all : tensor<2x2x3xf32>
}

// -----
func.func @no_stride() -> tensor<i64> {
  // expected-error@+1 {{stride must be at least 1, got 0}}
  %r = tg.world_rank {ranks = 2 : i64, stride = 0 : i64} : () -> tensor<i64>
  return %r : tensor<i64>
}

// -----
func.func @no_ranks() -> tensor<i64> {
  // expected-error@+1 {{ranks must be at least 1, got 0}}
  %r = tg.world_rank {ranks = 0 : i64} : () -> tensor<i64>
  return %r : tensor<i64>
}

// -----
func.func @gather_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{'tg.all_gather' op inferred type(s) 'tensor<2x2x3xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %all = tg.all_gather %x {ranks = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %all : tensor<2x3xf32>
}

// -----
func.func @lse_shape(%q: tensor<1x8x1x64xf32>, %k: tensor<1x2x9x64xf32>, %len: tensor<1xi64>, %r: tensor<i64>) {
  // expected-error @+2 {{'tg.shard_attention' op inferred type(s) 'tensor<1x8x1x64xf32>', 'tensor<1x8x1xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %o, %l = tg.shard_attention %q, %k, %k, %len, %r {scale = 0.125 : f64, shards = 2 : i64}
      : (tensor<1x8x1x64xf32>, tensor<1x2x9x64xf32>, tensor<1x2x9x64xf32>, tensor<1xi64>, tensor<i64>)
      -> (tensor<1x8x1x64xf32>, tensor<1x8x1x64xf32>)
  return
}

// -----
func.func @heads(%q: tensor<1x3x1x64xf32>, %k: tensor<1x2x9x64xf32>, %len: tensor<1xi64>, %r: tensor<i64>) {
  // expected-error@+1 {{q's 3 heads are not a multiple of k's 2 heads}}
  %o, %l = tg.shard_attention %q, %k, %k, %len, %r {scale = 0.125 : f64, shards = 2 : i64}
      : (tensor<1x3x1x64xf32>, tensor<1x2x9x64xf32>, tensor<1x2x9x64xf32>, tensor<1xi64>, tensor<i64>)
      -> (tensor<1x3x1x64xf32>, tensor<1x3x1xf32>)
  return
}

// -----
func.func @no_shards(%q: tensor<1x2x1x64xf32>, %k: tensor<1x2x9x64xf32>, %len: tensor<1xi64>, %r: tensor<i64>) {
  // expected-error@+1 {{shards must be at least 1, got 0}}
  %o, %l = tg.shard_attention %q, %k, %k, %len, %r {scale = 0.125 : f64, shards = 0 : i64}
      : (tensor<1x2x1x64xf32>, tensor<1x2x9x64xf32>, tensor<1x2x9x64xf32>, tensor<1xi64>, tensor<i64>)
      -> (tensor<1x2x1x64xf32>, tensor<1x2x1xf32>)
  return
}

// -----

func.func @root_outside(%x: tensor<2x3xf32>) -> tensor<2x2x3xf32> {
  // expected-error @+1 {{root 2 is not a rank of the group (0 .. 1, or -1: every rank)}}
  %all = tg.all_gather %x {ranks = 2 : i64, root = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x2x3xf32>
  return %all : tensor<2x2x3xf32>
}
