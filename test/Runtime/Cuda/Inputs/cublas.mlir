// Matrix products cuBLASLt runs (--backends=cublas): a linear layer over a
// 3-d input (its batch folded into M) with a row bias and a ReLU; a batched
// product with a GELU (the tanh approximation); a shared left operand
// against a batched right one with a [1, 1, N] bias; a plain product with
// weights. Awkward sizes (prime M and N) so that a swapped dimension shows.
module {
  func.func @main(%x: tensor<2x7x33xf32> {tg.name = "x"}, %w: tensor<33x13xf32> {tg.name = "w"}, %b: tensor<13xf32> {tg.name = "b"}, %p: tensor<2x33x5xf32> {tg.name = "p"}, %s: tensor<7x33xf32> {tg.name = "s"}, %c: tensor<1x1x5xf32> {tg.name = "c"}) -> (tensor<2x7x13xf32> {tg.name = "y"}, tensor<2x7x5xf32> {tg.name = "z"}, tensor<2x7x5xf32> {tg.name = "u"}, tensor<7x3xf32> {tg.name = "v"}) {
    %m = tg.matmul %x, %w : (tensor<2x7x33xf32>, tensor<33x13xf32>) -> tensor<2x7x13xf32>
    %a = tg.add %m, %b : (tensor<2x7x13xf32>, tensor<13xf32>) -> tensor<2x7x13xf32>
    %y = tg.relu %a : tensor<2x7x13xf32>
    %n = tg.matmul %x, %p : (tensor<2x7x33xf32>, tensor<2x33x5xf32>) -> tensor<2x7x5xf32>
    %z = tg.gelu %n {tanh_approximation = true} : tensor<2x7x5xf32>
    %q = tg.matmul %s, %p : (tensor<7x33xf32>, tensor<2x33x5xf32>) -> tensor<2x7x5xf32>
    %u = tg.add %q, %c : (tensor<2x7x5xf32>, tensor<1x1x5xf32>) -> tensor<2x7x5xf32>
    %k = tg.weight "k" : tensor<33x3xf32>
    %v = tg.matmul %s, %k : (tensor<7x33xf32>, tensor<33x3xf32>) -> tensor<7x3xf32>
    return %y, %z, %u, %v : tensor<2x7x13xf32>, tensor<2x7x5xf32>, tensor<2x7x5xf32>, tensor<7x3xf32>
  }
}
