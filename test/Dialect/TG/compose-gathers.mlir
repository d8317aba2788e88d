// RUN: loom-opt %s -canonicalize | FileCheck %s
// The composed gathers pick the same elements (the interpreter on the same
// random inputs, before and after).
// RUN: rm -rf %t && mkdir %t
// RUN: loom-opt %s -canonicalize -o %t/composed.mlir
// RUN: loom-run %s --entry main --seed 3 --outputs %t/before.safetensors > /dev/null
// RUN: loom-run %t/composed.mlir --entry main --seed 3 --compare %t/before.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// SAME: compare: largest error 0 {{.*}}(tolerance 0)
//
// A gather of a gather along the same axis with 1-D inner indices is one
// gather of the data with the indices gathered first (the importer's Slice
// of a Concat along a padded dimension: Mask R-CNN's paste keeps 320 of a
// compacted concatenation's 1692 rows). Negative indices wrap at each level.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<5x7x3xf32>
// CHECK-DAG: %[[I:.*]] = tg.constant dense<[6, 0, -1, 2, 4, 5]> : tensor<6xi64>
// CHECK-DAG: %[[J:.*]] = tg.constant dense<{{\[}}[-1, 0], [3, 3]]> : tensor<2x2xi64>
// CHECK: %[[A:.*]] = tg.gather %[[X]], %[[I]] {axis = 1 : i64} : (tensor<5x7x3xf32>, tensor<6xi64>) -> tensor<5x6x3xf32>
// CHECK-NEXT: %[[K:.*]] = tg.gather %[[I]], %[[J]] : (tensor<6xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
// CHECK-NEXT: tg.gather %[[X]], %[[K]] {axis = 1 : i64} : (tensor<5x7x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2x3xf32>
// Axes that differ, and 2-D inner indices, stay two gathers.
// CHECK-NEXT: tg.gather %[[A]], %[[J]] : (tensor<5x6x3xf32>, tensor<2x2xi64>) -> tensor<2x2x6x3xf32>
// CHECK-NEXT: %[[D:.*]] = tg.gather %[[X]], %{{.*}} {axis = 1 : i64} : (tensor<5x7x3xf32>, tensor<2x3xi64>) -> tensor<5x2x3x3xf32>
// CHECK-NEXT: tg.gather %[[D]], %{{.*}} {axis = 1 : i64} : (tensor<5x2x3x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2x3x3xf32>
func.func @main(%x: tensor<5x7x3xf32>) -> (tensor<5x2x2x3xf32>, tensor<2x2x6x3xf32>, tensor<5x2x2x3x3xf32>) {
  %i = tg.constant dense<[6, 0, -1, 2, 4, 5]> : tensor<6xi64>
  %j = tg.constant dense<[[-1, 0], [3, 3]]> : tensor<2x2xi64>
  %a = tg.gather %x, %i {axis = 1 : i64} : (tensor<5x7x3xf32>, tensor<6xi64>) -> tensor<5x6x3xf32>
  %b = tg.gather %a, %j {axis = -2 : i64} : (tensor<5x6x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2x3xf32>
  %c = tg.gather %a, %j {axis = 0 : i64} : (tensor<5x6x3xf32>, tensor<2x2xi64>) -> tensor<2x2x6x3xf32>
  %i2 = tg.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %d = tg.gather %x, %i2 {axis = 1 : i64} : (tensor<5x7x3xf32>, tensor<2x3xi64>) -> tensor<5x2x3x3xf32>
  %j2 = tg.constant dense<[[1, -2], [0, 1]]> : tensor<2x2xi64>
  %e = tg.gather %d, %j2 {axis = 1 : i64} : (tensor<5x2x3x3xf32>, tensor<2x2xi64>) -> tensor<5x2x2x3x3xf32>
  return %b, %c, %e : tensor<5x2x2x3xf32>, tensor<2x2x6x3xf32>, tensor<5x2x2x3x3xf32>
}
