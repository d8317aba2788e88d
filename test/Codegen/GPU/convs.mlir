// RUN: loom-opt %s --loom-gpu-map-convs --split-input-file | FileCheck %s
// RUN: loom-opt %s --loom-gpu-map-convs="min-depth=4" --split-input-file | FileCheck %s --check-prefix=SHALLOW

// A convolution of 2 x 5 x 13 x 15 (padded) by 9 x 5 x 3 x 3, stride 2, as
// an implicit GEMM: m = 9 output channels, n = 2 x 6 x 7 = 84 output
// positions (batch and image), k = 5 x 3 x 3 = 45; one workgroup of 128
// threads per 16 x 16 tile (1 x 6 tiles), 3 steps of 16 along k, each
// staging the filter tile and the input patch tile (read through the
// input's indexing map, `oh * 2 + kh`), a barrier, the multiply-adds, a
// barrier; then the sums added to the output inside its bounds.
// CHECK-LABEL: func.func @conv
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: %[[A:.*]] = memref.alloc() : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK: %[[B:.*]] = memref.alloc() : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c45{{.*}} step %c16{{.*}} iter_args
// CHECK: arith.cmpi ult, %{{.*}}, %c9
// CHECK: arith.cmpi ult, %{{.*}}, %c45
// CHECK: scf.if
// CHECK: memref.load %{{.*}} : memref<9x5x3x3xf32>
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: arith.cmpi ult, %{{.*}}, %c84
// CHECK: scf.if
// CHECK: affine.apply #{{.*}}
// CHECK: affine.apply #{{.*}}
// CHECK: memref.load %{{.*}} : memref<2x5x13x15xf32>
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1{{.*}} iter_args
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[B]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.load %{{.*}} : memref<2x9x6x7xf32>
// CHECK: arith.addf
// CHECK: memref.store %{{.*}} : memref<2x9x6x7xf32>
// CHECK-NOT: linalg.conv
func.func @conv(%x: memref<2x5x13x15xf32>, %w: memref<9x5x3x3xf32>, %y: memref<2x9x6x7xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : memref<2x5x13x15xf32>, memref<9x5x3x3xf32>) outs(%y : memref<2x9x6x7xf32>)
  return
}

// -----

// Two groups of 3 -> 8 channels, dilation 2: the group is the batch of the
// tiles (2 groups x 1 x 6 tiles of 8 x 81 by 27).
// CHECK-LABEL: func.func @grouped
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c12{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c27{{.*}} step %c16
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK-NOT: linalg.conv
func.func @grouped(%x: memref<1x2x3x13x13xf32>, %w: memref<2x8x3x3x3xf32>, %y: memref<1x2x8x9x9xf32>) {
  linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<1x2x3x13x13xf32>, memref<2x8x3x3x3xf32>) outs(%y : memref<1x2x8x9x9xf32>)
  return
}

// -----

// Left to the generic class: a depthwise convolution (one output channel
// per group, below min-channels 8; 25 reduction steps), one of 4 output
// channels, a shallow one (1 x 3 x 3: 9 steps, below min-depth 16; with
// min-depth=4, tiled), and a pool (no product).
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: gpu.launch
// CHECK: linalg.conv_2d_ngchw_gfchw
// SHALLOW-LABEL: func.func @depthwise
// SHALLOW-NOT: gpu.launch
// SHALLOW: linalg.conv_2d_ngchw_gfchw
func.func @depthwise(%x: memref<1x8x1x14x14xf32>, %w: memref<8x1x1x5x5xf32>, %y: memref<1x8x1x10x10xf32>) {
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<1x8x1x14x14xf32>, memref<8x1x1x5x5xf32>) outs(%y : memref<1x8x1x10x10xf32>)
  return
}

// CHECK-LABEL: func.func @few_channels
// CHECK-NOT: gpu.launch
// CHECK: linalg.conv_2d_nchw_fchw
func.func @few_channels(%x: memref<1x16x8x8xf32>, %w: memref<4x16x3x3xf32>, %y: memref<1x4x6x6xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<1x16x8x8xf32>, memref<4x16x3x3xf32>) outs(%y : memref<1x4x6x6xf32>)
  return
}

// CHECK-LABEL: func.func @shallow
// CHECK-NOT: gpu.launch
// CHECK: linalg.conv_2d_nchw_fchw
// SHALLOW-LABEL: func.func @shallow
// SHALLOW: gpu.launch
// SHALLOW-NOT: linalg.conv_2d_nchw_fchw
func.func @shallow(%x: memref<1x1x8x8xf32>, %w: memref<8x1x3x3xf32>, %y: memref<1x8x6x6xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<1x1x8x8xf32>, memref<8x1x3x3xf32>) outs(%y : memref<1x8x6x6xf32>)
  return
}

// CHECK-LABEL: func.func @pool
// CHECK-NOT: gpu.launch
// CHECK: linalg.pooling_nchw_sum
func.func @pool(%x: memref<1x32x8x8xf32>, %k: memref<3x3xf32>, %y: memref<1x32x6x6xf32>) {
  linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %k : memref<1x32x8x8xf32>, memref<3x3xf32>) outs(%y : memref<1x32x6x6xf32>)
  return
}

// -----

// NHWC (not what tg.conv lowers to, but the roles come from the indexing
// maps alone): the output's innermost index is the output channel, so B is
// the filter and A the input's patches; m = 7 x 7 positions, n = 8
// channels, k = 3 x 3 x 5: 4 x 1 tiles.
// CHECK-LABEL: func.func @nhwc
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c45{{.*}} step %c16
// CHECK: memref.load %{{.*}} : memref<1x9x9x5xf32>
// CHECK: memref.load %{{.*}} : memref<3x3x5x8xf32>
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK-NOT: linalg.conv
func.func @nhwc(%x: memref<1x9x9x5xf32>, %w: memref<3x3x5x8xf32>, %y: memref<1x7x7x8xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<1x9x9x5xf32>, memref<3x3x5x8xf32>) outs(%y : memref<1x7x7x8xf32>)
  return
}
