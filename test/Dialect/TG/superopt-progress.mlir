// Long searches report progress on stderr: the first line after
// progress-after seconds (2 by default), then one every 2 s, and a last line
// with the outcome. progress-after=0 makes every search "long".

// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 progress-after=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BT
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 search=eqsat progress-after=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EQ
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 search=eqsat progress-after=0 progress=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// Short searches (the default delay) print nothing.
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-basic.mlir target=h100 search=eqsat" -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty

// BT: tg-superopt @main: backtracking: 1 graphs expanded, {{[0-9]+}} queued, best cost {{.*}} s
// BT: tg-superopt @main: backtrack: done (exhausted), cost {{.*}} -> {{.*}} ({{.*}}x), {{.*}} s

// EQ: tg-superopt @main: eqsat: iteration 1, {{[0-9]+}} e-nodes, {{[0-9]+}} e-classes, {{.*}} s
// EQ: tg-superopt @main: eqsat: done (saturated), cost {{.*}} -> {{.*}} ({{.*}}x), {{.*}} s

// QUIET-NOT: tg-superopt

func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = tg.relu %x : tensor<8x16xf32>
  %t = tg.transpose %r {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %u = tg.transpose %t {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
  return %u : tensor<8x16xf32>
}
