// RUN: loom-opt %s --loom-vectorizable-loop-order | FileCheck %s

// A matmul C[i,j] += A[i,k] * B[k,j] on buffers: `j` (B and C contiguous,
// A[i,k] held) moves innermost instead of `k` (which walks B by columns);
// the named op becomes a generic with its loops interchanged.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// (@planes, below)
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @matmul(
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// Already innermost along the contiguous dimension: left alone.
// CHECK-LABEL: func.func @rows(
// CHECK: linalg.transpose
func.func @rows(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  linalg.transpose ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>) permutation = [0, 1]
  return
}

// Tensors (not yet bufferized), fills and copies are not reordered.
// CHECK-LABEL: func.func @tensors(
// CHECK: linalg.matmul
func.func @tensors(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// An elementwise op over [1, C, H, W] planes with per-channel parameters
// (a batch norm tile of 7x7 planes): the H and W loops collapse into one of
// 49 iterations over the planes viewed as [1, C, 49], so the innermost loop
// is long enough to vectorise and the per-channel factor is computed once
// per plane; the parameters, read at (c, 0, 0), are not reshaped.
// CHECK-LABEL: func.func @planes(
// CHECK-DAG: %[[X:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : memref<1x4x7x7xf32, strided<[784, 49, 7, 1], offset: ?>> into memref<1x4x49xf32, strided<[784, 49, 1], offset: ?>>
// CHECK-DAG: %[[Y:.*]] = memref.collapse_shape %arg2 {{\[\[}}0], [1], [2, 3]]
// CHECK: linalg.generic {indexing_maps = [#[[P]], #[[Q]], #[[P]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %arg1 : {{.*}}) outs(%[[Y]] : memref<1x4x49xf32, strided<[784, 49, 1], offset: ?>>)
// CHECK: arith.mulf
// CHECK-NEXT: arith.maximumf
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @planes(%x: memref<1x4x7x7xf32, strided<[784, 49, 7, 1], offset: ?>>, %s: memref<4x1x1xf32>, %y: memref<1x4x7x7xf32, strided<[784, 49, 7, 1], offset: ?>>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s : memref<1x4x7x7xf32, strided<[784, 49, 7, 1], offset: ?>>, memref<4x1x1xf32>) outs(%y : memref<1x4x7x7xf32, strided<[784, 49, 7, 1], offset: ?>>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.maximumf %m, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// Not collapsed: rows that are not contiguous (a strided window of wider
// planes), an operand reading only one of the two loops (a bias along W),
// and a body that reads its loop indices.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: collapse_shape
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @kept(%w: memref<4x7xf32, strided<[9, 1], offset: ?>>, %v: memref<4x7xf32, strided<[9, 1], offset: ?>>, %a: memref<4x7xf32>, %b: memref<7xf32>, %c: memref<4x7xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : memref<4x7xf32, strided<[9, 1], offset: ?>>) outs(%v : memref<4x7xf32, strided<[9, 1], offset: ?>>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%a, %b : memref<4x7xf32>, memref<7xf32>) outs(%c : memref<4x7xf32>) {
  ^bb0(%in: f32, %in2: f32, %o: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : memref<4x7xf32>) outs(%c : memref<4x7xf32>) {
  ^bb0(%in: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = arith.index_cast %i : index to i32
    %f = arith.sitofp %j : i32 to f32
    %s = arith.addf %in, %f : f32
    linalg.yield %s : f32
  }
  return
}
