// Kernels of every class the GPU pipeline maps, on awkward shapes (prime
// extents, fewer and more iterations than a block): a broadcast elementwise
// chain, a softmax (row reductions), a matrix product with a bias, a
// convolution, a full reduction (one sequential loop: one thread), a slice,
// and a constant that is not a splat (stored with the weights).
module {
  func.func @main(%x: tensor<7x131xf32>, %b: tensor<131xf32>, %w: tensor<131x13xf32>,
                  %img: tensor<1x3x11x11xf32>, %k: tensor<5x3x3x3xf32>)
      -> (tensor<7x131xf32>, tensor<7x13xf32>, tensor<1x5x11x11xf32>, tensor<f32>, tensor<7x3xf32>) {
    %e = tg.add %x, %b : (tensor<7x131xf32>, tensor<131xf32>) -> tensor<7x131xf32>
    %t = tg.tanh %e : tensor<7x131xf32>
    %s = tg.softmax %t {axis = 1 : i64} : (tensor<7x131xf32>) -> tensor<7x131xf32>
    %m = tg.matmul %x, %w : (tensor<7x131xf32>, tensor<131x13xf32>) -> tensor<7x13xf32>
    %c = tg.constant dense<[0.5, -1.0, 2.0, 0.25, 3.0, -0.5, 1.5, 0.0, -2.0, 1.0, 0.75, -0.25, 4.0]> : tensor<13xf32>
    %mc = tg.mul %m, %c : (tensor<7x13xf32>, tensor<13xf32>) -> tensor<7x13xf32>
    %y = tg.conv %img, %k {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x3x11x11xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x11x11xf32>
    %r = tg.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<7x131xf32>) -> tensor<f32>
    %sl = tg.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 7, 8>, strides = array<i64: 1, 2>} : (tensor<7x131xf32>) -> tensor<7x3xf32>
    return %s, %mc, %y, %r, %sl : tensor<7x131xf32>, tensor<7x13xf32>, tensor<1x5x11x11xf32>, tensor<f32>, tensor<7x3xf32>
  }
}
