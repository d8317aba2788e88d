// Numeric results of the reductions (reduce_sum, reduce_mean, reduce_max, with
// and without keepdims), softmax, layernorm and batchnorm on the reference
// interpreter (f32 domain).
//
// RUN: loom-run %s --entry reduce --print-values 64 | FileCheck %s --check-prefix=RED
// RUN: loom-run %s --entry softmax --print-values 64 | FileCheck %s --check-prefix=SOFTMAX
// RUN: loom-run %s --entry layernorm --print-values 64 | FileCheck %s --check-prefix=LN
// RUN: loom-run %s --entry batchnorm --print-values 64 | FileCheck %s --check-prefix=BN

// x = [[1, 2, 3], [4, 5, 6]].
// RED-LABEL: @reduce
// RED: sum_keep: tensor<2x1xf32>
// RED-NEXT: values: 6 15{{$}}
// RED: sum_drop: tensor<2xf32>
// RED-NEXT: values: 6 15{{$}}
// RED: sum_all: tensor<f32>
// RED-NEXT: values: 21{{$}}
// RED: sum_neg_axis: tensor<1x3xf32>
// RED-NEXT: values: 5 7 9{{$}}
// RED: mean_drop: tensor<3xf32>
// RED-NEXT: values: 2.5 3.5 4.5{{$}}
// RED: mean_all_keep: tensor<1x1xf32>
// RED-NEXT: values: 3.5{{$}}
// 0..7 as 2x2x2, mean over axes 0 and 2: {0, 1, 4, 5} and {2, 3, 6, 7}.
// RED: mean_outer: tensor<1x2x1xf32>
// RED-NEXT: values: 2.5 4.5{{$}}
// reduce_max starts below every value: the maxima of all-negative rows stay negative.
// RED: max_keep: tensor<2x1xf32>
// RED-NEXT: values: -2 0{{$}}
// RED: max_drop: tensor<2xf32>
// RED-NEXT: values: -2 0{{$}}
// Axes given out of order, [2, 0], over [[[1, 8], [3, 2]], [[5, 4], [-7, 6]]].
// RED: max_unsorted: tensor<1x2x1xf32>
// RED-NEXT: values: 8 6{{$}}
func.func @reduce() -> (tensor<2x1xf32> {tg.name = "sum_keep"}, tensor<2xf32> {tg.name = "sum_drop"},
                        tensor<f32> {tg.name = "sum_all"}, tensor<1x3xf32> {tg.name = "sum_neg_axis"},
                        tensor<3xf32> {tg.name = "mean_drop"}, tensor<1x1xf32> {tg.name = "mean_all_keep"},
                        tensor<1x2x1xf32> {tg.name = "mean_outer"}, tensor<2x1xf32> {tg.name = "max_keep"},
                        tensor<2xf32> {tg.name = "max_drop"}, tensor<1x2x1xf32> {tg.name = "max_unsorted"}) {
  %x = tg.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = tg.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %1 = tg.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %2 = tg.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  %3 = tg.reduce_sum %x {axes = array<i64: -2>, keepdims = true} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  %4 = tg.reduce_mean %x {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
  %5 = tg.reduce_mean %x {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  %y = tg.constant dense<[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]> : tensor<2x2x2xf32>
  %6 = tg.reduce_mean %y {axes = array<i64: 0, 2>} : (tensor<2x2x2xf32>) -> tensor<1x2x1xf32>
  %n = tg.constant dense<[[-5.0, -2.0, -9.0], [0.0, -1.0, -3.0]]> : tensor<2x3xf32>
  %7 = tg.reduce_max %n {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %8 = tg.reduce_max %n {axes = array<i64: -1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %z = tg.constant dense<[[[1.0, 8.0], [3.0, 2.0]], [[5.0, 4.0], [-7.0, 6.0]]]> : tensor<2x2x2xf32>
  %9 = tg.reduce_max %z {axes = array<i64: 2, 0>} : (tensor<2x2x2xf32>) -> tensor<1x2x1xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9
      : tensor<2x1xf32>, tensor<2xf32>, tensor<f32>, tensor<1x3xf32>, tensor<3xf32>, tensor<1x1xf32>,
        tensor<1x2x1xf32>, tensor<2x1xf32>, tensor<2xf32>, tensor<1x2x1xf32>
}

// SOFTMAX-LABEL: @softmax
// softmax([0, 1, 1]) = [1, e, e] / (1 + 2e).
// SOFTMAX: last: tensor<2x3xf32>
// SOFTMAX-NEXT: values: 0.155362 0.422319 0.422319 0.422319 0.422319 0.155362{{$}}
// Along axis 0 of [[0, 5], [ln 3, 5]]: columns [1, 3] / 4 and [1, 1] / 2.
// SOFTMAX: axis0: tensor<2x2xf32>
// SOFTMAX-NEXT: values: 0.25 0.5 0.75 0.5{{$}}
// The maximum is subtracted first, so large inputs do not overflow.
// SOFTMAX: large: tensor<1x4xf32>
// SOFTMAX-NEXT: values: 0.25 0.25 0.25 0.25{{$}}
// A size-1 axis gives 1.
// SOFTMAX: single: tensor<2x1xf32>
// SOFTMAX-NEXT: values: 1 1{{$}}
func.func @softmax() -> (tensor<2x3xf32> {tg.name = "last"}, tensor<2x2xf32> {tg.name = "axis0"},
                         tensor<1x4xf32> {tg.name = "large"}, tensor<2x1xf32> {tg.name = "single"}) {
  %x = tg.constant dense<[[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]]> : tensor<2x3xf32>
  %0 = tg.softmax %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = tg.constant dense<[[0.0, 5.0], [1.0986122886681098, 5.0]]> : tensor<2x2xf32>
  %1 = tg.softmax %y {axis = 0 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %z = tg.constant dense<[[1000.0, 1000.0, 1000.0, 1000.0]]> : tensor<1x4xf32>
  %2 = tg.softmax %z {axis = -1 : i64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %w = tg.constant dense<[[-3.0], [50.0]]> : tensor<2x1xf32>
  %3 = tg.softmax %w {axis = 1 : i64} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x2xf32>, tensor<1x4xf32>, tensor<2x1xf32>
}

// LN-LABEL: @layernorm
// Rows [1, 3, 1, 3] and [0, 4, 0, 4] both normalise to [-1, 1, -1, 1] (epsilon
// 0); scale [1, 2, 3, 4], bias [0, 0, 0, 0.5].
// LN: affine: tensor<2x4xf32>
// LN-NEXT: values: -1 2 -3 4.5 -1 2 -3 4.5{{$}}
// Default epsilon 1e-5: 1 / sqrt(1 + 1e-5) = 0.999995.
// LN: default_eps: tensor<1x4xf32>
// LN-NEXT: values: -0.999995 0.999995 -0.999995 0.999995{{$}}
// axis = -2: statistics over the last two dims; scale and bias are 2x2.
// LN: two_dims: tensor<1x2x2xf32>
// LN-NEXT: values: -1 1 -2 3{{$}}
// axis = 0: statistics over everything.
// LN: all: tensor<2x2xf32>
// LN-NEXT: values: -1 -1 1 1{{$}}
func.func @layernorm() -> (tensor<2x4xf32> {tg.name = "affine"}, tensor<1x4xf32> {tg.name = "default_eps"},
                           tensor<1x2x2xf32> {tg.name = "two_dims"}, tensor<2x2xf32> {tg.name = "all"}) {
  %x = tg.constant dense<[[1.0, 3.0, 1.0, 3.0], [0.0, 4.0, 0.0, 4.0]]> : tensor<2x4xf32>
  %s = tg.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = tg.constant dense<[0.0, 0.0, 0.0, 0.5]> : tensor<4xf32>
  %0 = tg.layernorm %x, %s, %b {epsilon = 0.0 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %x1 = tg.constant dense<[[1.0, 3.0, 1.0, 3.0]]> : tensor<1x4xf32>
  %ones = tg.constant dense<1.0> : tensor<4xf32>
  %zeros = tg.constant dense<0.0> : tensor<4xf32>
  %1 = tg.layernorm %x1, %ones, %zeros : (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %x2 = tg.constant dense<[[[1.0, 3.0], [1.0, 3.0]]]> : tensor<1x2x2xf32>
  %s2 = tg.constant dense<[[1.0, 1.0], [2.0, 2.0]]> : tensor<2x2xf32>
  %b2 = tg.constant dense<[[0.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %2 = tg.layernorm %x2, %s2, %b2 {axis = -2 : i64, epsilon = 0.0 : f64}
      : (tensor<1x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2xf32>
  %x3 = tg.constant dense<[[5.0, 5.0], [7.0, 7.0]]> : tensor<2x2xf32>
  %s3 = tg.constant dense<1.0> : tensor<2x2xf32>
  %b3 = tg.constant dense<0.0> : tensor<2x2xf32>
  %3 = tg.layernorm %x3, %s3, %b3 {axis = 0 : i64, epsilon = 0.0 : f64}
      : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0, %1, %2, %3 : tensor<2x4xf32>, tensor<1x4xf32>, tensor<1x2x2xf32>, tensor<2x2xf32>
}

// BN-LABEL: @batchnorm
// scale [2, 1], bias [0, 1], mean [1, 10], var [4, 25], epsilon 0: channel 0
// is (x - 1) / 2 * 2, channel 1 is (x - 10) / 5 + 1; two images.
// BN: nchw: tensor<2x2x1x2xf32>
// BN-NEXT: values: 0 2 1 3 4 -2 -1 2{{$}}
// Rank 2 ([N, C]) input.
// BN: nc: tensor<2x2xf32>
// BN-NEXT: values: -1 -1 1 1{{$}}
// Default epsilon 1e-5.
// BN: default_eps: tensor<1x1x2xf32>
// BN-NEXT: values: 0.999995 -0.999995{{$}}
func.func @batchnorm() -> (tensor<2x2x1x2xf32> {tg.name = "nchw"}, tensor<2x2xf32> {tg.name = "nc"},
                           tensor<1x1x2xf32> {tg.name = "default_eps"}) {
  %x = tg.constant dense<[[[[1.0, 3.0]], [[10.0, 20.0]]], [[[5.0, -1.0]], [[0.0, 15.0]]]]> : tensor<2x2x1x2xf32>
  %scale = tg.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %bias = tg.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = tg.constant dense<[1.0, 10.0]> : tensor<2xf32>
  %var = tg.constant dense<[4.0, 25.0]> : tensor<2xf32>
  %0 = tg.batchnorm %x, %scale, %bias, %mean, %var {epsilon = 0.0 : f64}
      : (tensor<2x2x1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x1x2xf32>
  %y = tg.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %ones = tg.constant dense<1.0> : tensor<2xf32>
  %zeros = tg.constant dense<0.0> : tensor<2xf32>
  %m = tg.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %1 = tg.batchnorm %y, %ones, %zeros, %m, %ones {epsilon = 0.0 : f64}
      : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %z = tg.constant dense<[[[2.0, 0.0]]]> : tensor<1x1x2xf32>
  %one = tg.constant dense<1.0> : tensor<1xf32>
  %zero = tg.constant dense<0.0> : tensor<1xf32>
  %2 = tg.batchnorm %z, %one, %zero, %one, %one : (tensor<1x1x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x2xf32>
  return %0, %1, %2 : tensor<2x2x1x2xf32>, tensor<2x2xf32>, tensor<1x1x2xf32>
}
