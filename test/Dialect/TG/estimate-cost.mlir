// RUN: loom-opt %s --tg-estimate-cost="target=h100 report=%t.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.json
// RUN: loom-opt %s --tg-estimate-cost="target=h200 print=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: rm -f %t.db && loom-opt %s --tg-estimate-cost="target=measured cost-db=%t.db" -o /dev/null
// RUN: FileCheck %s --input-file=%t.db --check-prefix=DB
// RUN: not loom-opt %s --tg-estimate-cost="target=tpu" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADTARGET
// RUN: not loom-opt %s --tg-estimate-cost="target=measured" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODB

// Work is counted once per op (OpWork.cpp): conv 2*N*O*OH*OW*C*KH*KW
// = 2*1*8*4*4*4*3*3 = 9216 FLOPs + 128 for bias + 128 for relu; bytes are
// operands + results in f32: (1*4*6*6 + 8*4*3*3 + 8 + 1*8*4*4) * 4 = 2272.
// matmul 2*M*N*K = 2*8*16*16 = 4096. The roofline time of each op on h100 is
// max(flops / 67e12, bytes / 3.35e12) + 5e-6.

// CHECK: "flops": 13568
// CHECK: "function": "main"
// CHECK: "tg.conv": {
// CHECK-NEXT: "bytes": 2272,
// CHECK-NEXT: "count": 1,
// CHECK-NEXT: "flops": 9472,
// CHECK-NEXT: "seconds": 5.00067{{[0-9]*}}e-06
// CHECK: "tg.matmul": {
// CHECK-NEXT: "bytes": 2048,
// CHECK-NEXT: "count": 1,
// CHECK-NEXT: "flops": 4096,
// CHECK: "tg.reshape": {
// CHECK-NEXT: "bytes": 0,
// CHECK-NEXT: "count": 1,
// CHECK-NEXT: "flops": 0,
// CHECK-NEXT: "seconds": 0
// CHECK: "tg.weight": {
// CHECK-NEXT: "bytes": 0,
// CHECK: "model": "roofline:h100"

// PRINT: cost of @main (roofline:h200):
// PRINT: tg.conv 1 0.0000
// PRINT: total

// DB-DAG: "interp-f32|tg.conv(tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> (tensor<1x8x4x4xf32>) {activation = #tg<activation relu>, dilations = array<i64: 1, 1>, groups = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}":
// DB-DAG: "interp-f32|tg.matmul(tensor<8x16xf32>, tensor<16x16xf32>) -> (tensor<8x16xf32>) {}":
// DB: "version": 1

// BADTARGET: error: tg-estimate-cost: unknown cost target 'tpu' (expected cpu, h100 or h200)
// NODB: error: tg-estimate-cost: target=measured needs cost-db=FILE

module attributes {tg.weights = "unused.safetensors"} {
  func.func @main(%x: tensor<1x4x6x6xf32>, %b: tensor<8xf32>) -> tensor<8x16xf32> {
    %w = tg.weight "w" : tensor<8x4x3x3xf32>
    %c = tg.conv %x, %w, %b {activation = #tg<activation relu>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
    %r = tg.reshape %c : (tensor<1x8x4x4xf32>) -> tensor<8x16xf32>
    %w2 = tg.weight "w2" : tensor<16x16xf32>
    %m = tg.matmul %r, %w2 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
    return %m : tensor<8x16xf32>
  }
}
