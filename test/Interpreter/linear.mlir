// Numeric results of matmul, conv, the pooling ops and global_avgpool on
// the reference interpreter (f32 domain), against hand-computed values.
//
// RUN: loom-run %s --entry matmul --print-values 64 | FileCheck %s --check-prefix=MM
// RUN: loom-run %s --entry matmul_large --print-values 24 | FileCheck %s --check-prefix=MMBIG
// RUN: loom-run %s --entry conv --print-values 64 | FileCheck %s --check-prefix=CONV
// RUN: loom-run %s --entry conv_groups --print-values 64 | FileCheck %s --check-prefix=GROUPS
// RUN: loom-run %s --entry conv_activation --print-values 64 | FileCheck %s --check-prefix=ACT
// RUN: loom-run %s --entry pool --print-values 64 | FileCheck %s --check-prefix=POOL
// The integer-valued cases give the same values in the exact domain.
// RUN: loom-run %s --entry matmul --print-values 64 --domain modp | FileCheck %s --check-prefix=MM
// RUN: loom-run %s --entry matmul_large --print-values 24 --domain modp | FileCheck %s --check-prefix=MMBIG
// RUN: loom-run %s --entry conv --print-values 64 --domain modp | FileCheck %s --check-prefix=CONV
// RUN: loom-run %s --entry conv_groups --print-values 64 --domain modp | FileCheck %s --check-prefix=GROUPS

// MM-LABEL: @matmul
// [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]]
// MM: plain: tensor<2x2xf32>
// MM-NEXT: values: 4 5 10 11{{$}}
// [2,1,2] x [2,1]: the rank-2 operand is shared by both batches.
// MM: lhs_batch: tensor<2x1x1xf32>
// MM-NEXT: values: 21 43{{$}}
// [2,2] x [3,2,1]
// MM: rhs_batch: tensor<3x2x1xf32>
// MM-NEXT: values: 3 -1 7 -1 11 -1{{$}}
// [2,1,1,2] x [1,3,2,1]: both batch shapes broadcast to [2,3].
// MM: both_batch: tensor<2x3x1x1xf32>
// MM-NEXT: values: 1 3 5 2 4 6{{$}}
func.func @matmul() -> (tensor<2x2xf32> {tg.name = "plain"}, tensor<2x1x1xf32> {tg.name = "lhs_batch"},
                        tensor<3x2x1xf32> {tg.name = "rhs_batch"}, tensor<2x3x1x1xf32> {tg.name = "both_batch"}) {
  %a = tg.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = tg.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]> : tensor<3x2xf32>
  %0 = tg.matmul %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %c = tg.constant dense<[[[1.0, 2.0]], [[3.0, 4.0]]]> : tensor<2x1x2xf32>
  %d = tg.constant dense<[[1.0], [10.0]]> : tensor<2x1xf32>
  %1 = tg.matmul %c, %d : (tensor<2x1x2xf32>, tensor<2x1xf32>) -> tensor<2x1x1xf32>
  %e = tg.constant dense<[[1.0, 1.0], [1.0, -1.0]]> : tensor<2x2xf32>
  %f = tg.constant dense<[[[1.0], [2.0]], [[3.0], [4.0]], [[5.0], [6.0]]]> : tensor<3x2x1xf32>
  %2 = tg.matmul %e, %f : (tensor<2x2xf32>, tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %g = tg.constant dense<[[[[1.0, 0.0]]], [[[0.0, 1.0]]]]> : tensor<2x1x1x2xf32>
  %h = tg.constant dense<[[[[1.0], [2.0]], [[3.0], [4.0]], [[5.0], [6.0]]]]> : tensor<1x3x2x1xf32>
  %3 = tg.matmul %g, %h : (tensor<2x1x1x2xf32>, tensor<1x3x2x1xf32>) -> tensor<2x3x1x1xf32>
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2x1x1xf32>, tensor<3x2x1xf32>, tensor<2x3x1x1xf32>
}

// Sizes that are not multiples of the GEMM's register tiles, and K larger
// than its K block: C[i][j] = sum_k (i + 1) * (j + 1) = 300 * (i + 1) * (j + 1).
// MMBIG-LABEL: @matmul_large
// MMBIG: result0: tensor<37x19xf32>  mean 57000  min 300  max 210900
// MMBIG-NEXT: values: 300 600 900 1200 1500 1800 2100 2400 2700 3000 3300 3600 3900 4200 4500 4800 5100 5400 5700 600 1200 1800 2400 3000 ...{{$}}
func.func @matmul_large() -> tensor<37x19xf32> {
  %u = tg.constant dense<[[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0], [9.0], [10.0],
                          [11.0], [12.0], [13.0], [14.0], [15.0], [16.0], [17.0], [18.0], [19.0], [20.0],
                          [21.0], [22.0], [23.0], [24.0], [25.0], [26.0], [27.0], [28.0], [29.0], [30.0],
                          [31.0], [32.0], [33.0], [34.0], [35.0], [36.0], [37.0]]> : tensor<37x1xf32>
  %a = tg.broadcast_to %u : (tensor<37x1xf32>) -> tensor<37x300xf32>
  %v = tg.constant dense<[[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0], [9.0], [10.0],
                          [11.0], [12.0], [13.0], [14.0], [15.0], [16.0], [17.0], [18.0], [19.0]]> : tensor<19x1xf32>
  %vb = tg.broadcast_to %v : (tensor<19x1xf32>) -> tensor<19x300xf32>
  %b = tg.transpose %vb {perm = array<i64: 1, 0>} : (tensor<19x300xf32>) -> tensor<300x19xf32>
  %c = tg.matmul %a, %b : (tensor<37x300xf32>, tensor<300x19xf32>) -> tensor<37x19xf32>
  return %c : tensor<37x19xf32>
}

// CONV-LABEL: @conv
// x = 1..9 as 3x3, filter [[1,0],[0,1]]
// CONV: basic: tensor<1x1x2x2xf32>
// CONV-NEXT: values: 6 8 12 14{{$}}
// Two images (the second is 10x the first), 3x3 ones, stride 2, pads 1, bias 100.
// CONV: stride_pad_bias: tensor<2x1x2x2xf32>
// CONV-NEXT: values: 112 116 124 128 220 260 340 380{{$}}
// Asymmetric pads [top 1, left 0, bottom 0, right 1], 2x2 ones.
// CONV: asym_pads: tensor<1x1x3x3xf32>
// CONV-NEXT: values: 3 5 3 12 16 9 24 28 15{{$}}
// x = 1..16 as 4x4, 2x2 ones with dilation 2: taps at (0,0), (0,2), (2,0), (2,2).
// CONV: dilation: tensor<1x1x2x2xf32>
// CONV-NEXT: values: 24 28 40 44{{$}}
// Dilation [2, 1], strides [1, 2], pads [1, 0, 1, 1], filter [[1,2],[3,4]].
// CONV: mixed: tensor<1x1x4x2xf32>
// CONV-NEXT: values: 39 53 72 92 112 132 29 35{{$}}
func.func @conv() -> (tensor<1x1x2x2xf32> {tg.name = "basic"}, tensor<2x1x2x2xf32> {tg.name = "stride_pad_bias"},
                      tensor<1x1x3x3xf32> {tg.name = "asym_pads"}, tensor<1x1x2x2xf32> {tg.name = "dilation"},
                      tensor<1x1x4x2xf32> {tg.name = "mixed"}) {
  %x = tg.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %w = tg.constant dense<[[[[1.0, 0.0], [0.0, 1.0]]]]> : tensor<1x1x2x2xf32>
  %0 = tg.conv %x, %w : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %x2 = tg.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]],
                           [[[10.0, 20.0, 30.0], [40.0, 50.0, 60.0], [70.0, 80.0, 90.0]]]]> : tensor<2x1x3x3xf32>
  %ones3 = tg.constant dense<1.0> : tensor<1x1x3x3xf32>
  %bias = tg.constant dense<[100.0]> : tensor<1xf32>
  %1 = tg.conv %x2, %ones3, %bias {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<2x1x3x3xf32>, tensor<1x1x3x3xf32>, tensor<1xf32>) -> tensor<2x1x2x2xf32>
  %ones2 = tg.constant dense<1.0> : tensor<1x1x2x2xf32>
  %2 = tg.conv %x, %ones2 {pads = array<i64: 1, 0, 0, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>
  %x4 = tg.constant dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]]]> : tensor<1x1x4x4xf32>
  %3 = tg.conv %x4, %ones2 {dilations = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %w4 = tg.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %4 = tg.conv %x4, %w4 {dilations = array<i64: 2, 1>, strides = array<i64: 1, 2>, pads = array<i64: 1, 0, 1, 1>}
      : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x2xf32>
  return %0, %1, %2, %3, %4 : tensor<1x1x2x2xf32>, tensor<2x1x2x2xf32>, tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x1x4x2xf32>
}

// GROUPS-LABEL: @conv_groups
// 1x1 filter [1, 2, 3, 4] with 2 groups: channels 0, 1 of the result scale
// input channel 0 (1..4), channels 2, 3 scale input channel 1 (5..8).
// GROUPS: depthwise_mult: tensor<1x4x2x2xf32>
// GROUPS-NEXT: values: 1 2 3 4 2 4 6 8 15 18 21 24 20 24 28 32{{$}}
// Two input channels per group, 1x2 filters: [1,2].[1,1] + [3,4].[1,-1] = 2 and
// [5,6].[2,0] + [7,8].[0,2] = 26.
// GROUPS: two_per_group: tensor<1x2x1x1xf32>
// GROUPS-NEXT: values: 2 26{{$}}
// Depthwise (groups = channels = 2) 3x3 filters with a single centre tap
// and pads 1: the identity.
// GROUPS: depthwise_pad: tensor<1x2x2x2xf32>
// GROUPS-NEXT: values: 1 2 3 4 10 20 30 40{{$}}
// Two images, two groups, bias per output channel [100, 200, 300, 400]: image 0
// gives [1*x0, 2*x0, 3*x1, 4*x1] + bias with x0 = [1, 2], x1 = [3, 4];
// image 1 has x0 = [-1, 0], x1 = [0, 1].
// GROUPS: batch_bias: tensor<2x4x1x2xf32>
// GROUPS-NEXT: values: 101 102 202 204 309 312 412 416 99 100 198 200 300 303 400 404{{$}}
func.func @conv_groups() -> (tensor<1x4x2x2xf32> {tg.name = "depthwise_mult"}, tensor<1x2x1x1xf32> {tg.name = "two_per_group"},
                             tensor<1x2x2x2xf32> {tg.name = "depthwise_pad"}, tensor<2x4x1x2xf32> {tg.name = "batch_bias"}) {
  %x = tg.constant dense<[[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]]> : tensor<1x2x2x2xf32>
  %w = tg.constant dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]], [[[4.0]]]]> : tensor<4x1x1x1xf32>
  %0 = tg.conv %x, %w {groups = 2 : i64} : (tensor<1x2x2x2xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x2x2xf32>
  %y = tg.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]], [[5.0, 6.0]], [[7.0, 8.0]]]]> : tensor<1x4x1x2xf32>
  %v = tg.constant dense<[[[[1.0, 1.0]], [[1.0, -1.0]]], [[[2.0, 0.0]], [[0.0, 2.0]]]]> : tensor<2x2x1x2xf32>
  %1 = tg.conv %y, %v {groups = 2 : i64} : (tensor<1x4x1x2xf32>, tensor<2x2x1x2xf32>) -> tensor<1x2x1x1xf32>
  // A 3x3 filter that is 1 at its centre, with pads 1, is the identity.
  %z = tg.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]], [[[10.0, 20.0], [30.0, 40.0]]]]> : tensor<2x1x2x2xf32>
  %xz = tg.reshape %z : (tensor<2x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %k = tg.constant dense<[[[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]], [[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]]]> : tensor<2x1x3x3xf32>
  %2 = tg.conv %xz, %k {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x2x2xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  %xb = tg.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]]], [[[-1.0, 0.0]], [[0.0, 1.0]]]]> : tensor<2x2x1x2xf32>
  %bias = tg.constant dense<[100.0, 200.0, 300.0, 400.0]> : tensor<4xf32>
  %3 = tg.conv %xb, %w, %bias {groups = 2 : i64} : (tensor<2x2x1x2xf32>, tensor<4x1x1x1xf32>, tensor<4xf32>) -> tensor<2x4x1x2xf32>
  return %0, %1, %2, %3 : tensor<1x4x2x2xf32>, tensor<1x2x1x1xf32>, tensor<1x2x2x2xf32>, tensor<2x4x1x2xf32>
}

// Filter [1, -1] (two output channels), bias [0.25, -0.25] on
// x = [-0.25, 0.5, -1, 2.25]: before the activation, channel 0 is x + 0.25 =
// [0, 0.75, -0.75, 2.5] and channel 1 is -x - 0.25 = [0, -0.75, 0.75, -2.5].
// ACT-LABEL: @conv_activation
// ACT: none: tensor<1x2x2x2xf32>
// ACT-NEXT: values: 0 0.75 -0.75 2.5 0 -0.75 0.75 -2.5{{$}}
// ACT: relu: tensor<1x2x2x2xf32>
// ACT-NEXT: values: 0 0.75 0 2.5 0 0 0.75 0{{$}}
// ACT: sigmoid: tensor<1x2x2x2xf32>
// ACT-NEXT: values: 0.5 0.679179 0.320821 0.924142 0.5 0.320821 0.679179 0.0758582{{$}}
// ACT: tanh: tensor<1x2x2x2xf32>
// ACT-NEXT: values: 0 0.635149 -0.635149 0.986614 0 -0.635149 0.635149 -0.986614{{$}}
// The same through a padded 3x3 filter (not the 1x1 fast path).
// ACT: relu_3x3: tensor<1x2x2x2xf32>
// ACT-NEXT: values: 0 0.75 0 2.5 0 0 0.75 0{{$}}
func.func @conv_activation() -> (tensor<1x2x2x2xf32> {tg.name = "none"}, tensor<1x2x2x2xf32> {tg.name = "relu"},
                                 tensor<1x2x2x2xf32> {tg.name = "sigmoid"}, tensor<1x2x2x2xf32> {tg.name = "tanh"},
                                 tensor<1x2x2x2xf32> {tg.name = "relu_3x3"}) {
  %x = tg.constant dense<[[[[-0.25, 0.5], [-1.0, 2.25]]]]> : tensor<1x1x2x2xf32>
  %w = tg.constant dense<[[[[1.0]]], [[[-1.0]]]]> : tensor<2x1x1x1xf32>
  %b = tg.constant dense<[0.25, -0.25]> : tensor<2xf32>
  %0 = tg.conv %x, %w, %b {activation = #tg<activation none>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = tg.conv %x, %w, %b {activation = #tg<activation relu>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %2 = tg.conv %x, %w, %b {activation = #tg<activation sigmoid>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %3 = tg.conv %x, %w, %b {activation = #tg<activation tanh>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %w3 = tg.enlarge %w {kernel_size = array<i64: 3, 3>} : (tensor<2x1x1x1xf32>) -> tensor<2x1x3x3xf32>
  %4 = tg.conv %x, %w3, %b {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>}
      : (tensor<1x1x2x2xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %0, %1, %2, %3, %4 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// POOL-LABEL: @pool
// x = 1..16 as 4x4, 2x2 windows, stride 2.
// POOL: max: tensor<1x1x2x2xf32>
// POOL-NEXT: values: 6 8 14 16{{$}}
// All inputs negative (-1..-9) with pads 1: padding never wins the maximum.
// POOL: max_pad: tensor<1x1x2x2xf32>
// POOL-NEXT: values: -1 -2 -4 -5{{$}}
// POOL: max_3x3: tensor<1x1x3x3xf32>
// POOL-NEXT: values: -1 -1 -2 -1 -1 -2 -4 -4 -5{{$}}
// POOL: avg: tensor<1x1x2x2xf32>
// POOL-NEXT: values: 3 4 6 7{{$}}
// Pads 1, 2x2 windows, stride 2, two channels (the second is 10x the first):
// the windows hold {1}, {2, 3}, {4, 7}, {5, 6, 8, 9}.
// POOL: avg_exclude_pad: tensor<1x2x2x2xf32>
// POOL-NEXT: values: 1 2.5 5.5 7 10 25 55 70{{$}}
// POOL: avg_include_pad: tensor<1x2x2x2xf32>
// POOL-NEXT: values: 0.25 1.25 2.75 7 2.5 12.5 27.5 70{{$}}
// 2x3 windows, pads [top 0, left 1, bottom 1, right 1].
// POOL: avg_asym: tensor<1x1x3x3xf32>
// POOL-NEXT: values: 3 3.5 4 6 6.5 7 7.5 8 8.5{{$}}
// POOL: avg_asym_include: tensor<1x1x3x3xf32>
// POOL-NEXT: values: 2 3.5 2.66667 4 6.5 4.66667 2.5 4 2.83333{{$}}
// POOL: global: tensor<2x2x1x1xf32>
// POOL-NEXT: values: 2.5 25 -1 0.5{{$}}
func.func @pool() -> (tensor<1x1x2x2xf32> {tg.name = "max"}, tensor<1x1x2x2xf32> {tg.name = "max_pad"},
                      tensor<1x1x3x3xf32> {tg.name = "max_3x3"}, tensor<1x1x2x2xf32> {tg.name = "avg"},
                      tensor<1x2x2x2xf32> {tg.name = "avg_exclude_pad"}, tensor<1x2x2x2xf32> {tg.name = "avg_include_pad"},
                      tensor<1x1x3x3xf32> {tg.name = "avg_asym"}, tensor<1x1x3x3xf32> {tg.name = "avg_asym_include"},
                      tensor<2x2x1x1xf32> {tg.name = "global"}) {
  %x4 = tg.constant dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]]]> : tensor<1x1x4x4xf32>
  %0 = tg.maxpool %x4 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  %n = tg.constant dense<[[[[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0], [-7.0, -8.0, -9.0]]]]> : tensor<1x1x3x3xf32>
  %1 = tg.maxpool %n {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  %2 = tg.maxpool %n {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %x = tg.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %3 = tg.avgpool %x {kernel_size = array<i64: 2, 2>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  %x2 = tg.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
                            [[10.0, 20.0, 30.0], [40.0, 50.0, 60.0], [70.0, 80.0, 90.0]]]]> : tensor<1x2x3x3xf32>
  %4 = tg.avgpool %x2 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x2x3x3xf32>) -> tensor<1x2x2x2xf32>
  %5 = tg.avgpool %x2 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true}
      : (tensor<1x2x3x3xf32>) -> tensor<1x2x2x2xf32>
  %6 = tg.avgpool %x {kernel_size = array<i64: 2, 3>, pads = array<i64: 0, 1, 1, 1>, count_include_pad = false}
      : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %7 = tg.avgpool %x {kernel_size = array<i64: 2, 3>, pads = array<i64: 0, 1, 1, 1>, count_include_pad = true}
      : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %g = tg.constant dense<[[[[1.0, 2.0], [3.0, 4.0]], [[10.0, 20.0], [30.0, 40.0]]],
                          [[[-1.0, -1.0], [-1.0, -1.0]], [[0.5, -0.5], [1.5, 0.5]]]]> : tensor<2x2x2x2xf32>
  %8 = tg.global_avgpool %g : (tensor<2x2x2x2xf32>) -> tensor<2x2x1x1xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8
      : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>,
        tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>, tensor<2x2x1x1xf32>
}
