// RUN: loom-opt %s --tg-superopt="search=eqsat target=h100 check=true report=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=REPORT
// RUN: loom-opt %s --tg-superopt="search=eqsat target=h100 rounds=1 stored-byte-price=0 check=true" | FileCheck %s --check-prefix=ONE
// RUN: loom-opt %s --tg-superopt="search=eqsat target=h100 rounds=1 check=true" | FileCheck %s
// RUN: loom-opt %s --tg-superopt="search=eqsat target=h100 seminaive=false check=true" | FileCheck %s

// Rounds of equality saturation (default rules). Four 1x1 convolutions of
// one input merge into one: multi-pattern rules (two convolutions sharing
// an input -> one on concatenated filters, then a split) run in the first
// two iterations of an e-graph only, and the first e-graph is too large for
// local search to find the merge of two merged pairs when weights are free;
// one e-graph (rounds=1, TENSAT's setting) then leaves two convolutions
// (with stored weights priced, the default, the first e-graph's extraction
// already merges all four). The second round starts from
// the first one's graph, where each merged pair is a plain convolution
// again. check=true compares the result with the input on random data.
// Semi-naive matching (the default) and full re-matching find the same
// graph.

// CHECK-LABEL: func.func @main
// CHECK: tg.conv {{.*}} -> tensor<1x80x14x14xf32>
// CHECK-NOT: tg.conv
// CHECK: return

// ONE-LABEL: func.func @main
// ONE-COUNT-2: tg.conv
// ONE-NOT: tg.conv
// ONE: return

// REPORT: "rounds": [
// REPORT: "cost_after":
// REPORT: "max_nodes": 5000,
// REPORT: "cost_after":
// REPORT: "max_nodes": 1000,
// REPORT: "seminaive_roots_skipped": {{[1-9][0-9]*}}
func.func @main(%x: tensor<1x32x14x14xf32>) -> (tensor<1x8x14x14xf32>, tensor<1x16x14x14xf32>, tensor<1x24x14x14xf32>, tensor<1x32x14x14xf32>) {
  %w0 = tg.weight "w0" : tensor<8x32x1x1xf32>
  %c0 = tg.conv %x, %w0 : (tensor<1x32x14x14xf32>, tensor<8x32x1x1xf32>) -> tensor<1x8x14x14xf32>
  %w1 = tg.weight "w1" : tensor<16x32x1x1xf32>
  %c1 = tg.conv %x, %w1 : (tensor<1x32x14x14xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x14x14xf32>
  %w2 = tg.weight "w2" : tensor<24x32x1x1xf32>
  %c2 = tg.conv %x, %w2 : (tensor<1x32x14x14xf32>, tensor<24x32x1x1xf32>) -> tensor<1x24x14x14xf32>
  %w3 = tg.weight "w3" : tensor<32x32x1x1xf32>
  %c3 = tg.conv %x, %w3 : (tensor<1x32x14x14xf32>, tensor<32x32x1x1xf32>) -> tensor<1x32x14x14xf32>
  return %c0, %c1, %c2, %c3 : tensor<1x8x14x14xf32>, tensor<1x16x14x14xf32>, tensor<1x24x14x14xf32>, tensor<1x32x14x14xf32>
}
