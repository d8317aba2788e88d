// The structured families no other lavapipe test runs alone, on awkward
// shapes (structured-vulkan.test): pools with odd windows, strides and
// padding on prime images, their gradient, a batch norm, a layer norm over
// the last two axes, reductions along outer axes, the losses, and data
// movement: pad, transpose, gather, scatter_add (indices in [0, 10), the
// target 11 rows), concat, split, enlarge. Variances are made positive
// (exp) so no NaN is compared.
func.func @main(%img: tensor<2x3x23x29xf32>, %dy: tensor<2x3x12x10xf32>,
                %ch: tensor<13xf32>, %x: tensor<2x13x7x11xf32>,
                %t: tensor<3x37x61xf32>, %g: tensor<37x61xf32>,
                %table: tensor<17x5xf32>, %idx: tensor<3x2xi64>,
                %rows: tensor<7x5xf32>, %rowidx: tensor<7xi64>,
                %y: tensor<8x131xf32>, %want: tensor<8x131xf32>,
                %logits: tensor<7x13xf32>, %labels: tensor<7xi64>,
                %w: tensor<5x3x1x3xf32>)
    -> (tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>,
        tensor<2x3x1x1xf32>, tensor<2x3x23x29xf32>, tensor<2x13x7x11xf32>,
        tensor<3x37x61xf32>, tensor<37x61xf32>, tensor<3x1x61xf32>,
        tensor<f32>, tensor<f32>, tensor<4x40x63xf32>, tensor<61x3x37xf32>,
        tensor<3x2x5xf32>, tensor<11x5xf32>, tensor<3x37x122xf32>,
        tensor<3x17x61xf32>, tensor<5x3x5x5xf32>) {
  // Pools: 3x3 stride 2, padding 1 (12 x 15 -> ...), stride 2 x 3 without.
  %mp = tg.maxpool %img {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 3>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<2x3x23x29xf32>) -> tensor<2x3x12x10xf32>
  %ap = tg.avgpool %img {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 3>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<2x3x23x29xf32>) -> tensor<2x3x12x10xf32>
  %ai = tg.avgpool %img {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true}
      : (tensor<2x3x23x29xf32>) -> tensor<2x3x12x10xf32>
  %gp = tg.global_avgpool %img : (tensor<2x3x23x29xf32>) -> tensor<2x3x1x1xf32>
  %mg = tg.maxpool_grad %img, %dy {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 3>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<2x3x23x29xf32>, tensor<2x3x12x10xf32>) -> tensor<2x3x23x29xf32>
  // Normalisations.
  %var = tg.exp %ch : tensor<13xf32>
  %bn = tg.batchnorm %x, %ch, %var, %ch, %var
      : (tensor<2x13x7x11xf32>, tensor<13xf32>, tensor<13xf32>, tensor<13xf32>, tensor<13xf32>) -> tensor<2x13x7x11xf32>
  %ln = tg.layernorm %t, %g, %g {axis = -2 : i64, epsilon = 1.0e-3 : f64}
      : (tensor<3x37x61xf32>, tensor<37x61xf32>, tensor<37x61xf32>) -> tensor<3x37x61xf32>
  // Reductions along outer axes.
  %rm = tg.reduce_max %t {axes = array<i64: 0>, keepdims = false} : (tensor<3x37x61xf32>) -> tensor<37x61xf32>
  %rn = tg.reduce_mean %t {axes = array<i64: 1>, keepdims = true} : (tensor<3x37x61xf32>) -> tensor<3x1x61xf32>
  // Losses.
  %mse = tg.mse_loss %y, %want : (tensor<8x131xf32>, tensor<8x131xf32>) -> tensor<f32>
  %ce = tg.softmax_cross_entropy %logits, %labels : (tensor<7x13xf32>, tensor<7xi64>) -> tensor<f32>
  // Data movement.
  %pd = tg.pad %t {low = array<i64: 1, 2, 0>, high = array<i64: 0, 1, 2>, value = 0.5 : f64}
      : (tensor<3x37x61xf32>) -> tensor<4x40x63xf32>
  %tr = tg.transpose %t {perm = array<i64: 2, 0, 1>} : (tensor<3x37x61xf32>) -> tensor<61x3x37xf32>
  %ga = tg.gather %table, %idx {axis = 0 : i64} : (tensor<17x5xf32>, tensor<3x2xi64>) -> tensor<3x2x5xf32>
  %sa = tg.scatter_add %rows, %rowidx {axis = 0 : i64, dim_size = 11 : i64} : (tensor<7x5xf32>, tensor<7xi64>) -> tensor<11x5xf32>
  %cc = tg.concat %t, %ln {axis = 2 : i64} : (tensor<3x37x61xf32>, tensor<3x37x61xf32>) -> tensor<3x37x122xf32>
  %sp:2 = tg.split %t {axis = 1 : i64, sizes = array<i64: 20, 17>} : (tensor<3x37x61xf32>) -> (tensor<3x20x61xf32>, tensor<3x17x61xf32>)
  %en = tg.enlarge %w {kernel_size = array<i64: 5, 5>} : (tensor<5x3x1x3xf32>) -> tensor<5x3x5x5xf32>
  return %mp, %ap, %ai, %gp, %mg, %bn, %ln, %rm, %rn, %mse, %ce, %pd, %tr, %ga, %sa, %cc, %sp#1, %en
      : tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>, tensor<2x3x12x10xf32>,
        tensor<2x3x1x1xf32>, tensor<2x3x23x29xf32>, tensor<2x13x7x11xf32>,
        tensor<3x37x61xf32>, tensor<37x61xf32>, tensor<3x1x61xf32>,
        tensor<f32>, tensor<f32>, tensor<4x40x63xf32>, tensor<61x3x37xf32>,
        tensor<3x2x5xf32>, tensor<11x5xf32>, tensor<3x37x122xf32>,
        tensor<3x17x61xf32>, tensor<5x3x5x5xf32>
}
