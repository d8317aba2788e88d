// Narrow products cuBLASLt runs (--backends=cublas; --precision=bf16's
// products, written out): a bf16 linear layer cast back to f32 before its
// bias and ReLU (one step: cuBLASLt writes the f32 accumulator, the bias of
// f32), and a batched bf16 product kept in bf16 (its D of the operands'
// type). cublas-narrow.test runs it with every bf16 spelled f16 as well.
module {
  func.func @main(%x: tensor<2x7x33xbf16> {tg.name = "x"}, %b: tensor<13xf32> {tg.name = "b"}, %p: tensor<2x33x5xbf16> {tg.name = "p"}) -> (tensor<2x7x13xf32> {tg.name = "y"}, tensor<2x7x5xbf16> {tg.name = "z"}) {
    %w = tg.weight "w" : tensor<33x13xbf16>
    %m = tg.matmul %x, %w : (tensor<2x7x33xbf16>, tensor<33x13xbf16>) -> tensor<2x7x13xbf16>
    %f = tg.cast %m : tensor<2x7x13xbf16> to tensor<2x7x13xf32>
    %a = tg.add %f, %b : (tensor<2x7x13xf32>, tensor<13xf32>) -> tensor<2x7x13xf32>
    %y = tg.relu %a : tensor<2x7x13xf32>
    %z = tg.matmul %x, %p : (tensor<2x7x33xbf16>, tensor<2x33x5xbf16>) -> tensor<2x7x5xbf16>
    return %y, %z : tensor<2x7x13xf32>, tensor<2x7x5xbf16>
  }
}
