// Placement on the CUDA target (gpu-cudnn.test): a large convolution with
// its bias and ReLU, where cuDNN wins on the roofline, a tiny one (a tie:
// generated code, registered first), and a hardswish after a convolution
// (no pointwise mode of cuDNN's: a generated kernel after it).
module {
  func.func @main(%x: tensor<1x64x56x56xf32> {tg.name = "x"}, %w: tensor<64x64x3x3xf32> {tg.name = "w"}, %b: tensor<64xf32> {tg.name = "b"}, %s: tensor<1x2x4x4xf32> {tg.name = "s"}, %t: tensor<2x2x1x1xf32> {tg.name = "t"}) -> (tensor<1x64x56x56xf32> {tg.name = "y"}, tensor<1x2x4x4xf32> {tg.name = "z"}, tensor<1x64x56x56xf32> {tg.name = "h"}) {
    %c = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    %y = tg.relu %c : tensor<1x64x56x56xf32>
    %z = tg.conv %s, %t {pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    %d = tg.conv %y, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
    %h = tg.hardswish %d : tensor<1x64x56x56xf32>
    return %y, %z, %h : tensor<1x64x56x56xf32>, tensor<1x2x4x4xf32>, tensor<1x64x56x56xf32>
  }
}
