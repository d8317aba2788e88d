// The comparisons and tg.select exported to ONNX (Equal, Greater,
// GreaterOrEqual, Less, LessOrEqual, Where on run-time values), imported
// back as the same tg ops and run on the same inputs: bit for bit the same.
//
// RUN: loom-translate --export-onnx %s --onnx-text -o - | FileCheck %s
// RUN: rm -rf %t && mkdir %t
// RUN: loom-translate --export-onnx %s -o %t/model.onnx
// RUN: loom-translate --import-onnx %t/model.onnx -o %t/model.mlir
// RUN: FileCheck %s --check-prefix=IMPORT < %t/model.mlir
// RUN: loom-run %s --seed 7 --outputs %t/before.safetensors > /dev/null
// RUN: loom-run %t/model.mlir --seed 7 --outputs %t/after.safetensors > /dev/null
// RUN: cmp %t/before.safetensors %t/after.safetensors

// CHECK: main (float[2,3] x, float[3] w, int64[3] i,
// CHECK: => (float[2,3] y, bool[2,3] mask, int64[3] picked)
// CHECK: greater = Greater(x, w)
// CHECK-NEXT: greater_equal = GreaterOrEqual(x, w)
// CHECK-NEXT: less = Less(x, w)
// CHECK-NEXT: less_equal = LessOrEqual(x, w)
// CHECK-NEXT: equal = Equal(x, x)
// CHECK-NEXT: select = Where(greater, x, w)
// CHECK-NEXT: select_1 = Where(greater_equal, select, x)
// CHECK-NEXT: select_2 = Where(less_equal, select_1, w)
// CHECK-NEXT: y = Where(equal, select_2, x)
// CHECK-NEXT: mask = Equal(less, greater)
// CHECK-NEXT: greater_1 = Greater(i, constant)
// CHECK-NEXT: picked = Where(greater_1, i, constant)

// IMPORT-DAG: tg.greater
// IMPORT-DAG: tg.greater_equal
// IMPORT-DAG: tg.less
// IMPORT-DAG: tg.less_equal
// IMPORT-DAG: tg.equal
// IMPORT-DAG: tg.select
func.func @main(%x: tensor<2x3xf32> {tg.name = "x"}, %w: tensor<3xf32> {tg.name = "w"},
                %i: tensor<3xi64> {tg.name = "i"})
    -> (tensor<2x3xf32> {tg.name = "y"}, tensor<2x3xi1> {tg.name = "mask"},
        tensor<3xi64> {tg.name = "picked"}) {
  %gt = tg.greater %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %ge = tg.greater_equal %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %lt = tg.less %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %le = tg.less_equal %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %eq = tg.equal %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %a = tg.select %gt, %x, %w : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b = tg.select %ge, %a, %x : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = tg.select %le, %b, %w : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y = tg.select %eq, %c, %x : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %mask = tg.equal %lt, %gt : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %zero = tg.constant dense<0> : tensor<i64>
  %pos = tg.greater %i, %zero : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %picked = tg.select %pos, %i, %zero : (tensor<3xi1>, tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  return %y, %mask, %picked : tensor<2x3xf32>, tensor<2x3xi1>, tensor<3xi64>
}
