// The elementwise families no other lavapipe test runs alone, on awkward
// shapes (elementwise-vulkan.test): unary ops on 131 elements (a block and a
// bit) and on 1 x 5 (below a warp), binary ops broadcasting [5, 1, 67]
// against [3, 67] and against a scalar, comparisons to i1. Inputs are
// uniform in [-1, 1): logs, roots, powers, divisions and remainders take
// operands made positive first (exp, x * x + 1), so no NaN is compared.
func.func @main(%x: tensor<131xf32>, %v: tensor<1x5xf32>, %a: tensor<5x1x67xf32>,
                %b: tensor<3x67xf32>, %s: tensor<f32>)
    -> (tensor<131xf32>, tensor<131xf32>, tensor<1x5xf32>, tensor<5x3x67xf32>,
        tensor<5x3x67xf32>, tensor<5x3x67xi1>, tensor<5x3x67xi1>,
        tensor<5x3x67xi1>, tensor<5x3x67xi1>, tensor<5x1x67xf32>) {
  %one = tg.constant dense<1.0> : tensor<f32>
  %sq = tg.mul %x, %x : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  %pos = tg.add %sq, %one : (tensor<131xf32>, tensor<f32>) -> tensor<131xf32>
  // Unary, 131 elements: each result kept apart by a distinct weight.
  %u0 = tg.exp %x : tensor<131xf32>
  %u1 = tg.log %pos : tensor<131xf32>
  %u2 = tg.sqrt %pos : tensor<131xf32>
  %u3 = tg.rsqrt %pos : tensor<131xf32>
  %u4 = tg.erf %x : tensor<131xf32>
  %u5 = tg.gelu %x : tensor<131xf32>
  %u6 = tg.gelu %x {tanh_approximation = true} : tensor<131xf32>
  %u7 = tg.sigmoid %x : tensor<131xf32>
  %u8 = tg.softplus %x : tensor<131xf32>
  %u9 = tg.hardsigmoid %x : tensor<131xf32>
  %s0 = tg.sub %u0, %u1 : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  %s1 = tg.mul %s0, %u2 : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  %s2 = tg.add %s1, %u3 : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  %s3 = tg.sub %s2, %u4 : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  %s4 = tg.mul %s3, %u5 : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  %s5 = tg.add %s4, %u6 : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  %s6 = tg.mul %s5, %u7 : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  %s7 = tg.sub %s6, %u8 : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  %u = tg.add %s7, %u9 : (tensor<131xf32>, tensor<131xf32>) -> tensor<131xf32>
  // The same ops each its own result where fusion cannot merge them.
  %h = tg.hardswish %x : tensor<131xf32>
  %n = tg.neg %h : tensor<131xf32>
  %c = tg.clip %n {min = -0.25 : f64, max = 0.125 : f64} : tensor<131xf32>
  // Below a warp.
  %w0 = tg.tanh %v : tensor<1x5xf32>
  %w1 = tg.relu %w0 : tensor<1x5xf32>
  // Binary with broadcasting.
  %ea = tg.exp %a : tensor<5x1x67xf32>
  %b2 = tg.mul %b, %b : (tensor<3x67xf32>, tensor<3x67xf32>) -> tensor<3x67xf32>
  %bp = tg.add %b2, %one : (tensor<3x67xf32>, tensor<f32>) -> tensor<3x67xf32>
  %p = tg.pow %ea, %b : (tensor<5x1x67xf32>, tensor<3x67xf32>) -> tensor<5x3x67xf32>
  %d = tg.div %a, %bp : (tensor<5x1x67xf32>, tensor<3x67xf32>) -> tensor<5x3x67xf32>
  %mx = tg.max %p, %d : (tensor<5x3x67xf32>, tensor<5x3x67xf32>) -> tensor<5x3x67xf32>
  %mn = tg.min %mx, %b : (tensor<5x3x67xf32>, tensor<3x67xf32>) -> tensor<5x3x67xf32>
  %m = tg.mod %ea, %bp {fmod = true} : (tensor<5x1x67xf32>, tensor<3x67xf32>) -> tensor<5x3x67xf32>
  %eq = tg.equal %mx, %p : (tensor<5x3x67xf32>, tensor<5x3x67xf32>) -> tensor<5x3x67xi1>
  %lt = tg.less %a, %b : (tensor<5x1x67xf32>, tensor<3x67xf32>) -> tensor<5x3x67xi1>
  %le = tg.less_equal %mn, %d : (tensor<5x3x67xf32>, tensor<5x3x67xf32>) -> tensor<5x3x67xi1>
  %ge = tg.greater_equal %a, %s : (tensor<5x1x67xf32>, tensor<f32>) -> tensor<5x1x67xi1>
  %geb = tg.broadcast_to %ge : (tensor<5x1x67xi1>) -> tensor<5x3x67xi1>
  %sc = tg.sub %a, %s : (tensor<5x1x67xf32>, tensor<f32>) -> tensor<5x1x67xf32>
  return %u, %c, %w1, %mn, %m, %eq, %lt, %le, %geb, %sc
      : tensor<131xf32>, tensor<131xf32>, tensor<1x5xf32>, tensor<5x3x67xf32>,
        tensor<5x3x67xf32>, tensor<5x3x67xi1>, tensor<5x3x67xi1>,
        tensor<5x3x67xi1>, tensor<5x3x67xi1>, tensor<5x1x67xf32>
}
