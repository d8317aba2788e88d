// The check catches an unsound rule. rules-unsound.mlir plants relu(x) -> x,
// marked "proved": without the check the search applies it (relu costs a
// kernel); with check=true the interpreter finds the difference.

// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-unsound.mlir target=h100" | FileCheck %s --check-prefix=APPLIED
// RUN: not loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-unsound.mlir target=h100 check=true" -o /dev/null 2>&1 | FileCheck %s
// RUN: not loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-unsound.mlir target=h100 search=eqsat check=true" -o /dev/null 2>&1 | FileCheck %s

// Sound rules pass the same check on the same function.
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 check=true" -o /dev/null

// APPLIED-LABEL: func.func @main
// APPLIED-NOT: tg.relu
// APPLIED: return

// CHECK: error: tg-superopt check: result #0 of @main differs from the original: max |error| {{.*}}; a rule or the matcher is unsound
func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = tg.relu %x : tensor<8x16xf32>
  %t = tg.transpose %r {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %u = tg.transpose %t {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  return %u : tensor<8x16xf32>
}
