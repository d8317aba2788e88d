// Matrix products on awkward shapes, for the matrix-product kernel class
// (docs/Codegen/GPU.md): 37 x 131 by 131 x 45 (no extent a multiple of
// the 16 x 16 tile), a batch of 3 products of 17 x 20 by 20 x 9, 8 rows of
// 768 by a 768 x 100 weight (a leading unit batch), one row by one column
// (16 deep: one element, in the row form), and 5 deep (shallower
// than min-depth: another class).
module {
  func.func @main(%a: tensor<37x131xf32>, %b: tensor<131x45xf32>, %q: tensor<3x17x20xf32>, %k: tensor<3x20x9xf32>, %x: tensor<1x8x768xf32>, %w: tensor<768x100xf32>, %s: tensor<1x16xf32>, %t: tensor<16x1xf32>, %u: tensor<6x5xf32>, %v: tensor<5x7xf32>)
      -> (tensor<37x45xf32>, tensor<3x17x9xf32>, tensor<1x8x100xf32>, tensor<1x1xf32>, tensor<6x7xf32>) {
    %c = tg.matmul %a, %b : (tensor<37x131xf32>, tensor<131x45xf32>) -> tensor<37x45xf32>
    %bm = tg.matmul %q, %k : (tensor<3x17x20xf32>, tensor<3x20x9xf32>) -> tensor<3x17x9xf32>
    %y = tg.matmul %x, %w : (tensor<1x8x768xf32>, tensor<768x100xf32>) -> tensor<1x8x100xf32>
    %d = tg.matmul %s, %t : (tensor<1x16xf32>, tensor<16x1xf32>) -> tensor<1x1xf32>
    %e = tg.matmul %u, %v : (tensor<6x5xf32>, tensor<5x7xf32>) -> tensor<6x7xf32>
    return %c, %bm, %y, %d, %e : tensor<37x45xf32>, tensor<3x17x9xf32>, tensor<1x8x100xf32>, tensor<1x1xf32>, tensor<6x7xf32>
  }
}
