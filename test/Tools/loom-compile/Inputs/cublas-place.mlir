// Placement on the CUDA target (gpu-cublas.test): a large product with a row
// bias and a GELU (tanh), where cuBLASLt wins on the roofline, a tiny one
// (a tie: generated code, registered first), and a GELU (erf) cuBLASLt
// has no epilogue for.
module {
  func.func @main(%x: tensor<256x1024xf32> {tg.name = "x"}, %w: tensor<1024x1024xf32> {tg.name = "w"}, %b: tensor<1024xf32> {tg.name = "b"}, %s: tensor<4x8xf32> {tg.name = "s"}, %t: tensor<8x4xf32> {tg.name = "t"}) -> (tensor<256x1024xf32> {tg.name = "y"}, tensor<4x4xf32> {tg.name = "z"}, tensor<256x1024xf32> {tg.name = "e"}) {
    %m = tg.matmul %x, %w : (tensor<256x1024xf32>, tensor<1024x1024xf32>) -> tensor<256x1024xf32>
    %a = tg.add %m, %b : (tensor<256x1024xf32>, tensor<1024xf32>) -> tensor<256x1024xf32>
    %y = tg.gelu %a {tanh_approximation = true} : tensor<256x1024xf32>
    %z = tg.matmul %s, %t : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
    %n = tg.matmul %y, %w : (tensor<256x1024xf32>, tensor<1024x1024xf32>) -> tensor<256x1024xf32>
    %e = tg.gelu %n : tensor<256x1024xf32>
    return %y, %z, %e : tensor<256x1024xf32>, tensor<4x4xf32>, tensor<256x1024xf32>
  }
}
