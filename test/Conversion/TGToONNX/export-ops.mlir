// Every tg op exported to ONNX (opset 17, checked by onnx::checker), shown
// in ONNX's text syntax; then exported as a binary model, imported back and
// run on the same inputs: the results are bit for bit the same.
//
// RUN: loom-translate --export-onnx %s --onnx-text -o - | FileCheck %s
// RUN: rm -rf %t && mkdir %t
// RUN: loom-translate --export-onnx %s -o %t/model.onnx
// RUN: loom-translate --import-onnx %t/model.onnx -o %t/model.mlir
// RUN: loom-run %s --seed 7 --outputs %t/before.safetensors > /dev/null
// RUN: loom-run %t/model.mlir --seed 7 --outputs %t/after.safetensors > /dev/null
// RUN: cmp %t/before.safetensors %t/after.safetensors

// CHECK: opset_import: ["" : 17]
// CHECK: main (float[1,2,6,6] x, float[4,2,3,3] w, float[4] b, float[2,6] m, int64[3] ids,
// Constants become initializers.
// CHECK: int64[3] constant_1 = {2, 0, 1},
// CHECK: => (float[1,4,6,6] conv, float[1,4,3,3] pools,
// A fused activation is a second node.
// CHECK: conv_conv = Conv<kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], group = 1>(x, w, b)
// CHECK-NEXT: conv = Relu(conv_conv)
// CHECK-NEXT: maxpool = MaxPool<kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]>(conv)
// CHECK-NEXT: pools = AveragePool<kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], count_include_pad = 1>(maxpool)
// CHECK-NEXT: gap = GlobalAveragePool(pools)
// CHECK-NEXT: gather = Gather<axis = 0>(constant, ids)
// CHECK-NEXT: gathered = Gather<axis = 0>(gather, constant_1)
// CHECK-NEXT: sum = ReduceSum<keepdims = 1>(m, reduce_sum_axes)
// CHECK-NEXT: mean = ReduceMean<axes = [1], keepdims = 0>(m)
// CHECK-NEXT: max = ReduceMax<axes = [0, 1], keepdims = 1>(m)
// CHECK-NEXT: softmax = Softmax<axis = -1>(m)
// CHECK-NEXT: layernorm = LayerNormalization<axis = -1, epsilon = 0.25>(m, constant_2, constant_3)
// CHECK-NEXT: batchnorm = BatchNormalization<epsilon = 0.25>(conv, constant_4, constant_5, constant_5, constant_4)
// CHECK-NEXT: hardsigmoid = HardSigmoid<alpha = 0.25, beta = 0.5>(m)
// CHECK-NEXT: hardswish = HardSwish(hardsigmoid)
// CHECK-NEXT: clip = Clip(hardswish, clip_min, clip_max)
// An infinite bound is an absent input.
// CHECK-NEXT: clip_1 = Clip(clip, clip_min_1)
// CHECK-NEXT: rsqrt_sqrt = Sqrt(clip_1)
// CHECK-NEXT: rsqrt = Reciprocal(rsqrt_sqrt)
// CHECK-NEXT: erf = Erf(m)
// CHECK-NEXT: softplus = Softplus(erf)
// CHECK-NEXT: activations = Add(rsqrt, softplus)
// CHECK-NEXT: moved = Transpose<perm = [1, 0]>(m)
// CHECK-NEXT: left, right = Split<axis = 1>(m, split_split)
// CHECK-NEXT: sliced = Slice(m, slice_starts, slice_ends, slice_axes, slice_steps)
// CHECK-NEXT: padded = Pad<mode = "constant">(m, pad_pads, pad_value)
// CHECK-NEXT: expanded = Expand(m, broadcast_to_shape)
// CHECK-NEXT: concat = Concat<axis = 0>(m, m)
// CHECK-NEXT: half = Cast<to = 10>(m)
// CHECK-NEXT: resized = Resize<mode = "linear", coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_floor", cubic_coeff_a = -0.75, exclude_outside = 0>(x, , , resize_sizes)
// enlarge is a Pad of the filter's spatial dimensions.
// CHECK-NEXT: enlarged = Pad(w, enlarge_pads, enlarge_value)
// CHECK-NEXT: transpose = Transpose<perm = [1, 0]>(m)
// CHECK-NEXT: product = MatMul(m, transpose)
// Opset 17 has no Gelu: 0.5 * x * (1 + erf(x / sqrt(2))).
// CHECK-NEXT: gelu_scaled = Mul(m, gelu_c_2)
// CHECK-NEXT: gelu_erf = Erf(gelu_scaled)
// CHECK-NEXT: gelu_plus = Add(gelu_erf, gelu_c_1)
// CHECK-NEXT: gelu_hx = Mul(m, gelu_c)
// CHECK-NEXT: gelu_1 = Mul(gelu_hx, gelu_plus)
// CHECK-NEXT: gelu = Tanh(gelu_1)

func.func @main(%x: tensor<1x2x6x6xf32> {tg.name = "x"}, %w: tensor<4x2x3x3xf32> {tg.name = "w"},
                %b: tensor<4xf32> {tg.name = "b"}, %m: tensor<2x6xf32> {tg.name = "m"},
                %ids: tensor<3xi64> {tg.name = "ids"})
    -> (tensor<1x4x6x6xf32> {tg.name = "conv"}, tensor<1x4x3x3xf32> {tg.name = "pools"},
        tensor<1x4x1x1xf32> {tg.name = "gap"}, tensor<3x6xf32> {tg.name = "gathered"},
        tensor<2x1xf32> {tg.name = "sum"}, tensor<2xf32> {tg.name = "mean"}, tensor<1x1xf32> {tg.name = "max"},
        tensor<2x6xf32> {tg.name = "softmax"}, tensor<2x6xf32> {tg.name = "layernorm"},
        tensor<1x4x6x6xf32> {tg.name = "batchnorm"}, tensor<2x6xf32> {tg.name = "activations"},
        tensor<6x2xf32> {tg.name = "moved"}, tensor<2x3xf32> {tg.name = "left"}, tensor<2x3xf32> {tg.name = "right"},
        tensor<2x2xf32> {tg.name = "sliced"}, tensor<4x8xf32> {tg.name = "padded"}, tensor<3x2x6xf32> {tg.name = "expanded"},
        tensor<4x6xf32> {tg.name = "concat"}, tensor<2x6xf16> {tg.name = "half"}, tensor<1x2x12x12xf32> {tg.name = "resized"},
        tensor<4x2x5x5xf32> {tg.name = "enlarged"}, tensor<2x2xf32> {tg.name = "product"}, tensor<2x6xf32> {tg.name = "gelu"}) {
  %conv = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>}
      : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %mp = tg.maxpool %conv {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %ap = tg.avgpool %mp {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true}
      : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %gap = tg.global_avgpool %ap : (tensor<1x4x3x3xf32>) -> tensor<1x4x1x1xf32>
  %table = tg.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [0.5, 0.25, 0.125, 1.0, 2.0, 4.0],
                              [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0]]> : tensor<3x6xf32>
  %idx = tg.constant dense<[2, 0, 1]> : tensor<3xi64>
  %g0 = tg.gather %table, %ids : (tensor<3x6xf32>, tensor<3xi64>) -> tensor<3x6xf32>
  %g = tg.gather %g0, %idx : (tensor<3x6xf32>, tensor<3xi64>) -> tensor<3x6xf32>
  %sum = tg.reduce_sum %m {axes = array<i64: 1>} : (tensor<2x6xf32>) -> tensor<2x1xf32>
  %mean = tg.reduce_mean %m {axes = array<i64: 1>, keepdims = false} : (tensor<2x6xf32>) -> tensor<2xf32>
  %max = tg.reduce_max %m {axes = array<i64: 0, 1>} : (tensor<2x6xf32>) -> tensor<1x1xf32>
  %sm = tg.softmax %m : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %gamma = tg.constant dense<[1.0, 2.0, 0.5, 1.0, 1.0, 1.0]> : tensor<6xf32>
  %beta = tg.constant dense<0.25> : tensor<6xf32>
  %ln = tg.layernorm %m, %gamma, %beta {epsilon = 0.25 : f64} : (tensor<2x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  %s4 = tg.constant dense<[1.0, 2.0, 0.5, 1.0]> : tensor<4xf32>
  %z4 = tg.constant dense<[0.0, 0.5, -0.5, 1.0]> : tensor<4xf32>
  %bn = tg.batchnorm %conv, %s4, %z4, %z4, %s4 {epsilon = 0.25 : f64}
      : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %hs = tg.hardsigmoid %m {alpha = 0.25 : f64} : tensor<2x6xf32>
  %hw = tg.hardswish %hs : tensor<2x6xf32>
  %cl = tg.clip %hw {min = -0.5 : f64, max = 0.5 : f64} : tensor<2x6xf32>
  %cl2 = tg.clip %cl {min = 0.0 : f64, max = 0x7FF0000000000000 : f64} : tensor<2x6xf32>
  %rs = tg.rsqrt %cl2 : tensor<2x6xf32>
  %e = tg.erf %m : tensor<2x6xf32>
  %sp = tg.softplus %e : tensor<2x6xf32>
  %act = tg.add %rs, %sp : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  %t = tg.transpose %m {perm = array<i64: 1, 0>} : (tensor<2x6xf32>) -> tensor<6x2xf32>
  %l, %r = tg.split %m {axis = 1 : i64, sizes = array<i64: 3, 3>} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  %sl = tg.slice %m {starts = array<i64: 0, 1>, limits = array<i64: 2, 5>, strides = array<i64: 1, 2>} : (tensor<2x6xf32>) -> tensor<2x2xf32>
  %pd = tg.pad %m {low = array<i64: 1, 1>, high = array<i64: 1, 1>, value = -1.0 : f64} : (tensor<2x6xf32>) -> tensor<4x8xf32>
  %ex = tg.broadcast_to %m : (tensor<2x6xf32>) -> tensor<3x2x6xf32>
  %cat = tg.concat %m, %m {axis = 0 : i64} : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<4x6xf32>
  %h = tg.cast %m : tensor<2x6xf32> to tensor<2x6xf16>
  %rz = tg.resize %x {sizes = array<i64: 1, 2, 12, 12>, mode = #tg<resize_mode linear>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x12x12xf32>
  %en = tg.enlarge %w {kernel_size = array<i64: 5, 5>} : (tensor<4x2x3x3xf32>) -> tensor<4x2x5x5xf32>
  %mt = tg.transpose %m {perm = array<i64: 1, 0>} : (tensor<2x6xf32>) -> tensor<6x2xf32>
  %mm = tg.matmul %m, %mt : (tensor<2x6xf32>, tensor<6x2xf32>) -> tensor<2x2xf32>
  %ge = tg.gelu %m : tensor<2x6xf32>
  %th = tg.tanh %ge : tensor<2x6xf32>
  return %conv, %ap, %gap, %g, %sum, %mean, %max, %sm, %ln, %bn, %act, %t, %l, %r, %sl, %pd, %ex, %cat, %h, %rz, %en, %mm, %th
      : tensor<1x4x6x6xf32>, tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>, tensor<3x6xf32>, tensor<2x1xf32>, tensor<2xf32>,
        tensor<1x1xf32>, tensor<2x6xf32>, tensor<2x6xf32>, tensor<1x4x6x6xf32>, tensor<2x6xf32>, tensor<6x2xf32>,
        tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<4x8xf32>, tensor<3x2x6xf32>, tensor<4x6xf32>,
        tensor<2x6xf16>, tensor<1x2x12x12xf32>, tensor<4x2x5x5xf32>, tensor<2x2xf32>, tensor<2x6xf32>
}
