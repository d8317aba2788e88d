// Gradient checks of the differentiable tg ops: each function is a weighted
// sum of one op's result (awkward shapes, broadcasting, strides, groups,
// dilations, padding), and loom-run --check-gradients compares the
// gradient --tg-autodiff builds with central finite differences in f64.
// Written by Inputs/gen-gradients.py: add a case there and rerun it.
//
// RUN: loom-run %s --entry relu --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry sigmoid --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry tanh --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry exp --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry neg --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry erf --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry softplus --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry hardswish --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry log --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry sqrt --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry rsqrt --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry gelu --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry gelu_tanh --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry clip --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry hardsigmoid --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry hardswish_wide --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry add_broadcast --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry sub_broadcast --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry mul_broadcast --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry max_broadcast --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry min_broadcast --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry add_both_broadcast --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry div_broadcast --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry pow --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry select --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry cast_f64 --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry matmul_batched_broadcast --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry matmul_batch_both --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry conv_basic --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry conv_stride2_asym_pad --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry conv_dilation --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry conv_groups --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry conv_depthwise_relu --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry conv_1x1_pad_sigmoid --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry conv_patches --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry conv_patches_gaps_pads --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry conv_stride3_tanh --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry maxpool_overlap_pad --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry maxpool_2x2 --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry avgpool_pad_excluded --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry avgpool_pad_included --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry global_avgpool --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry transpose --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry reshape --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry concat_repeated --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry split_unused_piece --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry slice_strided --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry pad --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry enlarge --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry broadcast_to --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry gather_repeated_negative --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry gather_axis1 --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry softmax_cross_entropy --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry mse_loss --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry reduce_sum --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry reduce_mean_keep --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry reduce_max --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry softmax_axis1 --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry layernorm --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// RUN: loom-run %s --entry batchnorm_inference --check-gradients --gradient-tolerance 1e-6 | FileCheck %s
// CHECK: largest relative error

func.func @relu(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.relu %x : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @sigmoid(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.sigmoid %x : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @tanh(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.tanh %x : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @exp(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.exp %x : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @neg(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.neg %x : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @erf(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.erf %x : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @softplus(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.softplus %x : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @hardswish(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.hardswish %x : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @log(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %h = tg.mul %x, %x : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %half = tg.constant dense<0.5> : tensor<f32>
  %p = tg.add %h, %half : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
  %y = tg.log %p : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @sqrt(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %h = tg.mul %x, %x : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %half = tg.constant dense<0.5> : tensor<f32>
  %p = tg.add %h, %half : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
  %y = tg.sqrt %p : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @rsqrt(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %h = tg.mul %x, %x : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %half = tg.constant dense<0.5> : tensor<f32>
  %p = tg.add %h, %half : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
  %y = tg.rsqrt %p : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @gelu(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.gelu %x : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @gelu_tanh(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.gelu %x {tanh_approximation = true} : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @clip(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.clip %x {min = -0.3 : f64, max = 0.4 : f64} : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @hardsigmoid(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.hardsigmoid %x {alpha = 0.7 : f64, beta = 0.4 : f64} : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @hardswish_wide(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %s = tg.constant dense<5.0> : tensor<f32>
  %p = tg.mul %x, %s : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
  %y = tg.hardswish %p : tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @add_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<3x1xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.add %a, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @sub_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<3x1xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.sub %a, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @mul_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<3x1xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.mul %a, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @max_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<3x1xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.max %a, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @min_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<3x1xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.min %a, %b : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @add_both_broadcast(%a: tensor<3x1xf32>, %b: tensor<1x4xf32>, %weight: tensor<3x4xf32>) -> tensor<f32> {
  %y = tg.add %a, %b : (tensor<3x1xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @div_broadcast(%a: tensor<2x3x4xf32>, %b: tensor<4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %h = tg.mul %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %q = tg.add %h, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %y = tg.div %a, %q : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @pow(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>, %weight: tensor<3x4xf32>) -> tensor<f32> {
  %h = tg.mul %a, %a : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %one = tg.constant dense<0.5> : tensor<f32>
  %p = tg.add %h, %one : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  %y = tg.pow %p, %b : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @select(%a: tensor<3x4xf32>, %b: tensor<4xf32>, %weight: tensor<3x4xf32>) -> tensor<f32> {
  %z = tg.constant dense<0.0> : tensor<f32>
  %c = tg.greater %a, %z : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>
  %y = tg.select %c, %a, %b : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @cast_f64(%a: tensor<3x4xf32>, %weight: tensor<3x4xf64>) -> tensor<f64> {
  %d = tg.cast %a : tensor<3x4xf32> to tensor<3x4xf64>
  %y = tg.exp %d : tensor<3x4xf64>
  %wy = tg.mul %y, %weight : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x4xf64>) -> tensor<f64>
  return %r : tensor<f64>
}

func.func @matmul_batched_broadcast(%a: tensor<2x3x5xf32>, %b: tensor<5x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.matmul %a, %b : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @matmul_batch_both(%a: tensor<2x1x3x5xf32>, %b: tensor<3x5x4xf32>, %weight: tensor<2x3x3x4xf32>) -> tensor<f32> {
  %y = tg.matmul %a, %b : (tensor<2x1x3x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @conv_basic(%x: tensor<2x3x6x5xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>, %weight: tensor<2x4x6x5xf32>) -> tensor<f32> {
  %y = tg.conv %x, %w, %bias {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x6x5xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x5xf32>
  %wy = tg.mul %y, %weight : (tensor<2x4x6x5xf32>, tensor<2x4x6x5xf32>) -> tensor<2x4x6x5xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x4x6x5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @conv_stride2_asym_pad(%x: tensor<1x3x7x6xf32>, %w: tensor<4x3x3x2xf32>, %weight: tensor<1x4x3x3xf32>) -> tensor<f32> {
  %y = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>} : (tensor<1x3x7x6xf32>, tensor<4x3x3x2xf32>) -> tensor<1x4x3x3xf32>
  %wy = tg.mul %y, %weight : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x4x3x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @conv_dilation(%x: tensor<1x2x8x7xf32>, %w: tensor<3x2x3x3xf32>, %bias: tensor<3xf32>, %weight: tensor<1x3x8x5xf32>) -> tensor<f32> {
  %y = tg.conv %x, %w, %bias {dilations = array<i64: 2, 2>, pads = array<i64: 2, 1, 2, 1>} : (tensor<1x2x8x7xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x8x5xf32>
  %wy = tg.mul %y, %weight : (tensor<1x3x8x5xf32>, tensor<1x3x8x5xf32>) -> tensor<1x3x8x5xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x3x8x5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @conv_groups(%x: tensor<2x4x5x5xf32>, %w: tensor<6x2x3x3xf32>, %bias: tensor<6xf32>, %weight: tensor<2x6x3x5xf32>) -> tensor<f32> {
  %y = tg.conv %x, %w, %bias {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>} : (tensor<2x4x5x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x3x5xf32>
  %wy = tg.mul %y, %weight : (tensor<2x6x3x5xf32>, tensor<2x6x3x5xf32>) -> tensor<2x6x3x5xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x6x3x5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @conv_depthwise_relu(%x: tensor<1x3x6x6xf32>, %w: tensor<3x1x3x3xf32>, %bias: tensor<3xf32>, %weight: tensor<1x3x6x6xf32>) -> tensor<f32> {
  %y = tg.conv %x, %w, %bias {groups = 3 : i64, pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x3x6x6xf32>, tensor<3x1x3x3xf32>, tensor<3xf32>) -> tensor<1x3x6x6xf32>
  %wy = tg.mul %y, %weight : (tensor<1x3x6x6xf32>, tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x3x6x6xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @conv_1x1_pad_sigmoid(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %bias: tensor<3xf32>, %weight: tensor<1x3x6x6xf32>) -> tensor<f32> {
  %y = tg.conv %x, %w, %bias {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation sigmoid>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x6x6xf32>
  %wy = tg.mul %y, %weight : (tensor<1x3x6x6xf32>, tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x3x6x6xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @conv_patches(%x: tensor<2x3x9x8xf32>, %w: tensor<5x3x3x2xf32>, %bias: tensor<5xf32>, %weight: tensor<2x5x3x3xf32>) -> tensor<f32> {
  %y = tg.conv %x, %w, %bias {strides = array<i64: 3, 3>} : (tensor<2x3x9x8xf32>, tensor<5x3x3x2xf32>, tensor<5xf32>) -> tensor<2x5x3x3xf32>
  %wy = tg.mul %y, %weight : (tensor<2x5x3x3xf32>, tensor<2x5x3x3xf32>) -> tensor<2x5x3x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x5x3x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @conv_patches_gaps_pads(%x: tensor<1x2x9x9xf32>, %w: tensor<3x2x2x2xf32>, %weight: tensor<1x3x3x5xf32>) -> tensor<f32> {
  %y = tg.conv %x, %w {strides = array<i64: 3, 2>, pads = array<i64: 1, 0, 0, 1>} : (tensor<1x2x9x9xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x3x5xf32>
  %wy = tg.mul %y, %weight : (tensor<1x3x3x5xf32>, tensor<1x3x3x5xf32>) -> tensor<1x3x3x5xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x3x3x5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @conv_stride3_tanh(%x: tensor<1x2x8x8xf32>, %w: tensor<2x2x2x2xf32>, %weight: tensor<1x2x3x3xf32>) -> tensor<f32> {
  %y = tg.conv %x, %w {strides = array<i64: 3, 3>, activation = #tg<activation tanh>} : (tensor<1x2x8x8xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x3x3xf32>
  %wy = tg.mul %y, %weight : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x2x3x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @maxpool_overlap_pad(%x: tensor<1x2x7x7xf32>, %weight: tensor<1x2x4x4xf32>) -> tensor<f32> {
  %y = tg.maxpool %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32>
  %wy = tg.mul %y, %weight : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x2x4x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @maxpool_2x2(%x: tensor<2x3x4x6xf32>, %weight: tensor<2x3x2x3xf32>) -> tensor<f32> {
  %y = tg.maxpool %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x4x6xf32>) -> tensor<2x3x2x3xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x2x3xf32>, tensor<2x3x2x3xf32>) -> tensor<2x3x2x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x2x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @avgpool_pad_excluded(%x: tensor<1x2x5x5xf32>, %weight: tensor<1x2x3x3xf32>) -> tensor<f32> {
  %y = tg.avgpool %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  %wy = tg.mul %y, %weight : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x2x3x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @avgpool_pad_included(%x: tensor<1x2x5x5xf32>, %weight: tensor<1x2x5x3xf32>) -> tensor<f32> {
  %y = tg.avgpool %x {kernel_size = array<i64: 3, 2>, strides = array<i64: 1, 2>, pads = array<i64: 1, 0, 1, 1>, count_include_pad = true} : (tensor<1x2x5x5xf32>) -> tensor<1x2x5x3xf32>
  %wy = tg.mul %y, %weight : (tensor<1x2x5x3xf32>, tensor<1x2x5x3xf32>) -> tensor<1x2x5x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x2x5x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @global_avgpool(%x: tensor<2x3x4x5xf32>, %weight: tensor<2x3x1x1xf32>) -> tensor<f32> {
  %y = tg.global_avgpool %x : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x1x1xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @transpose(%x: tensor<2x3x4xf32>, %weight: tensor<4x2x3xf32>) -> tensor<f32> {
  %y = tg.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %wy = tg.mul %y, %weight : (tensor<4x2x3xf32>, tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<4x2x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @reshape(%x: tensor<2x3x4xf32>, %weight: tensor<6x4xf32>) -> tensor<f32> {
  %y = tg.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %wy = tg.mul %y, %weight : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<6x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @concat_repeated(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %weight: tensor<2x11xf32>) -> tensor<f32> {
  %y = tg.concat %a, %b, %a {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x11xf32>
  %wy = tg.mul %y, %weight : (tensor<2x11xf32>, tensor<2x11xf32>) -> tensor<2x11xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x11xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @split_unused_piece(%x: tensor<2x9xf32>, %weight: tensor<2x6xf32>) -> tensor<f32> {
  %p:3 = tg.split %x {axis = 1 : i64, sizes = array<i64: 2, 3, 4>} : (tensor<2x9xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x4xf32>)
  %e = tg.exp %p#2 : tensor<2x4xf32>
  %y = tg.concat %p#0, %e {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x6xf32>
  %wy = tg.mul %y, %weight : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x6xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @slice_strided(%x: tensor<5x9xf32>, %weight: tensor<2x3xf32>) -> tensor<f32> {
  %y = tg.slice %x {starts = array<i64: 1, 2>, limits = array<i64: 5, 9>, strides = array<i64: 2, 3>} : (tensor<5x9xf32>) -> tensor<2x3xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @pad(%x: tensor<2x3xf32>, %weight: tensor<3x5xf32>) -> tensor<f32> {
  %y = tg.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<3x5xf32>
  %wy = tg.mul %y, %weight : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<3x5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @enlarge(%x: tensor<2x2x1x3xf32>, %weight: tensor<2x2x3x5xf32>) -> tensor<f32> {
  %y = tg.enlarge %x {kernel_size = array<i64: 3, 5>} : (tensor<2x2x1x3xf32>) -> tensor<2x2x3x5xf32>
  %wy = tg.mul %y, %weight : (tensor<2x2x3x5xf32>, tensor<2x2x3x5xf32>) -> tensor<2x2x3x5xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x2x3x5xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @broadcast_to(%x: tensor<3x1xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.broadcast_to %x : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @gather_repeated_negative(%x: tensor<5x3xf32>, %weight: tensor<2x2x3xf32>) -> tensor<f32> {
  %i = tg.constant dense<[[4, 0], [4, -1]]> : tensor<2x2xi64>
  %y = tg.gather %x, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  %wy = tg.mul %y, %weight : (tensor<2x2x3xf32>, tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x2x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @gather_axis1(%x: tensor<2x5x3xf32>, %weight: tensor<2x3x3xf32>) -> tensor<f32> {
  %i = tg.constant dense<[1, 1, 3]> : tensor<3xi32>
  %y = tg.gather %x, %i {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<3xi32>) -> tensor<2x3x3xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @softmax_cross_entropy(%x: tensor<4x5xf32>, %weight: tensor<f32>) -> tensor<f32> {
  %l = tg.constant dense<[3, 0, 4, 3]> : tensor<4xi64>
  %y = tg.softmax_cross_entropy %x, %l : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  %wy = tg.mul %y, %weight : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = tg.add %wy, %wy : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @mse_loss(%a: tensor<2x3x4xf32>, %b: tensor<2x3x4xf32>, %weight: tensor<f32>) -> tensor<f32> {
  %y = tg.mse_loss %a, %b : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<f32>
  %wy = tg.mul %y, %weight : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = tg.add %wy, %wy : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @reduce_sum(%x: tensor<2x3x4xf32>, %weight: tensor<3xf32>) -> tensor<f32> {
  %y = tg.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %wy = tg.mul %y, %weight : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0>, keepdims = false} : (tensor<3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @reduce_mean_keep(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x1xf32>) -> tensor<f32> {
  %y = tg.reduce_mean %x {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x1xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @reduce_max(%x: tensor<2x3x4xf32>, %weight: tensor<2x4xf32>) -> tensor<f32> {
  %y = tg.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @softmax_axis1(%x: tensor<2x3x4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = tg.softmax %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @layernorm(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<4xf32>, %weight: tensor<2x3x4xf32>) -> tensor<f32> {
  %bb = tg.broadcast_to %b : (tensor<4xf32>) -> tensor<3x4xf32>
  %y = tg.layernorm %x, %g, %bb {axis = 1 : i64, epsilon = 1.0e-3 : f64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @batchnorm_inference(%x: tensor<2x3x2x2xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>, %weight: tensor<2x3x2x2xf32>) -> tensor<f32> {
  %v2 = tg.mul %v, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = tg.batchnorm %x, %g, %b, %m, %v2 {epsilon = 0.1 : f64} : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x2x2xf32>
  %wy = tg.mul %y, %weight : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %r = tg.reduce_sum %wy {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x2x2xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
