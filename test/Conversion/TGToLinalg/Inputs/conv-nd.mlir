// 1-D and 3-D convolutions and pools, one per function (conv-nd.test).
func.func @conv1d(%x: tensor<2x4x19xf32>, %w: tensor<6x2x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x9xf32> {
  %0 = tg.conv %x, %w, %b {strides = array<i64: 2>, pads = array<i64: 1, 2>, dilations = array<i64: 2>,
                           groups = 2 : i64, activation = #tg<activation relu>}
      : (tensor<2x4x19xf32>, tensor<6x2x3xf32>, tensor<6xf32>) -> tensor<2x6x9xf32>
  return %0 : tensor<2x6x9xf32>
}
func.func @conv3d(%x: tensor<1x3x5x9x8xf32>, %w: tensor<8x3x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x5x5x4xf32> {
  %0 = tg.conv %x, %w, %b {strides = array<i64: 1, 2, 2>, pads = array<i64: 1, 1, 1, 1, 1, 0>,
                           dilations = array<i64: 1, 1, 1>, activation = #tg<activation relu>}
      : (tensor<1x3x5x9x8xf32>, tensor<8x3x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x5x5x4xf32>
  return %0 : tensor<1x8x5x5x4xf32>
}
func.func @conv3d_grouped(%x: tensor<2x4x4x6x8xf32>, %w: tensor<4x2x3x1x3xf32>) -> tensor<2x4x3x6x2xf32> {
  %0 = tg.conv %x, %w {strides = array<i64: 1, 1, 2>, pads = array<i64: 1, 0, 0, 0, 0, 0>,
                       dilations = array<i64: 1, 1, 2>, groups = 2 : i64}
      : (tensor<2x4x4x6x8xf32>, tensor<4x2x3x1x3xf32>) -> tensor<2x4x3x6x2xf32>
  return %0 : tensor<2x4x3x6x2xf32>
}
func.func @maxpool1d(%x: tensor<2x3x11xf32>) -> tensor<2x3x5xf32> {
  %0 = tg.maxpool %x {kernel_size = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 0>}
      : (tensor<2x3x11xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}
func.func @maxpool3d(%x: tensor<1x4x5x7x7xf32>) -> tensor<1x4x3x4x4xf32> {
  %0 = tg.maxpool %x {kernel_size = array<i64: 3, 3, 3>, strides = array<i64: 2, 2, 2>,
                      pads = array<i64: 1, 1, 1, 1, 1, 1>}
      : (tensor<1x4x5x7x7xf32>) -> tensor<1x4x3x4x4xf32>
  return %0 : tensor<1x4x3x4x4xf32>
}
func.func @avgpool3d(%x: tensor<1x4x5x7x7xf32>) -> tensor<1x4x3x4x4xf32> {
  %0 = tg.avgpool %x {kernel_size = array<i64: 3, 3, 3>, strides = array<i64: 2, 2, 2>,
                      pads = array<i64: 1, 1, 1, 1, 1, 1>}
      : (tensor<1x4x5x7x7xf32>) -> tensor<1x4x3x4x4xf32>
  return %0 : tensor<1x4x3x4x4xf32>
}
func.func @avgpool3d_include(%x: tensor<1x4x5x7x7xf32>) -> tensor<1x4x3x3x3xf32> {
  %0 = tg.avgpool %x {kernel_size = array<i64: 2, 3, 3>, strides = array<i64: 2, 2, 2>,
                      pads = array<i64: 0, 0, 0, 1, 1, 1>, count_include_pad = true}
      : (tensor<1x4x5x7x7xf32>) -> tensor<1x4x3x3x3xf32>
  return %0 : tensor<1x4x3x3x3xf32>
}
func.func @avgpool1d(%x: tensor<2x3x11xf32>) -> tensor<2x3x6xf32> {
  %0 = tg.avgpool %x {kernel_size = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>}
      : (tensor<2x3x11xf32>) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}
func.func @gap(%x1: tensor<2x3x11xf32>, %x3: tensor<1x4x5x7x7xf32>) -> (tensor<2x3x1xf32>, tensor<1x4x1x1x1xf32>) {
  %0 = tg.global_avgpool %x1 : (tensor<2x3x11xf32>) -> tensor<2x3x1xf32>
  %1 = tg.global_avgpool %x3 : (tensor<1x4x5x7x7xf32>) -> tensor<1x4x1x1x1xf32>
  return %0, %1 : tensor<2x3x1xf32>, tensor<1x4x1x1x1xf32>
}
func.func @maxpool1d_grad(%x: tensor<2x3x11xf32>, %g: tensor<2x3x5xf32>) -> tensor<2x3x11xf32> {
  %0 = tg.maxpool_grad %x, %g {kernel_size = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 0>}
      : (tensor<2x3x11xf32>, tensor<2x3x5xf32>) -> tensor<2x3x11xf32>
  return %0 : tensor<2x3x11xf32>
}
