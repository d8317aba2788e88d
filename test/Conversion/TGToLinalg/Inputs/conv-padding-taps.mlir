// Convolutions some of whose kernel taps read only padding at every output
// (conv-padding-taps.test).

// DeepLabV3's ASPP branch in small: dilation 13 on a 12x12 map, every
// off-centre tap outside the map: a 1x1 convolution.
func.func @aspp(%x: tensor<1x8x12x12xf32>, %w: tensor<4x8x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x12x12xf32> {
  %y = tg.conv %x, %w, %b {pads = array<i64: 13, 13, 13, 13>, dilations = array<i64: 13, 13>, activation = #tg<activation relu>} : (tensor<1x8x12x12xf32>, tensor<4x8x3x3xf32>, tensor<4xf32>) -> tensor<1x4x12x12xf32>
  return %y : tensor<1x4x12x12xf32>
}

// Dilation 8 on 12x12: each tap reads real rows for some outputs (the
// off-centre ones on a border band only): nothing is cut.
func.func @border(%x: tensor<1x8x12x12xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x12x12xf32> {
  %y = tg.conv %x, %w {pads = array<i64: 8, 8, 8, 8>, dilations = array<i64: 8, 8>} : (tensor<1x8x12x12xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x12x12xf32>
  return %y : tensor<1x4x12x12xf32>
}

// Columns: the first tap reads only the left padding, the second starts
// inside the input (column 2): the input is sliced, no column padding.
func.func @inside(%x: tensor<1x4x6x7xf32>, %w: tensor<5x4x3x2xf32>) -> tensor<1x5x6x5xf32> {
  %y = tg.conv %x, %w {pads = array<i64: 1, 10, 1, 0>, dilations = array<i64: 1, 12>} : (tensor<1x4x6x7xf32>, tensor<5x4x3x2xf32>) -> tensor<1x5x6x5xf32>
  return %y : tensor<1x5x6x5xf32>
}

// Stride 2, dilation 10, depthwise.
func.func @strided(%x: tensor<1x4x9x9xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32> {
  %y = tg.conv %x, %w {pads = array<i64: 10, 10, 10, 10>, strides = array<i64: 2, 2>, dilations = array<i64: 10, 10>, groups = 4 : i64} : (tensor<1x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}
