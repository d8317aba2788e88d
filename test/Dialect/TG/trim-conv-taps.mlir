// --tg-trim-conv-taps drops the filter taps that read only zero padding
// for every output position (DeepLabV3's ASPP: a 3x3 convolution of
// dilation 24 or 36 with as much padding on a 16 x 16 plane is its centre
// tap alone) and shrinks the pads so the kept taps read what they read
// before. The trimmed functions compute the same values as the originals,
// interpreted and compiled.
//
// RUN: loom-opt %s --tg-trim-conv-taps | FileCheck %s
// RUN: loom-opt %s --tg-trim-conv-taps -o %t.trimmed.mlir
// RUN: loom-run %s --entry aspp_d36 --seed 1 --outputs %t.d36.safetensors > /dev/null
// RUN: loom-run %t.trimmed.mlir --entry aspp_d36 --seed 1 --compare %t.d36.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry strided_1d --seed 2 --outputs %t.s1.safetensors > /dev/null
// RUN: loom-run %t.trimmed.mlir --entry strided_1d --seed 2 --compare %t.s1.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry strided_2d --seed 3 --outputs %t.s2.safetensors > /dev/null
// RUN: loom-run %t.trimmed.mlir --entry strided_2d --seed 3 --compare %t.s2.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry asymmetric --seed 4 --outputs %t.as.safetensors > /dev/null
// RUN: loom-run %t.trimmed.mlir --entry asymmetric --seed 4 --compare %t.as.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry pad_stays --seed 5 --outputs %t.ps.safetensors > /dev/null
// RUN: loom-run %t.trimmed.mlir --entry pad_stays --seed 5 --compare %t.ps.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry video --seed 6 --outputs %t.v.safetensors > /dev/null
// RUN: loom-run %t.trimmed.mlir --entry video --seed 6 --compare %t.v.safetensors --tolerance 0 | FileCheck %s --check-prefix=SAME
// RUN: loom-compile %s -o %t.so
// RUN: loom-run %t.so --entry aspp_d36 --seed 1 --check | FileCheck %s --check-prefix=CHECKED
// RUN: loom-run %t.so --entry strided_2d --seed 3 --check | FileCheck %s --check-prefix=CHECKED
// RUN: loom-run %t.so --entry video --seed 6 --check | FileCheck %s --check-prefix=CHECKED
// SAME: compare: largest error 0
// CHECKED: check: {{.*}}largest error

// Dilation 36, padding 36, 16 x 16: tap 0 reads rows o - 36 < 0 and tap 2
// rows o + 36 >= 16 for every o in [0, 16); only the centre reads the
// plane. One tap left: dilation 1, no padding.
// CHECK-LABEL: func.func @aspp_d36
// CHECK: %[[W:.*]] = tg.slice %arg1 {limits = array<i64: 4, 8, 2, 2>, starts = array<i64: 0, 0, 1, 1>} : (tensor<4x8x3x3xf32>) -> tensor<4x8x1x1xf32>
// CHECK: tg.conv %arg0, %[[W]], %arg2 : (tensor<1x8x16x16xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x16x16xf32>
func.func @aspp_d36(%x: tensor<1x8x16x16xf32>, %w: tensor<4x8x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x16x16xf32> {
  %y = tg.conv %x, %w, %b {dilations = array<i64: 36, 36>, pads = array<i64: 36, 36, 36, 36>}
      : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>, tensor<4xf32>) -> tensor<1x4x16x16xf32>
  return %y : tensor<1x4x16x16xf32>
}

// Dilation 24 likewise (rows o - 24 <= -9, o + 24 >= 24).
// CHECK-LABEL: func.func @aspp_d24
// CHECK: %[[W:.*]] = tg.slice %arg1 {limits = array<i64: 4, 8, 2, 2>, starts = array<i64: 0, 0, 1, 1>}
// CHECK: tg.conv %arg0, %[[W]] : (tensor<1x8x16x16xf32>, tensor<4x8x1x1xf32>)
func.func @aspp_d24(%x: tensor<1x8x16x16xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x16x16xf32> {
  %y = tg.conv %x, %w {dilations = array<i64: 24, 24>, pads = array<i64: 24, 24, 24, 24>}
      : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x16x16xf32>
  return %y : tensor<1x4x16x16xf32>
}

// Dilation 12 on 16 x 16: tap 0 reads row o - 12, the plane for o >= 12;
// tap 2 row o + 12, the plane for o <= 3: all nine taps stay. So does an
// ordinary 3x3 convolution with padding 1.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: tg.slice
// CHECK: tg.conv %arg0, %arg1 {dilations = array<i64: 12, 12>, pads = array<i64: 12, 12, 12, 12>} : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>)
// CHECK: tg.conv %arg0, %arg1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>)
// CHECK-NOT: tg.slice
func.func @untouched(%x: tensor<1x8x16x16xf32>, %w: tensor<4x8x3x3xf32>) -> (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) {
  %d12 = tg.conv %x, %w {dilations = array<i64: 12, 12>, pads = array<i64: 12, 12, 12, 12>}
      : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x16x16xf32>
  %same = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x16x16xf32>
  return %d12, %same : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>
}

// 1-D, length 4, kernel 5, dilation 2, stride 3, pads 4 and 4: two
// outputs, whose taps read elements 3o + 2k - 4: o = 0 reads -4 -2 0 2 4,
// o = 1 reads -1 1 3 5 7. Taps 0 and 4 never read [0, 4): taps 1..3 stay,
// with pads 2 (4 - 2) and 2 (the last output's tap 3 reads element 5).
// CHECK-LABEL: func.func @strided_1d
// CHECK: %[[W:.*]] = tg.slice %arg1 {limits = array<i64: 3, 2, 4>, starts = array<i64: 0, 0, 1>} : (tensor<3x2x5xf32>) -> tensor<3x2x3xf32>
// CHECK: tg.conv %arg0, %[[W]] {dilations = array<i64: 2>, pads = array<i64: 2, 2>, strides = array<i64: 3>} : (tensor<1x2x4xf32>, tensor<3x2x3xf32>) -> tensor<1x3x2xf32>
func.func @strided_1d(%x: tensor<1x2x4xf32>, %w: tensor<3x2x5xf32>) -> tensor<1x3x2xf32> {
  %y = tg.conv %x, %w {strides = array<i64: 3>, dilations = array<i64: 2>, pads = array<i64: 4, 4>}
      : (tensor<1x2x4xf32>, tensor<3x2x5xf32>) -> tensor<1x3x2xf32>
  return %y : tensor<1x3x2xf32>
}

// Stride 2, dilation 8, padding 8 on 8 x 8, groups 2 and a bias: taps 0
// and 2 read rows 2o - 8 <= -2 and 2o + 8 >= 8 for o in [0, 4).
// CHECK-LABEL: func.func @strided_2d
// CHECK: %[[W:.*]] = tg.slice %arg1 {limits = array<i64: 6, 2, 2, 2>, starts = array<i64: 0, 0, 1, 1>} : (tensor<6x2x3x3xf32>) -> tensor<6x2x1x1xf32>
// CHECK: tg.conv %arg0, %[[W]], %arg2 {activation = #tg<activation relu>, groups = 2 : i64, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<6x2x1x1xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
func.func @strided_2d(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x4xf32> {
  %y = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 8, 8>, pads = array<i64: 8, 8, 8, 8>,
                           groups = 2 : i64, activation = #tg<activation relu>}
      : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  return %y : tensor<1x6x4x4xf32>
}

// Asymmetric: a causal 1-D convolution (padding 40 before, none after,
// dilation 20, length 16) reads elements o + 20k - 40: only tap 2 reads the
// input. In 2-D, rows padded (2, 0) with dilation 1 keep all taps (tap 0
// reads row o - 2, the input from o = 2 on) while columns padded (0, 10)
// with dilation 5 on 4 columns lose taps 1 and 2 (columns o + 5 and
// o + 10, o < 4).
// CHECK-LABEL: func.func @asymmetric
// CHECK: %[[W:.*]] = tg.slice %arg1 {limits = array<i64: 2, 2, 3>, starts = array<i64: 0, 0, 2>} : (tensor<2x2x3xf32>) -> tensor<2x2x1xf32>
// CHECK: tg.conv %arg0, %[[W]] {dilations = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x2x16xf32>, tensor<2x2x1xf32>) -> tensor<1x2x16xf32>
// CHECK: %[[V:.*]] = tg.slice %arg3 {limits = array<i64: 2, 2, 3, 1>, starts = array<i64: 0, 0, 0, 0>} : (tensor<2x2x3x3xf32>) -> tensor<2x2x3x1xf32>
// CHECK: tg.conv %arg2, %[[V]] {pads = array<i64: 2, 0, 0, 0>} : (tensor<1x2x6x4xf32>, tensor<2x2x3x1xf32>) -> tensor<1x2x6x4xf32>
func.func @asymmetric(%x: tensor<1x2x16xf32>, %w: tensor<2x2x3xf32>, %p: tensor<1x2x6x4xf32>, %v: tensor<2x2x3x3xf32>) -> (tensor<1x2x16xf32>, tensor<1x2x6x4xf32>) {
  %y = tg.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 20>, pads = array<i64: 40, 0>}
      : (tensor<1x2x16xf32>, tensor<2x2x3xf32>) -> tensor<1x2x16xf32>
  %z = tg.conv %p, %v {dilations = array<i64: 1, 5>, pads = array<i64: 2, 0, 0, 10>}
      : (tensor<1x2x6x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x4xf32>
  return %y, %z : tensor<1x2x16xf32>, tensor<1x2x6x4xf32>
}

// A padding cannot be negative: one output (length 4, pads 1 and 2, kernel
// 4, dilation 2, stride 5) reads elements 2k - 1 = -1 1 3 5. Tap 0 reads
// padding only but stays (dropping it would need a begin pad of -1); tap 3
// goes, and with it the end padding.
// CHECK-LABEL: func.func @pad_stays
// CHECK: %[[W:.*]] = tg.slice %arg1 {limits = array<i64: 1, 1, 3>, starts = array<i64: 0, 0, 0>} : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
// CHECK: tg.conv %arg0, %[[W]] {dilations = array<i64: 2>, pads = array<i64: 1, 0>, strides = array<i64: 5>} : (tensor<1x1x4xf32>, tensor<1x1x3xf32>) -> tensor<1x1x1xf32>
func.func @pad_stays(%x: tensor<1x1x4xf32>, %w: tensor<1x1x4xf32>) -> tensor<1x1x1xf32> {
  %y = tg.conv %x, %w {strides = array<i64: 5>, dilations = array<i64: 2>, pads = array<i64: 1, 2>}
      : (tensor<1x1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x1x1xf32>
  return %y : tensor<1x1x1xf32>
}

// 3-D: a 3x3x3 convolution of one frame (depth 1, padding 1) reads it with
// its middle depth tap alone; height and width (dilation 24 on 16 x 16) keep
// their centre. Groups, bias and activation pass through.
// CHECK-LABEL: func.func @video
// CHECK: %[[W:.*]] = tg.slice %arg1 {limits = array<i64: 6, 2, 2, 2, 2>, starts = array<i64: 0, 0, 1, 1, 1>} : (tensor<6x2x3x3x3xf32>) -> tensor<6x2x1x1x1xf32>
// CHECK: tg.conv %arg0, %[[W]], %arg2 {activation = #tg<activation sigmoid>, dilations = array<i64: 1, 1, 1>, groups = 2 : i64, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x4x1x16x16xf32>, tensor<6x2x1x1x1xf32>, tensor<6xf32>) -> tensor<1x6x1x16x16xf32>
func.func @video(%x: tensor<1x4x1x16x16xf32>, %w: tensor<6x2x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x1x16x16xf32> {
  %y = tg.conv %x, %w, %b {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 24, 24>,
                           pads = array<i64: 1, 24, 24, 1, 24, 24>, groups = 2 : i64,
                           activation = #tg<activation sigmoid>}
      : (tensor<1x4x1x16x16xf32>, tensor<6x2x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x1x16x16xf32>
  return %y : tensor<1x6x1x16x16xf32>
}
