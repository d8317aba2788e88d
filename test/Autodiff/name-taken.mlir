// --tg-autodiff does not overwrite a function: a taken name is a located
// error, and with two functions the loss must be named.
// RUN: loom-opt %s --verify-diagnostics --tg-autodiff="optimizer=sgd function=taken_name"
// RUN: not loom-opt %s --tg-autodiff="optimizer=sgd" 2>&1 | FileCheck %s
// CHECK: tg-autodiff: the module has 2 functions; name one with function=NAME

func.func @taken_name_train_step() {
  return
}
// expected-error@+1 {{the module already has a function named 'taken_name_train_step'}}
func.func @taken_name(%x: tensor<2xf32>) -> tensor<f32> {
  %w = tg.weight "w" : tensor<2xf32>
  %y = tg.mul %x, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r = tg.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
