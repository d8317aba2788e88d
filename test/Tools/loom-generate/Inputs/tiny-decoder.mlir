// A one-layer decoder in loom-generate's contract (docs/tools/loom-generate.md):
// a batch of 2 sequences, prompts of up to 6 tokens, a cache of 12
// positions, 2 heads of 4, a vocabulary of 16. The embedding is a gather of
// `wte`; the layer's keys and values are appended to the tied caches
// (tg.update_slice) and read by tg.attention up to a run-time length; the
// logits are a matmul of the last token's hidden state.
module attributes {tg.weights = "tiny-decoder.safetensors"} {
func.func @prefill(%ids: tensor<2x6xi64> {tg.name = "input_ids"},
                   %lengths: tensor<2xi64> {tg.name = "lengths"},
                   %kc: tensor<2x2x12x4xf32> {tg.name = "cache.0.key", tg.tied_result = 0 : i64},
                   %vc: tensor<2x2x12x4xf32> {tg.name = "cache.0.value", tg.tied_result = 1 : i64})
    -> (tensor<2x2x12x4xf32> {tg.name = "cache.0.key"},
        tensor<2x2x12x4xf32> {tg.name = "cache.0.value"},
        tensor<2x16xf32> {tg.name = "logits"}) {
  %wte = tg.weight "wte" : tensor<16x8xf32>
  %wq = tg.weight "wq" : tensor<8x8xf32>
  %wk = tg.weight "wk" : tensor<8x8xf32>
  %wv = tg.weight "wv" : tensor<8x8xf32>
  %wo = tg.weight "wo" : tensor<8x8xf32>
  %wout = tg.weight "wout" : tensor<8x16xf32>
  %x = tg.gather %wte, %ids {axis = 0 : i64} : (tensor<16x8xf32>, tensor<2x6xi64>) -> tensor<2x6x8xf32>
  %q0 = tg.matmul %x, %wq : (tensor<2x6x8xf32>, tensor<8x8xf32>) -> tensor<2x6x8xf32>
  %q1 = tg.reshape %q0 : (tensor<2x6x8xf32>) -> tensor<2x6x2x4xf32>
  %q = tg.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x6x2x4xf32>) -> tensor<2x2x6x4xf32>
  %k0 = tg.matmul %x, %wk : (tensor<2x6x8xf32>, tensor<8x8xf32>) -> tensor<2x6x8xf32>
  %k1 = tg.reshape %k0 : (tensor<2x6x8xf32>) -> tensor<2x6x2x4xf32>
  %k = tg.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x6x2x4xf32>) -> tensor<2x2x6x4xf32>
  %v0 = tg.matmul %x, %wv : (tensor<2x6x8xf32>, tensor<8x8xf32>) -> tensor<2x6x8xf32>
  %v1 = tg.reshape %v0 : (tensor<2x6x8xf32>) -> tensor<2x6x2x4xf32>
  %v = tg.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x6x2x4xf32>) -> tensor<2x2x6x4xf32>
  // The whole padded prompt is written at 0; decode overwrites the padding.
  %zero = tg.constant dense<0> : tensor<i64>
  %kc1 = tg.update_slice %kc, %k, %zero {axis = 2 : i64} : (tensor<2x2x12x4xf32>, tensor<2x2x6x4xf32>, tensor<i64>) -> tensor<2x2x12x4xf32>
  %vc1 = tg.update_slice %vc, %v, %zero {axis = 2 : i64} : (tensor<2x2x12x4xf32>, tensor<2x2x6x4xf32>, tensor<i64>) -> tensor<2x2x12x4xf32>
  // Query i is position i and sees keys 0..i (a live length of 6 for 6
  // queries): a sequence's real tokens never see its padding.
  %bound = tg.constant dense<6> : tensor<i64>
  %a = tg.attention %q, %kc1, %vc1, %bound {scale = 0.5 : f64, causal = true}
      : (tensor<2x2x6x4xf32>, tensor<2x2x12x4xf32>, tensor<2x2x12x4xf32>, tensor<i64>) -> tensor<2x2x6x4xf32>
  %a1 = tg.transpose %a {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x6x4xf32>) -> tensor<2x6x2x4xf32>
  %a2 = tg.reshape %a1 : (tensor<2x6x2x4xf32>) -> tensor<2x6x8xf32>
  %h = tg.matmul %a2, %wo : (tensor<2x6x8xf32>, tensor<8x8xf32>) -> tensor<2x6x8xf32>
  // The hidden state at position lengths[b] - 1: row b * 6 + lengths[b] - 1.
  %hf = tg.reshape %h : (tensor<2x6x8xf32>) -> tensor<12x8xf32>
  %lf = tg.cast %lengths : tensor<2xi64> to tensor<2xf32>
  %rowbase = tg.constant dense<[-1.0, 5.0]> : tensor<2xf32>
  %rowf = tg.add %lf, %rowbase : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %row = tg.cast %rowf : tensor<2xf32> to tensor<2xi64>
  %last = tg.gather %hf, %row {axis = 0 : i64} : (tensor<12x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  %logits = tg.matmul %last, %wout : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  return %kc1, %vc1, %logits : tensor<2x2x12x4xf32>, tensor<2x2x12x4xf32>, tensor<2x16xf32>
}

func.func @decode(%ids: tensor<2x1xi64> {tg.name = "input_ids"},
                  %positions: tensor<2xi64> {tg.name = "positions"},
                  %kc: tensor<2x2x12x4xf32> {tg.name = "cache.0.key", tg.tied_result = 0 : i64},
                  %vc: tensor<2x2x12x4xf32> {tg.name = "cache.0.value", tg.tied_result = 1 : i64})
    -> (tensor<2x2x12x4xf32> {tg.name = "cache.0.key"},
        tensor<2x2x12x4xf32> {tg.name = "cache.0.value"},
        tensor<2x16xf32> {tg.name = "logits"}) {
  %wte = tg.weight "wte" : tensor<16x8xf32>
  %wq = tg.weight "wq" : tensor<8x8xf32>
  %wk = tg.weight "wk" : tensor<8x8xf32>
  %wv = tg.weight "wv" : tensor<8x8xf32>
  %wo = tg.weight "wo" : tensor<8x8xf32>
  %wout = tg.weight "wout" : tensor<8x16xf32>
  %x = tg.gather %wte, %ids {axis = 0 : i64} : (tensor<16x8xf32>, tensor<2x1xi64>) -> tensor<2x1x8xf32>
  %q0 = tg.matmul %x, %wq : (tensor<2x1x8xf32>, tensor<8x8xf32>) -> tensor<2x1x8xf32>
  %q1 = tg.reshape %q0 : (tensor<2x1x8xf32>) -> tensor<2x1x2x4xf32>
  %q = tg.transpose %q1 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x1x2x4xf32>) -> tensor<2x2x1x4xf32>
  %k0 = tg.matmul %x, %wk : (tensor<2x1x8xf32>, tensor<8x8xf32>) -> tensor<2x1x8xf32>
  %k1 = tg.reshape %k0 : (tensor<2x1x8xf32>) -> tensor<2x1x2x4xf32>
  %k = tg.transpose %k1 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x1x2x4xf32>) -> tensor<2x2x1x4xf32>
  %v0 = tg.matmul %x, %wv : (tensor<2x1x8xf32>, tensor<8x8xf32>) -> tensor<2x1x8xf32>
  %v1 = tg.reshape %v0 : (tensor<2x1x8xf32>) -> tensor<2x1x2x4xf32>
  %v = tg.transpose %v1 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x1x2x4xf32>) -> tensor<2x2x1x4xf32>
  // Each sequence appends at its own position and sees position + 1 keys.
  %kc1 = tg.update_slice %kc, %k, %positions {axis = 2 : i64} : (tensor<2x2x12x4xf32>, tensor<2x2x1x4xf32>, tensor<2xi64>) -> tensor<2x2x12x4xf32>
  %vc1 = tg.update_slice %vc, %v, %positions {axis = 2 : i64} : (tensor<2x2x12x4xf32>, tensor<2x2x1x4xf32>, tensor<2xi64>) -> tensor<2x2x12x4xf32>
  %pf = tg.cast %positions : tensor<2xi64> to tensor<2xf32>
  %one = tg.constant dense<1.0> : tensor<2xf32>
  %lenf = tg.add %pf, %one : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %len = tg.cast %lenf : tensor<2xf32> to tensor<2xi64>
  %a = tg.attention %q, %kc1, %vc1, %len {scale = 0.5 : f64, causal = true}
      : (tensor<2x2x1x4xf32>, tensor<2x2x12x4xf32>, tensor<2x2x12x4xf32>, tensor<2xi64>) -> tensor<2x2x1x4xf32>
  %a1 = tg.transpose %a {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x1x4xf32>) -> tensor<2x1x2x4xf32>
  %a2 = tg.reshape %a1 : (tensor<2x1x2x4xf32>) -> tensor<2x8xf32>
  %h = tg.matmul %a2, %wo : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %logits = tg.matmul %h, %wout : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  return %kc1, %vc1, %logits : tensor<2x2x12x4xf32>, tensor<2x2x12x4xf32>, tensor<2x16xf32>
}
}
