// RUN: loom-opt %s --loom-gpu-fold-transposes --split-input-file | FileCheck %s
// RUN: loom-opt %s --loom-gpu-fold-transposes --linalg-fuse-elementwise-ops --split-input-file | FileCheck %s --check-prefix=FUSED
// loom-gpu-fold-transposes (docs/Codegen/GPU.md, "Transposes taken by
// products"): a transpose of a contraction's only result, its output a
// fill's zeros, becomes the contraction writing through the permutation;
// any other transpose becomes the linalg.generic it is, which elementwise
// fusion then folds into the contraction reading it.

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
// The result [B, M, N] rotated to [N, B, M] (a permutation that is not its
// own inverse): the output map is (b, m, n) -> (n, b, m).
// CHECK-DAG: #[[ROTATED:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d1)>
// CHECK-LABEL: func.func @result
// CHECK: %[[E:.*]] = tensor.empty() : tensor<5x2x3xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<5x2x3xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{{.*}}#[[ROTATED]]]{{.*}} outs(%[[Z]] : tensor<5x2x3xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
func.func @result(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<5x2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %c = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%z : tensor<2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x3x5xf32>
  %t0 = tensor.empty() : tensor<5x2x3xf32>
  %t = linalg.transpose ins(%c : tensor<2x3x5xf32>) outs(%t0 : tensor<5x2x3xf32>) permutation = [2, 0, 1]
  return %t : tensor<5x2x3xf32>
}

// -----

#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (b, k, n)>
#out = affine_map<(b, m, n, k) -> (b, m, n)>
// An operand transposed: the generic the transpose is, then fused into the
// contraction's indexing map for it.
// CHECK-LABEL: func.func @operand
// CHECK: linalg.generic
// CHECK-NOT: linalg.transpose
// FUSED-DAG: #[[READ:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
// FUSED-LABEL: func.func @operand
// FUSED: linalg.generic {indexing_maps = [#[[READ]],
// FUSED-SAME: ins(%{{.*}}, %{{.*}} : tensor<3x2x4xf32>, tensor<2x4x5xf32>)
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @operand(%a: tensor<3x2x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<2x3x4xf32>
  %at = linalg.transpose ins(%a : tensor<3x2x4xf32>) outs(%t0 : tensor<2x3x4xf32>) permutation = [1, 0, 2]
  %e = tensor.empty() : tensor<2x3x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %c = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%at, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%z : tensor<2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x3x5xf32>
  return %c : tensor<2x3x5xf32>
}

// -----

// A transpose nothing else takes stays a transpose, as a generic.
// CHECK-LABEL: func.func @alone
// CHECK: linalg.generic
// CHECK-NOT: linalg.transpose
func.func @alone(%a: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %t0 = tensor.empty() : tensor<4x3xf32>
  %t = linalg.transpose ins(%a : tensor<3x4xf32>) outs(%t0 : tensor<4x3xf32>) permutation = [1, 0]
  return %t : tensor<4x3xf32>
}
