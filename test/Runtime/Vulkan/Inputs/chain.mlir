// c = (a + w) + a with a weight w: two dispatches of add.spvasm's kernel,
// an arena buffer between them and a copy (weights.test).
func.func @main(%a: tensor<1000xf32> {tg.name = "a"}) -> (tensor<1000xf32> {tg.name = "c"}) {
  %w = tg.weight "w" : tensor<1000xf32>
  %t = tg.add %a, %w : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %c = tg.add %t, %a : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  return %c : tensor<1000xf32>
}
