// RUN: loom-opt %s --tg-superopt="search=eqsat target=h100 batch-products=true check=true report=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=REPORT
// RUN: loom-opt %s --tg-superopt="search=eqsat target=h100 check=true" | FileCheck %s --check-prefix=OFF
// RUN: loom-opt %s --split-input-file --tg-superopt="search=eqsat target=h100 batch-products=true check=true" | FileCheck %s --check-prefix=DEP

// Independent products batched (lib/Search/BatchProducts.cpp): three
// two-layer MLPs of their own inputs and weights (DLRM's bottom MLPs) become
// one batched product per layer, [3, 1, 4] x [3, 4, 16] and [3, 1, 16] x
// [3, 16, 16]: the inputs stacked once, the weights stacked (folded ahead of
// time), the relu of every piece applied once to the batched result, and the
// second layer's activations the first one's result itself (no stacking).
// The relu stands on the batched product, before its reshape, where
// oneDNN fuses it (a post-op).
// check=true interprets the result against the input on random data.

// CHECK-LABEL: func.func @main
// CHECK: tg.concat {{.*}} {axis = 0 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
// CHECK: tg.matmul {{.*}} : (tensor<3x1x4xf32>, tensor<3x4x16xf32>) -> tensor<3x1x16xf32>
// CHECK: tg.relu {{.*}} : tensor<3x1x16xf32>
// CHECK-NOT: tg.concat {{.*}} -> tensor<3x16xf32>
// CHECK: tg.matmul {{.*}} : (tensor<3x1x16xf32>, tensor<3x16x16xf32>) -> tensor<3x1x16xf32>
// CHECK: tg.relu {{.*}} : tensor<3x1x16xf32>
// CHECK-NOT: tg.matmul
// CHECK: return
// CHECK-LABEL: func.func @chain

// REPORT: "rules_applied": {
// REPORT-NEXT: "batch-products": 6

// OFF-LABEL: func.func @main
// OFF-COUNT-6: tg.matmul {{.*}} -> tensor<1x16xf32>
// OFF-NOT: tg.matmul
// OFF-LABEL: func.func @chain

func.func @main(%x0: tensor<1x4xf32>, %x1: tensor<1x4xf32>, %x2: tensor<1x4xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {
  %a0 = tg.weight "a0" : tensor<4x16xf32>
  %m0 = tg.matmul %x0, %a0 : (tensor<1x4xf32>, tensor<4x16xf32>) -> tensor<1x16xf32>
  %r0 = tg.relu %m0 : tensor<1x16xf32>
  %b0 = tg.weight "b0" : tensor<16x16xf32>
  %n0 = tg.matmul %r0, %b0 : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %s0 = tg.relu %n0 : tensor<1x16xf32>
  %a1 = tg.weight "a1" : tensor<4x16xf32>
  %m1 = tg.matmul %x1, %a1 : (tensor<1x4xf32>, tensor<4x16xf32>) -> tensor<1x16xf32>
  %r1 = tg.relu %m1 : tensor<1x16xf32>
  %b1 = tg.weight "b1" : tensor<16x16xf32>
  %n1 = tg.matmul %r1, %b1 : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %s1 = tg.relu %n1 : tensor<1x16xf32>
  %a2 = tg.weight "a2" : tensor<4x16xf32>
  %m2 = tg.matmul %x2, %a2 : (tensor<1x4xf32>, tensor<4x16xf32>) -> tensor<1x16xf32>
  %r2 = tg.relu %m2 : tensor<1x16xf32>
  %b2 = tg.weight "b2" : tensor<16x16xf32>
  %n2 = tg.matmul %r2, %b2 : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %s2 = tg.relu %n2 : tensor<1x16xf32>
  return %s0, %s1, %s2 : tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>
}

// -----

// A product whose activation depends on another's result never joins its
// group: the chain stays two products.

// DEP-LABEL: func.func @chain
// DEP-COUNT-2: tg.matmul {{.*}} : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
// DEP-NOT: tg.matmul
func.func @chain(%x: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %a = tg.weight "a" : tensor<16x16xf32>
  %m = tg.matmul %x, %a : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %r = tg.relu %m : tensor<1x16xf32>
  %b = tg.weight "b" : tensor<16x16xf32>
  %n = tg.matmul %r, %b : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  return %n : tensor<1x16xf32>
}
