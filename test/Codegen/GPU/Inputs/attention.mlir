// tg.attention's generated-code form (lib/Conversion/TGToLinalg/Attention.cpp)
// for test/Codegen/GPU/attention-*.test and test/Compiler/attention-codegen.test:
// q, k and v are random arguments, the live lengths constants.

// Decode with grouped queries (8 query heads on 2 key/value heads), two
// sequences of different live lengths in a cache of 96 positions.
func.func @decode_gqa(%q: tensor<2x8x1x32xf32>, %k: tensor<2x2x96x32xf32>, %v: tensor<2x2x96x32xf32>) -> tensor<2x8x1x32xf32> {
  %len = tg.constant dense<[90, 7]> : tensor<2xi64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.17677669529663687 : f64, causal = true} : (tensor<2x8x1x32xf32>, tensor<2x2x96x32xf32>, tensor<2x2x96x32xf32>, tensor<2xi64>) -> tensor<2x8x1x32xf32>
  return %o : tensor<2x8x1x32xf32>
}

// Live length 1 (the first decode step), the full capacity, and lengths
// outside [0, capacity] (clamped: 0 sees no key and gives zeros).
func.func @decode_edges(%q: tensor<4x2x1x16xf32>, %k: tensor<4x2x40x16xf32>, %v: tensor<4x2x40x16xf32>) -> tensor<4x2x1x16xf32> {
  %len = tg.constant dense<[1, 40, -3, 100]> : tensor<4xi64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.25 : f64, causal = true} : (tensor<4x2x1x16xf32>, tensor<4x2x40x16xf32>, tensor<4x2x40x16xf32>, tensor<4xi64>) -> tensor<4x2x1x16xf32>
  return %o : tensor<4x2x1x16xf32>
}

// Causal prefill without a length (L = the capacity), grouped queries.
func.func @prefill(%q: tensor<1x4x37x32xf32>, %k: tensor<1x2x37x32xf32>, %v: tensor<1x2x37x32xf32>) -> tensor<1x4x37x32xf32> {
  %o = tg.attention %q, %k, %v {scale = 0.17677669529663687 : f64, causal = true} : (tensor<1x4x37x32xf32>, tensor<1x2x37x32xf32>, tensor<1x2x37x32xf32>) -> tensor<1x4x37x32xf32>
  return %o : tensor<1x4x37x32xf32>
}

// A prompt of 20 into a cache of 64 with 10 positions already live, one
// sequence: L = 30, the queries are positions 10..29.
func.func @prefill_cached(%q: tensor<1x2x20x32xf32>, %k: tensor<1x1x64x32xf32>, %v: tensor<1x1x64x32xf32>) -> tensor<1x2x20x32xf32> {
  %len = tg.constant dense<30> : tensor<i64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.17677669529663687 : f64, causal = true} : (tensor<1x2x20x32xf32>, tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32>, tensor<i64>) -> tensor<1x2x20x32xf32>
  return %o : tensor<1x2x20x32xf32>
}

// Not causal, a head size of 40, a live length below the capacity.
func.func @odd_head(%q: tensor<1x3x7x40xf32>, %k: tensor<1x3x50x40xf32>, %v: tensor<1x3x50x40xf32>) -> tensor<1x3x7x40xf32> {
  %len = tg.constant dense<44> : tensor<i64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.3 : f64} : (tensor<1x3x7x40xf32>, tensor<1x3x50x40xf32>, tensor<1x3x50x40xf32>, tensor<i64>) -> tensor<1x3x7x40xf32>
  return %o : tensor<1x3x7x40xf32>
}

// A cache whose positions past the live length hold infinities (what an
// unwritten cache may hold): the interpreter never reads them, and neither
// may the result (0 * inf would be NaN).
func.func @unwritten(%q: tensor<1x2x1x16xf32>, %k: tensor<1x1x10x16xf32>, %v: tensor<1x1x10x16xf32>) -> tensor<1x2x1x16xf32> {
  %inf = tg.constant dense<0x7F800000> : tensor<1x1x6x16xf32>
  %kc = tg.concat %k, %inf {axis = 2 : i64} : (tensor<1x1x10x16xf32>, tensor<1x1x6x16xf32>) -> tensor<1x1x16x16xf32>
  %vc = tg.concat %v, %inf {axis = 2 : i64} : (tensor<1x1x10x16xf32>, tensor<1x1x6x16xf32>) -> tensor<1x1x16x16xf32>
  %len = tg.constant dense<10> : tensor<i64>
  %o = tg.attention %q, %kc, %vc, %len {scale = 0.25 : f64, causal = true} : (tensor<1x2x1x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>, tensor<i64>) -> tensor<1x2x1x16xf32>
  return %o : tensor<1x2x1x16xf32>
}
