// RUN: loom-opt %s --split-input-file --verify-diagnostics --loom-expand-tf32-roundings | FileCheck %s
// --loom-expand-tf32-roundings (docs/Precision.md, "TF32"): the
// arith.truncf-to-tf32 / arith.extf pair tg.round_tf32 lowers to becomes
// integer rounding on the f32 bits (ties to even at the 13th bit, NaN and
// infinities kept), for scalars and vectors; any other use of tf32 is an
// error at its op. precision-tf32.test checks the arithmetic bit for bit.

// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NOT: tf32
// CHECK: %[[U:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: arith.shrui %[[U]]
// CHECK: arith.andi %{{.*}}, %c-8192_i32
// CHECK: arith.cmpi eq, %{{.*}}, %c2139095040_i32
// CHECK: %[[SEL:.*]] = arith.select
// CHECK: %[[R:.*]] = arith.bitcast %[[SEL]] : i32 to f32
// CHECK: return %[[R]]
func.func @scalar(%x: f32) -> f32 {
  %t = arith.truncf %x : f32 to tf32
  %y = arith.extf %t : tf32 to f32
  return %y : f32
}

// -----

// CHECK-LABEL: func.func @vector
// CHECK-NOT: tf32
// CHECK: arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.constant dense<-8192> : vector<8xi32>
// CHECK: arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
func.func @vector(%x: vector<8xf32>) -> vector<8xf32> {
  %t = arith.truncf %x : vector<8xf32> to vector<8xtf32>
  %y = arith.extf %t : vector<8xtf32> to vector<8xf32>
  return %y : vector<8xf32>
}

// -----

// A tf32 value read by something else than its extension back to f32.
func.func @other_use(%x: f32) -> tf32 {
  // expected-error @+1 {{'arith.truncf' op uses a tf32 value other than as a TF32 rounding (an arith.truncf from f32 that only arith.extf to f32 reads): neither LLVM nor SPIR-V has the type}}
  %t = arith.truncf %x : f32 to tf32
  return %t : tf32
}

// -----

// Another rounding mode than the default is not the interpreter's.
func.func @toward_zero(%x: f32) -> f32 {
  // expected-error @+1 {{uses a tf32 value other than as a TF32 rounding}}
  %t = arith.truncf %x toward_zero : f32 to tf32
  %y = arith.extf %t : tf32 to f32
  return %y : f32
}
