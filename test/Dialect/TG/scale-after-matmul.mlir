// --tg-scale-after-matmul moves a one-element constant scale of a moved
// matmul operand (an attention's q / sqrt(d), k * c) onto the product when
// a softmax or an elementwise op reads it, so the scale joins that op's
// kernel and the operand's transpose becomes a view the product reads
// (docs/Compiler.md, "Views folded into matrix products"). The rewritten
// graph computes the same values up to rounding; the cases refused keep
// their scale.
//
// RUN: loom-opt %s --tg-scale-after-matmul | FileCheck %s
// RUN: loom-opt %s --tg-scale-after-matmul -o %t.moved.mlir
// RUN: loom-run %s --entry attention --seed 3 --outputs %t.ref.safetensors > /dev/null
// RUN: loom-run %t.moved.mlir --entry attention --seed 3 --compare %t.ref.safetensors --tolerance 1e-6 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry scaled_rhs --seed 4 --outputs %t.rref.safetensors > /dev/null
// RUN: loom-run %t.moved.mlir --entry scaled_rhs --seed 4 --compare %t.rref.safetensors --tolerance 1e-6 | FileCheck %s --check-prefix=SAME

// CHECK-LABEL: func.func @attention
// CHECK: %[[Q:.*]] = tg.transpose %arg0
// CHECK: %[[P:.*]] = tg.matmul %[[Q]], %arg1
// CHECK: %[[S:.*]] = tg.div %[[P]], %{{.*}} : (tensor<6x5x5xf32>, tensor<f32>)
// CHECK: tg.softmax %[[S]]
// SAME: compare: largest error
func.func @attention(%q: tensor<5x6x4xf32>, %k: tensor<6x4x5xf32>) -> tensor<6x5x5xf32> {
  %t = tg.transpose %q {perm = array<i64: 1, 0, 2>} : (tensor<5x6x4xf32>) -> tensor<6x5x4xf32>
  %c = tg.constant dense<3.0> : tensor<f32>
  %s = tg.div %t, %c : (tensor<6x5x4xf32>, tensor<f32>) -> tensor<6x5x4xf32>
  %p = tg.matmul %s, %k : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  %a = tg.softmax %p {axis = 2 : i64} : (tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  return %a : tensor<6x5x5xf32>
}

// A multiply by a constant on the right operand, read by an add (a mask).
// CHECK-LABEL: func.func @scaled_rhs
// CHECK: %[[K:.*]] = tg.transpose %arg1
// CHECK: %[[P:.*]] = tg.matmul %arg0, %[[K]]
// CHECK: %[[S:.*]] = tg.mul {{.*}}%[[P]]
// CHECK: tg.add %[[S]], %arg2
func.func @scaled_rhs(%q: tensor<6x5x4xf32>, %k: tensor<6x5x4xf32>, %m: tensor<6x5x5xf32>) -> tensor<6x5x5xf32> {
  %t = tg.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<6x5x4xf32>) -> tensor<6x4x5xf32>
  %c = tg.constant dense<0.3> : tensor<f32>
  %s = tg.mul %c, %t : (tensor<f32>, tensor<6x4x5xf32>) -> tensor<6x4x5xf32>
  %p = tg.matmul %q, %s : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  %a = tg.add %p, %m : (tensor<6x5x5xf32>, tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  return %a : tensor<6x5x5xf32>
}

// Refused: the product has a second reader; the scaled operand is no moved
// tensor (an argument); the scale is not one element.
// CHECK-LABEL: func.func @refused
// CHECK-COUNT-3: tg.div {{.*}} -> tensor<6x5x4xf32>
// CHECK-NOT: tg.div
func.func @refused(%q: tensor<5x6x4xf32>, %k: tensor<6x4x5xf32>, %r: tensor<6x5x4xf32>, %v: tensor<4xf32>)
    -> (tensor<6x5x5xf32>, tensor<6x5x5xf32>, tensor<6x5x5xf32>, tensor<6x5x5xf32>) {
  %t = tg.transpose %q {perm = array<i64: 1, 0, 2>} : (tensor<5x6x4xf32>) -> tensor<6x5x4xf32>
  %c = tg.constant dense<3.0> : tensor<f32>
  %w = tg.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s0 = tg.div %t, %c : (tensor<6x5x4xf32>, tensor<f32>) -> tensor<6x5x4xf32>
  %p0 = tg.matmul %s0, %k : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  %a0 = tg.softmax %p0 {axis = 2 : i64} : (tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %s1 = tg.div %r, %c : (tensor<6x5x4xf32>, tensor<f32>) -> tensor<6x5x4xf32>
  %p1 = tg.matmul %s1, %k : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  %a1 = tg.softmax %p1 {axis = 2 : i64} : (tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %s2 = tg.div %t, %w : (tensor<6x5x4xf32>, tensor<4xf32>) -> tensor<6x5x4xf32>
  %p2 = tg.matmul %s2, %k : (tensor<6x5x4xf32>, tensor<6x4x5xf32>) -> tensor<6x5x5xf32>
  %a2 = tg.softmax %p2 {axis = 2 : i64} : (tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  return %a0, %p0, %a1, %a2 : tensor<6x5x5xf32>, tensor<6x5x5xf32>, tensor<6x5x5xf32>, tensor<6x5x5xf32>
}
