// RUN: loom-opt %s --tg-conv3d-as-2d | FileCheck %s
// The rewritten module computes what the original does (the interpreter on
// the same random inputs; the taps are summed in another order).
// RUN: rm -rf %t && mkdir %t
// RUN: loom-opt %s --tg-conv3d-as-2d -o %t/as2d.mlir
// RUN: loom-run %s --entry main --seed 3 --outputs %t/before.safetensors > /dev/null
// RUN: loom-run %t/as2d.mlir --entry main --seed 3 --compare %t/before.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry spatial_only --seed 4 --outputs %t/before1.safetensors > /dev/null
// RUN: loom-run %t/as2d.mlir --entry spatial_only --seed 4 --compare %t/before1.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry depth_only --seed 5 --outputs %t/before2.safetensors > /dev/null
// RUN: loom-run %t/as2d.mlir --entry depth_only --seed 5 --compare %t/before2.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry depth_strided_plane --seed 6 --outputs %t/before3.safetensors > /dev/null
// RUN: loom-run %t/as2d.mlir --entry depth_strided_plane --seed 6 --compare %t/before3.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// SAME: compare: largest error {{.*}} (tolerance 1e-05)

// Depth padding, a depth stride and dilation, groups, bias and relu: the
// input padded in depth and moved before the channels; per depth tap a
// strided slice of depths as 1 * 3 images and the filter's tap; the bias on
// the last tap; relu after the sum; the channels moved back.
// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = tg.pad %arg0 {high = array<i64: 0, 0, 1, 0, 0>, low = array<i64: 0, 0, 1, 0, 0>} : (tensor<1x4x7x6x6xf32>) -> tensor<1x4x9x6x6xf32>
// CHECK: %[[T:.*]] = tg.transpose %[[P]] {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x4x9x6x6xf32>) -> tensor<1x9x4x6x6xf32>
// CHECK: tg.slice %[[T]] {limits = array<i64: 1, 5, 4, 6, 6>, starts = array<i64: 0, 0, 0, 0, 0>, strides = array<i64: 1, 2, 1, 1, 1>} : (tensor<1x9x4x6x6xf32>) -> tensor<1x3x4x6x6xf32>
// CHECK: %[[C0:.*]] = tg.conv %{{.*}}, %{{.*}} {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<3x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<3x6x6x6xf32>
// CHECK: tg.slice %[[T]] {limits = array<i64: 1, 7, 4, 6, 6>, starts = array<i64: 0, 2, 0, 0, 0>, strides = array<i64: 1, 2, 1, 1, 1>}
// CHECK: %[[C1:.*]] = tg.conv
// CHECK: %[[S1:.*]] = tg.add %[[C1]], %[[C0]]
// CHECK: tg.slice %[[T]] {limits = array<i64: 1, 9, 4, 6, 6>, starts = array<i64: 0, 4, 0, 0, 0>, strides = array<i64: 1, 2, 1, 1, 1>}
// CHECK: %[[C2:.*]] = tg.conv %{{.*}}, %{{.*}}, %arg2 {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>}
// CHECK: %[[S2:.*]] = tg.add %[[C2]], %[[S1]]
// CHECK: %[[R:.*]] = tg.relu %[[S2]]
// CHECK: %[[B:.*]] = tg.reshape %[[R]] : (tensor<3x6x6x6xf32>) -> tensor<1x3x6x6x6xf32>
// CHECK: tg.transpose %[[B]] {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x3x6x6x6xf32>) -> tensor<1x6x3x6x6xf32>
// CHECK-NOT: tg.conv
func.func @main(%x: tensor<1x4x7x6x6xf32>, %w: tensor<6x2x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x3x6x6xf32> {
  %0 = tg.conv %x, %w, %b {strides = array<i64: 2, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>,
                           dilations = array<i64: 2, 1, 1>, groups = 2 : i64, activation = #tg<activation relu>}
      : (tensor<1x4x7x6x6xf32>, tensor<6x2x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x3x6x6xf32>
  return %0 : tensor<1x6x3x6x6xf32>
}

// One depth tap (a (1, 3, 3) convolution, as R(2+1)D's spatial ones): one
// 2-D convolution keeping its activation, no padding in depth, no sum.
// CHECK-LABEL: func.func @spatial_only
// CHECK-NOT: tg.pad
// CHECK: tg.conv %{{.*}}, %{{.*}} {activation = #tg<activation relu>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<8x3x8x8xf32>, tensor<5x3x3x3xf32>) -> tensor<8x5x4x4xf32>
// CHECK-NOT: tg.add
// CHECK: return
func.func @spatial_only(%x: tensor<2x3x4x8x8xf32>, %w: tensor<5x3x1x3x3xf32>) -> tensor<2x5x4x4x4xf32> {
  %0 = tg.conv %x, %w {strides = array<i64: 1, 2, 2>, pads = array<i64: 0, 1, 1, 0, 1, 1>,
                       dilations = array<i64: 1, 1, 1>, activation = #tg<activation relu>}
      : (tensor<2x3x4x8x8xf32>, tensor<5x3x1x3x3xf32>) -> tensor<2x5x4x4x4xf32>
  return %0 : tensor<2x5x4x4x4xf32>
}

// A kernel spanning depth alone (R(2+1)D's (3, 1, 1) temporal convolutions)
// with unit strides and no pads in height and width: one 2-D convolution
// over [N, C, D, H * W] with the kernel [O, C/g, KD, 1], its depth stride,
// pads, dilation, groups, bias and activation; reshapes only, no transpose,
// no slice, no sum.
// CHECK-LABEL: func.func @depth_only
// CHECK-NOT: tg.transpose
// CHECK: %[[X:.*]] = tg.reshape %arg0 : (tensor<2x6x9x5x7xf32>) -> tensor<2x6x9x35xf32>
// CHECK: %[[K:.*]] = tg.reshape %arg1 : (tensor<4x3x3x1x1xf32>) -> tensor<4x3x3x1xf32>
// CHECK: %[[Y:.*]] = tg.conv %[[X]], %[[K]], %arg2 {activation = #tg<activation relu>, dilations = array<i64: 2, 1>, groups = 2 : i64, pads = array<i64: 2, 0, 1, 0>, strides = array<i64: 2, 1>} : (tensor<2x6x9x35xf32>, tensor<4x3x3x1xf32>, tensor<4xf32>) -> tensor<2x4x4x35xf32>
// CHECK: %[[R:.*]] = tg.reshape %[[Y]] : (tensor<2x4x4x35xf32>) -> tensor<2x4x4x5x7xf32>
// CHECK-NOT: tg.slice
// CHECK-NOT: tg.transpose
// CHECK: return %[[R]]
func.func @depth_only(%x: tensor<2x6x9x5x7xf32>, %w: tensor<4x3x3x1x1xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x5x7xf32> {
  %0 = tg.conv %x, %w, %b {strides = array<i64: 2, 1, 1>, pads = array<i64: 2, 0, 0, 1, 0, 0>,
                           dilations = array<i64: 2, 1, 1>, groups = 2 : i64, activation = #tg<activation relu>}
      : (tensor<2x6x9x5x7xf32>, tensor<4x3x3x1x1xf32>, tensor<4xf32>) -> tensor<2x4x4x5x7xf32>
  return %0 : tensor<2x4x4x5x7xf32>
}

// A depth-only kernel with a stride in the plane is not of that form: the
// sum of 2-D convolutions over depth slices as above.
// CHECK-LABEL: func.func @depth_strided_plane
// CHECK: tg.transpose
// CHECK-COUNT-3: tg.slice
// CHECK: return
func.func @depth_strided_plane(%x: tensor<1x3x5x6x6xf32>, %w: tensor<2x3x3x1x1xf32>) -> tensor<1x2x3x3x3xf32> {
  %0 = tg.conv %x, %w {strides = array<i64: 1, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>,
                       dilations = array<i64: 1, 1, 1>}
      : (tensor<1x3x5x6x6xf32>, tensor<2x3x3x1x1xf32>) -> tensor<1x2x3x3x3xf32>
  return %0 : tensor<1x2x3x3x3xf32>
}
