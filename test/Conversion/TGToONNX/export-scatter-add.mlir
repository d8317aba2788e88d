// tg.scatter_add exported to ONNX opset 17 (checked by onnx::checker):
// ScatterElements with reduction = add on 3-D views [outer, n, inner] of a
// zero tensor (an Expand of a scalar), the updates and the broadcast
// indices, reshaped to the result. (The importer has no ScatterElements;
// the values are checked by the interpreter and lowering tests.)
//
// RUN: loom-translate --export-onnx %s --onnx-text -o - | FileCheck %s

// CHECK: main (float[2,2,2,3] g, int64[2,2] i,
// CHECK: => (float[2,5,3] y)
// CHECK: scatter_add_zeros = Expand(scatter_add_zero, scatter_add_shape)
// CHECK-NEXT: scatter_add_idx = Reshape(i, scatter_add_idx_shape)
// CHECK-NEXT: scatter_add_idx3 = Expand(scatter_add_idx, scatter_add_upd_shape)
// CHECK-NEXT: scatter_add_updates = Reshape(g, scatter_add_upd_shape_1)
// CHECK-NEXT: scatter_add_sum = ScatterElements<axis = 1, reduction = "add">(scatter_add_zeros, scatter_add_idx3, scatter_add_updates)
// CHECK-NEXT: y = Reshape(scatter_add_sum, scatter_add_out_shape)
func.func @main(%g: tensor<2x2x2x3xf32> {tg.name = "g"}, %i: tensor<2x2xi64> {tg.name = "i"})
    -> (tensor<2x5x3xf32> {tg.name = "y"}) {
  %y = tg.scatter_add %g, %i {axis = 1 : i64, dim_size = 5 : i64} : (tensor<2x2x2x3xf32>, tensor<2x2xi64>) -> tensor<2x5x3xf32>
  return %y : tensor<2x5x3xf32>
}
