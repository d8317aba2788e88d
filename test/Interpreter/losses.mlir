// tg.softmax_cross_entropy and tg.mse_loss on the reference interpreter:
// hand values (i64 and i32 labels), logits of 1000 (stable: the row maximum
// is subtracted before exp), the integer-valued mse case in every domain,
// and a label out of [0, C) as a located run-time error.
//
// RUN: loom-run %s --entry sce --print-values 8 --domain f32 | FileCheck %s --check-prefix=SCE
// RUN: loom-run %s --entry sce --print-values 8 --domain f64 | FileCheck %s --check-prefix=SCE
// RUN: loom-run %s --entry sce_large --print-values 8 | FileCheck %s --check-prefix=LARGE
// RUN: loom-run %s --entry mse --print-values 8 --domain f32 | FileCheck %s --check-prefix=MSE
// RUN: loom-run %s --entry mse --print-values 8 --domain f64 | FileCheck %s --check-prefix=MSE
// RUN: loom-run %s --entry mse --print-values 8 --domain modp | FileCheck %s --check-prefix=MSE
// RUN: not loom-run %s --entry bad_label 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not loom-run %s --entry negative_label 2>&1 | FileCheck %s --check-prefix=NEG

// SCE-LABEL: @sce
// Row 0: log(e + e^2 + e^3) - 3 = 0.407606; row 1: log(3) = 1.098612;
// their mean 0.753109, with i64 and with i32 labels.
// SCE: loss: tensor<f32>
// SCE-NEXT: values: 0.753109{{$}}
// SCE: loss32: tensor<f32>
// SCE-NEXT: values: 0.753109{{$}}
func.func @sce() -> (tensor<f32> {tg.name = "loss"}, tensor<f32> {tg.name = "loss32"}) {
  %x = tg.constant dense<[[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]> : tensor<2x3xf32>
  %l = tg.constant dense<[2, 0]> : tensor<2xi64>
  %l32 = tg.constant dense<[2, 1]> : tensor<2xi32>
  %y = tg.softmax_cross_entropy %x, %l : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
  %y32 = tg.softmax_cross_entropy %x, %l32 : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
  return %y, %y32 : tensor<f32>, tensor<f32>
}

// LARGE-LABEL: @sce_large
// exp(1000) overflows, logsumexp([1000, 0]) = 1000 does not: (0 + 1000) / 2.
// LARGE: loss: tensor<f32>
// LARGE-NEXT: values: 500{{$}}
func.func @sce_large() -> (tensor<f32> {tg.name = "loss"}) {
  %x = tg.constant dense<[[1000.0, 0.0], [1000.0, 0.0]]> : tensor<2x2xf32>
  %l = tg.constant dense<[0, 1]> : tensor<2xi64>
  %y = tg.softmax_cross_entropy %x, %l : (tensor<2x2xf32>, tensor<2xi64>) -> tensor<f32>
  return %y : tensor<f32>
}

// MSE-LABEL: @mse
// Differences 1, 1, 3, 1: (1 + 1 + 9 + 1) / 4.
// MSE: loss: tensor<f32>
// MSE-NEXT: values: 3{{$}}
func.func @mse() -> (tensor<f32> {tg.name = "loss"}) {
  %a = tg.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = tg.constant dense<[[0.0, 1.0], [0.0, 3.0]]> : tensor<2x2xf32>
  %y = tg.mse_loss %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<f32>
  return %y : tensor<f32>
}

// ERR: losses.mlir:[[@LINE+4]]:8: error: 'tg.softmax_cross_entropy' op softmax_cross_entropy label 3 of row 1 is not a class in [0, 3)
func.func @bad_label() -> tensor<f32> {
  %x = tg.constant dense<[[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]> : tensor<2x3xf32>
  %l = tg.constant dense<[2, 3]> : tensor<2xi64>
  %y = tg.softmax_cross_entropy %x, %l : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<f32>
  return %y : tensor<f32>
}

// NEG: losses.mlir:[[@LINE+4]]:8: error: 'tg.softmax_cross_entropy' op softmax_cross_entropy label -1 of row 0 is not a class in [0, 3)
func.func @negative_label() -> tensor<f32> {
  %x = tg.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  %l = tg.constant dense<[-1]> : tensor<1xi32>
  %y = tg.softmax_cross_entropy %x, %l : (tensor<1x3xf32>, tensor<1xi32>) -> tensor<f32>
  return %y : tensor<f32>
}
