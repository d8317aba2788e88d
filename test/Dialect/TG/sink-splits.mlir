// --tg-sink-splits applies the op every piece of a split goes through once,
// before the split: the per-branch batchnorm and ReLU of a merged
// convolution (tg-superopt's conv(x, concat(W1, W2)) + split) then sit on the
// merged convolution, where --tg-fold-batchnorm folds them; a bias added to
// each piece of a merged product becomes one bias of the product. The
// rewritten functions compute the same values.
//
// RUN: loom-opt %s --tg-sink-splits | FileCheck %s
// RUN: loom-opt %s --tg-sink-splits --tg-fold-batchnorm --tg-fold-weights --canonicalize | FileCheck %s --check-prefix=FOLDED
// RUN: loom-opt %s --tg-sink-splits -o %t.sunk.mlir
// RUN: loom-run %s --entry conv_branches --seed 5 --outputs %t.conv.safetensors > /dev/null
// RUN: loom-run %t.sunk.mlir --entry conv_branches --seed 5 --compare %t.conv.safetensors --tolerance 1e-6 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry product_bias --seed 5 --outputs %t.mm.safetensors > /dev/null
// RUN: loom-run %t.sunk.mlir --entry product_bias --seed 5 --compare %t.mm.safetensors --tolerance 1e-6 | FileCheck %s --check-prefix=SAME
// SAME: compare: largest error

// A convolution merged over two branches, each split piece through its own
// batchnorm and the same ReLU: one batchnorm of the concatenated parameters,
// one ReLU, then the split (nested splits pass too).
// CHECK-LABEL: func.func @conv_branches
// CHECK: %[[C:.*]] = tg.conv
// CHECK-DAG: %[[G:.*]] = tg.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<2xf32>, tensor<1xf32>) -> tensor<3xf32>
// CHECK: %[[BN:.*]] = tg.batchnorm %[[C]], %[[G]]
// CHECK: %[[R:.*]] = tg.relu %[[BN]] : tensor<1x3x4x4xf32>
// CHECK: tg.split %[[R]] {axis = 1 : i64, sizes = array<i64: 2, 1>}
// CHECK-NOT: tg.relu
// CHECK-NOT: tg.batchnorm
// FOLDED-LABEL: func.func @conv_branches
// FOLDED-NOT: tg.batchnorm
// FOLDED: %[[C:.*]] = tg.conv %arg0, %{{.*}}, %{{.*}} :
// FOLDED-NEXT: %[[R:.*]] = tg.relu %[[C]]
// FOLDED-NEXT: tg.split %[[R]]
func.func @conv_branches(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) {
  %w = tg.constant dense<[[[[0.5]], [[-1.0]]], [[[1.0]], [[0.25]]], [[[-0.5]], [[2.0]]]]> : tensor<3x2x1x1xf32>
  %c = tg.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %p:2 = tg.split %c {axis = 1 : i64, sizes = array<i64: 2, 1>} : (tensor<1x3x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>)
  %g0 = tg.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %b0 = tg.constant dense<[0.25, -0.5]> : tensor<2xf32>
  %m0 = tg.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %v0 = tg.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %n0 = tg.batchnorm %p#0, %g0, %b0, %m0, %v0 : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r0 = tg.relu %n0 : tensor<1x2x4x4xf32>
  %g1 = tg.constant dense<[-2.0]> : tensor<1xf32>
  %b1 = tg.constant dense<[0.75]> : tensor<1xf32>
  %m1 = tg.constant dense<[-0.3]> : tensor<1xf32>
  %v1 = tg.constant dense<[0.5]> : tensor<1xf32>
  %n1 = tg.batchnorm %p#1, %g1, %b1, %m1, %v1 : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %r1 = tg.relu %n1 : tensor<1x1x4x4xf32>
  return %r0, %r1 : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>
}

// Q/K/V-like: a product with concatenated weights split along its last
// axis, each piece plus its bias ([N] parameters, concatenated) and scaled
// by one shared scalar (broadcast along the axis, kept as it is).
// CHECK-LABEL: func.func @product_bias
// CHECK: %[[P:.*]] = tg.matmul
// CHECK: %[[B:.*]] = tg.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<3xf32>, tensor<2xf32>) -> tensor<5xf32>
// CHECK: %[[A:.*]] = tg.add %[[P]], %[[B]] : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
// CHECK: %[[M:.*]] = tg.mul %[[A]], %{{.*}} : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
// CHECK: tg.split %[[M]] {axis = 1 : i64, sizes = array<i64: 3, 2>}
// CHECK-NOT: tg.add
func.func @product_bias(%x: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>) {
  %w = tg.constant dense<[[1.0, 0.5, -1.0, 0.0, 2.0], [0.25, 1.0, 0.5, -0.5, 1.0], [-1.0, 0.0, 1.5, 1.0, 0.5], [0.5, -0.25, 0.0, 2.0, -1.0]]> : tensor<4x5xf32>
  %p = tg.matmul %x, %w : (tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  %s:2 = tg.split %p {axis = 1 : i64, sizes = array<i64: 3, 2>} : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>)
  %k = tg.constant dense<0.5> : tensor<f32>
  %b0 = tg.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %a0 = tg.add %s#0, %b0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y0 = tg.mul %a0, %k : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %b1 = tg.constant dense<[-0.4, 0.5]> : tensor<2xf32>
  %a1 = tg.add %s#1, %b1 : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %y1 = tg.mul %a1, %k : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %y0, %y1 : tensor<2x3xf32>, tensor<2x2xf32>
}

// Left alone: different ops on the pieces, a piece with a second use, a
// per-piece operand computed at run time (concatenating it would copy), a
// batchnorm of a split along another axis than the channels, and per-piece
// operands of different scalars (not broadcast-equal).
// CHECK-LABEL: func.func @kept
// CHECK: %[[A:.*]]:2 = tg.split %arg0
// CHECK: tg.relu %[[A]]#0
// CHECK: tg.tanh %[[A]]#1
// CHECK: %[[B:.*]]:2 = tg.split %arg0
// CHECK: tg.relu %[[B]]#0
// CHECK: tg.relu %[[B]]#1
// CHECK: tg.add %[[B]]#1, %[[B]]#1
// CHECK: %[[C:.*]]:2 = tg.split %arg0
// CHECK: tg.add %[[C]]#0, %arg1
// CHECK: tg.add %[[C]]#1, %arg2
// CHECK: %[[D:.*]]:2 = tg.split %arg0 {axis = 2 : i64
// CHECK: tg.batchnorm %[[D]]#0
// CHECK: tg.batchnorm %[[D]]#1
// CHECK: %[[E:.*]]:2 = tg.split %arg0
// CHECK: tg.mul %[[E]]#0
// CHECK: tg.mul %[[E]]#1
func.func @kept(%x: tensor<1x4x2x2xf32>, %u: tensor<1x2x2x2xf32>, %v: tensor<1x2x2x2xf32>)
    -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>,
        tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x4x1x2xf32>, tensor<1x4x1x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %a:2 = tg.split %x {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>)
  %a0 = tg.relu %a#0 : tensor<1x2x2x2xf32>
  %a1 = tg.tanh %a#1 : tensor<1x2x2x2xf32>
  %b:2 = tg.split %x {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>)
  %b0 = tg.relu %b#0 : tensor<1x2x2x2xf32>
  %b1 = tg.relu %b#1 : tensor<1x2x2x2xf32>
  %b2 = tg.add %b#1, %b#1 : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c:2 = tg.split %x {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>)
  %c0 = tg.add %c#0, %u : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c1 = tg.add %c#1, %v : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %d:2 = tg.split %x {axis = 2 : i64, sizes = array<i64: 1, 1>} : (tensor<1x4x2x2xf32>) -> (tensor<1x4x1x2xf32>, tensor<1x4x1x2xf32>)
  %g = tg.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %z = tg.constant dense<[0.0, 0.0, 0.0, 0.0]> : tensor<4xf32>
  %o = tg.constant dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xf32>
  %d0 = tg.batchnorm %d#0, %g, %z, %z, %o : (tensor<1x4x1x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x1x2xf32>
  %d1 = tg.batchnorm %d#1, %g, %z, %z, %o : (tensor<1x4x1x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x1x2xf32>
  %e:2 = tg.split %x {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>)
  %k0 = tg.constant dense<0.5> : tensor<f32>
  %k1 = tg.constant dense<2.0> : tensor<f32>
  %e0 = tg.mul %e#0, %k0 : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %e1 = tg.mul %e#1, %k1 : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  return %a0, %a1, %b0, %b1, %b2, %c0, %c1, %d0, %d1, %e0, %e1
      : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>,
        tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x4x1x2xf32>, tensor<1x4x1x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// Left alone: per-piece parameters whose shapes differ outside the split
// axis (one broadcast over the rows, one not) cannot be concatenated.
// CHECK-LABEL: func.func @kept_shapes
// CHECK: %[[S:.*]]:2 = tg.split %arg0
// CHECK: tg.add %[[S]]#0
// CHECK: tg.add %[[S]]#1
func.func @kept_shapes(%x: tensor<1x4x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %s:2 = tg.split %x {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<1x4x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>)
  %c0 = tg.constant dense<[[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]]> : tensor<1x2x2x2xf32>
  %c1 = tg.constant dense<[[[[0.5]], [[-0.5]]]]> : tensor<1x2x1x1xf32>
  %a0 = tg.add %s#0, %c0 : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %a1 = tg.add %s#1, %c1 : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  return %a0, %a1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
