// A two-layer perceptron with weights (precision.test): the products of
// --precision=bf16 read their weights narrow, folded at compile time.
module {
  func.func @main(%x: tensor<4x16xf32> {tg.name = "x"}) -> (tensor<4x8xf32> {tg.name = "y"}) {
    %w1 = tg.weight "w1" : tensor<16x32xf32>
    %b1 = tg.weight "b1" : tensor<32xf32>
    %w2 = tg.weight "w2" : tensor<32x8xf32>
    %b2 = tg.weight "b2" : tensor<8xf32>
    %m1 = tg.matmul %x, %w1 : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
    %a1 = tg.add %m1, %b1 : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
    %h = tg.relu %a1 : tensor<4x32xf32>
    %m2 = tg.matmul %h, %w2 : (tensor<4x32xf32>, tensor<32x8xf32>) -> tensor<4x8xf32>
    %y = tg.add %m2, %b2 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}
