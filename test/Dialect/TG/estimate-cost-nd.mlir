// RUN: loom-opt %s --tg-estimate-cost="target=h100 report=%t.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.json

// The work of 3-D convolutions and pools counts every spatial dimension
// (OpWork.cpp): conv 2 * outputs * C/groups * KD*KH*KW = 2*192*2*27 = 20736
// FLOPs, bytes (1*2*4*4*4 + 3*2*3*3*3 + 1*3*4*4*4) * 4 = 1928; maxpool one
// comparison per tap and output, 24 * 8 = 192, bytes (192 + 24) * 4 = 864.

// CHECK: "flops": 20928
// CHECK: "tg.conv": {
// CHECK-NEXT: "bytes": 1928,
// CHECK-NEXT: "count": 1,
// CHECK-NEXT: "flops": 20736,
// CHECK: "tg.maxpool": {
// CHECK-NEXT: "bytes": 864,
// CHECK-NEXT: "count": 1,
// CHECK-NEXT: "flops": 192,

func.func @main(%x: tensor<1x2x4x4x4xf32>, %w: tensor<3x2x3x3x3xf32>) -> tensor<1x3x2x2x2xf32> {
  %0 = tg.conv %x, %w {strides = array<i64: 1, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>, dilations = array<i64: 1, 1, 1>}
      : (tensor<1x2x4x4x4xf32>, tensor<3x2x3x3x3xf32>) -> tensor<1x3x4x4x4xf32>
  %1 = tg.maxpool %0 {kernel_size = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>}
      : (tensor<1x3x4x4x4xf32>) -> tensor<1x3x2x2x2xf32>
  return %1 : tensor<1x3x2x2x2xf32>
}
