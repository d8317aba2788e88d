// What cuBLASLt does not take (gpu-cublas.test): a batch broadcast along
// one of two dimensions (no single batch stride), a sigmoid (no epilogue:
// the product is cuBLASLt's, the sigmoid generated), and a full-tensor
// addend (not a row bias: the add is generated).
module {
  func.func @main(%x: tensor<2x3x8x16xf32> {tg.name = "x"}, %w: tensor<3x16x8xf32> {tg.name = "w"}, %a: tensor<8x16xf32> {tg.name = "a"}, %b: tensor<16x32xf32> {tg.name = "b"}, %r: tensor<8x32xf32> {tg.name = "r"}) -> (tensor<2x3x8x8xf32> {tg.name = "p"}, tensor<8x32xf32> {tg.name = "s"}, tensor<8x32xf32> {tg.name = "t"}) {
    %p = tg.matmul %x, %w : (tensor<2x3x8x16xf32>, tensor<3x16x8xf32>) -> tensor<2x3x8x8xf32>
    %m = tg.matmul %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %s = tg.sigmoid %m : tensor<8x32xf32>
    %n = tg.matmul %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %t = tg.add %n, %r : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    return %p, %s, %t : tensor<2x3x8x8xf32>, tensor<8x32xf32>, tensor<8x32xf32>
  }
}
