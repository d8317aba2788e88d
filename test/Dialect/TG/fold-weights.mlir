// --tg-fold-weights computes every op whose operands are weights or
// constants (here a transposed weight matrix, a reshaped bias and a scaled
// constant) at compile time, and leaves ops on data alone.
//
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/model.mlir
// RUN: loom-run %t/model.mlir --write-random-weights %t/model.safetensors --seed 2 > /dev/null
// RUN: loom-opt %t/model.mlir --tg-fold-weights --canonicalize -o %t/folded.mlir
// RUN: FileCheck %s < %t/folded.mlir
// RUN: loom-run %t/model.mlir --seed 4 --outputs %t/ref.safetensors > /dev/null
// RUN: loom-run %t/folded.mlir --seed 4 --compare %t/ref.safetensors --tolerance 1e-6 | FileCheck %s --check-prefix=SAME
// A missing weights file is a diagnostic, not a crash:
// RUN: not loom-opt %t/model.mlir --tg-fold-weights=weights-file=%t/missing.safetensors 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK-LABEL: func.func @main
// CHECK-NOT: tg.transpose
// CHECK-NOT: tg.weight
// CHECK-DAG: %[[W:.*]] = tg.constant {{.*}} : tensor<6x4xf32>
// CHECK-DAG: %[[B:.*]] = tg.constant {{.*}} : tensor<1x4xf32>
// CHECK: %[[M:.*]] = tg.matmul %arg0, %[[W]]
// CHECK: tg.add %[[M]], %[[B]]
// SAME: compare: largest error
// MISSING: error:
module attributes {tg.weights = "model.safetensors"} {
  func.func @main(%x: tensor<3x6xf32>) -> tensor<3x4xf32> {
    %w = tg.weight "fc.weight" : tensor<4x6xf32>
    %b = tg.weight "fc.bias" : tensor<4xf32>
    %wt = tg.transpose %w {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %two = tg.constant dense<2.0> : tensor<f32>
    %b2 = tg.mul %b, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %br = tg.reshape %b2 : (tensor<4xf32>) -> tensor<1x4xf32>
    %m = tg.matmul %x, %wt : (tensor<3x6xf32>, tensor<6x4xf32>) -> tensor<3x4xf32>
    %y = tg.add %m, %br : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
    return %y : tensor<3x4xf32>
  }
}
