// --tg-fold-weights folds data-movement ops of parameters (concatenation,
// split, slice, transpose, reshape) by copying bytes, and gives the inner
// nodes of a tree of such ops no constant of their own: below, the two
// pairwise concatenations of weights and the concatenation of those (what
// tg-superopt's merges of products leave, NasRNN's 40) become the one
// constant the product reads. The values are the interpreter's, exactly.
//
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/model.mlir
// RUN: loom-run %t/model.mlir --entry tree --write-random-weights %t/model.safetensors --seed 2 > /dev/null
// RUN: loom-opt %t/model.mlir --tg-fold-weights -o %t/folded.mlir
// RUN: FileCheck %s < %t/folded.mlir
// RUN: loom-run %t/model.mlir --entry tree --seed 4 --outputs %t/tree.safetensors > /dev/null
// RUN: loom-run %t/folded.mlir --entry tree --seed 4 --compare %t/tree.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %t/model.mlir --entry values --seed 4 --outputs %t/values.safetensors > /dev/null
// RUN: loom-run %t/folded.mlir --entry values --seed 4 --compare %t/values.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME

// @tree keeps one constant (and its dead weights, which --canonicalize
// removes): the inner concatenations left none.
// CHECK-LABEL: func.func @tree
// CHECK-NOT: tg.constant {{.*}} : tensor<8x8xf32>
// CHECK: tg.constant {{.*}} : tensor<8x16xf32>
// CHECK-NOT: tg.constant
// CHECK-NOT: tg.concat
// CHECK: return
// @values: what the copies hold (the splits, slices and transposes are
// gone; their constants are read by folded ops or by a concatenation with an argument):
// CHECK-LABEL: func.func @values
// CHECK-NOT: tg.split
// CHECK-NOT: tg.slice
// CHECK-NOT: tg.transpose
// CHECK-DAG: tg.constant dense<{{\[\[}}1, 2, 5], [3, 4, 6]]> : tensor<2x3xi64>
// CHECK-DAG: tg.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: tg.constant dense<{{\[\[}}4.000000e+00, 8.000000e+00]]> : tensor<1x2xf32>
// CHECK: return
// SAME: compare: largest error 0
module attributes {tg.weights = "model.safetensors"} {
  func.func @tree(%x: tensor<3x8xf32>) -> tensor<3x16xf32> {
    %w0 = tg.weight "w0" : tensor<8x4xf32>
    %w1 = tg.weight "w1" : tensor<8x4xf32>
    %w2 = tg.weight "w2" : tensor<8x4xf32>
    %w3 = tg.weight "w3" : tensor<8x4xf32>
    %c01 = tg.concat %w0, %w1 {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
    %c23 = tg.concat %w2, %w3 {axis = -1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
    %c = tg.concat %c01, %c23 {axis = 1 : i64} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x16xf32>
    %y = tg.matmul %x, %c : (tensor<3x8xf32>, tensor<8x16xf32>) -> tensor<3x16xf32>
    return %y : tensor<3x16xf32>
  }
  func.func @values(%i: tensor<2x3xi64>) -> (tensor<4x3xi64>, tensor<3x2xf32>, tensor<1x2xf32>) {

    %a = tg.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
    %b = tg.constant dense<[[5], [6]]> : tensor<2x1xi64>
    %ab = tg.concat %a, %b {axis = 1 : i64} : (tensor<2x2xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
    %j = tg.concat %i, %ab {axis = 0 : i64} : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<4x3xi64>

    %f = tg.constant dense<[[1.0, 2.0, 5.0], [3.0, 4.0, 6.0]]> : tensor<2x3xf32>
    %ft = tg.transpose %f {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %zero = tg.constant dense<0.0> : tensor<3x2xf32>
    %t = tg.add %ft, %zero : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>

    %p:2 = tg.split %f {axis = 1 : i64, sizes = array<i64: 2, 1>} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>)
    %s = tg.slice %p#0 {starts = array<i64: 0, 1>, limits = array<i64: 2, 2>, strides = array<i64: 2, 1>} : (tensor<2x2xf32>) -> tensor<1x1xf32>
    %r = tg.reshape %s : (tensor<1x1xf32>) -> tensor<1xf32>
    %two = tg.constant dense<[2.0, 4.0]> : tensor<2xf32>
    %two2 = tg.reshape %two : (tensor<2xf32>) -> tensor<1x2xf32>
    %q = tg.mul %two2, %r : (tensor<1x2xf32>, tensor<1xf32>) -> tensor<1x2xf32>
    return %j, %t, %q : tensor<4x3xi64>, tensor<3x2xf32>, tensor<1x2xf32>
  }
}
