// Softmaxes and layer norms over rows of widths a vector does not divide
// (49, 7, 100, 1000), a row as wide as one vector (16), and a softmax over a
// middle axis (its rows are strided: the loops LLVM vectorises).
module {
  func.func @main(%x: tensor<2x3x49x49xf32> {tg.name = "x"},
                  %b: tensor<1x3x49x49xf32> {tg.name = "b"},
                  %w: tensor<6x7xf32> {tg.name = "w"},
                  %v: tensor<4x100xf32> {tg.name = "v"},
                  %u: tensor<2x1000xf32> {tg.name = "u"},
                  %t: tensor<5x16xf32> {tg.name = "t"},
                  %m: tensor<2x37x5xf32> {tg.name = "m"},
                  %g: tensor<100xf32> {tg.name = "g"},
                  %h: tensor<100xf32> {tg.name = "h"})
      -> (tensor<2x3x49x49xf32> {tg.name = "swin"}, tensor<6x7xf32> {tg.name = "narrow"},
          tensor<4x100xf32> {tg.name = "wide"}, tensor<2x1000xf32> {tg.name = "long"},
          tensor<5x16xf32> {tg.name = "vector"}, tensor<2x37x5xf32> {tg.name = "middle"},
          tensor<4x100xf32> {tg.name = "norm"}) {
    %a = tg.add %x, %b : (tensor<2x3x49x49xf32>, tensor<1x3x49x49xf32>) -> tensor<2x3x49x49xf32>
    %s0 = tg.softmax %a {axis = 3 : i64} : (tensor<2x3x49x49xf32>) -> tensor<2x3x49x49xf32>
    %s1 = tg.softmax %w {axis = 1 : i64} : (tensor<6x7xf32>) -> tensor<6x7xf32>
    %s2 = tg.softmax %v {axis = -1 : i64} : (tensor<4x100xf32>) -> tensor<4x100xf32>
    %s3 = tg.softmax %u {axis = 1 : i64} : (tensor<2x1000xf32>) -> tensor<2x1000xf32>
    %s4 = tg.softmax %t {axis = 1 : i64} : (tensor<5x16xf32>) -> tensor<5x16xf32>
    %s5 = tg.softmax %m {axis = 1 : i64} : (tensor<2x37x5xf32>) -> tensor<2x37x5xf32>
    %n = tg.layernorm %v, %g, %h {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<4x100xf32>, tensor<100xf32>, tensor<100xf32>) -> tensor<4x100xf32>
    return %s0, %s1, %s2, %s3, %s4, %s5, %n : tensor<2x3x49x49xf32>, tensor<6x7xf32>, tensor<4x100xf32>, tensor<2x1000xf32>, tensor<5x16xf32>, tensor<2x37x5xf32>, tensor<4x100xf32>
  }
}
