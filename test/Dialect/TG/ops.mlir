// RUN: loom-opt %s | FileCheck %s
// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --mlir-print-op-generic | loom-opt | FileCheck %s
// Round trip of every tg op, with and without optional attributes.

module attributes {tg.weights = "weights.safetensors"} {

// CHECK-LABEL: func.func @constants_and_weights
func.func @constants_and_weights() -> (tensor<2xf32>, tensor<4x3xf16>, tensor<3xi64>) {
  // CHECK: tg.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = tg.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: tg.weight "fc.weight" : tensor<4x3xf16>
  %w = tg.weight "fc.weight" : tensor<4x3xf16>
  // CHECK: tg.constant dense<[0, 1, 2]> : tensor<3xi64>
  %i = tg.constant dense<[0, 1, 2]> : tensor<3xi64>
  return %c, %w, %i : tensor<2xf32>, tensor<4x3xf16>, tensor<3xi64>
}

// CHECK-LABEL: func.func @linear
func.func @linear(%a: tensor<8x128x64xf32>, %b: tensor<64x32xf32>, %x: tensor<1x3x224x224xf32>,
                  %w: tensor<64x3x7x7xf32>, %bias: tensor<64xf32>, %g: tensor<1x64x8x8xf32>,
                  %gw: tensor<64x2x3x3xf32>) {
  // CHECK: tg.matmul %{{.*}}, %{{.*}} : (tensor<8x128x64xf32>, tensor<64x32xf32>) -> tensor<8x128x32xf32>
  %0 = tg.matmul %a, %b : (tensor<8x128x64xf32>, tensor<64x32xf32>) -> tensor<8x128x32xf32>
  // CHECK: tg.conv %{{.*}}, %{{.*}}, %{{.*}} {activation = #tg<activation relu>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>}
  // CHECK-SAME: -> tensor<1x64x112x112xf32>
  %1 = tg.conv %x, %w, %bias {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, activation = #tg<activation relu>}
      : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  // CHECK: tg.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>, groups = 32 : i64, pads = array<i64: 2, 2, 2, 2>}
  %2 = tg.conv %g, %gw {groups = 32 : i64, dilations = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>}
      : (tensor<1x64x8x8xf32>, tensor<64x2x3x3xf32>) -> tensor<1x64x8x8xf32>
  // CHECK: tg.maxpool %{{.*}} {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %3 = tg.maxpool %1 {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: tg.avgpool %{{.*}} {count_include_pad = true, kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}
  %4 = tg.avgpool %2 {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true}
      : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
  // CHECK: tg.global_avgpool %{{.*}} : (tensor<1x64x8x8xf32>) -> tensor<1x64x1x1xf32>
  %5 = tg.global_avgpool %4 : (tensor<1x64x8x8xf32>) -> tensor<1x64x1x1xf32>
  // CHECK: tg.maxpool_grad %{{.*}}, %{{.*}} {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  // CHECK-SAME: : (tensor<1x64x112x112xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x112x112xf32>
  %6 = tg.maxpool_grad %1, %3 {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x64x112x112xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x112x112xf32>
  // CHECK: tg.maxpool_grad %{{.*}}, %{{.*}} {kernel_size = array<i64: 2, 2>} : (tensor<1x64x8x8xf32>, tensor<1x64x7x7xf32>) -> tensor<1x64x8x8xf32>
  %7 = tg.maxpool %2 {kernel_size = array<i64: 2, 2>} : (tensor<1x64x8x8xf32>) -> tensor<1x64x7x7xf32>
  %8 = tg.maxpool_grad %2, %7 {kernel_size = array<i64: 2, 2>}
      : (tensor<1x64x8x8xf32>, tensor<1x64x7x7xf32>) -> tensor<1x64x8x8xf32>
  return
}

// 1-D and 3-D convolutions and pools: the window attributes sized by the
// spatial rank.
// CHECK-LABEL: func.func @conv_pool_1d_3d
func.func @conv_pool_1d_3d(%x1: tensor<1x3x16xf32>, %w1: tensor<8x3x5xf32>,
                           %x3: tensor<1x4x4x8x8xf32>, %w3: tensor<8x2x3x3x3xf32>) {
  // CHECK: tg.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2>, pads = array<i64: 4, 4>, strides = array<i64: 1>} : (tensor<1x3x16xf32>, tensor<8x3x5xf32>) -> tensor<1x8x16xf32>
  %0 = tg.conv %x1, %w1 {strides = array<i64: 1>, pads = array<i64: 4, 4>, dilations = array<i64: 2>}
      : (tensor<1x3x16xf32>, tensor<8x3x5xf32>) -> tensor<1x8x16xf32>
  // CHECK: tg.maxpool %{{.*}} {kernel_size = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<1x8x16xf32>) -> tensor<1x8x8xf32>
  %1 = tg.maxpool %0 {kernel_size = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>}
      : (tensor<1x8x16xf32>) -> tensor<1x8x8xf32>
  // CHECK: tg.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1, 1>, groups = 2 : i64, pads = array<i64: 1, 1, 1, 1, 1, 1>, strides = array<i64: 1, 2, 2>} : (tensor<1x4x4x8x8xf32>, tensor<8x2x3x3x3xf32>) -> tensor<1x8x4x4x4xf32>
  %2 = tg.conv %x3, %w3 {strides = array<i64: 1, 2, 2>, pads = array<i64: 1, 1, 1, 1, 1, 1>, dilations = array<i64: 1, 1, 1>, groups = 2 : i64}
      : (tensor<1x4x4x8x8xf32>, tensor<8x2x3x3x3xf32>) -> tensor<1x8x4x4x4xf32>
  // CHECK: tg.avgpool %{{.*}} {kernel_size = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 2, 2, 2>} : (tensor<1x8x4x4x4xf32>) -> tensor<1x8x2x2x2xf32>
  %3 = tg.avgpool %2 {kernel_size = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>}
      : (tensor<1x8x4x4x4xf32>) -> tensor<1x8x2x2x2xf32>
  // CHECK: tg.global_avgpool %{{.*}} : (tensor<1x8x2x2x2xf32>) -> tensor<1x8x1x1x1xf32>
  %4 = tg.global_avgpool %3 : (tensor<1x8x2x2x2xf32>) -> tensor<1x8x1x1x1xf32>
  return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x1x3xf32>, %b: tensor<5x3xf32>) {
  // CHECK: tg.add %{{.*}}, %{{.*}} : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  %0 = tg.add %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  // CHECK: tg.sub
  %1 = tg.sub %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  // CHECK: tg.mul
  %2 = tg.mul %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  // CHECK: tg.div
  %3 = tg.div %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  // CHECK: tg.max
  %4 = tg.max %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  // CHECK: tg.min
  %5 = tg.min %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  // CHECK: tg.pow
  %6 = tg.pow %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  return
}

// CHECK-LABEL: func.func @mod
func.func @mod(%a: tensor<4x1x3xf32>, %b: tensor<5x3xf32>, %i: tensor<49xi64>, %n: tensor<i64>) {
  // CHECK: tg.mod %{{.*}}, %{{.*}} {fmod = true} : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  %0 = tg.mod %a, %b {fmod = true} : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  // CHECK: tg.mod %{{.*}}, %{{.*}} : (tensor<49xi64>, tensor<i64>) -> tensor<49xi64>
  %1 = tg.mod %i, %n : (tensor<49xi64>, tensor<i64>) -> tensor<49xi64>
  return
}

// CHECK-LABEL: func.func @compare_select
func.func @compare_select(%a: tensor<4x1x3xf32>, %b: tensor<5x3xf32>, %i: tensor<3xi64>, %j: tensor<i64>) {
  // CHECK: tg.equal %{{.*}}, %{{.*}} : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xi1>
  %0 = tg.equal %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xi1>
  // CHECK: tg.greater %{{.*}}, %{{.*}} : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xi1>
  %1 = tg.greater %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xi1>
  // CHECK: tg.greater_equal %{{.*}}, %{{.*}} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %2 = tg.greater_equal %i, %j : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  // CHECK: tg.less %{{.*}}, %{{.*}} : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %3 = tg.less %i, %j : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  // CHECK: tg.less_equal %{{.*}}, %{{.*}} : (tensor<4x5x3xi1>, tensor<4x5x3xi1>) -> tensor<4x5x3xi1>
  %4 = tg.less_equal %0, %1 : (tensor<4x5x3xi1>, tensor<4x5x3xi1>) -> tensor<4x5x3xi1>
  // CHECK: tg.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x5x3xi1>, tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  %5 = tg.select %4, %a, %b : (tensor<4x5x3xi1>, tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
  // CHECK: tg.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3xi1>, tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %6 = tg.select %2, %i, %j : (tensor<3xi1>, tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  return
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x3xf32>, %h: tensor<2x3xbf16>) {
  // CHECK: tg.relu %{{.*}} : tensor<2x3xf32>
  %0 = tg.relu %x : tensor<2x3xf32>
  // CHECK: tg.round_tf32 %{{.*}} : tensor<2x3xf32>
  %rt = tg.round_tf32 %x : tensor<2x3xf32>
  // CHECK: tg.sigmoid
  %1 = tg.sigmoid %x : tensor<2x3xf32>
  // CHECK: tg.tanh
  %2 = tg.tanh %x : tensor<2x3xf32>
  // CHECK: tg.exp
  %3 = tg.exp %x : tensor<2x3xf32>
  // CHECK: tg.log
  %4 = tg.log %x : tensor<2x3xf32>
  // CHECK: tg.sqrt
  %5 = tg.sqrt %x : tensor<2x3xf32>
  // CHECK: tg.rsqrt
  %6 = tg.rsqrt %x : tensor<2x3xf32>
  // CHECK: tg.neg
  %7 = tg.neg %x : tensor<2x3xf32>
  // CHECK: tg.erf
  %8 = tg.erf %x : tensor<2x3xf32>
  // CHECK: tg.gelu %{{.*}} : tensor<2x3xf32>
  %9 = tg.gelu %x : tensor<2x3xf32>
  // CHECK: tg.gelu %{{.*}} {tanh_approximation = true} : tensor<2x3xbf16>
  %10 = tg.gelu %h {tanh_approximation = true} : tensor<2x3xbf16>
  // CHECK: tg.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<2x3xf32>
  %11 = tg.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x3xf32>
  // CHECK: tg.hardsigmoid %{{.*}} : tensor<2x3xf32>
  %12 = tg.hardsigmoid %x : tensor<2x3xf32>
  // CHECK: tg.hardsigmoid %{{.*}} {alpha = 1.000000e-01 : f64, beta = 2.500000e-01 : f64}
  %13 = tg.hardsigmoid %x {alpha = 0.1 : f64, beta = 0.25 : f64} : tensor<2x3xf32>
  // CHECK: tg.hardswish
  %14 = tg.hardswish %x : tensor<2x3xf32>
  // CHECK: tg.softplus %{{.*}} : tensor<2x3xf32>
  %softplus = tg.softplus %x : tensor<2x3xf32>
  // CHECK: tg.cast %{{.*}} : tensor<2x3xf32> to tensor<2x3xf16>
  %15 = tg.cast %x : tensor<2x3xf32> to tensor<2x3xf16>
  // CHECK: tg.cast %{{.*}} : tensor<2x3xf32> to tensor<2x3xi1>
  %16 = tg.cast %x : tensor<2x3xf32> to tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @movement
func.func @movement(%x: tensor<1x128x12x64xf32>, %a: tensor<1x64x8x8xf32>, %b: tensor<1x32x8x8xf32>,
                    %q: tensor<1x128x2304xf32>, %m: tensor<4x8xi64>, %w: tensor<64x64x1x1xf32>,
                    %s: tensor<3x1xf32>, %t: tensor<30x16xf32>, %ids: tensor<1x5xi32>) {
  // CHECK: tg.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
  %0 = tg.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
  // CHECK: tg.reshape %{{.*}} : (tensor<1x128x12x64xf32>) -> tensor<128x768xf32>
  %1 = tg.reshape %x : (tensor<1x128x12x64xf32>) -> tensor<128x768xf32>
  // CHECK: tg.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x64x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x96x8x8xf32>
  %2 = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x64x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x96x8x8xf32>
  // CHECK: %{{.*}}:3 = tg.split %{{.*}} {axis = 2 : i64, sizes = array<i64: 768, 768, 768>}
  %3:3 = tg.split %q {axis = 2 : i64, sizes = array<i64: 768, 768, 768>}
      : (tensor<1x128x2304xf32>) -> (tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>)
  // CHECK: tg.slice %{{.*}} {limits = array<i64: 4, 7>, starts = array<i64: 0, 1>, strides = array<i64: 1, 2>} : (tensor<4x8xi64>) -> tensor<4x3xi64>
  %4 = tg.slice %m {starts = array<i64: 0, 1>, limits = array<i64: 4, 7>, strides = array<i64: 1, 2>} : (tensor<4x8xi64>) -> tensor<4x3xi64>
  // CHECK: tg.slice %{{.*}} {limits = array<i64: 2, 8>, starts = array<i64: 1, 0>} : (tensor<4x8xi64>) -> tensor<1x8xi64>
  %5 = tg.slice %m {starts = array<i64: 1, 0>, limits = array<i64: 2, 8>} : (tensor<4x8xi64>) -> tensor<1x8xi64>
  // CHECK: tg.pad %{{.*}} {high = array<i64: 0, 0, 1, 1>, low = array<i64: 0, 0, 2, 1>, value = -1.000000e+00 : f64} : (tensor<1x64x8x8xf32>) -> tensor<1x64x11x10xf32>
  %6 = tg.pad %a {low = array<i64: 0, 0, 2, 1>, high = array<i64: 0, 0, 1, 1>, value = -1.0 : f64} : (tensor<1x64x8x8xf32>) -> tensor<1x64x11x10xf32>
  // CHECK: tg.enlarge %{{.*}} {kernel_size = array<i64: 3, 3>} : (tensor<64x64x1x1xf32>) -> tensor<64x64x3x3xf32>
  %7 = tg.enlarge %w {kernel_size = array<i64: 3, 3>} : (tensor<64x64x1x1xf32>) -> tensor<64x64x3x3xf32>
  // CHECK: tg.broadcast_to %{{.*}} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %8 = tg.broadcast_to %s : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK: tg.gather %{{.*}}, %{{.*}} : (tensor<30x16xf32>, tensor<1x5xi32>) -> tensor<1x5x16xf32>
  %9 = tg.gather %t, %ids : (tensor<30x16xf32>, tensor<1x5xi32>) -> tensor<1x5x16xf32>
  // CHECK: tg.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<30x16xf32>, tensor<1x5xi32>) -> tensor<30x1x5xf32>
  %10 = tg.gather %t, %ids {axis = 1 : i64} : (tensor<30x16xf32>, tensor<1x5xi32>) -> tensor<30x1x5xf32>
  // CHECK: tg.scatter_add %{{.*}}, %{{.*}} {dim_size = 30 : i64} : (tensor<1x5x16xf32>, tensor<1x5xi32>) -> tensor<30x16xf32>
  %11 = tg.scatter_add %9, %ids {dim_size = 30 : i64} : (tensor<1x5x16xf32>, tensor<1x5xi32>) -> tensor<30x16xf32>
  // CHECK: tg.scatter_add %{{.*}}, %{{.*}} {axis = -1 : i64, dim_size = 16 : i64} : (tensor<30x1x5xf32>, tensor<1x5xi32>) -> tensor<30x16xf32>
  %12 = tg.scatter_add %10, %ids {axis = -1 : i64, dim_size = 16 : i64} : (tensor<30x1x5xf32>, tensor<1x5xi32>) -> tensor<30x16xf32>
  return
}

// CHECK-LABEL: func.func @resampling
func.func @resampling(%x: tensor<1x3x4x4xf32>) {
  // CHECK: tg.resize %{{.*}} {sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  // CHECK: tg.resize %{{.*}} {coordinate_transformation_mode = #tg<coordinate_mode align_corners>, mode = #tg<resize_mode linear>, scales = array<f64: 1.000000e+00, 1.000000e+00, 5.000000e-01, 1.500000e+00>, sizes = array<i64: 1, 3, 2, 6>}
  %1 = tg.resize %x {sizes = array<i64: 1, 3, 2, 6>, scales = array<f64: 1.0, 1.0, 0.5, 1.5>,
                     mode = #tg<resize_mode linear>, coordinate_transformation_mode = #tg<coordinate_mode align_corners>}
      : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x6xf32>
  // CHECK: tg.resize %{{.*}} {cubic_coeff_a = -5.000000e-01 : f64, exclude_outside = true, mode = #tg<resize_mode cubic>, sizes = array<i64: 1, 3, 5, 5>}
  %2 = tg.resize %x {sizes = array<i64: 1, 3, 5, 5>, mode = #tg<resize_mode cubic>, cubic_coeff_a = -0.5 : f64, exclude_outside = true}
      : (tensor<1x3x4x4xf32>) -> tensor<1x3x5x5xf32>
  // CHECK: tg.resize %{{.*}} {coordinate_transformation_mode = #tg<coordinate_mode asymmetric>, nearest_mode = #tg<nearest_mode floor>, sizes = array<i64: 1, 3, 12, 12>}
  %3 = tg.resize %x {sizes = array<i64: 1, 3, 12, 12>, coordinate_transformation_mode = #tg<coordinate_mode asymmetric>, nearest_mode = #tg<nearest_mode floor>}
      : (tensor<1x3x4x4xf32>) -> tensor<1x3x12x12xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<1x128x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>,
                      %y: tensor<1x64x5x5xf32>, %c: tensor<64xf32>) {
  // CHECK: tg.reduce_sum %{{.*}} {axes = array<i64: -1>} : (tensor<1x128x768xf32>) -> tensor<1x128x1xf32>
  %0 = tg.reduce_sum %x {axes = array<i64: -1>} : (tensor<1x128x768xf32>) -> tensor<1x128x1xf32>
  // CHECK: tg.reduce_mean %{{.*}} {axes = array<i64: 1, 2>, keepdims = false} : (tensor<1x128x768xf32>) -> tensor<1xf32>
  %1 = tg.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = false} : (tensor<1x128x768xf32>) -> tensor<1xf32>
  // CHECK: tg.reduce_max %{{.*}} {axes = array<i64: 0>} : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
  %2 = tg.reduce_max %x {axes = array<i64: 0>} : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
  // CHECK: tg.softmax %{{.*}} : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
  %3 = tg.softmax %x : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
  // CHECK: tg.softmax %{{.*}} {axis = 1 : i64}
  %4 = tg.softmax %x {axis = 1 : i64} : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32>
  // CHECK: tg.layernorm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.9999999999999998E-13 : f64}
  %5 = tg.layernorm %x, %g, %b {epsilon = 1.0e-12 : f64} : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  // CHECK: tg.batchnorm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x64x5x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x5x5xf32>
  %6 = tg.batchnorm %y, %c, %c, %c, %c : (tensor<1x64x5x5xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x5x5xf32>
  return
}

// CHECK-LABEL: func.func @losses
func.func @losses(%logits: tensor<64x10xf32>, %labels: tensor<64xi64>, %labels32: tensor<64xi32>,
                  %a: tensor<2x3x4xf64>, %b: tensor<2x3x4xf64>) {
  // CHECK: tg.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
  %0 = tg.softmax_cross_entropy %logits, %labels : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
  // CHECK: tg.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  %1 = tg.softmax_cross_entropy %logits, %labels32 : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  // CHECK: tg.mse_loss %{{.*}}, %{{.*}} : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<f64>
  %2 = tg.mse_loss %a, %b : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<f64>
  return
}

// CHECK-LABEL: func.func @if
// CHECK: %[[Y:.*]]:2 = tg.if %{{.*}} : tensor<1xi1> -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK: tg.relu
// CHECK: tg.yield
// CHECK: } else {
// CHECK: tg.yield %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>
// CHECK: }
func.func @if(%c: tensor<1xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y:2 = tg.if %c : tensor<1xi1> -> (tensor<4xf32>, tensor<4xf32>) {
    %a = tg.relu %x : tensor<4xf32>
    tg.yield %a, %x : tensor<4xf32>, tensor<4xf32>
  } else {
    tg.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  return %y#0 : tensor<4xf32>
}


// CHECK-LABEL: func.func @bound
// CHECK: %[[IDX:.*]], %[[N:.*]] = tg.nonzero
// CHECK: %[[B:.*]] = tg.bound %[[IDX]], %[[N]] {dim = 1 : i64} : tensor<1x6xi64>, tensor<i64>
// CHECK: tg.bound %[[B]], %[[N]] {dim = 0 : i64} : tensor<1x6xi64>, tensor<i64>
func.func @bound(%m: tensor<6xi1>) -> tensor<1x6xi64> {
  %idx, %n = tg.nonzero %m : (tensor<6xi1>) -> (tensor<1x6xi64>, tensor<i64>)
  %b = tg.bound %idx, %n {dim = 1 : i64} : tensor<1x6xi64>, tensor<i64>
  %c = tg.bound %b, %n {dim = 0 : i64} : tensor<1x6xi64>, tensor<i64>
  return %c : tensor<1x6xi64>
}

}
