// RUN: loom-opt %s --loom-vectorize-convs --canonicalize --cse | FileCheck %s
// RUN: loom-opt %s --loom-vectorize-convs="lanes=8 accumulators=8" --canonicalize --cse | FileCheck %s --check-prefix=AVX2
// RUN: not loom-opt %s --loom-vectorize-convs="lanes=0" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: --loom-vectorize-convs: lanes and accumulators must be at least 1 (got lanes=0 accumulators=16)

// A thread tile of a grouped convolution: all 8 output channels of one
// group, one output row of 28 (a full vector and a masked one of 12). The
// 16 accumulators (8 channels x 2 vectors) are read from the output, carried
// over the 8 input channels, and each of the 9 taps loads the input row
// once and feeds every channel: 9 x 8 x 2 = 144 FMAs per input channel.
// CHECK-LABEL: func.func @group_tile
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK: %[[MASK:.*]] = vector.constant_mask [12] : vector<16xi1>
// CHECK: vector.load %{{.*}} : memref<1x1x8x1x28xf32, {{.*}}>, vector<16xf32>
// CHECK: vector.maskedload %{{.*}}, %[[MASK]], %{{.*}} : memref<1x1x8x1x28xf32
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-144: vector.fma
// CHECK: scf.yield
// CHECK: vector.store
// CHECK: vector.maskedstore %{{.*}}, %[[MASK]]
// AVX2-LABEL: func.func @group_tile
// AVX2: vector.constant_mask [4] : vector<8xi1>
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
func.func @group_tile(%in: memref<1x1x8x3x30xf32, strided<[57600, 7200, 900, 30, 1], offset: ?>>, %w: memref<1x8x8x3x3xf32>, %out: memref<1x1x8x1x28xf32, strided<[50176, 6272, 784, 28, 1], offset: ?>>) {
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%in, %w : memref<1x1x8x3x30xf32, strided<[57600, 7200, 900, 30, 1], offset: ?>>, memref<1x8x8x3x3xf32>) outs(%out : memref<1x1x8x1x28xf32, strided<[50176, 6272, 784, 28, 1], offset: ?>>)
  return
}

// Column stride 2: each output vector reads two input vectors (the second
// masked to what it still needs: 15 of 16 for a full vector, (12 - 1) * 2 +
// 1 - 16 = 7 for the last one of 12) and keeps every other element; a
// 140-wide dense row is three chunks (64, 64, 12 columns), one output
// channel here.
// CHECK-LABEL: func.func @strided_dense
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.constant_mask [15] : vector<16xi1>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, {{.*}}, 31] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<32xf32>, vector<32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args({{.*}}) -> (vector<16xf32>)
// CHECK: vector.constant_mask [7] : vector<16xi1>
func.func @strided_dense(%in: memref<1x3x5x282xf32>, %w: memref<1x3x3x3xf32>, %out: memref<1x1x2x140xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%in, %w : memref<1x3x5x282xf32>, memref<1x3x3x3xf32>) outs(%out : memref<1x1x2x140xf32>)
  return
}

// Left alone: a column stride above 4, a dynamic shape, a tensor form.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.conv_2d_nchw_fchw
func.func @left_alone(%in: memref<1x3x5x61xf32>, %w: memref<2x3x3x3xf32>, %out: memref<1x2x3x12xf32>, %din: memref<1x3x5x?xf32>, %dout: memref<1x2x3x?xf32>, %t: tensor<1x3x5x61xf32>, %tw: tensor<2x3x3x3xf32>, %tout: tensor<1x2x3x59xf32>) -> tensor<1x2x3x59xf32> {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<[1, 5]> : vector<2xi64>} ins(%in, %w : memref<1x3x5x61xf32>, memref<2x3x3x3xf32>) outs(%out : memref<1x2x3x12xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%din, %w : memref<1x3x5x?xf32>, memref<2x3x3x3xf32>) outs(%dout : memref<1x2x3x?xf32>)
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%t, %tw : tensor<1x3x5x61xf32>, tensor<2x3x3x3xf32>) outs(%tout : tensor<1x2x3x59xf32>) -> tensor<1x2x3x59xf32>
  return %r : tensor<1x2x3x59xf32>
}

// A 1x1 convolution at stride 1 with contiguous planes of one size: the
// planes are collapsed into one 63-long row (4 vectors, the last masked to
// 15), so 4 output channels fill the 16 accumulators (two blocks of 4).
// CHECK-LABEL: func.func @pointwise
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<1x24x7x9xf32> into memref<1x24x63xf32>
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<1x8x7x9xf32> into memref<1x8x63xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1
// CHECK: vector.constant_mask [15] : vector<16xi1>
// CHECK: scf.for %{{.*}} = %c0 to %c24 step %c1 iter_args
// CHECK-COUNT-16: vector.fma
func.func @pointwise(%in: memref<1x24x7x9xf32>, %w: memref<8x24x1x1xf32>, %out: memref<1x8x7x9xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%in, %w : memref<1x24x7x9xf32>, memref<8x24x1x1xf32>) outs(%out : memref<1x8x7x9xf32>)
  return
}

// A 3x1 kernel (one column, no column padding): also one collapsed row; the
// kernel row ky reads the input plane ky * 8 elements further on.
// CHECK-LABEL: func.func @column_kernel
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<1x4x6x8xf32> into memref<1x4x48xf32>
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<1x2x4x8xf32> into memref<1x2x32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args
// CHECK: vector.load %{{.*}}[%c0, %{{.*}}, %c0] : memref<1x4x48xf32>, vector<16xf32>
// CHECK: vector.load %{{.*}}[%c0, %{{.*}}, %c16] : memref<1x4x48xf32>, vector<16xf32>
// CHECK: vector.load %{{.*}}[%c0, %{{.*}}, %c8] : memref<1x4x48xf32>, vector<16xf32>
func.func @column_kernel(%in: memref<1x4x6x8xf32>, %w: memref<2x4x3x1xf32>, %out: memref<1x2x4x8xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%in, %w : memref<1x4x6x8xf32>, memref<2x4x3x1xf32>) outs(%out : memref<1x2x4x8xf32>)
  return
}
