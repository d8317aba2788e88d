// Placement of TF32 products on the CUDA target (gpu-cublas.test): one
// whose weight is a constant of TF32 values (what --tg-fold-weights makes
// of a rounding only library steps read), one whose operands are both
// rounded in the graph; 1024^3 each, compute-bound on the roofline.
module {
  func.func @main(%x: tensor<1024x1024xf32> {tg.name = "x"}, %v: tensor<1024x1024xf32> {tg.name = "v"}) -> (tensor<1024x1024xf32> {tg.name = "y"}, tensor<1024x1024xf32> {tg.name = "z"}) {
    %rx = tg.round_tf32 %x : tensor<1024x1024xf32>
    %w = tg.constant {tg.tf32_values} dense<1.5> : tensor<1024x1024xf32>
    %y = tg.matmul %rx, %w : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %rx2 = tg.round_tf32 %x : tensor<1024x1024xf32>
    %rv = tg.round_tf32 %v : tensor<1024x1024xf32>
    %z = tg.matmul %rx2, %rv : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    return %y, %z : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
}
