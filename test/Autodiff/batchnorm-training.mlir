// tg.batchnorm in training (batch statistics, the form --tg-autodiff
// trains) and as written (running statistics as operands): both gradients
// against finite differences, with respect to the input, the convolution
// and every batchnorm parameter.
// RUN: loom-run %s --write-random-weights %t.safetensors
// RUN: loom-run %s --weights %t.safetensors --check-gradients --batchnorm-training --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --weights %t.safetensors --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// CHECK: bn.weight
// CHECK: largest relative error

func.func @f(%x: tensor<3x2x4x4xf32>, %w: tensor<4x2x3x3xf32>, %weight: tensor<3x4x4x4xf32>) -> tensor<f32> {
  %g = tg.weight "bn.weight" : tensor<4xf32>
  %b = tg.weight "bn.bias" : tensor<4xf32>
  %m = tg.weight "bn.running_mean" : tensor<4xf32>
  %v = tg.weight "bn.running_var" : tensor<4xf32>
  %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<3x2x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<3x4x4x4xf32>
  %y = tg.batchnorm %c, %g, %b, %m, %v {epsilon = 1.0e-3 : f64} : (tensor<3x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<3x4x4x4xf32>
  %r = tg.relu %y : tensor<3x4x4x4xf32>
  %wy = tg.mul %r, %weight : (tensor<3x4x4x4xf32>, tensor<3x4x4x4xf32>) -> tensor<3x4x4x4xf32>
  %s = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<3x4x4x4xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
