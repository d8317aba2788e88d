// tg.cast from a float to an integer type truncates toward zero, and
// integers have no negative zero: the documented semantics (TGOps.td, "float
// to integer truncates toward zero") give 0 for -0.5 and for -0.0, so a
// later cast back to f32 and 1 / x must give +inf, as in numpy:
// 1 / np.float32(np.int32(np.float32(-0.5))) == inf.
//
// RUN: loom-run %s --print-values 64 | FileCheck %s
// RUN: loom-run %s --print-values 64 --domain f64 | FileCheck %s

// CHECK-LABEL: @int_cast_signed_zero
// CHECK: i32: tensor<2xi32>
// CHECK-NEXT: values: 0 0{{$}}
// CHECK: recip: tensor<2xf32>
// CHECK-NEXT: values: inf inf{{$}}
func.func @int_cast_signed_zero() -> (tensor<2xi32> {tg.name = "i32"}, tensor<2xf32> {tg.name = "recip"}) {
  %x = tg.constant dense<[-0.5, -0.0]> : tensor<2xf32>
  %i = tg.cast %x : tensor<2xf32> to tensor<2xi32>
  %f = tg.cast %i : tensor<2xi32> to tensor<2xf32>
  %one = tg.constant dense<1.0> : tensor<2xf32>
  %r = tg.div %one, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %i, %r : tensor<2xi32>, tensor<2xf32>
}
