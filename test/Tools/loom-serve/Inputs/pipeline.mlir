// Two inputs, each through its own layer, joined, and a last layer: a
// model --pipe-partition cuts into stages for loom-serve's served
// pipelines (serve-pipeline.test).
func.func @main(%a: tensor<1x16xf32> {tg.name = "a"}, %b: tensor<1x16xf32> {tg.name = "b"}) -> tensor<1x4xf32> {
  %wa = tg.weight "wa" : tensor<16x32xf32>
  %wb = tg.weight "wb" : tensor<16x32xf32>
  %wj = tg.weight "wj" : tensor<32x32xf32>
  %wo = tg.weight "wo" : tensor<32x4xf32>
  %a1 = tg.matmul %a, %wa : (tensor<1x16xf32>, tensor<16x32xf32>) -> tensor<1x32xf32>
  %a2 = tg.relu %a1 : tensor<1x32xf32>
  %b1 = tg.matmul %b, %wb : (tensor<1x16xf32>, tensor<16x32xf32>) -> tensor<1x32xf32>
  %b2 = tg.tanh %b1 : tensor<1x32xf32>
  %j = tg.add %a2, %b2 : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  %j1 = tg.matmul %j, %wj : (tensor<1x32xf32>, tensor<32x32xf32>) -> tensor<1x32xf32>
  %j2 = tg.relu %j1 : tensor<1x32xf32>
  %o = tg.matmul %j2, %wo : (tensor<1x32xf32>, tensor<32x4xf32>) -> tensor<1x4xf32>
  return %o : tensor<1x4xf32>
}
