// A small model for runtime tests: a convolution with relu (oneDNN), then a
// softmax over the channels (a generated kernel).
module {
  func.func @main(%x: tensor<1x2x6x6xf32> {tg.name = "x"}) -> (tensor<1x4x6x6xf32> {tg.name = "y"}) {
    %w = tg.weight "w" : tensor<4x2x3x3xf32>
    %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
    %y = tg.softmax %c {axis = 1 : i64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    return %y : tensor<1x4x6x6xf32>
  }
}
