// tg.update_slice on the reference interpreter: one offset for the whole
// tensor, one per index of dimension 0 (each sequence of a batch appends at
// its own length), offsets clamped to [0, N - U] (negative, past the end),
// the same values in the three domains, and a tied argument
// (tg.tied_result), which the interpreter computes as a new value.
//
// RUN: loom-run %s --entry one --print-values 64 --domain f32 | FileCheck %s --check-prefix=ONE
// RUN: loom-run %s --entry one --print-values 64 --domain f64 | FileCheck %s --check-prefix=ONE
// RUN: loom-run %s --entry one --print-values 64 --domain modp | FileCheck %s --check-prefix=ONE
// RUN: loom-run %s --entry per_row --print-values 64 | FileCheck %s --check-prefix=ROW
// RUN: loom-run %s --entry clamped --print-values 64 | FileCheck %s --check-prefix=CLAMP
// RUN: loom-run %s --entry tied --print-values 64 | FileCheck %s --check-prefix=TIED

// ONE-LABEL: @one
// Two rows [7, 8], [9, 10] written at row 1 of a 4x2 base of ones.
// ONE: y: tensor<4x2xf32>
// ONE-NEXT: values: 1 1 7 8 9 10 1 1{{$}}
func.func @one() -> (tensor<4x2xf32> {tg.name = "y"}) {
  %b = tg.constant dense<1.0> : tensor<4x2xf32>
  %u = tg.constant dense<[[7.0, 8.0], [9.0, 10.0]]> : tensor<2x2xf32>
  %o = tg.constant dense<1> : tensor<i64>
  %y = tg.update_slice %b, %u, %o {axis = 0 : i64} : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<i64>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// ROW-LABEL: @per_row
// A [2, 2 heads, 3 positions, 1] cache; batch 0 appends at 2, batch 1 at 0,
// each of its heads its own value.
// ROW: y: tensor<2x2x3x1xf32>
// ROW-NEXT: values: 0 0 1 0 0 2 3 0 0 4 0 0{{$}}
func.func @per_row() -> (tensor<2x2x3x1xf32> {tg.name = "y"}) {
  %b = tg.constant dense<0.0> : tensor<2x2x3x1xf32>
  %u = tg.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %o = tg.constant dense<[2, 0]> : tensor<2xi64>
  %y = tg.update_slice %b, %u, %o {axis = 2 : i64} : (tensor<2x2x3x1xf32>, tensor<2x2x1x1xf32>, tensor<2xi64>) -> tensor<2x2x3x1xf32>
  return %y : tensor<2x2x3x1xf32>
}

// CLAMP-LABEL: @clamped
// Offsets -5 and 9 into 4 positions with 2 rows: clamped to 0 and 2.
// CLAMP: low: tensor<4xf32>
// CLAMP-NEXT: values: 5 6 0 0{{$}}
// CLAMP: high: tensor<4xf32>
// CLAMP-NEXT: values: 0 0 5 6{{$}}
func.func @clamped() -> (tensor<4xf32> {tg.name = "low"}, tensor<4xf32> {tg.name = "high"}) {
  %b = tg.constant dense<0.0> : tensor<4xf32>
  %u = tg.constant dense<[5.0, 6.0]> : tensor<2xf32>
  %lo = tg.constant dense<-5> : tensor<i64>
  %hi = tg.constant dense<9> : tensor<i64>
  %y0 = tg.update_slice %b, %u, %lo {axis = 0 : i64} : (tensor<4xf32>, tensor<2xf32>, tensor<i64>) -> tensor<4xf32>
  %y1 = tg.update_slice %b, %u, %hi {axis = 0 : i64} : (tensor<4xf32>, tensor<2xf32>, tensor<i64>) -> tensor<4xf32>
  return %y0, %y1 : tensor<4xf32>, tensor<4xf32>
}

// TIED-LABEL: @tied
// The cache (argument 0, random) gets the ones at position 3 and is
// returned as its tied result; the sum reads the updated cache.
// TIED: outputs:
// TIED-NEXT: cache: tensor<1x4x2xf32>
// TIED-NEXT: values: {{([-0-9.e]+ )+}}1 1{{$}}
func.func @tied(%cache: tensor<1x4x2xf32> {tg.name = "cache", tg.tied_result = 0 : i64})
    -> (tensor<1x4x2xf32> {tg.name = "cache"}, tensor<1x1x2xf32> {tg.name = "sum"}) {
  %u = tg.constant dense<1.0> : tensor<1x1x2xf32>
  %o = tg.constant dense<3> : tensor<i64>
  %c = tg.update_slice %cache, %u, %o {axis = 1 : i64} : (tensor<1x4x2xf32>, tensor<1x1x2xf32>, tensor<i64>) -> tensor<1x4x2xf32>
  %s = tg.reduce_sum %c {axes = array<i64: 1>} : (tensor<1x4x2xf32>) -> tensor<1x1x2xf32>
  return %c, %s : tensor<1x4x2xf32>, tensor<1x1x2xf32>
}
