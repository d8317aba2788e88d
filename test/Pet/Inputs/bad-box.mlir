// A partial rule whose claimed box reaches past the output (rows 6..9 of 8).

module {
  module @bad attributes {loom.pet.equal = [array<i64: 0, 0, 6, 0, 1, 2, 9, 5>]} {
    func.func @source(%x: tensor<1x2x8x5xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32> {
      %0 = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x5xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32>
      return %0 : tensor<1x2x8x5xf32>
    }
    func.func @target(%x: tensor<1x2x8x5xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32> {
      %0 = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x5xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32>
      return %0 : tensor<1x2x8x5xf32>
    }
    func.func @corrected(%x: tensor<1x2x8x5xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32> {
      %0 = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x5xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32>
      return %0 : tensor<1x2x8x5xf32>
    }
  }
}
