// Two projections of one activation with weights of different widths (not
// square): only a rule stated at independent witness dimensions matches.
module {
  func.func @main(%x: tensor<8x16xf32>) -> (tensor<8x32xf32>, tensor<8x48xf32>) {
    %w1 = tg.weight "w1" : tensor<16x32xf32>
    %w2 = tg.weight "w2" : tensor<16x48xf32>
    %a = tg.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %b = tg.matmul %x, %w2 : (tensor<8x16xf32>, tensor<16x48xf32>) -> tensor<8x48xf32>
    return %a, %b : tensor<8x32xf32>, tensor<8x48xf32>
  }
}
