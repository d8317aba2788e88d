// Kernels that exercise every stage of the CPU kernel pipeline: a
// register-tiled matrix product with a bias epilogue, a convolution written
// as rows of vector FMAs, a softmax (reductions fused into row tiles), a
// slice (a strided copy) and a chain of elementwise ops.
module {
  func.func @matmul(%x: tensor<64x48xf32>, %w: tensor<48x96xf32>, %b: tensor<96xf32>) -> tensor<64x96xf32> {
    %m = tg.matmul %x, %w : (tensor<64x48xf32>, tensor<48x96xf32>) -> tensor<64x96xf32>
    %y = tg.add %m, %b : (tensor<64x96xf32>, tensor<96xf32>) -> tensor<64x96xf32>
    return %y : tensor<64x96xf32>
  }
  func.func @conv(%x: tensor<1x8x14x14xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x14x14xf32> {
    %y = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x8x14x14xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x14x14xf32>
    return %y : tensor<1x16x14x14xf32>
  }
  func.func @softmax(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
    %y = tg.softmax %x {axis = 1 : i64} : (tensor<8x100xf32>) -> tensor<8x100xf32>
    return %y : tensor<8x100xf32>
  }
  func.func @slice(%x: tensor<4x10x12xf32>) -> tensor<4x6x5xf32> {
    %s = tg.slice %x {starts = array<i64: 0, 2, 3>, limits = array<i64: 4, 8, 8>, strides = array<i64: 1, 1, 1>} : (tensor<4x10x12xf32>) -> tensor<4x6x5xf32>
    %y = tg.tanh %s : tensor<4x6x5xf32>
    return %y : tensor<4x6x5xf32>
  }
}
