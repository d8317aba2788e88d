// relu(x W) at batch sizes 1, 2 and 4: the batch range loom-serve reads
// from the entries (docs/tools/loom-serve.md "The batch range").
module {
  func.func @b1(%x: tensor<1x3xf32> {tg.name = "x"}) -> (tensor<1x2xf32> {tg.name = "y"}) {
    %w = tg.constant dense<[[1.0, 2.0], [3.0, -4.0], [5.0, 6.0]]> : tensor<3x2xf32>
    %m = tg.matmul %x, %w : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
    %y = tg.relu %m : tensor<1x2xf32>
    return %y : tensor<1x2xf32>
  }
  func.func @b2(%x: tensor<2x3xf32> {tg.name = "x"}) -> (tensor<2x2xf32> {tg.name = "y"}) {
    %w = tg.constant dense<[[1.0, 2.0], [3.0, -4.0], [5.0, 6.0]]> : tensor<3x2xf32>
    %m = tg.matmul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %y = tg.relu %m : tensor<2x2xf32>
    return %y : tensor<2x2xf32>
  }
  func.func @b4(%x: tensor<4x3xf32> {tg.name = "x"}) -> (tensor<4x2xf32> {tg.name = "y"}) {
    %w = tg.constant dense<[[1.0, 2.0], [3.0, -4.0], [5.0, 6.0]]> : tensor<3x2xf32>
    %m = tg.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
    %y = tg.relu %m : tensor<4x2xf32>
    return %y : tensor<4x2xf32>
  }
}
