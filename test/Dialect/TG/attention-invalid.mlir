// RUN: loom-opt %s -split-input-file -verify-diagnostics
// Every verifier rule of tg.attention, one planted error per split.

func.func @q_rank(%q: tensor<2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{q must be rank 4 ([B, heads, positions, D]), got 2x8x64}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<2x8x64xf32>
  return
}

// -----

func.func @k_rank(%q: tensor<1x2x1x64xf32>, %k: tensor<2x8x64xf32>, %v: tensor<2x8x64xf32>) {
  // expected-error @+1 {{k must be rank 4}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x1x64xf32>, tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<1x2x1x64xf32>
  return
}

// -----

func.func @element_types(%q: tensor<1x2x1x64xf32>, %k: tensor<1x2x8x64xf64>, %v: tensor<1x2x8x64xf64>) {
  // expected-error @+1 {{k element type 'f64' differs from the input element type 'f32'}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x1x64xf32>, tensor<1x2x8x64xf64>, tensor<1x2x8x64xf64>) -> tensor<1x2x1x64xf32>
  return
}

// -----

func.func @integer_q(%q: tensor<1x2x1x64xi32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float or 64-bit float values}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x1x64xi32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x1x64xi32>
  return
}

// -----

func.func @k_v_shapes(%q: tensor<1x2x1x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x9x64xf32>) {
  // expected-error @+1 {{k 1x2x8x64 and v 1x2x9x64 must have one shape}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x1x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x9x64xf32>) -> tensor<1x2x1x64xf32>
  return
}

// -----

func.func @batch(%q: tensor<2x2x1x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{k's batch 1 differs from q's 2}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<2x2x1x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<2x2x1x64xf32>
  return
}

// -----

func.func @head_size(%q: tensor<1x2x1x32xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{k's head size 64 differs from q's 32}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x1x32xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x1x32xf32>
  return
}

// -----

func.func @groups(%q: tensor<1x6x1x64xf32>, %k: tensor<1x4x8x64xf32>, %v: tensor<1x4x8x64xf32>) {
  // expected-error @+1 {{q's 6 heads are not a multiple of k's 4 heads}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x6x1x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>) -> tensor<1x6x1x64xf32>
  return
}

// -----

func.func @no_kv_heads(%q: tensor<1x4x1x64xf32>, %k: tensor<1x0x8x64xf32>, %v: tensor<1x0x8x64xf32>) {
  // expected-error @+1 {{q's 4 heads are not a multiple of k's 0 heads}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x4x1x64xf32>, tensor<1x0x8x64xf32>, tensor<1x0x8x64xf32>) -> tensor<1x4x1x64xf32>
  return
}

// -----

func.func @length_shape(%q: tensor<2x2x1x64xf32>, %k: tensor<2x2x8x64xf32>, %v: tensor<2x2x8x64xf32>, %n: tensor<3xi64>) {
  // expected-error @+1 {{length must have shape [B] = [2] or rank 0, got 3}}
  %0 = tg.attention %q, %k, %v, %n {scale = 0.125 : f64} : (tensor<2x2x1x64xf32>, tensor<2x2x8x64xf32>, tensor<2x2x8x64xf32>, tensor<3xi64>) -> tensor<2x2x1x64xf32>
  return
}

// -----

func.func @length_type(%q: tensor<2x2x1x64xf32>, %k: tensor<2x2x8x64xf32>, %v: tensor<2x2x8x64xf32>, %n: tensor<2xi32>) {
  // expected-error @+1 {{operand #3 must be statically shaped tensor of 64-bit signless integer values, but got 'tensor<2xi32>'}}
  %0 = tg.attention %q, %k, %v, %n {scale = 0.125 : f64} : (tensor<2x2x1x64xf32>, tensor<2x2x8x64xf32>, tensor<2x2x8x64xf32>, tensor<2xi32>) -> tensor<2x2x1x64xf32>
  return
}

// -----

func.func @scale(%q: tensor<1x2x1x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{scale INF is not finite}}
  %0 = tg.attention %q, %k, %v {scale = 0x7FF0000000000000 : f64} : (tensor<1x2x1x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x1x64xf32>
  return
}

// -----

func.func @causal_queries(%q: tensor<1x2x9x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) {
  // expected-error @+1 {{causal attention of 9 queries needs at least as many key positions, k has 8}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : (tensor<1x2x9x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x9x64xf32>
  return
}

// -----

func.func @result_type(%q: tensor<1x2x1x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x64xf32>) {
  // expected-error @+2 {{'tg.attention' op inferred type(s) 'tensor<1x2x1x64xf32>' are incompatible with return type(s) of operation 'tensor<1x2x8x64xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tg.attention %q, %k, %v {scale = 0.125 : f64} : (tensor<1x2x1x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  return
}
