// Convolutions cuDNN runs (--backends=cudnn): a strided 2-d one with its
// bias, asymmetric padding and its own ReLU; a grouped, dilated one alone;
// a 1-d one with a bias and a tanh; a 3-d one alone; a weight filter with
// its bias and a sigmoid: every activation cuDNN fuses in f32, each after a
// bias (what has no f32 plan is left to generated kernels:
// lib/Compiler/Backends/CuDNN.cpp). Prime and unequal sizes so that a
// swapped dimension shows.
module {
  func.func @main(%x: tensor<2x5x11x13xf32> {tg.name = "x"}, %w: tensor<7x5x3x3xf32> {tg.name = "w"}, %b: tensor<7xf32> {tg.name = "b"},
                  %g: tensor<1x6x9x10xf32> {tg.name = "g"}, %gw: tensor<4x3x3x2xf32> {tg.name = "gw"},
                  %s: tensor<2x3x17xf32> {tg.name = "s"}, %sw: tensor<4x3x5xf32> {tg.name = "sw"}, %sb: tensor<4xf32> {tg.name = "sb"},
                  %v: tensor<1x2x5x6x7xf32> {tg.name = "v"}, %vw: tensor<3x2x2x3x2xf32> {tg.name = "vw"})
      -> (tensor<2x7x6x6xf32> {tg.name = "y"}, tensor<1x4x5x9xf32> {tg.name = "z"}, tensor<2x4x8xf32> {tg.name = "u"},
          tensor<1x3x4x4x6xf32> {tg.name = "t"}, tensor<2x3x11x13xf32> {tg.name = "q"}) {
    %y = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 2, 1>, activation = #tg<activation relu>}
        : (tensor<2x5x11x13xf32>, tensor<7x5x3x3xf32>, tensor<7xf32>) -> tensor<2x7x6x6xf32>
    %c = tg.conv %g, %gw {groups = 2 : i64, dilations = array<i64: 2, 1>, pads = array<i64: 0, 0, 0, 0>}
        : (tensor<1x6x9x10xf32>, tensor<4x3x3x2xf32>) -> tensor<1x4x5x9xf32>
    %e = tg.conv %s, %sw, %sb {strides = array<i64: 2>, pads = array<i64: 2, 1>, dilations = array<i64: 1>}
        : (tensor<2x3x17xf32>, tensor<4x3x5xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
    %u = tg.tanh %e : tensor<2x4x8xf32>
    %t = tg.conv %v, %vw {strides = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>}
        : (tensor<1x2x5x6x7xf32>, tensor<3x2x2x3x2xf32>) -> tensor<1x3x4x4x6xf32>
    %k = tg.weight "k" : tensor<3x5x1x1xf32>
    %kb = tg.weight "kb" : tensor<3xf32>
    %p = tg.conv %x, %k, %kb {pads = array<i64: 0, 0, 0, 0>} : (tensor<2x5x11x13xf32>, tensor<3x5x1x1xf32>, tensor<3xf32>) -> tensor<2x3x11x13xf32>
    %q = tg.sigmoid %p : tensor<2x3x11x13xf32>
    return %y, %c, %u, %t, %q : tensor<2x7x6x6xf32>, tensor<1x4x5x9xf32>, tensor<2x4x8xf32>, tensor<1x3x4x4x6xf32>, tensor<2x3x11x13xf32>
  }
}
