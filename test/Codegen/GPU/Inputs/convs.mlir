// Convolutions on awkward shapes, for the convolution kernel class
// (docs/Codegen/GPU.md): no extent a multiple of the 16 x 16 tile, stride 2
// with padding, a bias and a ReLU; dilation 2; two groups; a 1x1; a 1-D
// filter of 19 taps and a 2-D one of 17 x 17 (wider than a tile); a 3-D
// one; prime channels and image (13 -> 17 channels on 23 x 29); and three
// the class leaves to the generic class: a depthwise 5 x 5 (one output
// channel per group), one of 4 output channels (below min-channels 8) and
// a shallow one (9 reduction steps, below min-depth).
module {
  func.func @main(%x1: tensor<2x5x11x13xf32>, %w1: tensor<9x5x3x3xf32>, %b1: tensor<9xf32>,
                  %x2: tensor<1x3x17x19xf32>, %w2: tensor<11x3x3x3xf32>,
                  %x3: tensor<1x6x9x9xf32>, %w3: tensor<16x3x3x3xf32>,
                  %x4: tensor<1x37x7x7xf32>, %w4: tensor<19x37x1x1xf32>,
                  %x5: tensor<1x3x53xf32>, %w5: tensor<8x3x19xf32>,
                  %x6: tensor<1x2x20x20xf32>, %w6: tensor<8x2x17x17xf32>,
                  %x7: tensor<1x2x5x6x7xf32>, %w7: tensor<8x2x3x3x3xf32>,
                  %x8: tensor<1x13x23x29xf32>, %w8: tensor<17x13x3x3xf32>,
                  %x9: tensor<1x8x10x10xf32>, %w9: tensor<8x1x5x5xf32>,
                  %x10: tensor<1x1x8x8xf32>, %w10: tensor<8x1x3x3xf32>,
                  %x11: tensor<1x16x8x8xf32>, %w11: tensor<4x16x3x3xf32>)
      -> (tensor<2x9x6x7xf32>, tensor<1x11x17x19xf32>, tensor<1x16x9x9xf32>, tensor<1x19x7x7xf32>,
          tensor<1x8x35xf32>, tensor<1x8x4x4xf32>, tensor<1x8x5x6x7xf32>, tensor<1x17x23x29xf32>,
          tensor<1x8x10x10xf32>, tensor<1x8x6x6xf32>, tensor<1x4x6x6xf32>) {
    %c1 = tg.conv %x1, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, activation = #tg<activation relu>} : (tensor<2x5x11x13xf32>, tensor<9x5x3x3xf32>, tensor<9xf32>) -> tensor<2x9x6x7xf32>
    %c2 = tg.conv %x2, %w2 {pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x3x17x19xf32>, tensor<11x3x3x3xf32>) -> tensor<1x11x17x19xf32>
    %c3 = tg.conv %x3, %w3 {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x6x9x9xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x9x9xf32>
    %c4 = tg.conv %x4, %w4 : (tensor<1x37x7x7xf32>, tensor<19x37x1x1xf32>) -> tensor<1x19x7x7xf32>
    %c5 = tg.conv %x5, %w5 {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x3x53xf32>, tensor<8x3x19xf32>) -> tensor<1x8x35xf32>
    %c6 = tg.conv %x6, %w6 : (tensor<1x2x20x20xf32>, tensor<8x2x17x17xf32>) -> tensor<1x8x4x4xf32>
    %c7 = tg.conv %x7, %w7 {strides = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>, dilations = array<i64: 1, 1, 1>} : (tensor<1x2x5x6x7xf32>, tensor<8x2x3x3x3xf32>) -> tensor<1x8x5x6x7xf32>
    %c8 = tg.conv %x8, %w8 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x13x23x29xf32>, tensor<17x13x3x3xf32>) -> tensor<1x17x23x29xf32>
    %c9 = tg.conv %x9, %w9 {pads = array<i64: 2, 2, 2, 2>, groups = 8 : i64} : (tensor<1x8x10x10xf32>, tensor<8x1x5x5xf32>) -> tensor<1x8x10x10xf32>
    %c10 = tg.conv %x10, %w10 : (tensor<1x1x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32>
    %c11 = tg.conv %x11, %w11 : (tensor<1x16x8x8xf32>, tensor<4x16x3x3xf32>) -> tensor<1x4x6x6xf32>
    return %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11 : tensor<2x9x6x7xf32>, tensor<1x11x17x19xf32>, tensor<1x16x9x9xf32>, tensor<1x19x7x7xf32>, tensor<1x8x35xf32>, tensor<1x8x4x4xf32>, tensor<1x8x5x6x7xf32>, tensor<1x17x23x29xf32>, tensor<1x8x10x10xf32>, tensor<1x8x6x6xf32>, tensor<1x4x6x6xf32>
  }
}
