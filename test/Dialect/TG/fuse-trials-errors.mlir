// Bad inputs to --tg-fuse-trials: an op with a per-trial operand and no fused
// form is an error at the op naming it; each error exits non-zero and adds
// nothing to the module.
// RUN: loom-opt %s --split-input-file --verify-diagnostics --tg-fuse-trials="trials=3"
// RUN: not loom-opt %s --split-input-file --tg-fuse-trials="function=nope" 2>&1 | FileCheck %s --check-prefix=FUNCTION
// FUNCTION: tg-fuse-trials: no function named 'nope'
// RUN: not loom-opt %s --split-input-file --tg-fuse-trials="trials=0" 2>&1 | FileCheck %s --check-prefix=TRIALS
// TRIALS: error: --tg-fuse-trials: trials must be at least 1, not 0
// RUN: not loom-run %S/fuse-trials-graphs.mlir --entry conv --check-trials=2 --trial-steps=0 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: error: --check-trials needs at least one step, not 0
// RUN: not loom-run %S/fuse-trials-graphs.mlir --entry conv --check-trials=2 --domain modp 2>&1 | FileCheck %s --check-prefix=DOMAIN
// DOMAIN: --check-trials computes in f64; --domain modp does not apply
// RUN: not loom-run %S/fuse-trials-graphs.mlir --entry movement --check-trials=2 --per-trial-inputs 2>&1 | FileCheck %s --check-prefix=GATHER
// RUN: not loom-opt %S/fuse-trials-graphs.mlir --tg-fuse-trials="function=conv name=norms" 2>&1 | FileCheck %s --check-prefix=TAKEN
// TAKEN: error: the module already has a function named 'norms'
// GATHER: error: 'tg.gather' op has no fused form for 2 trials (its indices differ per trial)

func.func @resize(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  %w = tg.weight "w" : tensor<1x2x4x4xf32>
  %y = tg.mul %x, %w : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-error@+1 {{'tg.resize' op has no fused form for 3 trials (no rule for this op); it has an operand that differs per trial}}
  %r = tg.resize %y {sizes = array<i64: 1, 2, 8, 8>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  return %r : tensor<1x2x8x8xf32>
}

// -----

// Ops on shared values only are copied as they are, whatever their kind.
func.func @shared_resize(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  %r = tg.resize %x {sizes = array<i64: 1, 2, 8, 8>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  %w = tg.weight "w" : tensor<1x2x8x8xf32>
  %y = tg.mul %r, %w : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

func.func @indices(%ids: tensor<3xi64>) -> tensor<3x4xf32> {
  %t = tg.weight "table" : tensor<5x4xf32>
  %w = tg.weight "ids" : tensor<3xf32>
  %c = tg.cast %w : tensor<3xf32> to tensor<3xi64>
  // expected-error@+1 {{'tg.gather' op has no fused form for 3 trials (its indices differ per trial)}}
  %g = tg.gather %t, %c {axis = 0 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %g : tensor<3x4xf32>
}

// -----

func.func @regions(%p: tensor<i1>) -> tensor<2xf32> {
  %w = tg.weight "w" : tensor<2xf32>
  // expected-error@+1 {{'tg.if' op has no fused form for 3 trials (it computes in regions)}}
  %r = tg.if %p : tensor<i1> -> (tensor<2xf32>) {
    tg.yield %w : tensor<2xf32>
  } else {
    %n = tg.neg %w : tensor<2xf32>
    tg.yield %n : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
