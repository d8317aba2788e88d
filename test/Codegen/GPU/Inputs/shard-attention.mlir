// tg.shard_attention's generated-code form (lib/Conversion/TGToLinalg/
// Attention.cpp) for test/Codegen/GPU/shard-attention-vulkan.test and
// test/Compiler/shard-attention-codegen.test: q, k and v are random
// arguments, the live lengths and shards constants. Each returns the shard's
// output and its log-sum-exp.

// Decode with grouped queries (8 query heads on 2 key/value heads), shard 1
// of 2 (positions 1, 3, 5, ...), two sequences of different live lengths.
func.func @shard_decode_gqa(%q: tensor<2x8x1x32xf32>, %k: tensor<2x2x48x32xf32>, %v: tensor<2x2x48x32xf32>) -> (tensor<2x8x1x32xf32>, tensor<2x8x1xf32>) {
  %len = tg.constant dense<[90, 7]> : tensor<2xi64>
  %shard = tg.constant dense<1> : tensor<i64>
  %o, %lse = tg.shard_attention %q, %k, %v, %len, %shard {scale = 0.17677669529663687 : f64, causal = true, shards = 2 : i64} : (tensor<2x8x1x32xf32>, tensor<2x2x48x32xf32>, tensor<2x2x48x32xf32>, tensor<2xi64>, tensor<i64>) -> (tensor<2x8x1x32xf32>, tensor<2x8x1xf32>)
  return %o, %lse : tensor<2x8x1x32xf32>, tensor<2x8x1xf32>
}

// Shard 5 of 3 (clamped to 2: positions 2, 5, 8, ...) over live lengths 1
// (the shard holds none: output 0, log-sum-exp -inf), 60 (every position),
// -3 (clamped to 0) and 100 (clamped to 60).
func.func @shard_edges(%q: tensor<4x2x1x16xf32>, %k: tensor<4x2x20x16xf32>, %v: tensor<4x2x20x16xf32>) -> (tensor<4x2x1x16xf32>, tensor<4x2x1xf32>) {
  %len = tg.constant dense<[1, 60, -3, 100]> : tensor<4xi64>
  %shard = tg.constant dense<5> : tensor<i64>
  %o, %lse = tg.shard_attention %q, %k, %v, %len, %shard {scale = 0.25 : f64, causal = true, shards = 3 : i64} : (tensor<4x2x1x16xf32>, tensor<4x2x20x16xf32>, tensor<4x2x20x16xf32>, tensor<4xi64>, tensor<i64>) -> (tensor<4x2x1x16xf32>, tensor<4x2x1xf32>)
  return %o, %lse : tensor<4x2x1x16xf32>, tensor<4x2x1xf32>
}

// A causal prefill of 12 queries (positions 3 to 14 of a live length of
// 15) over shard 0 of 2 holding 8 keys: more queries than the shard's keys,
// the first queries seeing one or two of them.
func.func @shard_prefill(%q: tensor<1x4x12x32xf32>, %k: tensor<1x2x8x32xf32>, %v: tensor<1x2x8x32xf32>) -> (tensor<1x4x12x32xf32>, tensor<1x4x12xf32>) {
  %len = tg.constant dense<15> : tensor<i64>
  %shard = tg.constant dense<0> : tensor<i64>
  %o, %lse = tg.shard_attention %q, %k, %v, %len, %shard {scale = 0.17677669529663687 : f64, causal = true, shards = 2 : i64} : (tensor<1x4x12x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>, tensor<i64>, tensor<i64>) -> (tensor<1x4x12x32xf32>, tensor<1x4x12xf32>)
  return %o, %lse : tensor<1x4x12x32xf32>, tensor<1x4x12xf32>
}

// Shard 1 of 4 whose keys past the live length (positions 41 and on: keys
// 10 and on) hold infinities, not causal: the result must not read them.
func.func @shard_unwritten(%q: tensor<1x2x3x16xf32>, %k: tensor<1x1x10x16xf32>, %v: tensor<1x1x10x16xf32>) -> (tensor<1x2x3x16xf32>, tensor<1x2x3xf32>) {
  %inf = tg.constant dense<0x7F800000> : tensor<1x1x6x16xf32>
  %kc = tg.concat %k, %inf {axis = 2 : i64} : (tensor<1x1x10x16xf32>, tensor<1x1x6x16xf32>) -> tensor<1x1x16x16xf32>
  %vc = tg.concat %v, %inf {axis = 2 : i64} : (tensor<1x1x10x16xf32>, tensor<1x1x6x16xf32>) -> tensor<1x1x16x16xf32>
  %len = tg.constant dense<41> : tensor<i64>
  %shard = tg.constant dense<1> : tensor<i64>
  %o, %lse = tg.shard_attention %q, %kc, %vc, %len, %shard {scale = 0.25 : f64, shards = 4 : i64} : (tensor<1x2x3x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>, tensor<i64>, tensor<i64>) -> (tensor<1x2x3x16xf32>, tensor<1x2x3xf32>)
  return %o, %lse : tensor<1x2x3x16xf32>, tensor<1x2x3xf32>
}
