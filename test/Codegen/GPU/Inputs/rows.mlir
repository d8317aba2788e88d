// Row reductions on awkward shapes, for the row-reduction kernel class
// (docs/Codegen/GPU.md): rows of 131 (more than a workgroup of 128, not a
// multiple of any subgroup width), of 4099 (prime, 33 elements per thread),
// of 33 (one past a 32-thread workgroup), of 1 (the generic class: shorter
// than min-length), 70000 rows (a grid of 65535 x 2 with a guarded last
// column), one row, two trailing reduction dimensions (5 rows of 2 x 40),
// a softmax, a layer norm and an RMS norm.
module {
  func.func @main(%x: tensor<7x131xf32>, %g: tensor<131xf32>, %b: tensor<131xf32>,
                  %y: tensor<3x1x4099xf32>, %z: tensor<1x33xf32>, %w: tensor<70000x1xf32>,
                  %v: tensor<5x2x40xf32>, %u: tensor<70000x40xf32>)
      -> (tensor<7x131xf32>, tensor<7x131xf32>, tensor<3x1x1xf32>, tensor<1x1xf32>,
          tensor<70000xf32>, tensor<5xf32>, tensor<7xf32>, tensor<3x1x4099xf32>,
          tensor<7x131xf32>, tensor<70000x1xf32>) {
    %s = tg.softmax %x {axis = 1 : i64} : (tensor<7x131xf32>) -> tensor<7x131xf32>
    %l = tg.layernorm %x, %g, %b : (tensor<7x131xf32>, tensor<131xf32>, tensor<131xf32>) -> tensor<7x131xf32>
    %m = tg.reduce_max %y {axes = array<i64: 2>} : (tensor<3x1x4099xf32>) -> tensor<3x1x1xf32>
    %n = tg.reduce_mean %z {axes = array<i64: 1>} : (tensor<1x33xf32>) -> tensor<1x1xf32>
    %o = tg.reduce_sum %w {axes = array<i64: 1>, keepdims = false} : (tensor<70000x1xf32>) -> tensor<70000xf32>
    %p = tg.reduce_sum %v {axes = array<i64: 1, 2>, keepdims = false} : (tensor<5x2x40xf32>) -> tensor<5xf32>
    %q = tg.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<7x131xf32>) -> tensor<7xf32>
    %t = tg.softmax %y {axis = 2 : i64} : (tensor<3x1x4099xf32>) -> tensor<3x1x4099xf32>
    %sq = tg.mul %x, %x : (tensor<7x131xf32>, tensor<7x131xf32>) -> tensor<7x131xf32>
    %ms = tg.reduce_mean %sq {axes = array<i64: 1>} : (tensor<7x131xf32>) -> tensor<7x1xf32>
    %r = tg.rsqrt %ms : tensor<7x1xf32>
    %rms = tg.mul %x, %r : (tensor<7x131xf32>, tensor<7x1xf32>) -> tensor<7x131xf32>
    %big = tg.reduce_max %u {axes = array<i64: 1>} : (tensor<70000x40xf32>) -> tensor<70000x1xf32>
    return %s, %l, %m, %n, %o, %p, %q, %t, %rms, %big : tensor<7x131xf32>, tensor<7x131xf32>, tensor<3x1x1xf32>, tensor<1x1xf32>, tensor<70000xf32>, tensor<5xf32>, tensor<7xf32>, tensor<3x1x4099xf32>, tensor<7x131xf32>, tensor<70000x1xf32>
  }
}
