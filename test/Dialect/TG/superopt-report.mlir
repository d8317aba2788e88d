// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 report=%t.bt.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.bt.json --check-prefixes=CHECK,BT
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 search=eqsat extract=ilp report=%t.eq.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.eq.json --check-prefixes=CHECK,EQ
// The ILP is skipped on e-graphs above ilp-max-nodes (greedy + local search
// decide), and not run at all with the default extraction (local).
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 search=eqsat extract=ilp ilp-max-nodes=1 report=%t.skip.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.skip.json --check-prefixes=CHECK,SKIP
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 search=eqsat report=%t.local.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.local.json --check-prefixes=CHECK,LOCAL

// Two transposes cancel (rule_3) and two products of one input become one
// product of the summed weights (rule_4). The relu of the convolution is
// fused into it before the search (search::fuseConvActivations), so rule_2
// does not count as a rewrite. The report gives the costs, the time and the
// rules applied.

// CHECK: "cost_after": [[AFTER:[0-9.e-]+]],
// CHECK: "cost_before": [[BEFORE:[0-9.e-]+]],
// CHECK: "cost_model": "roofline:h100",
// CHECK: "functions": [
// CHECK: "function": "main",
// CHECK: "ops_after": 6,
// CHECK: "ops_before": 10,
// CHECK: "rules_applied": {
// CHECK-NEXT: "rule_3": 1,
// CHECK-NEXT: "rule_4": 1
// CHECK: "seconds":
// BT: "graphs_expanded":
// EQ: "eclasses":
// EQ: "ilp_status": "optimal"
// SKIP: "ilp_status": "skipped: {{[0-9]+}} e-nodes > ilp-max-nodes=1"
// LOCAL: "eclasses":
// LOCAL-NOT: "ilp_status"
// CHECK: "rules": 7,
// CHECK: "rules_applied": {
// CHECK-NEXT: "rule_3": 1,
// CHECK-NEXT: "rule_4": 1
// CHECK-NEXT: },
// CHECK-NEXT: "rules_file": "{{.*}}rules-basic.mlir",
// BT-NEXT: "search": "backtrack",
// EQ-NEXT: "search": "eqsat",
// SKIP-NEXT: "search": "eqsat",
// LOCAL-NEXT: "search": "eqsat",
// CHECK-NEXT: "seconds":
func.func @main(%x: tensor<1x8x12x12xf32>, %y: tensor<6x10xf32>, %z: tensor<4x6xf32>) -> (tensor<1x8x12x12xf32>, tensor<6x10xf32>, tensor<4x8xf32>) {
  %w = tg.weight "w" : tensor<8x8x3x3xf32>
  %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x12x12xf32>
  %r = tg.relu %c : tensor<1x8x12x12xf32>
  %t = tg.transpose %y {perm = array<i64: 1, 0>} : (tensor<6x10xf32>) -> tensor<10x6xf32>
  %u = tg.transpose %t {perm = array<i64: 1, 0>} : (tensor<10x6xf32>) -> tensor<6x10xf32>
  %a = tg.weight "a" : tensor<6x8xf32>
  %b = tg.weight "b" : tensor<6x8xf32>
  %ma = tg.matmul %z, %a : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  %mb = tg.matmul %z, %b : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
  %s = tg.add %ma, %mb : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r, %u, %s : tensor<1x8x12x12xf32>, tensor<6x10xf32>, tensor<4x8xf32>
}
