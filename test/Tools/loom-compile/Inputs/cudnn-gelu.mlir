// A convolution with a GELU after it and one with a swish (gpu-cudnn.test):
// cuDNN has no f32 plan that fuses either (lib/Compiler/Backends/CuDNN.cpp).
func.func @main(%x: tensor<1x8x12x12xf32> {tg.name = "x"}, %w: tensor<16x8x3x3xf32> {tg.name = "w"}, %b: tensor<16xf32> {tg.name = "b"}) -> (tensor<1x16x10x10xf32> {tg.name = "g"}, tensor<1x16x10x10xf32> {tg.name = "s"}) {
  %c = tg.conv %x, %w, %b {pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x12x12xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x10x10xf32>
  %g = tg.gelu %c : tensor<1x16x10x10xf32>
  %d = tg.conv %x, %w, %b {pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x12x12xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x10x10xf32>
  %e = tg.sigmoid %d : tensor<1x16x10x10xf32>
  %s = tg.mul %d, %e : (tensor<1x16x10x10xf32>, tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  return %g, %s : tensor<1x16x10x10xf32>, tensor<1x16x10x10xf32>
}
