// Every fused rule of --tg-fuse-trials, checked against separate runs on the
// reference interpreter (f64): the weights are the parameters (random, one
// set per trial), the inputs shared by the trials or (--per-trial-inputs)
// different per trial. Shapes are awkward on purpose: groups, strides,
// dilations, asymmetric padding, negative axes.
//
// RUN: loom-run %s --entry conv --check-trials=3 --trial-steps=1 | FileCheck %s
// RUN: loom-run %s --entry conv --check-trials=2 --trial-steps=1 --per-trial-inputs | FileCheck %s
// RUN: loom-run %s --entry norms --check-trials=3 --trial-steps=1 | FileCheck %s
// RUN: loom-run %s --entry norms --check-trials=2 --trial-steps=1 --per-trial-inputs | FileCheck %s
// RUN: loom-run %s --entry movement --check-trials=3 --trial-steps=1 | FileCheck %s
// RUN: loom-run %s --entry losses --check-trials=3 --trial-steps=1 | FileCheck %s
// RUN: loom-run %s --entry losses --check-trials=2 --trial-steps=1 --per-trial-inputs | FileCheck %s
// RUN: loom-run %s --entry conv --check-trials=1 --trial-steps=1 | FileCheck %s
//
// The fused functions hold no per-trial op of the original form:
// RUN: loom-opt %s --tg-fuse-trials="function=conv trials=4" | FileCheck %s --check-prefix=CONV
//
// CHECK: fused trials check
// CHECK: largest relative error {{[0-9.e+-]+}} ({{.*}}; tolerance 1e-05)
// CHECK-NOT: error:

// CONV-LABEL: func.func @conv_trials
// CONV-SAME: tensor<4x6x2x3x3xf32> {tg.name = "c1.weight", tg.parameter}
// CONV: tg.conv {{.*}}dilations = array<i64: 2, 1>, groups = 8 : i64
// CONV-SAME: (tensor<2x16x9x8xf32>, tensor<24x2x3x3xf32>, tensor<24xf32>)
// CONV: tg.maxpool {{.*}}: (tensor<8x6x{{.*}}xf32>)
// CONV: return {{.*}} : tensor<4x2x6x{{.*}}xf32>

func.func @conv(%x: tensor<2x4x9x8xf32>) -> (tensor<2x6x2x2xf32>, tensor<2x6x1x1xf32>, tensor<2x6x3x3xf32>) {
  %w = tg.weight "c1.weight" : tensor<6x2x3x3xf32>
  %b = tg.weight "c1.bias" : tensor<6xf32>
  %c = tg.conv %x, %w, %b {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 2, 1>,
                             dilations = array<i64: 2, 1>, groups = 2 : i64,
                             activation = #tg<activation tanh>}
      : (tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x4x7xf32>
  %p = tg.maxpool %c {kernel_size = array<i64: 2, 3>, strides = array<i64: 2, 2>}
      : (tensor<2x6x4x7xf32>) -> tensor<2x6x2x3xf32>
  %w2 = tg.weight "c2.weight" : tensor<6x1x1x2xf32>
  %e = tg.enlarge %w2 {kernel_size = array<i64: 3, 2>} : (tensor<6x1x1x2xf32>) -> tensor<6x1x3x2xf32>
  %d = tg.conv %p, %e {pads = array<i64: 1, 0, 1, 0>, groups = 6 : i64}
      : (tensor<2x6x2x3xf32>, tensor<6x1x3x2xf32>) -> tensor<2x6x2x2xf32>
  %a = tg.avgpool %c {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 3>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<2x6x4x7xf32>) -> tensor<2x6x2x3xf32>
  %g = tg.global_avgpool %a : (tensor<2x6x2x3xf32>) -> tensor<2x6x1x1xf32>
  %dy = tg.sigmoid %p : tensor<2x6x2x3xf32>
  %pg = tg.maxpool_grad %c, %dy {kernel_size = array<i64: 2, 3>, strides = array<i64: 2, 2>}
      : (tensor<2x6x4x7xf32>, tensor<2x6x2x3xf32>) -> tensor<2x6x4x7xf32>
  %s = tg.slice %pg {starts = array<i64: 0, 0, 1, 0>, limits = array<i64: 2, 6, 4, 7>, strides = array<i64: 1, 1, 1, 3>}
      : (tensor<2x6x4x7xf32>) -> tensor<2x6x3x3xf32>
  return %d, %g, %s : tensor<2x6x2x2xf32>, tensor<2x6x1x1xf32>, tensor<2x6x3x3xf32>
}

func.func @norms(%x: tensor<3x4x5xf32>, %y: tensor<2x3x4x4xf32>) -> (tensor<3x4x5xf32>, tensor<2x3x4x4xf32>, tensor<3x1x5xf32>, tensor<4x5xf32>, tensor<3x4x5xf32>) {
  %g = tg.weight "ln.scale" : tensor<4x5xf32>
  %b = tg.weight "ln.bias" : tensor<4x5xf32>
  %w = tg.weight "proj" : tensor<5x5xf32>
  %h = tg.matmul %x, %w : (tensor<3x4x5xf32>, tensor<5x5xf32>) -> tensor<3x4x5xf32>
  %l = tg.layernorm %h, %g, %b {axis = -2 : i64, epsilon = 1.0e-3 : f64}
      : (tensor<3x4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<3x4x5xf32>
  %gs = tg.constant dense<[1.0, 2.0, 0.5, 1.5, -1.0]> : tensor<5xf32>
  %bs = tg.constant dense<0.25> : tensor<5xf32>
  %l2 = tg.layernorm %h, %gs, %bs : (tensor<3x4x5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<3x4x5xf32>
  %sm = tg.softmax %l2 {axis = 0 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %bg = tg.weight "bn.scale" : tensor<3xf32>
  %bb = tg.weight "bn.bias" : tensor<3xf32>
  %bm = tg.constant dense<[0.1, -0.2, 0.3]> : tensor<3xf32>
  %bv = tg.weight "bn.var" : tensor<3xf32>
  %bv2 = tg.mul %bv, %bv : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %n = tg.batchnorm %y, %bg, %bb, %bm, %bv2 : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %r = tg.reduce_max %l {axes = array<i64: -2>} : (tensor<3x4x5xf32>) -> tensor<3x1x5xf32>
  %m = tg.reduce_mean %l {axes = array<i64: 0>, keepdims = false} : (tensor<3x4x5xf32>) -> tensor<4x5xf32>
  return %l, %n, %r, %m, %sm : tensor<3x4x5xf32>, tensor<2x3x4x4xf32>, tensor<3x1x5xf32>, tensor<4x5xf32>, tensor<3x4x5xf32>
}

func.func @movement(%x: tensor<4x6xf32>, %ids: tensor<2x3xi64>) -> (tensor<2x3x7x5xf32>, tensor<5x9xf32>, tensor<7x6xf32>, tensor<3x4x2xf32>) {
  %t = tg.weight "table" : tensor<6x7x5xf32>
  %gi = tg.gather %t, %ids {axis = -3 : i64} : (tensor<6x7x5xf32>, tensor<2x3xi64>) -> tensor<2x3x7x5xf32>
  %w = tg.weight "w" : tensor<4x6xf32>
  %xw = tg.mul %x, %w : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %tr = tg.transpose %xw {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %p = tg.pad %tr {low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = 0.5 : f64} : (tensor<6x4xf32>) -> tensor<7x6xf32>
  %a, %b = tg.split %p {axis = -1 : i64, sizes = array<i64: 4, 2>} : (tensor<7x6xf32>) -> (tensor<7x4xf32>, tensor<7x2xf32>)
  %c = tg.concat %b, %p, %a {axis = 1 : i64} : (tensor<7x2xf32>, tensor<7x6xf32>, tensor<7x4xf32>) -> tensor<7x12xf32>
  %s = tg.slice %c {starts = array<i64: 1, 0>, limits = array<i64: 6, 9>} : (tensor<7x12xf32>) -> tensor<5x9xf32>
  %bias = tg.weight "bias" : tensor<4x1xf32>
  %bc = tg.broadcast_to %bias : (tensor<4x1xf32>) -> tensor<3x4x2xf32>
  %idx = tg.constant dense<[0, 3, 0, 6, 2]> : tensor<5xi64>
  %sa = tg.scatter_add %s, %idx {axis = 0 : i64, dim_size = 7 : i64} : (tensor<5x9xf32>, tensor<5xi64>) -> tensor<7x9xf32>
  %sl = tg.slice %sa {starts = array<i64: 0, 0>, limits = array<i64: 7, 6>} : (tensor<7x9xf32>) -> tensor<7x6xf32>
  return %gi, %s, %sl, %bc : tensor<2x3x7x5xf32>, tensor<5x9xf32>, tensor<7x6xf32>, tensor<3x4x2xf32>
}

func.func @losses(%x: tensor<8x5xf32>, %labels: tensor<8xi64>, %target: tensor<8x10xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %w = tg.weight "w" : tensor<5x10xf32>
  %y = tg.matmul %x, %w : (tensor<8x5xf32>, tensor<5x10xf32>) -> tensor<8x10xf32>
  %ce = tg.softmax_cross_entropy %y, %labels : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  %mse = tg.mse_loss %y, %target : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<f32>
  %s = tg.weight "s" : tensor<f32>
  %t = tg.constant dense<0.5> : tensor<f32>
  %mse0 = tg.mse_loss %s, %t : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %ce, %mse, %mse0 : tensor<f32>, tensor<f32>, tensor<f32>
}
