// Constants marked tg.tf32_values (what --tg-fold-weights makes of a
// weight's TF32 rounding that only library steps read): one whose values
// are TF32 (1.5), one whose are not (1 + 2^-11: the mark is wrong), each
// multiplied by a rounded input on cuBLASLt (gpu-cublas.test).
module {
  func.func @main(%x: tensor<64x64xf32> {tg.name = "x"}) -> (tensor<64x64xf32> {tg.name = "y"}, tensor<64x64xf32> {tg.name = "z"}) {
    %rx = tg.round_tf32 %x : tensor<64x64xf32>
    %good = tg.constant {tg.tf32_values} dense<1.5> : tensor<64x64xf32>
    %bad = tg.constant {tg.tf32_values} dense<1.00048828125> : tensor<64x64xf32>
    %y = tg.matmul %rx, %good : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %z = tg.matmul %rx, %bad : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    return %y, %z : tensor<64x64xf32>, tensor<64x64xf32>
  }
}
