// --tg-fold-batchnorm turns conv + batchnorm into one conv whose filter and
// bias are tg ops on the parameters, and any other batchnorm (a
// pre-activation network's, on a block argument here) into x * k + shift
// with k and shift of one value per channel; --tg-fold-weights then
// computes them. The folded graph computes the same values (up to
// rounding).
//
// RUN: loom-opt %s --tg-fold-batchnorm | FileCheck %s
// RUN: loom-opt %s --tg-fold-batchnorm --tg-fold-weights --canonicalize | FileCheck %s --check-prefix=FOLDED
// RUN: loom-run %s --entry conv_bn --seed 5 --outputs %t.ref.safetensors > /dev/null
// RUN: loom-opt %s --tg-fold-batchnorm --tg-fold-weights -o %t.folded.mlir
// RUN: loom-run %t.folded.mlir --entry conv_bn --seed 5 --compare %t.ref.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry preactivation --seed 5 --outputs %t.pre.safetensors > /dev/null
// RUN: loom-run %t.folded.mlir --entry preactivation --seed 5 --compare %t.pre.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME

// CHECK-LABEL: func.func @conv_bn
// CHECK-NOT: tg.batchnorm
// CHECK: %[[K:.*]] = tg.mul
// CHECK: %[[KF:.*]] = tg.reshape %[[K]]
// CHECK: %[[W:.*]] = tg.mul {{.*}}%[[KF]]
// CHECK: %[[B:.*]] = tg.add
// CHECK: tg.conv %arg0, %[[W]], %[[B]] {pads = array<i64: 1, 1, 1, 1>}
// FOLDED-LABEL: func.func @conv_bn
// FOLDED-NOT: tg.batchnorm
// FOLDED-NOT: tg.mul
// FOLDED: tg.conv %arg0, %{{.*}}, %{{.*}} {pads
// SAME: compare: largest error
func.func @conv_bn(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %w = tg.constant dense<[[[[0.5, -1.0, 0.25], [1.0, 0.0, -0.5], [0.75, 0.5, 1.5]],
                           [[-0.25, 1.0, 0.5], [0.0, 2.0, 1.0], [-1.0, 0.5, 0.25]]],
                          [[[1.0, 1.0, 1.0], [0.5, -0.5, 0.5], [0.0, 0.25, -1.0]],
                           [[2.0, -1.0, 0.0], [1.0, 1.0, -0.75], [0.5, 0.0, 1.0]]],
                          [[[-0.5, 0.25, 1.0], [1.5, -1.0, 0.0], [0.5, 0.5, 0.5]],
                           [[1.0, 0.0, -0.25], [0.75, -0.5, 1.0], [0.0, 1.0, 2.0]]]]> : tensor<3x2x3x3xf32>
  %gamma = tg.constant dense<[1.5, 0.5, -2.0]> : tensor<3xf32>
  %beta = tg.constant dense<[0.25, -1.0, 0.5]> : tensor<3xf32>
  %mean = tg.constant dense<[0.1, -0.2, 0.3]> : tensor<3xf32>
  %var = tg.constant dense<[1.0, 0.25, 4.0]> : tensor<3xf32>
  %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  %y = tg.batchnorm %c, %gamma, %beta, %mean, %var {epsilon = 1.0e-3 : f64}
      : (tensor<1x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x5x5xf32>
  return %y : tensor<1x3x5x5xf32>
}

// A convolution whose result is used twice keeps its batchnorm, which
// becomes a per-channel affine as any batchnorm no convolution takes.
// CHECK-LABEL: func.func @shared_conv
// CHECK-NOT: tg.batchnorm
// CHECK: %[[C:.*]] = tg.conv
// CHECK: %[[S:.*]] = tg.mul %[[C]], %{{.*}} : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>)
// CHECK: tg.add %[[S]], %{{.*}} : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>)
func.func @shared_conv(%x: tensor<1x1x3x3xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) {
  %w = tg.constant dense<2.0> : tensor<1x1x1x1xf32>
  %p = tg.constant dense<1.0> : tensor<1xf32>
  %c = tg.conv %x, %w : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x3x3xf32>
  %y = tg.batchnorm %c, %p, %p, %p, %p : (tensor<1x1x3x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
  return %y, %c : tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>
}

// A batchnorm no convolution takes: x * k + (beta - mean * k), k = gamma *
// rsqrt(var + epsilon), both [1, C, 1, 1] constants once folded.
// CHECK-LABEL: func.func @preactivation
// CHECK-NOT: tg.batchnorm
// CHECK: %[[K:.*]] = tg.mul
// CHECK: %[[SHIFT:.*]] = tg.sub
// CHECK: %[[KR:.*]] = tg.reshape %[[K]] : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
// CHECK: %[[X:.*]] = tg.mul %arg0, %[[KR]]
// CHECK: %[[SR:.*]] = tg.reshape %[[SHIFT]] : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
// CHECK: tg.add %[[X]], %[[SR]] : (tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32>) -> tensor<2x3x4x4xf32>
// FOLDED-LABEL: func.func @preactivation
// FOLDED-NOT: tg.batchnorm
// FOLDED: %[[X:.*]] = tg.mul %arg0, %{{.*}} : (tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32>)
// FOLDED-NEXT: tg.add %[[X]], %{{.*}} : (tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32>)
func.func @preactivation(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %gamma = tg.constant dense<[1.5, 0.5, -2.0]> : tensor<3xf32>
  %beta = tg.constant dense<[0.25, -1.0, 0.5]> : tensor<3xf32>
  %mean = tg.constant dense<[0.1, -0.2, 0.3]> : tensor<3xf32>
  %var = tg.constant dense<[1.0, 0.25, 4.0]> : tensor<3xf32>
  %y = tg.batchnorm %x, %gamma, %beta, %mean, %var {epsilon = 1.0e-3 : f64}
      : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}
