// tg.attention's cases for test/Runtime/attention.test: q, k and v are
// random arguments, the live lengths constants.

// Decode with grouped queries (8 query heads on 2 key/value heads), two
// sequences of different live lengths in a cache of 1,024 positions.
func.func @decode_gqa(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x1024x64xf32>, %v: tensor<2x2x1024x64xf32>) -> tensor<2x8x1x64xf32> {
  %len = tg.constant dense<[1000, 37]> : tensor<2xi64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.125 : f64, causal = true} : (tensor<2x8x1x64xf32>, tensor<2x2x1024x64xf32>, tensor<2x2x1024x64xf32>, tensor<2xi64>) -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

// One sequence, one key/value head: fewer tiles than threads, so the keys
// are split across threads and merged by log-sum-exp.
func.func @decode_split(%q: tensor<1x4x1x64xf32>, %k: tensor<1x1x8192x64xf32>, %v: tensor<1x1x8192x64xf32>) -> tensor<1x4x1x64xf32> {
  %len = tg.constant dense<7999> : tensor<i64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.125 : f64, causal = true} : (tensor<1x4x1x64xf32>, tensor<1x1x8192x64xf32>, tensor<1x1x8192x64xf32>, tensor<i64>) -> tensor<1x4x1x64xf32>
  return %o : tensor<1x4x1x64xf32>
}

// Live length 1 (the first decode step) and the full capacity.
func.func @decode_edges(%q: tensor<2x4x1x64xf32>, %k: tensor<2x4x300x64xf32>, %v: tensor<2x4x300x64xf32>) -> tensor<2x4x1x64xf32> {
  %len = tg.constant dense<[1, 300]> : tensor<2xi64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.125 : f64, causal = true} : (tensor<2x4x1x64xf32>, tensor<2x4x300x64xf32>, tensor<2x4x300x64xf32>, tensor<2xi64>) -> tensor<2x4x1x64xf32>
  return %o : tensor<2x4x1x64xf32>
}

// Causal prefill at lengths that are not multiples of the kernel's blocks
// (16 query rows, 64 keys), with grouped queries; length 1; and a length
// operand equal to the capacity.
func.func @prefill_100(%q: tensor<1x4x100x64xf32>, %k: tensor<1x2x100x64xf32>, %v: tensor<1x2x100x64xf32>) -> tensor<1x4x100x64xf32> {
  %o = tg.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : (tensor<1x4x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32>) -> tensor<1x4x100x64xf32>
  return %o : tensor<1x4x100x64xf32>
}

func.func @prefill_1(%q: tensor<1x2x1x64xf32>, %k: tensor<1x2x1x64xf32>, %v: tensor<1x2x1x64xf32>) -> tensor<1x2x1x64xf32> {
  %o = tg.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : (tensor<1x2x1x64xf32>, tensor<1x2x1x64xf32>, tensor<1x2x1x64xf32>) -> tensor<1x2x1x64xf32>
  return %o : tensor<1x2x1x64xf32>
}

func.func @prefill_333(%q: tensor<1x2x333x64xf32>, %k: tensor<1x2x333x64xf32>, %v: tensor<1x2x333x64xf32>) -> tensor<1x2x333x64xf32> {
  %len = tg.constant dense<333> : tensor<i64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.125 : f64, causal = true} : (tensor<1x2x333x64xf32>, tensor<1x2x333x64xf32>, tensor<1x2x333x64xf32>, tensor<i64>) -> tensor<1x2x333x64xf32>
  return %o : tensor<1x2x333x64xf32>
}

// A prompt of 50 into a cache of 256 with 20 positions already live:
// L = 70, the 50 queries are positions 20..69.
func.func @prefill_cached(%q: tensor<2x2x50x64xf32>, %k: tensor<2x1x256x64xf32>, %v: tensor<2x1x256x64xf32>) -> tensor<2x2x50x64xf32> {
  %len = tg.constant dense<[70, 50]> : tensor<2xi64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.125 : f64, causal = true} : (tensor<2x2x50x64xf32>, tensor<2x1x256x64xf32>, tensor<2x1x256x64xf32>, tensor<2xi64>) -> tensor<2x2x50x64xf32>
  return %o : tensor<2x2x50x64xf32>
}

// Head sizes that are no multiple of a vector (40: AVX-512's and AVX2's
// tails), not causal, a live length below the capacity.
func.func @odd_head(%q: tensor<1x3x7x40xf32>, %k: tensor<1x3x90x40xf32>, %v: tensor<1x3x90x40xf32>) -> tensor<1x3x7x40xf32> {
  %len = tg.constant dense<77> : tensor<i64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.3 : f64} : (tensor<1x3x7x40xf32>, tensor<1x3x90x40xf32>, tensor<1x3x90x40xf32>, tensor<i64>) -> tensor<1x3x7x40xf32>
  return %o : tensor<1x3x7x40xf32>
}
