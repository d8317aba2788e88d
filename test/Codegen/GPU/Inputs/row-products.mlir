// Products of at most 4 rows, the matrix-product class's row form
// (docs/Codegen/GPU.md, "Kernel classes"): a decoder's step (one row of 768
// times 768 x 100: columns past a multiple of 8), attention's values for one
// query per head (a batch of 12, k = 130: no multiple of 16), 4 rows (the
// form's limit) and a long k (3,000) with 17 columns.
module {
  func.func @main(%x: tensor<1x768xf32>, %w: tensor<768x100xf32>, %p: tensor<12x1x130xf32>, %v: tensor<12x130x64xf32>, %a: tensor<4x33xf32>, %b: tensor<33x9xf32>, %l: tensor<1x3000xf32>, %r: tensor<3000x17xf32>)
      -> (tensor<1x100xf32>, tensor<12x1x64xf32>, tensor<4x9xf32>, tensor<1x17xf32>) {
    %y = tg.matmul %x, %w : (tensor<1x768xf32>, tensor<768x100xf32>) -> tensor<1x100xf32>
    %o = tg.matmul %p, %v : (tensor<12x1x130xf32>, tensor<12x130x64xf32>) -> tensor<12x1x64xf32>
    %c = tg.matmul %a, %b : (tensor<4x33xf32>, tensor<33x9xf32>) -> tensor<4x9xf32>
    %d = tg.matmul %l, %r : (tensor<1x3000xf32>, tensor<3000x17xf32>) -> tensor<1x17xf32>
    return %y, %o, %c, %d : tensor<1x100xf32>, tensor<12x1x64xf32>, tensor<4x9xf32>, tensor<1x17xf32>
  }
}
