// RUN: loom-opt %s -canonicalize -split-input-file | FileCheck %s
// Folders and canonicalisation patterns of the tg dialect.

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tg.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----
// CHECK-LABEL: func.func @transpose_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = tg.transpose %[[X]] {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: return %[[T]]
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = tg.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = tg.transpose %0 {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  %2 = tg.transpose %1 {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  return %2 : tensor<4x3x2xf32>
}

// -----
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tg.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = tg.transpose %0 {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----
// CHECK-LABEL: func.func @transpose_splat
// CHECK-NEXT: %[[C:.*]] = tg.constant dense<1.500000e+00> : tensor<3x2xf32>
// CHECK-NEXT: return %[[C]]
func.func @transpose_splat() -> tensor<3x2xf32> {
  %c = tg.constant dense<1.5> : tensor<2x3xf32>
  %0 = tg.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----
// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = tg.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<24xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %0 = tg.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = tg.reshape %0 : (tensor<6x4xf32>) -> tensor<24xf32>
  return %1 : tensor<24xf32>
}

// -----
// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<6x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_identity(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %0 = tg.reshape %x : (tensor<6x4xf32>) -> tensor<24xf32>
  %1 = tg.reshape %0 : (tensor<24xf32>) -> tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// -----
// CHECK-LABEL: func.func @reshape_constant
// CHECK-NEXT: %[[C:.*]] = tg.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK-NEXT: return %[[C]]
func.func @reshape_constant() -> tensor<2x2xi64> {
  %c = tg.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %0 = tg.reshape %c : (tensor<4xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----
// CHECK-LABEL: func.func @identity_slices
// CHECK-SAME: (%[[X:.*]]: tensor<4x1xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @identity_slices(%x: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
  %0 = tg.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 1>} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %1 = tg.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 1>, strides = array<i64: 1, 5>} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  return %0, %1 : tensor<4x1xf32>, tensor<4x1xf32>
}

// -----
// A slice that keeps the shape but not the elements is not folded.
// CHECK-LABEL: func.func @shifted_slice
// CHECK: tg.slice
func.func @shifted_slice(%x: tensor<4xf32>) -> tensor<2xf32> {
  %0 = tg.slice %x {starts = array<i64: 2>, limits = array<i64: 4>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----
// CHECK-LABEL: func.func @trivial_movement
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<4x4x3x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]], %[[W]]
func.func @trivial_movement(%x: tensor<2x3xf32>, %w: tensor<4x4x3x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x4x3x3xf32>) {
  %0 = tg.pad %x {low = array<i64: 0, 0>, high = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = tg.broadcast_to %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = tg.concat %x {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = tg.split %x {axis = 1 : i64, sizes = array<i64: 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = tg.cast %x : tensor<2x3xf32> to tensor<2x3xf32>
  %5 = tg.enlarge %w {kernel_size = array<i64: 3, 3>} : (tensor<4x4x3x3xf32>) -> tensor<4x4x3x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x4x3x3xf32>
}

// -----
// CHECK-LABEL: func.func @broadcast_splat
// CHECK-NEXT: %[[C:.*]] = tg.constant dense<2.000000e+00> : tensor<4x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @broadcast_splat() -> tensor<4x3xf32> {
  %c = tg.constant dense<2.0> : tensor<3xf32>
  %0 = tg.broadcast_to %c : (tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----
// CHECK-LABEL: func.func @involutions
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[R:.*]] = tg.relu %[[X]] : tensor<3xf32>
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @involutions(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = tg.neg %x : tensor<3xf32>
  %1 = tg.neg %0 : tensor<3xf32>
  %2 = tg.relu %x : tensor<3xf32>
  %3 = tg.relu %2 : tensor<3xf32>
  return %1, %3 : tensor<3xf32>, tensor<3xf32>
}

// -----
// CHECK-LABEL: func.func @neutral_elements
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: tg.add
// CHECK-NOT: tg.sub
// CHECK-NOT: tg.mul
// CHECK-NOT: tg.div
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @neutral_elements(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %nz = tg.constant dense<-0.0> : tensor<3xf32>
  %z = tg.constant dense<0.0> : tensor<2x3xf32>
  %one = tg.constant dense<1.0> : tensor<1xf32>
  %0 = tg.add %x, %nz : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = tg.add %nz, %x : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = tg.sub %x, %z : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = tg.mul %x, %one : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  %4 = tg.div %x, %one : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----
// x + 0.0 is not x for x = -0.0, and a broadcasting neutral element changes
// the shape: neither folds.
// CHECK-LABEL: func.func @not_neutral
// CHECK: tg.add
// CHECK: tg.mul
func.func @not_neutral(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<2x3xf32>) {
  %z = tg.constant dense<0.0> : tensor<3xf32>
  %one = tg.constant dense<1.0> : tensor<2x3xf32>
  %0 = tg.add %x, %z : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = tg.mul %x, %one : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<3xf32>, tensor<2x3xf32>
}

// -----
// Dead pure ops are removed.
// CHECK-LABEL: func.func @dead
// CHECK-NEXT: return
func.func @dead(%x: tensor<3xf32>) {
  %0 = tg.exp %x : tensor<3xf32>
  return
}

// -----
// A tg.if on a constant condition is the region it selects.
// CHECK-LABEL: func.func @if_known
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[N:.*]] = tg.neg %[[X]]
// CHECK-NEXT: return %[[N]]
func.func @if_known(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tg.constant dense<false> : tensor<i1>
  %y = tg.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = tg.relu %x : tensor<4xf32>
    tg.yield %a : tensor<4xf32>
  } else {
    %b = tg.neg %x : tensor<4xf32>
    tg.yield %b : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----
// An unused tg.if goes; one on a run-time condition stays.
// CHECK-LABEL: func.func @if_runtime
// CHECK: tg.if
// CHECK-NOT: tg.if
func.func @if_runtime(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %unused = tg.if %c : tensor<i1> -> (tensor<4xf32>) {
    tg.yield %x : tensor<4xf32>
  } else {
    tg.yield %x : tensor<4xf32>
  }
  %y = tg.if %c : tensor<i1> -> (tensor<4xf32>) {
    %a = tg.relu %x : tensor<4xf32>
    tg.yield %a : tensor<4xf32>
  } else {
    %b = tg.neg %x : tensor<4xf32>
    tg.yield %b : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----
// A mean over every spatial axis is a global average pool; without keepdims
// a reshape to N x C follows (torchvision's `x.mean([2, 3])` heads).
// CHECK-LABEL: func.func @mean_over_spatial
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x7x5xf32>)
// CHECK-NEXT: %[[P:.*]] = tg.global_avgpool %[[X]] : (tensor<2x8x7x5xf32>) -> tensor<2x8x1x1xf32>
// CHECK-NEXT: %[[R:.*]] = tg.reshape %[[P]] : (tensor<2x8x1x1xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @mean_over_spatial(%x: tensor<2x8x7x5xf32>) -> tensor<2x8xf32> {
  %0 = tg.reduce_mean %x {axes = array<i64: 3, -2>, keepdims = false} : (tensor<2x8x7x5xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----
// 3-D spatial too; with keepdims where a convolution reads the mean
// (squeeze-and-excitation) the pool is the whole result.
// CHECK-LABEL: func.func @mean_over_spatial_keepdims
// CHECK-NEXT: %[[P:.*]] = tg.global_avgpool %{{.*}} : (tensor<1x4x3x3x2xf32>) -> tensor<1x4x1x1x1xf32>
// CHECK-NEXT: tg.reshape %[[P]] : (tensor<1x4x1x1x1xf32>) -> tensor<1x4xf32>
// CHECK-NEXT: %[[Q:.*]] = tg.global_avgpool %{{.*}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x1x1xf32>
// CHECK-NEXT: tg.conv %[[Q]]
func.func @mean_over_spatial_keepdims(%y: tensor<1x4x3x3x2xf32>, %z: tensor<1x4x6x6xf32>, %w: tensor<2x4x1x1xf32>) -> (tensor<1x4xf32>, tensor<1x2x1x1xf32>) {
  %1 = tg.reduce_mean %y {axes = array<i64: 2, 3, 4>, keepdims = false} : (tensor<1x4x3x3x2xf32>) -> tensor<1x4xf32>
  %2 = tg.reduce_mean %z {axes = array<i64: 2, 3>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x1x1xf32>
  %3 = tg.conv %2, %w : (tensor<1x4x1x1xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %1, %3 : tensor<1x4xf32>, tensor<1x2x1x1xf32>
}

// -----
// Means over other axes stay: the channels too, only some spatial axes, a
// 3-D tensor ([batch, sequence, features] or [N, C, length]: not told
// apart), a kept mean an elementwise op broadcasts back (instance norm).
// CHECK-LABEL: func.func @mean_not_spatial
// CHECK-NOT: global_avgpool
// CHECK-COUNT-4: tg.reduce_mean
// CHECK-NOT: global_avgpool
func.func @mean_not_spatial(%x: tensor<2x8x7x5xf32>, %y: tensor<3x4x9xf32>) -> (tensor<2x1x1x1xf32>, tensor<2x8x7xf32>, tensor<3x4xf32>, tensor<2x8x7x5xf32>) {
  %0 = tg.reduce_mean %x {axes = array<i64: 1, 2, 3>} : (tensor<2x8x7x5xf32>) -> tensor<2x1x1x1xf32>
  %1 = tg.reduce_mean %x {axes = array<i64: 3>, keepdims = false} : (tensor<2x8x7x5xf32>) -> tensor<2x8x7xf32>
  %2 = tg.reduce_mean %y {axes = array<i64: 2>, keepdims = false} : (tensor<3x4x9xf32>) -> tensor<3x4xf32>
  %3 = tg.reduce_mean %x {axes = array<i64: 2, 3>} : (tensor<2x8x7x5xf32>) -> tensor<2x8x1x1xf32>
  %4 = tg.sub %x, %3 : (tensor<2x8x7x5xf32>, tensor<2x8x1x1xf32>) -> tensor<2x8x7x5xf32>
  return %0, %1, %2, %4 : tensor<2x1x1x1xf32>, tensor<2x8x7xf32>, tensor<3x4xf32>, tensor<2x8x7x5xf32>
}
