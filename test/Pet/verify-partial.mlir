// RUN: not loom-rulegen --verify-partial %s 2>&1 | FileCheck %s
//
// --verify-partial re-proves what a partial rules file claims. @right claims
// the rows of a split 3x3 convolution that are equal; @planted claims row 3
// equal too, whose window crosses the cut: it is rejected with the first
// differing element, and the tool exits non-zero.

// CHECK-NOT: error: pet: rule @right
// CHECK: error: pet: rule @planted is not proved: @target on [0:1, 0:2, 0:4, 0:5]: element 15 differs in trial 0
// CHECK: 1 of 2 partial rules proved

module {
  module @right attributes {loom.pet.equal = [array<i64: 0, 0, 0, 0, 1, 2, 3, 5>, array<i64: 0, 0, 5, 0, 1, 2, 8, 5>]} {
    func.func @source(%x: tensor<1x2x8x5xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32> {
      %0 = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x5xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32>
      return %0 : tensor<1x2x8x5xf32>
    }
    func.func @target(%x: tensor<1x2x8x5xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32> {
      %0:2 = tg.split %x {axis = 2 : i64, sizes = array<i64: 4, 4>} : (tensor<1x2x8x5xf32>) -> (tensor<1x2x4x5xf32>, tensor<1x2x4x5xf32>)
      %1 = tg.concat %0#0, %0#1 {axis = 0 : i64} : (tensor<1x2x4x5xf32>, tensor<1x2x4x5xf32>) -> tensor<2x2x4x5xf32>
      %2 = tg.conv %1, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x2x4x5xf32>, tensor<2x2x3x3xf32>) -> tensor<2x2x4x5xf32>
      %3:2 = tg.split %2 {axis = 0 : i64, sizes = array<i64: 1, 1>} : (tensor<2x2x4x5xf32>) -> (tensor<1x2x4x5xf32>, tensor<1x2x4x5xf32>)
      %4 = tg.concat %3#0, %3#1 {axis = 2 : i64} : (tensor<1x2x4x5xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x8x5xf32>
      return %4 : tensor<1x2x8x5xf32>
    }
    func.func @corrected(%x: tensor<1x2x8x5xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32> {
      %0 = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x5xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32>
      return %0 : tensor<1x2x8x5xf32>
    }
  }
  module @planted attributes {loom.pet.equal = [array<i64: 0, 0, 0, 0, 1, 2, 4, 5>]} {
    func.func @source(%x: tensor<1x2x8x5xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32> {
      %0 = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x5xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32>
      return %0 : tensor<1x2x8x5xf32>
    }
    func.func @target(%x: tensor<1x2x8x5xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32> {
      %0:2 = tg.split %x {axis = 2 : i64, sizes = array<i64: 4, 4>} : (tensor<1x2x8x5xf32>) -> (tensor<1x2x4x5xf32>, tensor<1x2x4x5xf32>)
      %1 = tg.concat %0#0, %0#1 {axis = 0 : i64} : (tensor<1x2x4x5xf32>, tensor<1x2x4x5xf32>) -> tensor<2x2x4x5xf32>
      %2 = tg.conv %1, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x2x4x5xf32>, tensor<2x2x3x3xf32>) -> tensor<2x2x4x5xf32>
      %3:2 = tg.split %2 {axis = 0 : i64, sizes = array<i64: 1, 1>} : (tensor<2x2x4x5xf32>) -> (tensor<1x2x4x5xf32>, tensor<1x2x4x5xf32>)
      %4 = tg.concat %3#0, %3#1 {axis = 2 : i64} : (tensor<1x2x4x5xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x8x5xf32>
      return %4 : tensor<1x2x8x5xf32>
    }
    func.func @corrected(%x: tensor<1x2x8x5xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32> {
      %0 = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x5xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x8x5xf32>
      return %0 : tensor<1x2x8x5xf32>
    }
  }
}
