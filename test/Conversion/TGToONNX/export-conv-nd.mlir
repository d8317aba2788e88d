// 1-D and 3-D convolutions and pools exported to ONNX (opset 17): the same
// nodes as 2-D ones with attributes sized by the spatial rank; exported as a
// binary model, imported back and run on the same inputs: the results are
// bit for bit the same.
//
// RUN: loom-translate --export-onnx %s --onnx-text -o - | FileCheck %s
// RUN: rm -rf %t && mkdir %t
// RUN: loom-translate --export-onnx %s -o %t/model.onnx
// RUN: loom-translate --import-onnx %t/model.onnx -o %t/model.mlir
// RUN: loom-run %s --seed 7 --outputs %t/before.safetensors > /dev/null
// RUN: loom-run %t/model.mlir --seed 7 --outputs %t/after.safetensors > /dev/null
// RUN: cmp %t/before.safetensors %t/after.safetensors

// CHECK: main (float[1,3,4,8,8] arg0, float[8,3,3,3,3] arg1, float[8] arg2, float[2,4,16] arg3, float[6,2,5] arg4)
// CHECK: conv_conv = Conv<kernel_shape = [3, 3, 3], strides = [1, 2, 2], pads = [1, 1, 1, 1, 1, 1], dilations = [1, 1, 1], group = 1>(arg0, arg1, arg2)
// CHECK-NEXT: conv = Relu(conv_conv)
// CHECK-NEXT: maxpool = MaxPool<kernel_shape = [1, 2, 2], strides = [1, 2, 2], pads = [0, 0, 0, 0, 0, 0]>(conv)
// CHECK-NEXT: avgpool = AveragePool<kernel_shape = [2, 1, 1], strides = [2, 1, 1], pads = [0, 0, 0, 0, 0, 0], count_include_pad = 0>(maxpool)
// CHECK-NEXT: result0 = GlobalAveragePool(avgpool)
// CHECK-NEXT: conv_1 = Conv<kernel_shape = [5], strides = [2], pads = [2, 1], dilations = [1], group = 2>(arg3, arg4)
// CHECK-NEXT: result1 = MaxPool<kernel_shape = [2], strides = [2], pads = [0, 0]>(conv_1)

func.func @main(%clip: tensor<1x3x4x8x8xf32>, %w: tensor<8x3x3x3x3xf32>, %b: tensor<8xf32>,
                %seq: tensor<2x4x16xf32>, %k: tensor<6x2x5xf32>)
    -> (tensor<1x8x1x1x1xf32>, tensor<2x6x4xf32>) {
  %conv = tg.conv %clip, %w, %b {strides = array<i64: 1, 2, 2>, pads = array<i64: 1, 1, 1, 1, 1, 1>,
                                 dilations = array<i64: 1, 1, 1>, activation = #tg<activation relu>}
      : (tensor<1x3x4x8x8xf32>, tensor<8x3x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4x4xf32>
  %maxpool = tg.maxpool %conv {kernel_size = array<i64: 1, 2, 2>, strides = array<i64: 1, 2, 2>,
                               pads = array<i64: 0, 0, 0, 0, 0, 0>}
      : (tensor<1x8x4x4x4xf32>) -> tensor<1x8x4x2x2xf32>
  %avgpool = tg.avgpool %maxpool {kernel_size = array<i64: 2, 1, 1>, strides = array<i64: 2, 1, 1>,
                                  pads = array<i64: 0, 0, 0, 0, 0, 0>}
      : (tensor<1x8x4x2x2xf32>) -> tensor<1x8x2x2x2xf32>
  %gap = tg.global_avgpool %avgpool : (tensor<1x8x2x2x2xf32>) -> tensor<1x8x1x1x1xf32>
  %conv1d = tg.conv %seq, %k {strides = array<i64: 2>, pads = array<i64: 2, 1>, dilations = array<i64: 1>,
                              groups = 2 : i64}
      : (tensor<2x4x16xf32>, tensor<6x2x5xf32>) -> tensor<2x6x8xf32>
  %pool1d = tg.maxpool %conv1d {kernel_size = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>}
      : (tensor<2x6x8xf32>) -> tensor<2x6x4xf32>
  return %gap, %pool1d : tensor<1x8x1x1x1xf32>, tensor<2x6x4xf32>
}
