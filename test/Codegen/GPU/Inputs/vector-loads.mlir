// Products whose operands the tiled classes stage with vector loads
// (docs/Codegen/GPU.md, "Vector loads"): rows of A and of B contiguous, their
// extents multiples of 4 but not of the tiles (100 x 196 by 196 x 52: edge
// tiles along m, n and k); a batch whose operands start 36 x 64 and 64 x 20
// elements apart; a convolution whose filter (A: 16 x 72, each output
// channel's 8 x 3 x 3 taps contiguous) is grouped and whose input patches
// (B) are not (loaded an element at a time in the same kernel).
module {
  func.func @main(%a: tensor<100x196xf32>, %b: tensor<196x52xf32>,
                  %q: tensor<3x36x64xf32>, %k: tensor<3x64x20xf32>,
                  %x: tensor<2x8x10x10xf32>, %f: tensor<16x8x3x3xf32>)
      -> (tensor<100x52xf32>, tensor<3x36x20xf32>, tensor<2x16x10x10xf32>) {
    %c = tg.matmul %a, %b : (tensor<100x196xf32>, tensor<196x52xf32>) -> tensor<100x52xf32>
    %bm = tg.matmul %q, %k : (tensor<3x36x64xf32>, tensor<3x64x20xf32>) -> tensor<3x36x20xf32>
    %y = tg.conv %x, %f {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x8x10x10xf32>, tensor<16x8x3x3xf32>) -> tensor<2x16x10x10xf32>
    return %c, %bm, %y : tensor<100x52xf32>, tensor<3x36x20xf32>, tensor<2x16x10x10xf32>
  }
}
