// Bad inputs to --tg-autodiff: each a located error, a non-zero exit, and
// the module left as it was.
// RUN: loom-opt %s --split-input-file --verify-diagnostics --tg-autodiff="optimizer=sgd"
// RUN: not loom-opt %s --split-input-file --tg-autodiff="optimizer=rmsprop" 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// OPTIMIZER: unknown optimizer 'rmsprop' (none, sgd, adam)
// RUN: not loom-opt %s --split-input-file --tg-autodiff="function=nope" 2>&1 | FileCheck %s --check-prefix=FUNCTION
// FUNCTION: tg-autodiff: no function named 'nope'
// RUN: not loom-opt %s --split-input-file --tg-autodiff="recompute=everything" 2>&1 | FileCheck %s --check-prefix=RECOMPUTE
// RECOMPUTE: unknown recompute policy 'everything' (none, elementwise)

// expected-error@+1 {{the function to differentiate must return exactly one scalar float (the loss), not 'tensor<2xf32>'}}
func.func @not_scalar(%x: tensor<2xf32>) -> tensor<2xf32> {
  %w = tg.weight "w" : tensor<2xf32>
  %y = tg.mul %x, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

// expected-error@+1 {{nothing to differentiate: the function has no float tg.weight}}
func.func @no_parameters(%x: tensor<2xf32>) -> tensor<f32> {
  %r = tg.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// expected-error@+1 {{the loss does not depend on any parameter}}
func.func @unused_parameter(%x: tensor<2xf32>) -> tensor<f32> {
  %w = tg.weight "w" : tensor<2xf32>
  %u = tg.exp %w : tensor<2xf32>
  %r = tg.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @through_resize(%x: tensor<1x1x2x2xf32>) -> tensor<f32> {
  %w = tg.weight "w" : tensor<1x1x2x2xf32>
  %a = tg.mul %x, %w : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  // expected-error@+1 {{'tg.resize' op has no gradient yet (docs/Training.md lists the differentiable ops)}}
  %b = tg.resize %a {sizes = array<i64: 1, 1, 4, 4>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  %r = tg.reduce_sum %b {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x1x4x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Gradients of convolutions and pools are 2-D: a 3-D one names the op.
func.func @conv3d_gradient(%x: tensor<1x1x3x3x3xf32>) -> tensor<f32> {
  %w = tg.weight "w" : tensor<1x1x2x2x2xf32>
  // expected-error@+1 {{'tg.conv' op gradient of a 3-D convolution or pooling is not implemented (2-D only; docs/Training.md)}}
  %y = tg.conv %x, %w {strides = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>}
      : (tensor<1x1x3x3x3xf32>, tensor<1x1x2x2x2xf32>) -> tensor<1x1x2x2x2xf32>
  %r = tg.reduce_sum %y {axes = array<i64: 0, 1, 2, 3, 4>, keepdims = false} : (tensor<1x1x2x2x2xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

// -----

func.func @through_scan(%x: tensor<3x2xf32>) -> tensor<f32> {
  %w = tg.weight "w" : tensor<2xf32>
  // expected-error@+1 {{'tg.scan' op has no gradient yet (docs/Training.md lists the differentiable ops)}}
  %y = tg.scan sequences(%x : tensor<3x2xf32>) invariants(%w : tensor<2xf32>) -> (tensor<3x2xf32>) {
  ^bb0(%xt: tensor<2xf32>, %v: tensor<2xf32>):
    %m = tg.mul %xt, %v : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    tg.yield %m : tensor<2xf32>
  }
  %r = tg.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x2xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
