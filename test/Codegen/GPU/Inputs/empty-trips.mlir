// Row maxima (the combiner's identity -inf, not 0) on rows where some
// threads fold no element (empty-trips-vulkan.test): a row's thread folds
// `tid, tid + T, ...` from the identity, so a thread past the row's end
// (rows of 33 and 40 on 64 threads) and the lanes past the subgroup count
// in the second stage (rows of 32: 4 subgroups of lavapipe's 8 lanes) run
// an empty loop whose result must be the identity. Maxima of negative
// values, and ArgMax's form (what the importer makes of PyTorch's argmax:
// the maximum, the positions equal to it, the maximum of their negated
// positions, all negative but the first).
func.func @main(%a: tensor<5x33xf32>, %b: tensor<7x32xf32>,
                %c: tensor<3x40xf32>)
    -> (tensor<5x1xf32>, tensor<7x1xf32>, tensor<3x1xf32>, tensor<5x1xi64>) {
  %m3 = tg.constant dense<-3.0> : tensor<f32>
  %an = tg.add %a, %m3 : (tensor<5x33xf32>, tensor<f32>) -> tensor<5x33xf32>
  %amax = tg.reduce_max %an {axes = array<i64: 1>} : (tensor<5x33xf32>) -> tensor<5x1xf32>
  %bn = tg.add %b, %m3 : (tensor<7x32xf32>, tensor<f32>) -> tensor<7x32xf32>
  %bmax = tg.reduce_max %bn {axes = array<i64: 1>} : (tensor<7x32xf32>) -> tensor<7x1xf32>
  %cn = tg.add %c, %m3 : (tensor<3x40xf32>, tensor<f32>) -> tensor<3x40xf32>
  %cmax = tg.reduce_max %cn {axes = array<i64: 1>} : (tensor<3x40xf32>) -> tensor<3x1xf32>
  %pos = tg.constant dense<[[-0.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0,
      -8.0, -9.0, -10.0, -11.0, -12.0, -13.0, -14.0, -15.0, -16.0, -17.0,
      -18.0, -19.0, -20.0, -21.0, -22.0, -23.0, -24.0, -25.0, -26.0, -27.0,
      -28.0, -29.0, -30.0, -31.0, -32.0]]> : tensor<1x33xf32>
  %amax0 = tg.reduce_max %a {axes = array<i64: 1>} : (tensor<5x33xf32>) -> tensor<5x1xf32>
  %at = tg.equal %a, %amax0 : (tensor<5x33xf32>, tensor<5x1xf32>) -> tensor<5x33xi1>
  %none = tg.constant dense<-33.0> : tensor<f32>
  %cand = tg.select %at, %pos, %none : (tensor<5x33xi1>, tensor<1x33xf32>, tensor<f32>) -> tensor<5x33xf32>
  %best = tg.reduce_max %cand {axes = array<i64: 1>} : (tensor<5x33xf32>) -> tensor<5x1xf32>
  %neg = tg.neg %best : tensor<5x1xf32>
  %arg = tg.cast %neg : tensor<5x1xf32> to tensor<5x1xi64>
  return %amax, %bmax, %cmax, %arg
      : tensor<5x1xf32>, tensor<7x1xf32>, tensor<3x1xf32>, tensor<5x1xi64>
}
