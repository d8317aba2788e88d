// maxpool2d_grad of disjoint windows with the relu mask of the layer before
// (a training step's backward pooling), and a padded one whose windows
// leave gaps: each one kernel, split over threads.
module {
  func.func @pool_relu(%x: tensor<8x4x12x10xf32> {tg.name = "x"}, %g: tensor<8x4x6x5xf32> {tg.name = "g"}) -> (tensor<8x4x12x10xf32> {tg.name = "dx"}) {
    %0 = tg.maxpool2d_grad %x, %g {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<8x4x12x10xf32>, tensor<8x4x6x5xf32>) -> tensor<8x4x12x10xf32>
    %z = tg.constant dense<0.000000e+00> : tensor<f32>
    %m = tg.greater %x, %z : (tensor<8x4x12x10xf32>, tensor<f32>) -> tensor<8x4x12x10xi1>
    %r = tg.select %m, %0, %z : (tensor<8x4x12x10xi1>, tensor<8x4x12x10xf32>, tensor<f32>) -> tensor<8x4x12x10xf32>
    return %r : tensor<8x4x12x10xf32>
  }
  func.func @gaps_pads(%x: tensor<8x2x8x7xf32> {tg.name = "x"}, %g: tensor<8x2x3x3xf32> {tg.name = "g"}) -> (tensor<8x2x8x7xf32> {tg.name = "dx"}) {
    %dx = tg.maxpool2d_grad %x, %g {kernel_size = array<i64: 2, 3>, strides = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 1>} : (tensor<8x2x8x7xf32>, tensor<8x2x3x3xf32>) -> tensor<8x2x8x7xf32>
    return %dx : tensor<8x2x8x7xf32>
  }
}
