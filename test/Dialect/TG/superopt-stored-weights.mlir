// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-none.mlir search=eqsat target=cpu check=true report=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=REPORT
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-none.mlir search=backtrack target=cpu check=true" | FileCheck %s

// The search prices the folded constants a graph stores (each distinct one
// once: TermGraph.h), and regroups the merged products of one activation
// into one product by their column blocks in a canonical order
// (RegroupProducts.h). Two steps of a recurrence multiply by the same three
// blocks grouped differently: [a b] and c in the first, [c a] and b in the
// second, two folded constants of 256 bytes and two single blocks read as
// they are (768 bytes stored). Regrouped, each step reads [a b c], one
// constant of 384 bytes that both share. No rule is loaded: the regrouping
// alone fires.

// CHECK-LABEL: func.func @steps
// CHECK-DAG: %[[A:.*]] = tg.weight "a"
// CHECK-DAG: %[[B:.*]] = tg.weight "b"
// CHECK-DAG: %[[C:.*]] = tg.weight "c"
// CHECK-NOT: tensor<8x8xf32>
// CHECK: %[[W:.*]] = tg.concat %[[A]], %[[B]], %[[C]] {axis = 1 : i64} : {{.*}} -> tensor<8x12xf32>
// CHECK-NOT: tensor<8x8xf32>
// CHECK: tg.matmul %arg0, %[[W]]
// CHECK-NEXT: tg.split {{.*}}sizes = array<i64: 4, 4, 4>
// CHECK-NOT: tensor<8x8xf32>
// CHECK: tg.matmul %{{.*}}, %[[W]]
// CHECK-NEXT: tg.split {{.*}}sizes = array<i64: 4, 4, 4>
// CHECK-NOT: tg.matmul
// CHECK: return

// REPORT: "function": "steps",
// REPORT: "rules_applied": {
// REPORT-NEXT: "regroup-products": 4
// REPORT-NEXT: },
// REPORT: "stored_bytes_after": 384,
// REPORT-NEXT: "stored_bytes_before": 768
// REPORT: "function": "whole",
// REPORT: "rules_applied": {},

func.func @steps(%x: tensor<1x8xf32>) -> tensor<1x4xf32> {
  %a = tg.weight "a" : tensor<8x4xf32>
  %b = tg.weight "b" : tensor<8x4xf32>
  %c = tg.weight "c" : tensor<8x4xf32>
  %ab = tg.concat %a, %b {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %m1 = tg.matmul %x, %ab : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %ya, %yb = tg.split %m1 {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<1x8xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  %yc = tg.matmul %x, %c : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %s1 = tg.add %ya, %yb : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %t1 = tg.mul %s1, %yc : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %h = tg.concat %t1, %t1 {axis = 1 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x8xf32>
  %ca = tg.concat %c, %a {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %m2 = tg.matmul %h, %ca : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %zc, %za = tg.split %m2 {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<1x8xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  %zb = tg.matmul %h, %b : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %s2 = tg.add %za, %zb : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %t2 = tg.mul %s2, %zc : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %t2 : tensor<1x4xf32>
}

// A piece of a merged product that spans two blocks (the first step reads
// [a b]'s product whole) cannot be regrouped: the function stays as it is.

// CHECK-LABEL: func.func @whole
// CHECK: tg.concat %{{.*}}, %{{.*}} {axis = 1 : i64}
// CHECK: tg.matmul
// CHECK: tg.matmul
// CHECK: return

func.func @whole(%x: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x4xf32>) {
  %a = tg.weight "a" : tensor<8x4xf32>
  %b = tg.weight "b" : tensor<8x4xf32>
  %c = tg.weight "c" : tensor<8x4xf32>
  %ab = tg.concat %a, %b {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %m1 = tg.matmul %x, %ab : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %yc = tg.matmul %x, %c : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  return %m1, %yc : tensor<1x8xf32>, tensor<1x4xf32>
}
