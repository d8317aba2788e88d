// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 search=eqsat report=%t.eq.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.eq.json --check-prefix=EQ
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 search=backtrack" | FileCheck %s

// Both engines skip matches computed from weights only (eqsat already at
// their root nodes, `foldable_roots_skipped`): the transposes of
// the weight are free either way (computed ahead of time), so rewriting them
// cannot lower the cost; the transposes of the activation cost kernels and
// cancel (rule_3).

// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = tg.weight "w"
// CHECK: %[[T:.*]] = tg.transpose %[[W]]
// CHECK: %[[U:.*]] = tg.transpose %[[T]]
// CHECK: return %arg0, %[[U]]

// EQ: "foldable_roots_skipped": {{[1-9][0-9]*}},
// EQ: "rules_applied": {
// EQ-NEXT: "rule_3": 1
func.func @main(%x: tensor<6x10xf32>) -> (tensor<6x10xf32>, tensor<6x10xf32>) {
  %w = tg.weight "w" : tensor<6x10xf32>
  %t = tg.transpose %x {perm = array<i64: 1, 0>} : (tensor<6x10xf32>) -> tensor<10x6xf32>
  %u = tg.transpose %t {perm = array<i64: 1, 0>} : (tensor<10x6xf32>) -> tensor<6x10xf32>
  %tw = tg.transpose %w {perm = array<i64: 1, 0>} : (tensor<6x10xf32>) -> tensor<10x6xf32>
  %uw = tg.transpose %tw {perm = array<i64: 1, 0>} : (tensor<10x6xf32>) -> tensor<6x10xf32>
  return %u, %uw : tensor<6x10xf32>, tensor<6x10xf32>
}
