// One BERT-base encoder layer (HuggingFace BertLayer), inference form, at
// batch 1, sequence 128: hidden 768, 12 heads x 64, FFN 3072, GELU (erf form),
// post-LN layernorms with epsilon 1e-12.
//
// Weights live in bert_encoder_layer.safetensors beside this file, named as
// HuggingFace names them inside `bert.encoder.layer.N.` (for example
// `attention.self.query.weight`). The dense (nn.Linear) weights are stored as
// [in, out], i.e. TRANSPOSED from PyTorch's [out, in], so that they feed
// tg.matmul directly; biases and layernorm parameters are as in PyTorch.
// Make random ones with:
//   loom-run bert_encoder_layer.mlir --write-random-weights bert_encoder_layer.safetensors
//
// The attention mask is an additive constant of zeros (no padding): a real
// mask would put -10000 (or -inf) at the padded key positions.
module attributes {tg.weights = "bert_encoder_layer.safetensors"} {
  func.func @main(%x: tensor<1x128x768xf32> {tg.name = "hidden_states"})
      -> (tensor<1x128x768xf32> {tg.name = "layer_output"}) {
    //===------------------------------------------------------------------===//
    // Self-attention: Q, K, V projections, split into 12 heads of 64.
    //===------------------------------------------------------------------===//
    %wq = tg.weight "attention.self.query.weight" : tensor<768x768xf32>
    %bq = tg.weight "attention.self.query.bias" : tensor<768xf32>
    %q0 = tg.matmul %x, %wq : (tensor<1x128x768xf32>, tensor<768x768xf32>) -> tensor<1x128x768xf32>
    %q1 = tg.add %q0, %bq : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %q2 = tg.reshape %q1 : (tensor<1x128x768xf32>) -> tensor<1x128x12x64xf32>
    // [batch, head, seq, 64]
    %q = tg.transpose %q2 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>

    %wk = tg.weight "attention.self.key.weight" : tensor<768x768xf32>
    %bk = tg.weight "attention.self.key.bias" : tensor<768xf32>
    %k0 = tg.matmul %x, %wk : (tensor<1x128x768xf32>, tensor<768x768xf32>) -> tensor<1x128x768xf32>
    %k1 = tg.add %k0, %bk : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %k2 = tg.reshape %k1 : (tensor<1x128x768xf32>) -> tensor<1x128x12x64xf32>
    // K transposed for the score product: [batch, head, 64, seq]
    %kt = tg.transpose %k2 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x64x128xf32>

    %wv = tg.weight "attention.self.value.weight" : tensor<768x768xf32>
    %bv = tg.weight "attention.self.value.bias" : tensor<768xf32>
    %v0 = tg.matmul %x, %wv : (tensor<1x128x768xf32>, tensor<768x768xf32>) -> tensor<1x128x768xf32>
    %v1 = tg.add %v0, %bv : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %v2 = tg.reshape %v1 : (tensor<1x128x768xf32>) -> tensor<1x128x12x64xf32>
    %v = tg.transpose %v2 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>

    //===------------------------------------------------------------------===//
    // Scaled dot-product attention: softmax(Q K^T / sqrt(64) + mask) V.
    //===------------------------------------------------------------------===//
    %s0 = tg.matmul %q, %kt : (tensor<1x12x128x64xf32>, tensor<1x12x64x128xf32>) -> tensor<1x12x128x128xf32>
    // 1 / sqrt(64)
    %scale = tg.constant dense<0.125> : tensor<f32>
    %s1 = tg.mul %s0, %scale : (tensor<1x12x128x128xf32>, tensor<f32>) -> tensor<1x12x128x128xf32>
    // Additive mask over the key positions, [batch, 1, 1, seq].
    %mask = tg.constant dense<0.0> : tensor<1x1x1x128xf32>
    %s2 = tg.add %s1, %mask : (tensor<1x12x128x128xf32>, tensor<1x1x1x128xf32>) -> tensor<1x12x128x128xf32>
    %p = tg.softmax %s2 {axis = -1 : i64} : (tensor<1x12x128x128xf32>) -> tensor<1x12x128x128xf32>
    %c0 = tg.matmul %p, %v : (tensor<1x12x128x128xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
    // Merge the heads back: [batch, seq, 12, 64] -> [batch, seq, 768]
    %c1 = tg.transpose %c0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x12x128x64xf32>) -> tensor<1x128x12x64xf32>
    %ctx = tg.reshape %c1 : (tensor<1x128x12x64xf32>) -> tensor<1x128x768xf32>

    //===------------------------------------------------------------------===//
    // Attention output: dense, residual, LayerNorm.
    //===------------------------------------------------------------------===//
    %wo = tg.weight "attention.output.dense.weight" : tensor<768x768xf32>
    %bo = tg.weight "attention.output.dense.bias" : tensor<768xf32>
    %o0 = tg.matmul %ctx, %wo : (tensor<1x128x768xf32>, tensor<768x768xf32>) -> tensor<1x128x768xf32>
    %o1 = tg.add %o0, %bo : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    %o2 = tg.add %o1, %x : (tensor<1x128x768xf32>, tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
    %g1 = tg.weight "attention.output.LayerNorm.weight" : tensor<768xf32>
    %b1 = tg.weight "attention.output.LayerNorm.bias" : tensor<768xf32>
    %h = tg.layernorm %o2, %g1, %b1 {epsilon = 1.0e-12 : f64}
        : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>

    //===------------------------------------------------------------------===//
    // Feed-forward: dense 768 -> 3072, GELU, dense 3072 -> 768.
    //===------------------------------------------------------------------===//
    %wi = tg.weight "intermediate.dense.weight" : tensor<768x3072xf32>
    %bi = tg.weight "intermediate.dense.bias" : tensor<3072xf32>
    %i0 = tg.matmul %h, %wi : (tensor<1x128x768xf32>, tensor<768x3072xf32>) -> tensor<1x128x3072xf32>
    %i1 = tg.add %i0, %bi : (tensor<1x128x3072xf32>, tensor<3072xf32>) -> tensor<1x128x3072xf32>
    %i2 = tg.gelu %i1 : tensor<1x128x3072xf32>
    %wf = tg.weight "output.dense.weight" : tensor<3072x768xf32>
    %bf = tg.weight "output.dense.bias" : tensor<768xf32>
    %f0 = tg.matmul %i2, %wf : (tensor<1x128x3072xf32>, tensor<3072x768xf32>) -> tensor<1x128x768xf32>
    %f1 = tg.add %f0, %bf : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>

    //===------------------------------------------------------------------===//
    // Layer output: residual, LayerNorm.
    //===------------------------------------------------------------------===//
    %f2 = tg.add %f1, %h : (tensor<1x128x768xf32>, tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
    %g2 = tg.weight "output.LayerNorm.weight" : tensor<768xf32>
    %b2 = tg.weight "output.LayerNorm.bias" : tensor<768xf32>
    %y = tg.layernorm %f2, %g2, %b2 {epsilon = 1.0e-12 : f64}
        : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    return %y : tensor<1x128x768xf32>
  }
}
