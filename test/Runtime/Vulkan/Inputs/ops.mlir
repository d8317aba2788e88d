// Broadcasting, an activation, a row reduction (softmax) and a matrix product at
// prime sizes: compiled with --target=vulkan and --target=cuda by compiled.test.
func.func @main(%x: tensor<3x37x61xf32> {tg.name = "x"}, %y: tensor<61xf32> {tg.name = "y"}, %m: tensor<61x13xf32> {tg.name = "m"}) -> (tensor<3x37x61xf32> {tg.name = "s"}, tensor<3x37x13xf32> {tg.name = "p"}) {
  %a = tg.add %x, %y : (tensor<3x37x61xf32>, tensor<61xf32>) -> tensor<3x37x61xf32>
  %r = tg.relu %a : tensor<3x37x61xf32>
  %s = tg.softmax %r {axis = -1 : i64} : (tensor<3x37x61xf32>) -> tensor<3x37x61xf32>
  %p = tg.matmul %s, %m : (tensor<3x37x61xf32>, tensor<61x13xf32>) -> tensor<3x37x13xf32>
  return %s, %p : tensor<3x37x61xf32>, tensor<3x37x13xf32>
}
