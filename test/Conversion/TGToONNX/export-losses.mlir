// The losses exported to ONNX opset 17 (checked by onnx::checker):
// tg.softmax_cross_entropy as one SoftmaxCrossEntropyLoss (reduction
// "mean"), imported back as the same op; tg.mse_loss as Sub, Mul and
// ReduceMean without axes (ONNX has no MSE operator), imported back as
// those ops. Both run on the same (random) inputs before and after: the same bits.
//
// RUN: loom-translate --export-onnx %s --onnx-text -o - | FileCheck %s
// RUN: rm -rf %t && mkdir %t
// RUN: loom-translate --export-onnx %s -o %t/model.onnx
// RUN: loom-translate --import-onnx %t/model.onnx -o %t/model.mlir
// RUN: FileCheck %s --check-prefix=IMPORT < %t/model.mlir
// RUN: loom-run %s --seed 3 --outputs %t/before.safetensors > /dev/null
// RUN: loom-run %t/model.mlir --seed 3 --outputs %t/after.safetensors > /dev/null
// RUN: cmp %t/before.safetensors %t/after.safetensors

// CHECK: main (float[4,10] x, int64[4] labels, int32[4] labels32, float[2,3] a, float[2,3] b)
// CHECK: => (float sce, float sce32, float mse)
// CHECK: sce = SoftmaxCrossEntropyLoss<reduction = "mean">(x, labels)
// CHECK-NEXT: sce32 = SoftmaxCrossEntropyLoss<reduction = "mean">(x, labels32)
// CHECK-NEXT: mse_loss_diff = Sub(a, b)
// CHECK-NEXT: mse_loss_square = Mul(mse_loss_diff, mse_loss_diff)
// CHECK-NEXT: mse = ReduceMean<keepdims = 0>(mse_loss_square)

// IMPORT: tg.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
// IMPORT: tg.softmax_cross_entropy %{{.*}}, %{{.*}} : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
// IMPORT: tg.sub
// IMPORT: tg.mul
// IMPORT: tg.reduce_mean %{{.*}} {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>

func.func @main(%x: tensor<4x10xf32> {tg.name = "x"}, %labels: tensor<4xi64> {tg.name = "labels"},
                %labels32: tensor<4xi32> {tg.name = "labels32"},
                %a: tensor<2x3xf32> {tg.name = "a"}, %b: tensor<2x3xf32> {tg.name = "b"})
    -> (tensor<f32> {tg.name = "sce"}, tensor<f32> {tg.name = "sce32"}, tensor<f32> {tg.name = "mse"}) {
  %0 = tg.softmax_cross_entropy %x, %labels : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %1 = tg.softmax_cross_entropy %x, %labels32 : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  %2 = tg.mse_loss %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<f32>
  return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<f32>
}
