// Row groups (docs/Codegen/GPU.md, "Row groups") on a transformer's
// shapes: a residual sum and its layer norm (rows of 768, 74 of them), a
// masked softmax over attention scores (rows of 37, two row loops), an RMS
// norm (rows of 300, not a multiple of any subgroup width), and a softmax
// of 66,000 rows (a grid of 65535 x 2 whose last column has no rows: its
// workgroups read the last row and store nothing).
module {
  func.func @main(%x: tensor<2x37x768xf32>, %r: tensor<2x37x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>,
                  %s: tensor<2x4x37x37xf32>, %mask: tensor<2x1x1x37xf32>, %v: tensor<5x300xf32>, %w: tensor<300xf32>,
                  %u: tensor<66000x33xf32>)
      -> (tensor<2x37x768xf32>, tensor<2x4x37x37xf32>, tensor<5x300xf32>, tensor<66000x33xf32>) {
    %sum = tg.add %x, %r : (tensor<2x37x768xf32>, tensor<2x37x768xf32>) -> tensor<2x37x768xf32>
    %ln = tg.layernorm %sum, %g, %b : (tensor<2x37x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x37x768xf32>
    %masked = tg.add %s, %mask : (tensor<2x4x37x37xf32>, tensor<2x1x1x37xf32>) -> tensor<2x4x37x37xf32>
    %p = tg.softmax %masked {axis = 3 : i64} : (tensor<2x4x37x37xf32>) -> tensor<2x4x37x37xf32>
    %sq = tg.mul %v, %v : (tensor<5x300xf32>, tensor<5x300xf32>) -> tensor<5x300xf32>
    %ms = tg.reduce_mean %sq {axes = array<i64: 1>} : (tensor<5x300xf32>) -> tensor<5x1xf32>
    %rs = tg.rsqrt %ms : tensor<5x1xf32>
    %n = tg.mul %v, %rs : (tensor<5x300xf32>, tensor<5x1xf32>) -> tensor<5x300xf32>
    %rms = tg.mul %n, %w : (tensor<5x300xf32>, tensor<300xf32>) -> tensor<5x300xf32>
    %q = tg.softmax %u {axis = 1 : i64} : (tensor<66000x33xf32>) -> tensor<66000x33xf32>
    return %ln, %p, %rms, %q : tensor<2x37x768xf32>, tensor<2x4x37x37xf32>, tensor<5x300xf32>, tensor<66000x33xf32>
  }
}
