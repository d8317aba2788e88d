// --tg-fold-weights rounds every result to its element type before another
// op reads it, as the compiled program holds it (docs/Interpreter.md,
// "Compile-time evaluation"), and casts with one rounding.
//
// RUN: loom-opt %s --tg-fold-weights --canonicalize | FileCheck %s

// 1 + 2^-12 is a quarter of an f16 unit above 1: the f16 sum is 1, so
// (sum - 1) * 4096 is 0. Kept unrounded it was 1.
// CHECK-LABEL: func.func @f16_chain
// CHECK-NEXT: %[[R:.*]] = tg.constant dense<0.000000e+00> : tensor<f16>
// CHECK-NEXT: return %[[R]]
func.func @f16_chain() -> tensor<f16> {
  %one = tg.constant dense<1.0> : tensor<f16>
  %tiny = tg.constant dense<2.44140625e-04> : tensor<f16>
  %scale = tg.constant dense<4096.0> : tensor<f16>
  %s = tg.add %one, %tiny : (tensor<f16>, tensor<f16>) -> tensor<f16>
  %d = tg.sub %s, %one : (tensor<f16>, tensor<f16>) -> tensor<f16>
  %r = tg.mul %d, %scale : (tensor<f16>, tensor<f16>) -> tensor<f16>
  return %r : tensor<f16>
}

// The same in f32: 1 + 2^-25 is 1 in f32.
// CHECK-LABEL: func.func @f32_chain
// CHECK-NEXT: %[[R:.*]] = tg.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: return %[[R]]
func.func @f32_chain() -> tensor<f32> {
  %one = tg.constant dense<1.0> : tensor<f32>
  %tiny = tg.constant dense<2.98023224e-08> : tensor<f32>
  %scale = tg.constant dense<33554432.0> : tensor<f32>
  %s = tg.add %one, %tiny : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %d = tg.sub %s, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = tg.mul %d, %scale : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// f64 to f16 in one rounding: 1 + 2^-11 + 2^-40 is just above half an f16
// unit over 1 and rounds up to 1 + 2^-10; through f32 it would become the
// tie 1 + 2^-11 and round to 1.
// CHECK-LABEL: func.func @f64_to_f16
// CHECK-NEXT: %[[R:.*]] = tg.constant dense<1.000980e+00> : tensor<f16>
// CHECK-NEXT: return %[[R]]
func.func @f64_to_f16() -> tensor<f16> {
  %x = tg.constant dense<1.0004882812509095> : tensor<f64>
  %r = tg.cast %x : tensor<f64> to tensor<f16>
  return %r : tensor<f16>
}
