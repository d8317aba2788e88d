// --tg-fold-weights leaves the ops whose value depends on the other ranks
// of a world (TG_ReadsWorld: tg.world_rank, tg.all_gather) to run time, even
// of a constant operand: a pipeline stage's rank gathers a block of zeros
// at a boundary where another rank sends (docs/CacheParallel.md, "Pipeline
// stages"), and the gather's result is the other ranks' blocks. The
// elementwise op on constants beside it is folded.
//
// RUN: loom-opt %s --tg-fold-weights | FileCheck %s

// CHECK-LABEL: func.func @gather_of_constant
// CHECK: %[[Z:.*]] = tg.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[G:.*]] = tg.all_gather %[[Z]] {ranks = 2 : i64} : (tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: %[[F:.*]] = tg.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: return %[[G]], %[[F]]
func.func @gather_of_constant() -> (tensor<2x4xf32>, tensor<4xf32>) {
  %z = tg.constant dense<0.0> : tensor<4xf32>
  %g = tg.all_gather %z {ranks = 2 : i64} : (tensor<4xf32>) -> tensor<2x4xf32>
  %one = tg.constant dense<1.0> : tensor<4xf32>
  %two = tg.add %one, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g, %two : tensor<2x4xf32>, tensor<4xf32>
}
