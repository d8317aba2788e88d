// RUN: loom-opt %s --convert-tg-to-linalg --canonicalize --cse --linalg-fuse-elementwise-ops --loom-parallelize-kernels --canonicalize --cse | FileCheck %s

// A 128-row product with an elementwise epilogue: 64-row tiles by 192-column
// bands (32 tiles), each band's weight block cache-tiled by 256 rows of k.
// CHECK-LABEL: func.func @ffn
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (128, 3072) step (64, 192)
// CHECK: tensor.extract_slice %arg1[0, %{{.*}}] [768, 192] [1, 1]
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c256
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: math.erf
func.func @ffn(%a: tensor<1x128x768xf32>, %w: tensor<768x3072xf32>, %b: tensor<3072xf32>) -> tensor<1x128x3072xf32> {
  %m = tg.matmul %a, %w : (tensor<1x128x768xf32>, tensor<768x3072xf32>) -> tensor<1x128x3072xf32>
  %s = tg.add %m, %b : (tensor<1x128x3072xf32>, tensor<3072xf32>) -> tensor<1x128x3072xf32>
  %g = tg.gelu %s : tensor<1x128x3072xf32>
  return %g : tensor<1x128x3072xf32>
}
// A softmax over the columns: no bands (each would recompute the row's
// statistics), so 8-row tiles to keep 16 of them.
// CHECK-LABEL: func.func @scores
// CHECK: scf.forall (%{{.*}}) = (0) to (128) step (8)
// CHECK-NOT: scf.forall (
// CHECK: return
func.func @scores(%q: tensor<128x64xf32>, %k: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %m = tg.matmul %q, %k : (tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
  %s = tg.softmax %m : (tensor<128x128xf32>) -> tensor<128x128xf32>
  return %s : tensor<128x128xf32>
}
// Enough rows for 32 tiles of 64; 1000 columns have no even cache tile,
// so the last 488 are a partial one.
// CHECK-LABEL: func.func @big
// CHECK: scf.forall (%{{.*}}) = (0) to (2048) step (64)
// CHECK: scf.for %{{.*}} = %c0 to %c1000 step %c512
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c256
func.func @big(%a: tensor<2048x768xf32>, %w: tensor<768x1000xf32>) -> tensor<2048x1000xf32> {
  %m = tg.matmul %a, %w : (tensor<2048x768xf32>, tensor<768x1000xf32>) -> tensor<2048x1000xf32>
  return %m : tensor<2048x1000xf32>
}
// A grouped convolution with bias and relu: the epilogue runs on the
// [N, G, C/G, H, W] view, so each thread tile computes its own slice of the
// convolution (before, the epilogue ran on the collapsed tensor, the
// convolution could not be fused through the reshape, and every thread
// computed all of it); the result is collapsed after the loop. A tile keeps
// all 4 output channels of its group (loom-vectorize-convs feeds each input
// vector to all of them); 16 groups are too few tiles, so rows are cut too.
// CHECK-LABEL: func.func @grouped
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (16, 14)
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, %{{.*}}, 1] high[0, 0, 0, %{{.*}}, 1]
// CHECK: linalg.conv_2d_ngchw_gfchw {{.*}} -> tensor<1x1x4x1x14xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x1x4x1x14xf32>, tensor<1x4xf32>)
// CHECK: arith.maximumf
// CHECK: scf.forall.in_parallel
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] : tensor<1x16x4x14x14xf32> into tensor<1x64x14x14xf32>
func.func @grouped(%x: tensor<1x64x14x14xf32>, %w: tensor<64x4x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x64x14x14xf32> {
  %y = tg.conv %x, %w, %b {groups = 16 : i64, pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x64x14x14xf32>, tensor<64x4x3x3xf32>, tensor<64xf32>) -> tensor<1x64x14x14xf32>
  return %y : tensor<1x64x14x14xf32>
}
// A dense convolution: tiles of 8 output channels (a 28-wide row is two
// 16-float vectors, 8 channels of them fill 16 accumulators) by one row,
// whole rows always; the bias is read through a projection.
// CHECK-LABEL: func.func @dense
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (32, 28) step (8, 1)
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x16x3x30xf32>, tensor<8x16x3x3xf32>) outs(%{{.*}} : tensor<1x8x1x28xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x1x28xf32>, tensor<8xf32>)
func.func @dense(%x: tensor<1x16x28x28xf32>, %w: tensor<32x16x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x28x28xf32> {
  %y = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x16x28x28xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x28x28xf32>
  return %y : tensor<1x32x28x28xf32>
}
// A 3x1 kernel on 8-wide rows (shorter than a vector, no column padding):
// a tile keeps the whole plane (loom-vectorize-convs runs it as one 240-long
// row), so 4 channels per tile (4 vectors of a chunk each).
// CHECK-LABEL: func.func @narrow
// CHECK: scf.forall (%{{.*}}) = (0) to (72) step (4)
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} outs(%{{.*}} : tensor<1x4x30x8xf32>)
func.func @narrow(%x: tensor<1x72x32x8xf32>, %w: tensor<72x72x3x1xf32>, %b: tensor<72xf32>) -> tensor<1x72x30x8xf32> {
  %y = tg.conv %x, %w, %b {activation = #tg<activation relu>} : (tensor<1x72x32x8xf32>, tensor<72x72x3x1xf32>, tensor<72xf32>) -> tensor<1x72x30x8xf32>
  return %y : tensor<1x72x30x8xf32>
}
