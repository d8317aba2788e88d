// The three number domains of the interpreter agree wherever the computation
// is exact: polynomial ops (matmul, conv, add/sub/mul, sums, integer powers),
// divisions that come out even (means, average pooling), order-based ops on
// integers (max pooling, relu, reduce_max) and data movement. They differ
// where precision matters.
//
// RUN: loom-run %s --entry exact --print-values 64 --domain f32 | FileCheck %s --check-prefixes=EXACT,F32
// RUN: loom-run %s --entry exact --print-values 64 --domain f64 | FileCheck %s --check-prefixes=EXACT,F64
// RUN: loom-run %s --entry exact --print-values 64 --domain modp | FileCheck %s --check-prefixes=EXACT,MODP
// RUN: loom-run %s --entry exact --print-values 64 | FileCheck %s --check-prefixes=EXACT,F32
// RUN: loom-run %s --entry precision --print-values 64 --domain f32 | FileCheck %s --check-prefix=PREC-F32
// RUN: loom-run %s --entry precision --print-values 64 --domain f64 | FileCheck %s --check-prefix=PREC-F64
// RUN: loom-run %s --entry precision --print-values 64 --domain modp | FileCheck %s --check-prefix=PREC-MODP

// EXACT-LABEL: @exact
// EXACT: matmul: tensor<2x2x2xf32>
// EXACT-NEXT: values: -4 3 -6 5 -8 7 -10 9{{$}}
// EXACT: conv: tensor<1x2x2x2xf32>
// EXACT-NEXT: values: 1 5 11 28 0 0 -4 -6{{$}}
// EXACT: arith: tensor<2x3xf32>
// EXACT-NEXT: values: -5 -7 -9 -11 -14 -17{{$}}
// EXACT: pow: tensor<4xf32>
// EXACT-NEXT: values: 9 -8 1 -27{{$}}
// EXACT: sums: tensor<2xf32>
// EXACT-NEXT: values: -6 15{{$}}
// EXACT: means: tensor<3xf32>
// EXACT-NEXT: values: 2 -3 4{{$}}
// EXACT: avgpool: tensor<1x1x2x2xf32>
// EXACT-NEXT: values: 3 4 6 7{{$}}
// EXACT: order: tensor<1x1x2x2xf32>
// EXACT-NEXT: values: 0 2 7 0{{$}}
// EXACT: movement: tensor<3x4xf32>
// EXACT-NEXT: values: 0 1 4 0 0 2 5 0 0 -3 6 0{{$}}
// F32: domain f32
// F64: domain f64
// MODP: domain modp
func.func @exact() -> (tensor<2x2x2xf32> {tg.name = "matmul"}, tensor<1x2x2x2xf32> {tg.name = "conv"},
                       tensor<2x3xf32> {tg.name = "arith"}, tensor<4xf32> {tg.name = "pow"},
                       tensor<2xf32> {tg.name = "sums"}, tensor<3xf32> {tg.name = "means"},
                       tensor<1x1x2x2xf32> {tg.name = "avgpool"}, tensor<1x1x2x2xf32> {tg.name = "order"},
                       tensor<3x4xf32> {tg.name = "movement"}) {
  // [2,2,2] x [2,2] with negative entries.
  %a = tg.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf32>
  %b = tg.constant dense<[[2.0, -1.0], [-3.0, 2.0]]> : tensor<2x2xf32>
  %mm = tg.matmul %a, %b : (tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<2x2x2xf32>
  // 3x3 input 1..9, filters of ones and [[0,-1],[0,0]], bias [0, 0], pads
  // [top 1, left 1, bottom 0, right 0], strides 2.
  %x = tg.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %w = tg.constant dense<[[[[1.0, 1.0], [1.0, 1.0]]], [[[0.0, -1.0], [0.0, 0.0]]]]> : tensor<2x1x2x2xf32>
  %cb = tg.constant dense<[0.0, 0.0]> : tensor<2xf32>
  %conv = tg.conv %x, %w, %cb {pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>}
      : (tensor<1x1x3x3xf32>, tensor<2x1x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  // -(((p + q) * q - q * q) * [[-1], [1]] - (p + q)) with broadcasting.
  %p = tg.constant dense<[[1.0], [-2.0]]> : tensor<2x1xf32>
  %q = tg.constant dense<[-3.0, -4.0, -5.0]> : tensor<3xf32>
  %pq = tg.add %p, %q : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %pqq = tg.mul %pq, %q : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %qq = tg.mul %q, %q : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %arith0 = tg.sub %pqq, %qq : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %m1 = tg.constant dense<[[-1.0], [1.0]]> : tensor<2x1xf32>
  %arith1 = tg.mul %arith0, %m1 : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %arith2 = tg.sub %arith1, %pq : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %arith = tg.neg %arith2 : tensor<2x3xf32>
  // Integer exponents: 3^2, (-2)^3, 5^0, (-3)^3.
  %base = tg.constant dense<[3.0, -2.0, 5.0, -3.0]> : tensor<4xf32>
  %expo = tg.constant dense<[2.0, 3.0, 0.0, 3.0]> : tensor<4xf32>
  %pow = tg.pow %base, %expo : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = tg.constant dense<[[-1.0, -2.0, -3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %sums = tg.reduce_sum %s {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %mv = tg.constant dense<[[1.0, -5.0, 0.0], [3.0, -1.0, 8.0]]> : tensor<2x3xf32>
  %means = tg.reduce_mean %mv {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
  %avg = tg.avgpool %x {kernel_size = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  // relu(maxpool(y)) - 1 on integers, y = [[-5, 1, 3], [-2, -8, 0], [8, -1, -4]].
  %y = tg.constant dense<[[[[-5.0, 1.0, 3.0], [-2.0, -8.0, 0.0], [8.0, -1.0, -4.0]]]]> : tensor<1x1x3x3xf32>
  %mp = tg.maxpool %y {kernel_size = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %mp1 = tg.sub %mp, %one : (tensor<1x1x2x2xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %order = tg.relu %mp1 : tensor<1x1x2x2xf32>
  // pad(transpose(concat)) of integers.
  %c0 = tg.constant dense<[[1.0, 2.0, -3.0]]> : tensor<1x3xf32>
  %c1 = tg.constant dense<[[4.0, 5.0, 6.0]]> : tensor<1x3xf32>
  %cat = tg.concat %c0, %c1 {axis = 0 : i64} : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %t = tg.transpose %cat {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %mov = tg.pad %t {low = array<i64: 0, 1>, high = array<i64: 0, 1>} : (tensor<3x2xf32>) -> tensor<3x4xf32>
  return %mm, %conv, %arith, %pow, %sums, %means, %avg, %order, %mov
      : tensor<2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<2xf32>,
        tensor<3xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<3x4xf32>
}

// (2^24 + 1) - 2^24 and (1 + 2^-30) - 1, computed after a round trip through
// f32: f32 loses the low bits; f64 keeps them (and rounds in the cast); modp
// is exact and maps 2^-30 to 2^31 (2^61 = 1 mod P) and never rounds a cast.
// PREC-F32-LABEL: @precision
// PREC-F32: big: tensor<1xf32>
// PREC-F32-NEXT: values: 0{{$}}
// PREC-F32: small: tensor<1xf64>
// PREC-F32-NEXT: values: 0{{$}}
// PREC-F32: via_f32: tensor<1xf64>
// PREC-F32-NEXT: values: 0{{$}}
// PREC-F32: domain f32
// PREC-F64-LABEL: @precision
// PREC-F64: big: tensor<1xf32>
// PREC-F64-NEXT: values: 1{{$}}
// PREC-F64: small: tensor<1xf64>
// PREC-F64-NEXT: values: 9.31323e-10{{$}}
// PREC-F64: via_f32: tensor<1xf64>
// PREC-F64-NEXT: values: 0{{$}}
// PREC-F64: domain f64
// PREC-MODP-LABEL: @precision
// PREC-MODP: big: tensor<1xf32>
// PREC-MODP-NEXT: values: 1{{$}}
// PREC-MODP: small: tensor<1xf64>
// PREC-MODP-NEXT: values: 2.14748e+09{{$}}
// PREC-MODP: via_f32: tensor<1xf64>
// PREC-MODP-NEXT: values: 2.14748e+09{{$}}
// PREC-MODP: domain modp
func.func @precision() -> (tensor<1xf32> {tg.name = "big"}, tensor<1xf64> {tg.name = "small"},
                           tensor<1xf64> {tg.name = "via_f32"}) {
  %a = tg.constant dense<16777216.0> : tensor<1xf32>
  %one = tg.constant dense<1.0> : tensor<1xf32>
  %a1 = tg.add %a, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %big = tg.sub %a1, %a : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %x = tg.constant dense<1.000000000931322574615478515625> : tensor<1xf64>
  %one64 = tg.constant dense<1.0> : tensor<1xf64>
  %small = tg.sub %x, %one64 : (tensor<1xf64>, tensor<1xf64>) -> tensor<1xf64>
  %xf = tg.cast %x : tensor<1xf64> to tensor<1xf32>
  %xd = tg.cast %xf : tensor<1xf32> to tensor<1xf64>
  %via = tg.sub %xd, %one64 : (tensor<1xf64>, tensor<1xf64>) -> tensor<1xf64>
  return %big, %small, %via : tensor<1xf32>, tensor<1xf64>, tensor<1xf64>
}
