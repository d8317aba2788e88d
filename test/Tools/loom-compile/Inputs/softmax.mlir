// One generated kernel: a matrix product and a softmax over its rows.
module {
  func.func @main(%x: tensor<8x32xf32> {tg.name = "x"}, %w: tensor<32x64xf32> {tg.name = "w"}) -> (tensor<8x64xf32> {tg.name = "y"}) {
    %m = tg.matmul %x, %w : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
    %y = tg.softmax %m {axis = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x64xf32>
    return %y : tensor<8x64xf32>
  }
}
