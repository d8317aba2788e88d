// Comparisons (tg.equal, tg.greater, tg.greater_equal, tg.less,
// tg.less_equal) and tg.select on the reference interpreter: numpy
// broadcasting, IEEE NaN (every comparison with NaN is false), integers,
// and the same values in the three number domains (in modp, on integers,
// the domain's order of centered representatives, as tg.max uses).
//
// RUN: loom-run %s --entry floats --print-values 64 | FileCheck %s --check-prefix=F
// RUN: loom-run %s --entry ints --print-values 64 --domain f32 | FileCheck %s --check-prefix=I
// RUN: loom-run %s --entry ints --print-values 64 --domain f64 | FileCheck %s --check-prefix=I
// RUN: loom-run %s --entry ints --print-values 64 --domain modp | FileCheck %s --check-prefix=I
// RUN: loom-run %s --entry select --print-values 64 | FileCheck %s --check-prefix=S

// F-LABEL: @floats
// a = [[1, NaN, 3], [-2, 0, 5]] against b = [1, 2, -inf]
// F: eq: tensor<2x3xi1>
// F-NEXT: values: 1 0 0 0 0 0{{$}}
// F: gt: tensor<2x3xi1>
// F-NEXT: values: 0 0 1 0 0 1{{$}}
// F: ge: tensor<2x3xi1>
// F-NEXT: values: 1 0 1 0 0 1{{$}}
// F: lt: tensor<2x3xi1>
// F-NEXT: values: 0 0 0 1 1 0{{$}}
// F: le: tensor<2x3xi1>
// F-NEXT: values: 1 0 0 1 1 0{{$}}
// NaN is not equal to itself.
// F: nan_self: tensor<2x3xi1>
// F-NEXT: values: 1 0 1 1 1 1{{$}}
func.func @floats() -> (tensor<2x3xi1> {tg.name = "eq"}, tensor<2x3xi1> {tg.name = "gt"},
                        tensor<2x3xi1> {tg.name = "ge"}, tensor<2x3xi1> {tg.name = "lt"},
                        tensor<2x3xi1> {tg.name = "le"}, tensor<2x3xi1> {tg.name = "nan_self"}) {
  %a = tg.constant dense<[[1.0, 0x7FC00000, 3.0], [-2.0, 0.0, 5.0]]> : tensor<2x3xf32>
  %b = tg.constant dense<[1.0, 2.0, 0xFF800000]> : tensor<3xf32>
  %eq = tg.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %gt = tg.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %ge = tg.greater_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %lt = tg.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %le = tg.less_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %self = tg.equal %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  return %eq, %gt, %ge, %lt, %le, %self : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>,
      tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>
}

// I-LABEL: @ints
// a = [-3, 0, 7, 7] against the scalar 0 and against b = [-4, 0, 8, 7]
// I: gt0: tensor<4xi1>
// I-NEXT: values: 0 0 1 1{{$}}
// I: le: tensor<4xi1>
// I-NEXT: values: 0 1 1 1{{$}}
// I: eq: tensor<4xi1>
// I-NEXT: values: 0 1 0 1{{$}}
// i1 operands compare as 0 < 1.
// I: bool_lt: tensor<4xi1>
// I-NEXT: values: 0 1 0 0{{$}}
func.func @ints() -> (tensor<4xi1> {tg.name = "gt0"}, tensor<4xi1> {tg.name = "le"},
                      tensor<4xi1> {tg.name = "eq"}, tensor<4xi1> {tg.name = "bool_lt"}) {
  %a = tg.constant dense<[-3, 0, 7, 7]> : tensor<4xi64>
  %b = tg.constant dense<[-4, 0, 8, 7]> : tensor<4xi64>
  %z = tg.constant dense<0> : tensor<i64>
  %gt0 = tg.greater %a, %z : (tensor<4xi64>, tensor<i64>) -> tensor<4xi1>
  %le = tg.less_equal %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %eq = tg.equal %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %blt = tg.less %gt0, %le : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %gt0, %le, %eq, %blt : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// S-LABEL: @select
// relu's gradient pattern: g where x > 0, else 0; the value not chosen
// (here NaN and inf) never leaks.
// S: masked: tensor<2x3xf32>
// S-NEXT: values: 10 0 30 0 0 60{{$}}
// S: bcast: tensor<2x2x3xf32>
// S-NEXT: values: 1 1 1 -5 -5 -5 0 0 0 -5 -5 -5{{$}}
func.func @select() -> (tensor<2x3xf32> {tg.name = "masked"}, tensor<2x2x3xf32> {tg.name = "bcast"}) {
  %x = tg.constant dense<[[1.0, -1.0, 2.0], [0.0, -3.0, 4.0]]> : tensor<2x3xf32>
  %g = tg.constant dense<[[10.0, 0x7FC00000, 30.0], [0x7F800000, 50.0, 60.0]]> : tensor<2x3xf32>
  %zero = tg.constant dense<0.0> : tensor<f32>
  %pos = tg.greater %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
  %masked = tg.select %pos, %g, %zero : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %c = tg.constant dense<[[true], [false]]> : tensor<2x1xi1>
  %t = tg.constant dense<[[[1.0, 1.0, 1.0]], [[0.0, 0.0, 0.0]]]> : tensor<2x1x3xf32>
  %f = tg.constant dense<-5.0> : tensor<3xf32>
  %bcast = tg.select %c, %t, %f : (tensor<2x1xi1>, tensor<2x1x3xf32>, tensor<3xf32>) -> tensor<2x2x3xf32>
  return %masked, %bcast : tensor<2x3xf32>, tensor<2x2x3xf32>
}
