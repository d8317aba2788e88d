// tg.attention on the reference interpreter, on cases whose answers are
// known: zero keys make the softmax uniform, so each output is the mean of
// the values the query sees, which shows the live length, the causal rule
// and the grouped heads; huge scores stay finite (the maximum is subtracted
// before exp); a query that sees no key gives 0. f32 and f64 agree.
//
// RUN: loom-run %s --entry masks --print-values 64 --domain f32 | FileCheck %s --check-prefix=M
// RUN: loom-run %s --entry masks --print-values 64 --domain f64 | FileCheck %s --check-prefix=M
// RUN: loom-run %s --entry stable --print-values 64 | FileCheck %s --check-prefix=S
// RUN: loom-opt %s | loom-opt | FileCheck %s --check-prefix=RT

// RT-LABEL: func.func @masks
// RT: tg.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = true, scale = 1.000000e+00 : f64}

// M-LABEL: @masks
// Values 1, 2, 4, 8 at positions 0..3; two sequences of live lengths 2 and
// 4. Without the mask, sequence 0 averages 1 and 2, sequence 1 all four.
// M: all: tensor<2x1x1x1xf32>
// M-NEXT: values: 1.5 3.75{{$}}
// Causal, 2 queries ending at the live length: sequence 0 (L = 2) sees
// {1} and {1, 2}; sequence 1 (L = 4) {1, 2, 4} and {1, 2, 4, 8}.
// M: causal: tensor<2x1x2x1xf32>
// M-NEXT: values: 1 1.5 2.33333{{[0-9]*}} 3.75{{$}}
// Grouped queries: 2 query heads on one key/value head read the same
// values (live length 3 for both sequences, a rank-0 length).
// M: grouped: tensor<2x2x1x1xf32>
// M-NEXT: values: 2.33333{{[0-9]*}} 2.33333{{[0-9]*}} 2.33333{{[0-9]*}} 2.33333{{[0-9]*}}{{$}}
// A live length of 0 (and one past the capacity, clamped to it).
// M: empty: tensor<2x1x1x1xf32>
// M-NEXT: values: 0 3.75{{$}}
func.func @masks() -> (tensor<2x1x1x1xf32> {tg.name = "all"},
                       tensor<2x1x2x1xf32> {tg.name = "causal"},
                       tensor<2x2x1x1xf32> {tg.name = "grouped"},
                       tensor<2x1x1x1xf32> {tg.name = "empty"}) {
  %k = tg.constant dense<0.0> : tensor<2x1x4x1xf32>
  %v = tg.constant dense<[[[[1.0], [2.0], [4.0], [8.0]]], [[[1.0], [2.0], [4.0], [8.0]]]]> : tensor<2x1x4x1xf32>
  %q1 = tg.constant dense<1.0> : tensor<2x1x1x1xf32>
  %q2 = tg.constant dense<1.0> : tensor<2x1x2x1xf32>
  %qg = tg.constant dense<1.0> : tensor<2x2x1x1xf32>
  %len = tg.constant dense<[2, 4]> : tensor<2xi64>
  %three = tg.constant dense<3> : tensor<i64>
  %edge = tg.constant dense<[0, 9]> : tensor<2xi64>
  %all = tg.attention %q1, %k, %v, %len {scale = 1.0 : f64} : (tensor<2x1x1x1xf32>, tensor<2x1x4x1xf32>, tensor<2x1x4x1xf32>, tensor<2xi64>) -> tensor<2x1x1x1xf32>
  %causal = tg.attention %q2, %k, %v, %len {scale = 1.0 : f64, causal = true} : (tensor<2x1x2x1xf32>, tensor<2x1x4x1xf32>, tensor<2x1x4x1xf32>, tensor<2xi64>) -> tensor<2x1x2x1xf32>
  %grouped = tg.attention %qg, %k, %v, %three {scale = 1.0 : f64} : (tensor<2x2x1x1xf32>, tensor<2x1x4x1xf32>, tensor<2x1x4x1xf32>, tensor<i64>) -> tensor<2x2x1x1xf32>
  %empty = tg.attention %q1, %k, %v, %edge {scale = 1.0 : f64} : (tensor<2x1x1x1xf32>, tensor<2x1x4x1xf32>, tensor<2x1x4x1xf32>, tensor<2xi64>) -> tensor<2x1x1x1xf32>
  return %all, %causal, %grouped, %empty : tensor<2x1x1x1xf32>, tensor<2x1x2x1xf32>, tensor<2x2x1x1xf32>, tensor<2x1x1x1xf32>
}

// S-LABEL: @stable
// Scores 1000 * [1, 0, -1, 1]: exp(1000) overflows a float, but with the
// maximum subtracted the weights are 1/2, 0, 0, 1/2: (2 + 8) / 2.
// S: stable: tensor<1x1x1x1xf32>
// S-NEXT: values: 5{{$}}
func.func @stable() -> (tensor<1x1x1x1xf32> {tg.name = "stable"}) {
  %q = tg.constant dense<1000.0> : tensor<1x1x1x1xf32>
  %k = tg.constant dense<[[[[1.0], [0.0], [-1.0], [1.0]]]]> : tensor<1x1x4x1xf32>
  %v = tg.constant dense<[[[[2.0], [4.0], [6.0], [8.0]]]]> : tensor<1x1x4x1xf32>
  %o = tg.attention %q, %k, %v {scale = 1.0 : f64} : (tensor<1x1x1x1xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
  return %o : tensor<1x1x1x1xf32>
}
