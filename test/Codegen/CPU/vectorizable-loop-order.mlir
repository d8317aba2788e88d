// RUN: loom-opt %s --loom-vectorizable-loop-order | FileCheck %s

// A matmul C[i,j] += A[i,k] * B[k,j] on buffers: `j` (B and C contiguous,
// A[i,k] held) moves innermost instead of `k` (which walks B by columns);
// the named op becomes a generic with its loops interchanged.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
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
