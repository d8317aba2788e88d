// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --canonicalize --cse | FileCheck %s --check-prefix=PASS
// RUN: loom-opt %s --tg-fold-weights | FileCheck %s --check-prefix=PASS
// The bound of a function result of data-dependent length
// (include/loom/Dialect/TG/IR/BoundedResults.h): which dimension is padded
// and which result holds its run-time length. It is a pair of tg attributes,
// checked by verifyResultBounds where it is read (loom-run, loom-compile;
// test/Runtime/output-shape.test), printed and
// parsed back, and the passes keep it: canonicalisation folds the
// arithmetic around the padded value, not its bound.

// CHECK-LABEL: func.func @nonzero
// CHECK-SAME: -> (tensor<2x6xi64> {tg.bounded_dim = 1 : i64, tg.length_result = 1 : i64, tg.name = "nz"}, tensor<i64> {tg.name = "nz_length"})
// PASS-LABEL: func.func @nonzero
// PASS-SAME: -> (tensor<2x6xi64> {tg.bounded_dim = 1 : i64, tg.length_result = 1 : i64, tg.name = "nz"}, tensor<i64> {tg.name = "nz_length"})
// PASS: %[[IDX:.*]], %[[N:.*]] = tg.nonzero
// PASS: return %[[IDX]], %[[N]]
func.func @nonzero(%x: tensor<2x3xf32> {tg.name = "x"})
    -> (tensor<2x6xi64> {tg.name = "nz", tg.bounded_dim = 1 : i64, tg.length_result = 1 : i64},
        tensor<i64> {tg.name = "nz_length"}) {
  %c = tg.constant dense<1.0> : tensor<2x3xf32>
  %y = tg.mul %x, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %idx, %n = tg.nonzero %y : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  return %idx, %n : tensor<2x6xi64>, tensor<i64>
}

// Two padded results sharing one length, after it.
// CHECK-LABEL: func.func @shared_length
// CHECK-SAME: -> (tensor<i64>, tensor<5x4xf32> {tg.bounded_dim = 0 : i64, tg.length_result = 0 : i64}, tensor<5xf32> {tg.bounded_dim = 0 : i64, tg.length_result = 0 : i64})
// PASS-LABEL: func.func @shared_length
// PASS-SAME: -> (tensor<i64>, tensor<5x4xf32> {tg.bounded_dim = 0 : i64, tg.length_result = 0 : i64}, tensor<5xf32> {tg.bounded_dim = 0 : i64, tg.length_result = 0 : i64})
func.func @shared_length(%boxes: tensor<5x4xf32>, %scores: tensor<5xf32>, %n: tensor<i64>)
    -> (tensor<i64>,
        tensor<5x4xf32> {tg.bounded_dim = 0 : i64, tg.length_result = 0 : i64},
        tensor<5xf32> {tg.bounded_dim = 0 : i64, tg.length_result = 0 : i64}) {
  return %n, %boxes, %scores : tensor<i64>, tensor<5x4xf32>, tensor<5xf32>
}
