// --tg-fold-weights bounds what it folds two ways: a computed result (the
// interpreter's f64 evaluation) by `max-elements`, a result of data
// movement folded by copying bytes by `max-moved-bytes`. A transposed
// weight matrix larger than max-elements is still folded: VGG's first
// classifier weight (103 M elements, over the default 2^26) was otherwise
// transposed at every inference (386 ms of 450).
//
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/model.mlir
// RUN: loom-run %t/model.mlir --write-random-weights %t/model.safetensors --seed 2 > /dev/null
// RUN: loom-opt %t/model.mlir --tg-fold-weights="max-elements=8" -o %t/folded.mlir
// RUN: FileCheck %s < %t/folded.mlir
// RUN: loom-run %t/model.mlir --seed 4 --outputs %t/out.safetensors > /dev/null
// RUN: loom-run %t/folded.mlir --seed 4 --compare %t/out.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-opt %t/model.mlir --tg-fold-weights="max-elements=8 max-moved-bytes=64" | FileCheck %s --check-prefix=SMALL

// The transpose (24 elements, 96 bytes) becomes a constant; the product of
// two weights (24 elements, computed) stays.
// CHECK-LABEL: func.func @main
// CHECK-NOT: tg.transpose
// CHECK: tg.constant {{.*}} : tensor<6x4xf32>
// CHECK: tg.mul
// CHECK: return
// SAME: compare: largest error 0
// With 64 bytes a moved result, the transpose stays too.
// SMALL-LABEL: func.func @main
// SMALL: tg.transpose
// SMALL: tg.mul
module attributes {tg.weights = "model.safetensors"} {
  func.func @main(%x: tensor<3x6xf32>) -> (tensor<3x4xf32>, tensor<4x6xf32>) {
    %w = tg.weight "w" : tensor<4x6xf32>
    %v = tg.weight "v" : tensor<4x6xf32>
    %wt = tg.transpose %w {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %y = tg.matmul %x, %wt : (tensor<3x6xf32>, tensor<6x4xf32>) -> tensor<3x4xf32>
    %p = tg.mul %w, %v : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    return %y, %p : tensor<3x4xf32>, tensor<4x6xf32>
  }
}
