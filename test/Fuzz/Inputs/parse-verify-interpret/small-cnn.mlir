func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
  %c = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %p = tg.maxpool %c {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  %a = tg.avgpool %p {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %s = tg.batchnorm %a, %b, %b, %b, %b : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %g = tg.global_avgpool %s : (tensor<1x4x4x4xf32>) -> tensor<1x4x1x1xf32>
  %r = tg.reshape %g : (tensor<1x4x1x1xf32>) -> tensor<1x4xf32>
  %e = tg.enlarge %w {kernel_size = array<i64: 5, 5>} : (tensor<4x3x3x3xf32>) -> tensor<4x3x5x5xf32>
  %h = tg.hardswish %r : tensor<1x4xf32>
  return %h : tensor<1x4xf32>
}
