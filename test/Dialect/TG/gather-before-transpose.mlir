// RUN: loom-opt %s -canonicalize | FileCheck %s
// The rewritten gathers pick the same elements (the interpreter on the same
// random inputs, before and after).
// RUN: rm -rf %t && mkdir %t
// RUN: loom-opt %s -canonicalize -o %t/rewritten.mlir
// RUN: loom-run %s --entry main --seed 3 --outputs %t/before.safetensors > /dev/null
// RUN: loom-run %t/rewritten.mlir --entry main --seed 3 --compare %t/before.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// SAME: compare: largest error 0 {{.*}}(tolerance 0)
//
// A gather of a transpose is a transpose of the gather along the axis the
// transpose moved there: a token's column of a transposed embedding table
// (a tied head's weight) is read as one row of the table, and the
// transposes around it compose to nothing.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<6x5xf32>, %[[Y:.*]]: tensor<2x3x4xf32>
// The tied table: its head keeps the transpose, the token's row is a
// gather of the table itself.
// CHECK: %[[T:.*]] = tg.transpose %[[X]] {perm = array<i64: 1, 0>} : (tensor<6x5xf32>) -> tensor<5x6xf32>
// CHECK: tg.gather %[[X]], %{{.*}} : (tensor<6x5xf32>, tensor<1x1xi64>) -> tensor<1x1x5xf32>
// CHECK-NOT: tg.gather %[[T]]
// A rank-3 transpose, 2-D indices (negative ones too), a negative axis.
// CHECK: %[[G:.*]] = tg.gather %[[Y]], %{{.*}} : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> tensor<2x1x3x4xf32>
// CHECK-NEXT: tg.transpose %[[G]] {perm = array<i64: 3, 0, 1, 2>} : (tensor<2x1x3x4xf32>) -> tensor<4x2x1x3xf32>
// A gather that repeats slices into more elements than the data stays.
// CHECK: %[[U:.*]] = tg.transpose %[[Y]] {perm = array<i64: 0, 2, 1>}
// CHECK-NEXT: tg.gather %[[U]], %{{.*}} {axis = 1 : i64} : (tensor<2x4x3xf32>, tensor<5x3xi64>) -> tensor<2x5x3x3xf32>
func.func @main(%x: tensor<6x5xf32>, %y: tensor<2x3x4xf32>, %h: tensor<1x1x5xf32>) -> (tensor<1x1x5xf32>, tensor<1x1x6xf32>, tensor<4x2x1x3xf32>, tensor<2x5x3x3xf32>) {
  %t = tg.transpose %x {perm = array<i64: 1, 0>} : (tensor<6x5xf32>) -> tensor<5x6xf32>
  %ids = tg.constant dense<[[4]]> : tensor<1x1xi64>
  %col = tg.gather %t, %ids {axis = 1 : i64} : (tensor<5x6xf32>, tensor<1x1xi64>) -> tensor<5x1x1xf32>
  %row = tg.transpose %col {perm = array<i64: 1, 2, 0>} : (tensor<5x1x1xf32>) -> tensor<1x1x5xf32>
  %head = tg.matmul %h, %t : (tensor<1x1x5xf32>, tensor<5x6xf32>) -> tensor<1x1x6xf32>
  %p = tg.transpose %y {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %i = tg.constant dense<[[1], [-2]]> : tensor<2x1xi64>
  %g = tg.gather %p, %i {axis = -2 : i64} : (tensor<4x2x3xf32>, tensor<2x1xi64>) -> tensor<4x2x1x3xf32>
  %u = tg.transpose %y {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %r = tg.constant dense<[[0, 1, 2], [3, 0, 1], [2, 3, 0], [1, 2, 3], [0, 0, 0]]> : tensor<5x3xi64>
  %many = tg.gather %u, %r {axis = 1 : i64} : (tensor<2x4x3xf32>, tensor<5x3xi64>) -> tensor<2x5x3x3xf32>
  return %row, %head, %g, %many : tensor<1x1x5xf32>, tensor<1x1x6xf32>, tensor<4x2x1x3xf32>, tensor<2x5x3x3xf32>
}
