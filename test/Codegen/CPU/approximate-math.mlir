// RUN: loom-opt %s --loom-approximate-math | FileCheck %s

// Transcendental functions become polynomials of arith and fma ops (no libm call
// in a kernel's inner loop), on scalars and vectors alike.
// CHECK-LABEL: func.func @exp_tanh(
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK: math.fma {{.*}} : f32
// CHECK: return
func.func @exp_tanh(%x: f32) -> f32 {
  %e = math.exp %x : f32
  %t = math.tanh %e : f32
  return %t : f32
}

// CHECK-LABEL: func.func @erf_vector(
// CHECK-NOT: math.erf
// CHECK: math.fma {{.*}} : vector<16xf32>
func.func @erf_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.erf %x : vector<16xf32>
  return %y : vector<16xf32>
}
