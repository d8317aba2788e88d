// tg.mod on the reference interpreter: the floored remainder of integers
// (the divisor's sign, ONNX Mod fmod=0, Python's %) and C fmod (the
// dividend's sign, fmod=1) for integers and floats, with numpy
// broadcasting; on integers the three number domains agree (modp: the
// remainder of the centered representatives).
//
// RUN: loom-run %s --entry ints --print-values 64 --domain f32 | FileCheck %s --check-prefix=I
// RUN: loom-run %s --entry ints --print-values 64 --domain f64 | FileCheck %s --check-prefix=I
// RUN: loom-run %s --entry ints --print-values 64 --domain modp | FileCheck %s --check-prefix=I
// RUN: loom-run %s --entry floats --print-values 64 | FileCheck %s --check-prefix=F

// I-LABEL: @ints
// a = [-4, -3, 5, 7, 0, -7] against b = [2, -3, 3, -2, 5, 4]. The zero
// remainder of a negative dividend is C fmod's -0 in the float domains,
// which hold the integers (it prints as -0).
// I: floor: tensor<6xi64>
// I-NEXT: values: {{-?}}0 {{-?}}0 2 -1 0 1{{$}}
// I: trunc: tensor<6xi64>
// I-NEXT: values: {{-?}}0 {{-?}}0 2 1 0 -3{{$}}
// Broadcast against a scalar divisor, as Swin's window shift uses it.
// I: window: tensor<2x3xi32>
// I-NEXT: values: 0 1 2 3 0 1{{$}}
func.func @ints() -> (tensor<6xi64> {tg.name = "floor"}, tensor<6xi64> {tg.name = "trunc"},
                      tensor<2x3xi32> {tg.name = "window"}) {
  %a = tg.constant dense<[-4, -3, 5, 7, 0, -7]> : tensor<6xi64>
  %b = tg.constant dense<[2, -3, 3, -2, 5, 4]> : tensor<6xi64>
  %floor = tg.mod %a, %b : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
  %trunc = tg.mod %a, %b {fmod = true} : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
  %i = tg.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>
  %n = tg.constant dense<4> : tensor<i32>
  %w = tg.mod %i, %n : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
  return %floor, %trunc, %w : tensor<6xi64>, tensor<6xi64>, tensor<2x3xi32>
}

// F-LABEL: @floats
// C fmod: the sign of the dividend; a zero divisor gives NaN.
// a = [5.5, -5.5, 5.5, -5.5, 1.0] against b = [2, 2, -2, -2, 0]
// F: fmod: tensor<5xf32>
// F-NEXT: values: 1.5 -1.5 1.5 -1.5 {{-?}}nan{{$}}
func.func @floats() -> (tensor<5xf32> {tg.name = "fmod"}) {
  %a = tg.constant dense<[5.5, -5.5, 5.5, -5.5, 1.0]> : tensor<5xf32>
  %b = tg.constant dense<[2.0, 2.0, -2.0, -2.0, 0.0]> : tensor<5xf32>
  %r = tg.mod %a, %b {fmod = true} : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  return %r : tensor<5xf32>
}
