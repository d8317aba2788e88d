// RUN: loom-opt %s --tg-erase-bounds | FileCheck %s
// --tg-erase-bounds: every tg.bound replaced by its input (loom-compile's
// first pass); the function results' attributes stay.

// CHECK-LABEL: func.func @erase
// CHECK-SAME: tg.bounded_dim = 1 : i64, tg.length_result = 1 : i64
// CHECK-NOT: tg.bound
// CHECK: %[[IDX:.*]], %[[N:.*]] = tg.nonzero
// CHECK-NEXT: return %[[IDX]], %[[N]]
func.func @erase(%m: tensor<6xi1>)
    -> (tensor<1x6xi64> {tg.bounded_dim = 1 : i64, tg.length_result = 1 : i64}, tensor<i64>) {
  %idx, %n = tg.nonzero %m : (tensor<6xi1>) -> (tensor<1x6xi64>, tensor<i64>)
  %b = tg.bound %idx, %n {dim = 1 : i64} : tensor<1x6xi64>, tensor<i64>
  return %b, %n : tensor<1x6xi64>, tensor<i64>
}
