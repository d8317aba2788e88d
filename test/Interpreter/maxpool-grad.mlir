// tg.maxpool_grad on the reference interpreter: overlapping windows with
// padding (the gradients of two windows sharing an argmax accumulate), ties
// going to the first position in row-major order (every window of a
// constant input, padding never winning), -inf inputs, the same exact
// values in the three domains, and its adjoint identity with tg.maxpool
// (sum(maxpool(x) * g) == sum(x * maxpool_grad(x, g))) in modp.
//
// RUN: loom-run %s --entry overlap --print-values 64 --domain f32 | FileCheck %s --check-prefix=OVER
// RUN: loom-run %s --entry overlap --print-values 64 --domain f64 | FileCheck %s --check-prefix=OVER
// RUN: loom-run %s --entry overlap --print-values 64 --domain modp | FileCheck %s --check-prefix=OVER
// RUN: loom-run %s --entry ties --print-values 64 --domain f32 | FileCheck %s --check-prefix=TIES
// RUN: loom-run %s --entry ties --print-values 64 --domain modp | FileCheck %s --check-prefix=TIES
// RUN: loom-run %s --entry neg_inf --print-values 64 | FileCheck %s --check-prefix=INF
// RUN: loom-run %s --entry adjoint --print-values 64 --seed 5 --domain modp | FileCheck %s --check-prefix=ADJ

// OVER-LABEL: @overlap
// 3x3 windows, stride 2, padding 1: windows (0, 0) and (0, 1) both have
// their maximum 5 first at (0, 1) (10 + 20); window (1, 0) at (3, 0) and
// window (1, 1) first at (2, 2) (7 also at (2, 3) and (3, 2)).
// OVER: dx: tensor<1x1x4x4xf32>
// OVER-NEXT: values: 0 30 0 0 0 0 0 0 0 0 40 0 30 0 0 0{{$}}
func.func @overlap() -> (tensor<1x1x4x4xf32> {tg.name = "dx"}) {
  %x = tg.constant dense<[[[[1.0, 5.0, 2.0, 0.0], [3.0, 5.0, 4.0, 1.0],
                             [0.0, 2.0, 7.0, 7.0], [6.0, 1.0, 7.0, 3.0]]]]> : tensor<1x1x4x4xf32>
  %g = tg.constant dense<[[[[10.0, 20.0], [30.0, 40.0]]]]> : tensor<1x1x2x2xf32>
  %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return %dx : tensor<1x1x4x4xf32>
}

// TIES-LABEL: @ties
// A constant -1 input, 2x2 windows, stride 1, padding 1 on every side: the
// nine windows' argmaxes are their first in-bounds positions, (0, 0) for
// four of them, (0, 1) and (1, 0) for two, (1, 1) for one. The second
// channel's window gradients are 1..9.
// TIES: dx: tensor<1x2x2x2xf32>
// TIES-NEXT: values: 4 2 2 1 12 9 15 9{{$}}
func.func @ties() -> (tensor<1x2x2x2xf32> {tg.name = "dx"}) {
  %x = tg.constant dense<-1.0> : tensor<1x2x2x2xf32>
  %g = tg.constant dense<[[[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]],
                           [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x2x3x3xf32>
  %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x2x2xf32>
  return %dx : tensor<1x2x2x2xf32>
}

// INF-LABEL: @neg_inf
// A window of -inf only still has its first position as argmax (padding,
// -inf too, never wins); 1x3 windows, stride 1, padding 1 left and right.
// INF: dx: tensor<1x1x1x3xf32>
// INF-NEXT: values: 3 0 4{{$}}
func.func @neg_inf() -> (tensor<1x1x1x3xf32> {tg.name = "dx"}) {
  %x = tg.constant dense<[[[[0xFF800000, 0xFF800000, 2.0]]]]> : tensor<1x1x1x3xf32>
  %g = tg.constant dense<[[[[3.0, 1.0, 3.0]]]]> : tensor<1x1x1x3xf32>
  %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 1, 3>, pads = array<i64: 0, 1, 0, 1>}
      : (tensor<1x1x1x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x1x1x3xf32>
  return %dx : tensor<1x1x1x3xf32>
}

// ADJ-LABEL: @adjoint
// Exact in modp arithmetic, on random residues.
// ADJ: d: tensor<f32>
// ADJ-NEXT: values: 0{{$}}
func.func @adjoint(%x: tensor<2x3x7x6xf32> {tg.name = "x"}, %g: tensor<2x3x4x3xf32> {tg.name = "g"})
    -> (tensor<f32> {tg.name = "d"}) {
  %y = tg.maxpool %x {kernel_size = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>}
      : (tensor<2x3x7x6xf32>) -> tensor<2x3x4x3xf32>
  %p1 = tg.mul %y, %g : (tensor<2x3x4x3xf32>, tensor<2x3x4x3xf32>) -> tensor<2x3x4x3xf32>
  %s1 = tg.reduce_sum %p1 {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x4x3xf32>) -> tensor<f32>
  %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>}
      : (tensor<2x3x7x6xf32>, tensor<2x3x4x3xf32>) -> tensor<2x3x7x6xf32>
  %p2 = tg.mul %x, %dx : (tensor<2x3x7x6xf32>, tensor<2x3x7x6xf32>) -> tensor<2x3x7x6xf32>
  %s2 = tg.reduce_sum %p2 {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x7x6xf32>) -> tensor<f32>
  %d = tg.sub %s1, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %d : tensor<f32>
}
