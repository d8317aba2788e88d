// Numeric results of the elementwise ops (binary with numpy broadcasting,
// unary, clip, hardsigmoid, hardswish, gelu, softplus, cast) on the reference
// interpreter, in the default f32 domain. Expected values are computed by
// hand (transcendental ones rounded to the 6 significant digits loom-run
// prints; inputs are chosen so that these digits are several float ulps away
// from a rounding boundary).
//
// RUN: loom-run %s --entry binary --print-values 64 | FileCheck %s --check-prefix=BIN
// RUN: loom-run %s --entry binary_rank3 --print-values 64 | FileCheck %s --check-prefix=BIN3
// RUN: loom-run %s --entry unary --print-values 64 | FileCheck %s --check-prefix=UN
// RUN: loom-run %s --entry gelu --print-values 64 | FileCheck %s --check-prefix=GELU
// RUN: loom-run %s --entry clamps --print-values 64 | FileCheck %s --check-prefix=CLAMP
// RUN: loom-run %s --entry casts --print-values 64 | FileCheck %s --check-prefix=CAST
// RUN: loom-run %s --entry softplus --print-values 64 | FileCheck %s --check-prefix=SOFTPLUS

// BIN-LABEL: loom-run: {{.*}}elementwise.mlir @binary
// BIN: add: tensor<2x3xf32>
// BIN-NEXT: values: 11 12 14 21 22 24{{$}}
// BIN: sub: tensor<2x3xf32>
// BIN-NEXT: values: 9 8 6 19 18 16{{$}}
// BIN: sub_rev: tensor<2x3xf32>
// BIN-NEXT: values: -9 -8 -6 -19 -18 -16{{$}}
// BIN: mul: tensor<2x3xf32>
// BIN-NEXT: values: 10 20 40 20 40 80{{$}}
// BIN: div: tensor<2x3xf32>
// BIN-NEXT: values: 10 5 2.5 20 10 5{{$}}
// BIN: div_rev: tensor<2x3xf32>
// BIN-NEXT: values: 0.1 0.2 0.4 0.05 0.1 0.2{{$}}
// BIN: max: tensor<2x3xf32>
// BIN-NEXT: values: 1.5 2 1.5 -1 2 1.5{{$}}
// BIN: min: tensor<2x3xf32>
// BIN-NEXT: values: -1 1.5 1.5 -3 -3 -3{{$}}
// BIN: pow: tensor<3x3xf32>
// BIN-NEXT: values: 1.41421 4 0.5 2 16 0.25 3 81 0.111111{{$}}
// BIN: scalar: tensor<2x3xf32>
// BIN-NEXT: values: 20 40 80 40 80 160{{$}}
func.func @binary() -> (tensor<2x3xf32> {tg.name = "add"}, tensor<2x3xf32> {tg.name = "sub"},
                        tensor<2x3xf32> {tg.name = "sub_rev"}, tensor<2x3xf32> {tg.name = "mul"},
                        tensor<2x3xf32> {tg.name = "div"}, tensor<2x3xf32> {tg.name = "div_rev"},
                        tensor<2x3xf32> {tg.name = "max"}, tensor<2x3xf32> {tg.name = "min"},
                        tensor<3x3xf32> {tg.name = "pow"}, tensor<2x3xf32> {tg.name = "scalar"}) {
  %a = tg.constant dense<[[10.0], [20.0]]> : tensor<2x1xf32>
  %b = tg.constant dense<[1.0, 2.0, 4.0]> : tensor<3xf32>
  %add = tg.add %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %sub = tg.sub %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %subr = tg.sub %b, %a : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %mul = tg.mul %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %div = tg.div %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %divr = tg.div %b, %a : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %c = tg.constant dense<[[1.5], [-3.0]]> : tensor<2x1xf32>
  %d = tg.constant dense<[-1.0, 2.0, 1.5]> : tensor<3xf32>
  %max = tg.max %c, %d : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %min = tg.min %d, %c : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %base = tg.constant dense<[[2.0], [4.0], [9.0]]> : tensor<3x1xf32>
  %exp = tg.constant dense<[[0.5, 2.0, -1.0]]> : tensor<1x3xf32>
  %pow = tg.pow %base, %exp : (tensor<3x1xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  // A rank-0 operand broadcasts against everything.
  %two = tg.constant dense<2.0> : tensor<f32>
  %scalar = tg.mul %mul, %two : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %add, %sub, %subr, %mul, %div, %divr, %max, %min, %pow, %scalar
      : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>,
        tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>
}

// Both operands broadcast, in different dimensions: [2,1,2] + [3,1].
// BIN3-LABEL: @binary_rank3
// BIN3: result0: tensor<2x3x2xf32>
// BIN3-NEXT: values: 11 12 21 22 31 32 13 14 23 24 33 34{{$}}
// BIN3: result1: tensor<2x3x2xf32>
// BIN3-NEXT: values: -9 -8 -19 -18 -29 -28 -7 -6 -17 -16 -27 -26{{$}}
// Rank 4, alternating broadcast dimensions: [2,1,2,1] + [1,3,1,2].
// BIN3: result2: tensor<2x3x2x2xf32>
// BIN3-NEXT: values: 101 102 201 202 103 104 203 204 105 106 205 206 301 302 401 402 303 304 403 404 305 306 405 406{{$}}
func.func @binary_rank3() -> (tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x2x2xf32>) {
  %a = tg.constant dense<[[[1.0, 2.0]], [[3.0, 4.0]]]> : tensor<2x1x2xf32>
  %b = tg.constant dense<[[10.0], [20.0], [30.0]]> : tensor<3x1xf32>
  %0 = tg.add %a, %b : (tensor<2x1x2xf32>, tensor<3x1xf32>) -> tensor<2x3x2xf32>
  %1 = tg.sub %a, %b : (tensor<2x1x2xf32>, tensor<3x1xf32>) -> tensor<2x3x2xf32>
  %c = tg.constant dense<[[[[100.0], [200.0]]], [[[300.0], [400.0]]]]> : tensor<2x1x2x1xf32>
  %d = tg.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]], [[5.0, 6.0]]]]> : tensor<1x3x1x2xf32>
  %2 = tg.add %c, %d : (tensor<2x1x2x1xf32>, tensor<1x3x1x2xf32>) -> tensor<2x3x2x2xf32>
  return %0, %1, %2 : tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x2x2xf32>
}

// UN-LABEL: @unary
// UN: relu: tensor<5xf32>
// UN-NEXT: values: 0 0 0 0.5 2{{$}}
// UN: sigmoid: tensor<4xf32>
// UN-NEXT: values: 0.5 0.7773 0.320821 0.880797{{$}}
// UN: tanh: tensor<3xf32>
// UN-NEXT: values: 0 0.462117 -0.761594{{$}}
// UN: exp: tensor<4xf32>
// UN-NEXT: values: 1 2.71828 0.286505 1.64872{{$}}
// UN: log: tensor<4xf32>
// UN-NEXT: values: 0 0.693147 -0.693147 1.09861{{$}}
// UN: sqrt: tensor<5xf32>
// UN-NEXT: values: 0 1 2 1.5 1.41421{{$}}
// UN: rsqrt: tensor<4xf32>
// UN-NEXT: values: 1 0.5 2 0.25{{$}}
// UN: neg: tensor<3xf32>
// UN-NEXT: values: -1 2 -0.5{{$}}
// UN: erf: tensor<5xf32>
// UN-NEXT: values: 0 0.5205 0.842701 -0.842701 0.966105{{$}}
// Statistics cover the finite elements only.
// UN: special: tensor<4xf32>  (4 non-finite){{$}}
// UN-NEXT: values: inf -inf {{-?}}nan inf{{$}}
// UN: mixed: tensor<4xf32>  mean 2  min 1  max 3  (2 non-finite){{$}}
// UN-NEXT: values: {{-?}}nan -inf 3 1{{$}}
func.func @unary() -> (tensor<5xf32> {tg.name = "relu"}, tensor<4xf32> {tg.name = "sigmoid"},
                       tensor<3xf32> {tg.name = "tanh"}, tensor<4xf32> {tg.name = "exp"},
                       tensor<4xf32> {tg.name = "log"}, tensor<5xf32> {tg.name = "sqrt"},
                       tensor<4xf32> {tg.name = "rsqrt"}, tensor<3xf32> {tg.name = "neg"},
                       tensor<5xf32> {tg.name = "erf"}, tensor<4xf32> {tg.name = "special"},
                       tensor<4xf32> {tg.name = "mixed"}) {
  %r = tg.constant dense<[-2.0, -0.5, 0.0, 0.5, 2.0]> : tensor<5xf32>
  %relu = tg.relu %r : tensor<5xf32>
  %s = tg.constant dense<[0.0, 1.25, -0.75, 2.0]> : tensor<4xf32>
  %sigmoid = tg.sigmoid %s : tensor<4xf32>
  %t = tg.constant dense<[0.0, 0.5, -1.0]> : tensor<3xf32>
  %tanh = tg.tanh %t : tensor<3xf32>
  %x = tg.constant dense<[0.0, 1.0, -1.25, 0.5]> : tensor<4xf32>
  %exp = tg.exp %x : tensor<4xf32>
  %l = tg.constant dense<[1.0, 2.0, 0.5, 3.0]> : tensor<4xf32>
  %log = tg.log %l : tensor<4xf32>
  %q = tg.constant dense<[0.0, 1.0, 4.0, 2.25, 2.0]> : tensor<5xf32>
  %sqrt = tg.sqrt %q : tensor<5xf32>
  %rq = tg.constant dense<[1.0, 4.0, 0.25, 16.0]> : tensor<4xf32>
  %rsqrt = tg.rsqrt %rq : tensor<4xf32>
  %n = tg.constant dense<[1.0, -2.0, 0.5]> : tensor<3xf32>
  %neg = tg.neg %n : tensor<3xf32>
  %e = tg.constant dense<[0.0, 0.5, 1.0, -1.0, 1.5]> : tensor<5xf32>
  %erf = tg.erf %e : tensor<5xf32>
  // log(0) = -inf, log(-1) = nan, 1/sqrt(0) = inf, exp(100) overflows f32.
  %sp = tg.constant dense<[100.0, 0.0, -1.0, 0.0]> : tensor<4xf32>
  %sp_exp = tg.exp %sp : tensor<4xf32>
  %sp_log = tg.log %sp : tensor<4xf32>
  %sp_rsqrt = tg.rsqrt %sp : tensor<4xf32>
  %e0 = tg.slice %sp_exp {starts = array<i64: 0>, limits = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>
  %l12 = tg.slice %sp_log {starts = array<i64: 1>, limits = array<i64: 3>} : (tensor<4xf32>) -> tensor<2xf32>
  %r3 = tg.slice %sp_rsqrt {starts = array<i64: 3>, limits = array<i64: 4>} : (tensor<4xf32>) -> tensor<1xf32>
  %special = tg.concat %e0, %l12, %r3 {axis = 0 : i64} : (tensor<1xf32>, tensor<2xf32>, tensor<1xf32>) -> tensor<4xf32>
  // log(-1), sqrt(9), log(0), sqrt(1).
  %mx = tg.constant dense<[-1.0, 9.0, 0.0, 1.0]> : tensor<4xf32>
  %mx_log = tg.log %mx : tensor<4xf32>
  %mx_sqrt = tg.sqrt %mx : tensor<4xf32>
  %ml0 = tg.slice %mx_log {starts = array<i64: 0>, limits = array<i64: 4>, strides = array<i64: 2>} : (tensor<4xf32>) -> tensor<2xf32>
  %ms1 = tg.slice %mx_sqrt {starts = array<i64: 1>, limits = array<i64: 4>, strides = array<i64: 2>} : (tensor<4xf32>) -> tensor<2xf32>
  %mixed = tg.concat %ml0, %ms1 {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %relu, %sigmoid, %tanh, %exp, %log, %sqrt, %rsqrt, %neg, %erf, %special, %mixed
      : tensor<5xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<5xf32>, tensor<4xf32>, tensor<3xf32>, tensor<5xf32>, tensor<4xf32>, tensor<4xf32>
}

// GELU-LABEL: @gelu
// GELU: erf_form: tensor<4xf32>
// GELU-NEXT: values: 0 0.841345 -0.158655 1.9545{{$}}
// GELU: tanh_form: tensor<4xf32>
// GELU-NEXT: values: 0 0.841192 -0.158808 1.9546{{$}}
func.func @gelu() -> (tensor<4xf32> {tg.name = "erf_form"}, tensor<4xf32> {tg.name = "tanh_form"}) {
  %x = tg.constant dense<[0.0, 1.0, -1.0, 2.0]> : tensor<4xf32>
  %0 = tg.gelu %x : tensor<4xf32>
  %1 = tg.gelu %x {tanh_approximation = true} : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// softplus(x) = log(1 + exp(x)), computed as max(x, 0) + log(1 + exp(-|x|)):
// exp(100) overflows f32, softplus(100) does not; softplus(-100) is 3.7e-44,
// below what 1 + exp(-100) can hold in f32, so 0.
// SOFTPLUS-LABEL: @softplus
// SOFTPLUS: softplus: tensor<6xf32>
// SOFTPLUS-NEXT: values: 0 0.313262 0.693147 1.31326 20 100{{$}}
func.func @softplus() -> (tensor<6xf32> {tg.name = "softplus"}) {
  %x = tg.constant dense<[-100.0, -1.0, 0.0, 1.0, 20.0, 100.0]> : tensor<6xf32>
  %y = tg.softplus %x : tensor<6xf32>
  return %y : tensor<6xf32>
}

// CLAMP-LABEL: @clamps
// CLAMP: clip: tensor<5xf32>
// CLAMP-NEXT: values: -1 -1 0.5 2 2{{$}}
// CLAMP: hardsigmoid: tensor<6xf32>
// CLAMP-NEXT: values: 0 0.3 0.5 0.7 1 1{{$}}
// CLAMP: hardsigmoid_ab: tensor<4xf32>
// CLAMP-NEXT: values: 0 0.25 0.75 1{{$}}
// CLAMP: hardswish: tensor<6xf32>
// CLAMP-NEXT: values: {{-?}}0 -0.375 0 1.125 3 4{{$}}
func.func @clamps() -> (tensor<5xf32> {tg.name = "clip"}, tensor<6xf32> {tg.name = "hardsigmoid"},
                        tensor<4xf32> {tg.name = "hardsigmoid_ab"}, tensor<6xf32> {tg.name = "hardswish"}) {
  %c = tg.constant dense<[-3.0, -1.0, 0.5, 2.0, 5.0]> : tensor<5xf32>
  %clip = tg.clip %c {min = -1.0 : f64, max = 2.0 : f64} : tensor<5xf32>
  %h = tg.constant dense<[-5.0, -1.0, 0.0, 1.0, 2.5, 3.0]> : tensor<6xf32>
  %hs = tg.hardsigmoid %h : tensor<6xf32>
  %h2 = tg.constant dense<[-2.0, 0.0, 2.0, 4.0]> : tensor<4xf32>
  %hs2 = tg.hardsigmoid %h2 {alpha = 0.25 : f64, beta = 0.25 : f64} : tensor<4xf32>
  %w = tg.constant dense<[-4.0, -1.5, 0.0, 1.5, 3.0, 4.0]> : tensor<6xf32>
  %hw = tg.hardswish %w : tensor<6xf32>
  return %clip, %hs, %hs2, %hw : tensor<5xf32>, tensor<6xf32>, tensor<4xf32>, tensor<6xf32>
}

// f16: 0.1 is not representable (nearest 0.0999756); 1 + 2^-11 is a tie and
// rounds to even (1); 1 + 3 * 2^-11 is a tie and rounds to even (1 + 2^-9);
// 65504 is the largest finite value, 65520 rounds to inf; 6e-8 becomes the
// smallest subnormal 2^-24; 1e-8 underflows to 0.
// CAST-LABEL: @casts
// CAST: f16: tensor<8xf16>
// CAST-NEXT: values: 0.0999756 1 1.00195 65504 inf 5.96046e-08 0 -2{{$}}
// CAST: bf16: tensor<3xbf16>
// CAST-NEXT: values: 3.14062 1 1.01562{{$}}
// CAST: i32: tensor<6xi32>
// CAST-NEXT: values: -2 -1 0 2 3 1e+06{{$}}
// CAST: i1: tensor<5xi1>
// CAST-NEXT: values: 0 0 1 1 1{{$}}
// CAST: from_i1: tensor<3xf32>
// CAST-NEXT: values: 1 0 1{{$}}
// CAST: from_i64: tensor<3xf32>
// CAST-NEXT: values: -7 0 123456{{$}}
// CAST: i64_to_i1: tensor<3xi1>
// CAST-NEXT: values: 1 0 1{{$}}
func.func @casts() -> (tensor<8xf16> {tg.name = "f16"}, tensor<3xbf16> {tg.name = "bf16"},
                       tensor<6xi32> {tg.name = "i32"}, tensor<5xi1> {tg.name = "i1"},
                       tensor<3xf32> {tg.name = "from_i1"}, tensor<3xf32> {tg.name = "from_i64"},
                       tensor<3xi1> {tg.name = "i64_to_i1"}) {
  %h = tg.constant dense<[0.1, 1.00048828125, 1.00146484375, 65504.0, 65520.0, 6.0e-8, 1.0e-8, -2.0]> : tensor<8xf32>
  %f16 = tg.cast %h : tensor<8xf32> to tensor<8xf16>
  // bf16: pi -> 3.140625; 1 + 2^-8 is a tie -> 1; 1 + 3 * 2^-8 -> 1 + 2^-6.
  %b = tg.constant dense<[3.14159, 1.00390625, 1.01171875]> : tensor<3xf32>
  %bf16 = tg.cast %b : tensor<3xf32> to tensor<3xbf16>
  %i = tg.constant dense<[-2.7, -1.5, 0.9, 2.9, 3.0, 1.0e6]> : tensor<6xf32>
  %i32 = tg.cast %i : tensor<6xf32> to tensor<6xi32>
  %z = tg.constant dense<[0.0, -0.0, 0.5, -3.0, 1.0e-30]> : tensor<5xf32>
  %i1 = tg.cast %z : tensor<5xf32> to tensor<5xi1>
  %bools = tg.constant dense<[true, false, true]> : tensor<3xi1>
  %from_i1 = tg.cast %bools : tensor<3xi1> to tensor<3xf32>
  %ints = tg.constant dense<[-7, 0, 123456]> : tensor<3xi64>
  %from_i64 = tg.cast %ints : tensor<3xi64> to tensor<3xf32>
  %i64_to_i1 = tg.cast %ints : tensor<3xi64> to tensor<3xi1>
  return %f16, %bf16, %i32, %i1, %from_i1, %from_i64, %i64_to_i1
      : tensor<8xf16>, tensor<3xbf16>, tensor<6xi32>, tensor<5xi1>, tensor<3xf32>, tensor<3xf32>, tensor<3xi1>
}
