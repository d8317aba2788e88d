// maxpool and maxpool_grad of disjoint windows: exact, cropped (an
// input row and column no window reaches), padded with gaps between the
// windows; the gradient with the relu mask of the layer before (a training
// step's backward pooling).
module {
  func.func @pool_exact(%x: tensor<8x4x12x10xf32> {tg.name = "x"}) -> (tensor<8x4x6x5xf32> {tg.name = "y"}) {
    %y = tg.maxpool %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<8x4x12x10xf32>) -> tensor<8x4x6x5xf32>
    return %y : tensor<8x4x6x5xf32>
  }
  func.func @pool_crop(%x: tensor<2x3x7x6xf32> {tg.name = "x"}) -> (tensor<2x3x3x3xf32> {tg.name = "y"}) {
    %y = tg.maxpool %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x7x6xf32>) -> tensor<2x3x3x3xf32>
    return %y : tensor<2x3x3x3xf32>
  }
  func.func @pool_gaps_pads(%x: tensor<8x2x8x7xf32> {tg.name = "x"}) -> (tensor<8x2x3x3xf32> {tg.name = "y"}) {
    %y = tg.maxpool %x {kernel_size = array<i64: 2, 3>, strides = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 1>} : (tensor<8x2x8x7xf32>) -> tensor<8x2x3x3xf32>
    return %y : tensor<8x2x3x3xf32>
  }
  func.func @pool_relu(%x: tensor<8x4x12x10xf32> {tg.name = "x"}, %g: tensor<8x4x6x5xf32> {tg.name = "g"}) -> (tensor<8x4x12x10xf32> {tg.name = "dx"}) {
    %0 = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<8x4x12x10xf32>, tensor<8x4x6x5xf32>) -> tensor<8x4x12x10xf32>
    %z = tg.constant dense<0.000000e+00> : tensor<f32>
    %m = tg.greater %x, %z : (tensor<8x4x12x10xf32>, tensor<f32>) -> tensor<8x4x12x10xi1>
    %r = tg.select %m, %0, %z : (tensor<8x4x12x10xi1>, tensor<8x4x12x10xf32>, tensor<f32>) -> tensor<8x4x12x10xf32>
    return %r : tensor<8x4x12x10xf32>
  }
  func.func @gaps_pads(%x: tensor<8x2x8x7xf32> {tg.name = "x"}, %g: tensor<8x2x3x3xf32> {tg.name = "g"}) -> (tensor<8x2x8x7xf32> {tg.name = "dx"}) {
    %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 3>, strides = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 1>} : (tensor<8x2x8x7xf32>, tensor<8x2x3x3xf32>) -> tensor<8x2x8x7xf32>
    return %dx : tensor<8x2x8x7xf32>
  }
}
