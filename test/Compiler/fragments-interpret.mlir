// A function and its fragmented form compute the same values on the
// reference interpreter (tg.fragment's evaluation runs its body), and the
// fragmented form exports to ONNX with the body's nodes in its place.
//
// RUN: loom-run %s --seed 3 --outputs %t.ref.safetensors > /dev/null
// RUN: loom-opt %s --tg-form-fragments -o %t.frag.mlir
// RUN: loom-run %t.frag.mlir --seed 3 --compare %t.ref.safetensors --tolerance 0 | FileCheck %s
// RUN: loom-translate --export-onnx %t.frag.mlir --onnx-text -o - | FileCheck %s --check-prefix=ONNX
// CHECK: compare: largest error 0
// ONNX: Conv
// ONNX: Softmax
func.func @main(%x: tensor<1x3x8x8xf32>, %r: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = tg.constant dense<0.125> : tensor<4x3x3x3xf32>
  %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %s = tg.add %c, %r : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y = tg.relu %s : tensor<1x4x8x8xf32>
  %h = tg.constant dense<0.5> : tensor<f32>
  %m = tg.mul %y, %h : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %p = tg.softmax %m : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %p : tensor<1x4x8x8xf32>
}
