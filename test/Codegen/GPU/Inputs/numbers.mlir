// Resizes other than the nearest-floor ones of resize.mlir (linear with
// align_corners down and up by odd factors, cubic with half pixels, nearest
// rounding half up with PyTorch's half pixels), and integer arithmetic as
// detectors' post-processing has it (numbers-vulkan.test): i64 and i32
// sums, products, remainders and quotients with negative operands (made
// from inputs in [0, 10)), f32 to i32 casts of negative values, integer
// minima, an f64 sum, comparisons and selects of integers
// (tg's integer arithmetic is f64, as the importer writes it).
func.func @main(%img: tensor<1x3x7x11xf32>, %i: tensor<131xi64>,
                %j: tensor<131xi64>, %f: tensor<5x13xf32>,
                %k: tensor<5x13xi32>)
    -> (tensor<1x3x5x17xf32>, tensor<1x3x13x4xf32>, tensor<1x3x9x23xf32>,
        tensor<131xi64>, tensor<131xi64>, tensor<131xi64>, tensor<131xi64>,
        tensor<131xi64>, tensor<131xi1>,
        tensor<5x13xi32>, tensor<5x13xi32>, tensor<13xf32>, tensor<5x13xf32>,
        tensor<f64>) {
  %lin = tg.resize %img {mode = #tg<resize_mode linear>, coordinate_transformation_mode = #tg<coordinate_mode align_corners>, sizes = array<i64: 1, 3, 5, 17>}
      : (tensor<1x3x7x11xf32>) -> tensor<1x3x5x17xf32>
  %cub = tg.resize %img {mode = #tg<resize_mode cubic>, coordinate_transformation_mode = #tg<coordinate_mode half_pixel>, sizes = array<i64: 1, 3, 13, 4>}
      : (tensor<1x3x7x11xf32>) -> tensor<1x3x13x4xf32>
  %nn = tg.resize %img {mode = #tg<resize_mode nearest>, coordinate_transformation_mode = #tg<coordinate_mode pytorch_half_pixel>, nearest_mode = #tg<nearest_mode round_prefer_ceil>, sizes = array<i64: 1, 3, 9, 23>}
      : (tensor<1x3x7x11xf32>) -> tensor<1x3x9x23xf32>
  // Integers the importer's way: exact f64 arithmetic, cast to i64;
  // a = i - 5 in [-5, 5), b = j + 1 in [1, 11), remainders of either sign.
  %five = tg.constant dense<5.0> : tensor<f64>
  %onef = tg.constant dense<1.0> : tensor<f64>
  %if = tg.cast %i : tensor<131xi64> to tensor<131xf64>
  %jf = tg.cast %j : tensor<131xi64> to tensor<131xf64>
  %af = tg.sub %if, %five : (tensor<131xf64>, tensor<f64>) -> tensor<131xf64>
  %bf = tg.add %jf, %onef : (tensor<131xf64>, tensor<f64>) -> tensor<131xf64>
  %nbf = tg.neg %bf : tensor<131xf64>
  %a = tg.cast %af : tensor<131xf64> to tensor<131xi64>
  %b = tg.cast %bf : tensor<131xf64> to tensor<131xi64>
  %nb = tg.cast %nbf : tensor<131xf64> to tensor<131xi64>
  %m = tg.mod %a, %b : (tensor<131xi64>, tensor<131xi64>) -> tensor<131xi64>
  %mn = tg.mod %a, %nb : (tensor<131xi64>, tensor<131xi64>) -> tensor<131xi64>
  %mf = tg.mod %a, %nb {fmod = true} : (tensor<131xi64>, tensor<131xi64>) -> tensor<131xi64>
  %abf = tg.mul %af, %bf : (tensor<131xf64>, tensor<131xf64>) -> tensor<131xf64>
  %qf = tg.div %abf, %nbf : (tensor<131xf64>, tensor<131xf64>) -> tensor<131xf64>
  %q = tg.cast %qf : tensor<131xf64> to tensor<131xi64>
  %ab = tg.cast %abf : tensor<131xf64> to tensor<131xi64>
  %le = tg.less_equal %m, %a : (tensor<131xi64>, tensor<131xi64>) -> tensor<131xi1>
  %big = tg.select %le, %a, %m : (tensor<131xi1>, tensor<131xi64>, tensor<131xi64>) -> tensor<131xi64>
  // i32 from f32 in [-10, 10): truncation toward zero.
  %ten = tg.constant dense<10.0> : tensor<f32>
  %g = tg.mul %f, %ten : (tensor<5x13xf32>, tensor<f32>) -> tensor<5x13xf32>
  %c = tg.cast %g : tensor<5x13xf32> to tensor<5x13xi32>
  %lt = tg.less %c, %k : (tensor<5x13xi32>, tensor<5x13xi32>) -> tensor<5x13xi1>
  %mi = tg.select %lt, %c, %k : (tensor<5x13xi1>, tensor<5x13xi32>, tensor<5x13xi32>) -> tensor<5x13xi32>
  %eq = tg.equal %mi, %k : (tensor<5x13xi32>, tensor<5x13xi32>) -> tensor<5x13xi1>
  %sel = tg.select %eq, %c, %k : (tensor<5x13xi1>, tensor<5x13xi32>, tensor<5x13xi32>) -> tensor<5x13xi32>
  %back = tg.cast %sel : tensor<5x13xi32> to tensor<5x13xf32>
  %rmax = tg.reduce_max %back {axes = array<i64: 0>, keepdims = false} : (tensor<5x13xf32>) -> tensor<13xf32>
  %tot = tg.reduce_sum %abf {axes = array<i64: 0>, keepdims = false} : (tensor<131xf64>) -> tensor<f64>
  return %lin, %cub, %nn, %mn, %mf, %q, %big, %m, %le, %mi, %sel, %rmax, %back, %tot
      : tensor<1x3x5x17xf32>, tensor<1x3x13x4xf32>, tensor<1x3x9x23xf32>,
        tensor<131xi64>, tensor<131xi64>, tensor<131xi64>, tensor<131xi64>,
        tensor<131xi64>, tensor<131xi1>,
        tensor<5x13xi32>, tensor<5x13xi32>, tensor<13xf32>, tensor<5x13xf32>,
        tensor<f64>
}
