// --tg-pool-before-conv1x1 moves an unpadded average pool before the 1x1
// convolution that feeds it (DenseNet's transitions: conv1x1 halving the
// channels, then a 2x2 stride-2 average pool), so the convolution runs on
// the pooled pixels. The rewritten graph computes the same values (up to
// rounding); the cases refused keep their order.
//
// RUN: loom-opt %s --tg-pool-before-conv1x1 | FileCheck %s
// RUN: loom-opt %s --tg-pool-before-conv1x1 -o %t.moved.mlir
// RUN: loom-run %s --entry transition --seed 3 --outputs %t.ref.safetensors > /dev/null
// RUN: loom-run %t.moved.mlir --entry transition --seed 3 --compare %t.ref.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry grouped --seed 4 --outputs %t.gref.safetensors > /dev/null
// RUN: loom-run %t.moved.mlir --entry grouped --seed 4 --compare %t.gref.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME

// CHECK-LABEL: func.func @transition
// CHECK: %[[P:.*]] = tg.avgpool %arg0 {{.*}} : (tensor<1x8x6x6xf32>) -> tensor<1x8x3x3xf32>
// CHECK: tg.conv %[[P]], %arg1, %arg2 : (tensor<1x8x3x3xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NOT: tg.avgpool
// SAME: compare: largest error
func.func @transition(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x1x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x3x3xf32> {
  %c = tg.conv %x, %w, %b : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %p = tg.avgpool %c {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  return %p : tensor<1x4x3x3xf32>
}

// Grouped 1x1 convolutions are pointwise too; a 3x3 window of stride 2
// (overlapping) still averages whole windows.
// CHECK-LABEL: func.func @grouped
// CHECK: tg.avgpool %arg0
// CHECK: tg.conv {{.*}}groups = 2
func.func @grouped(%x: tensor<1x4x7x7xf32>, %w: tensor<6x2x1x1xf32>) -> tensor<1x6x3x3xf32> {
  %c = tg.conv %x, %w {groups = 2 : i64} : (tensor<1x4x7x7xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x7x7xf32>
  %p = tg.avgpool %c {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>}
      : (tensor<1x6x7x7xf32>) -> tensor<1x6x3x3xf32>
  return %p : tensor<1x6x3x3xf32>
}

// Refused: a padded pool (its edge windows would average the bias with the
// padding), a fused activation, a 3x3 filter, a second use of the
// convolution, and an overlapping 3x3 window of stride 1 after a
// convolution to one channel (the pool on 8 channels would cost more than
// the 20 of 36 pixels the convolution saves).
// CHECK-LABEL: func.func @refused
// CHECK-COUNT-5: tg.conv %arg0
// CHECK-NOT: tg.conv
func.func @refused(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x1x1xf32>, %w3: tensor<4x8x3x3xf32>, %w1: tensor<1x8x1x1xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x6x6xf32>, tensor<1x1x4x4xf32>) {
  %c0 = tg.conv %x, %w : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x6x6xf32>
  %p0 = tg.avgpool %c0 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x4x6x6xf32>) -> tensor<1x4x4x4xf32>
  %c1 = tg.conv %x, %w {activation = #tg<activation relu>} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x6x6xf32>
  %p1 = tg.avgpool %c1 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %c2 = tg.conv %x, %w3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x6x6xf32>
  %p2 = tg.avgpool %c2 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %c3 = tg.conv %x, %w : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x6x6xf32>
  %p3 = tg.avgpool %c3 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %c4 = tg.conv %x, %w1 : (tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>) -> tensor<1x1x6x6xf32>
  %p4 = tg.avgpool %c4 {kernel_size = array<i64: 3, 3>}
      : (tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32>
  return %p0, %p1, %p2, %p3, %c3, %p4 : tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x6x6xf32>, tensor<1x1x4x4xf32>
}
