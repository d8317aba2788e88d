// --tg-fold-weights=fold-roundings=true folds the TF32 roundings of
// parameters (what loom-compile does where only library steps read them:
// docs/Precision.md, "TF32") into tg.constants marked tg.tf32_values, each
// value the rounding's (ties to even: 1 + 2^-11 -> 1, 1 + 3 * 2^-11 ->
// 1 + 2^-9; 1 + 2^-12 -> 1): the folded program computes what the unfolded
// one does, bit for bit on the interpreter. The rounding of the input x is
// not a parameter's and stays; without the option no rounding is folded.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-opt %s --tg-fold-weights=fold-roundings=true --canonicalize | FileCheck %s
// RUN: loom-opt %s --tg-fold-weights=fold-roundings=true -o %t/folded.mlir
// RUN: loom-run %s --outputs %t/want.safetensors > /dev/null
// RUN: loom-run %t/folded.mlir --compare=%t/want.safetensors --tolerance=0 | FileCheck %s --check-prefix=SAME
// RUN: loom-opt %s --tg-fold-weights | FileCheck %s --check-prefix=KEPT
//
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[W:.*]] = tg.constant {tg.tf32_values} dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [1.00195313, 1.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: %[[F:.*]] = tg.constant {tg.tf32_values} dense<{{.*}}> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[X:.*]] = tg.round_tf32 %arg0
// CHECK: tg.matmul %[[X]], %[[W]]
// CHECK: tg.conv %{{.*}}, %[[F]]
// SAME: largest error 0
// KEPT-COUNT-4: tg.round_tf32
module {
  func.func @main(%x: tensor<4x3xf32> {tg.name = "x"}, %i: tensor<1x1x2x2xf32> {tg.name = "i"}) -> (tensor<4x2xf32> {tg.name = "y"}, tensor<1x2x2x2xf32> {tg.name = "z"}) {
    %w = tg.constant dense<[[1.0, 2.0, 1.00146484375], [4.0, 5.0, 1.00048828125]]> : tensor<2x3xf32>
    %t = tg.transpose %w {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %rw = tg.round_tf32 %t : tensor<3x2xf32>
    %rx = tg.round_tf32 %x : tensor<4x3xf32>
    %y = tg.matmul %rx, %rw : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
    %f = tg.constant dense<[[[[1.000244140625]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
    %rf = tg.round_tf32 %f : tensor<2x1x1x1xf32>
    %ri = tg.round_tf32 %i : tensor<1x1x2x2xf32>
    %z = tg.conv %ri, %rf : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
    return %y, %z : tensor<4x2xf32>, tensor<1x2x2x2xf32>
  }
}
