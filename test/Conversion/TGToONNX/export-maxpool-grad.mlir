// tg.maxpool_grad exported to ONNX opset 17 (checked by onnx::checker):
// MaxPool's Indices output (each window's first maximum, flattened over the
// whole input, padding excluded) and ScatterElements with reduction = add
// of the flattened grad_output into flat zeros (an Expand of a scalar),
// reshaped to the input. (The importer has no ScatterElements; the values
// are checked by the interpreter and lowering tests.)
//
// RUN: loom-translate --export-onnx %s --onnx-text -o - | FileCheck %s

// CHECK: main (float[2,3,7,6] x, float[2,3,4,3] g,
// CHECK: int64[1] maxpool_grad_flat_shape = {252},
// CHECK-NEXT: int64[1] maxpool_grad_to_1d = {-1},
// CHECK: => (float[2,3,7,6] dx)
// CHECK: maxpool_grad_pooled, maxpool_grad_indices = MaxPool<kernel_shape = [3, 2], strides = [2, 2], pads = [1, 0, 1, 1]>(x)
// CHECK-NEXT: maxpool_grad_flat_indices = Reshape(maxpool_grad_indices, maxpool_grad_to_1d)
// CHECK-NEXT: maxpool_grad_flat_grad = Reshape(g, maxpool_grad_to_1d)
// CHECK-NEXT: maxpool_grad_zeros = Expand(maxpool_grad_zero, maxpool_grad_flat_shape)
// CHECK-NEXT: maxpool_grad_sum = ScatterElements<axis = 0, reduction = "add">(maxpool_grad_zeros, maxpool_grad_flat_indices, maxpool_grad_flat_grad)
// CHECK-NEXT: dx = Reshape(maxpool_grad_sum, maxpool_grad_out_shape)
func.func @main(%x: tensor<2x3x7x6xf32> {tg.name = "x"}, %g: tensor<2x3x4x3xf32> {tg.name = "g"})
    -> (tensor<2x3x7x6xf32> {tg.name = "dx"}) {
  %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>}
      : (tensor<2x3x7x6xf32>, tensor<2x3x4x3xf32>) -> tensor<2x3x7x6xf32>
  return %dx : tensor<2x3x7x6xf32>
}
