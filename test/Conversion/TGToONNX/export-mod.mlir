// tg.mod exported to ONNX as Mod (fmod 0 and 1) on run-time values, imported
// back as tg.mod with the same fmod and run on the same inputs: bit for bit
// the same.
//
// RUN: loom-translate --export-onnx %s --onnx-text -o - | FileCheck %s
// RUN: rm -rf %t && mkdir %t
// RUN: loom-translate --export-onnx %s -o %t/model.onnx
// RUN: loom-translate --import-onnx %t/model.onnx -o %t/model.mlir
// RUN: FileCheck %s --check-prefix=IMPORT < %t/model.mlir
// RUN: loom-run %s --seed 7 --outputs %t/before.safetensors > /dev/null
// RUN: loom-run %t/model.mlir --seed 7 --outputs %t/after.safetensors > /dev/null
// RUN: cmp %t/before.safetensors %t/after.safetensors

// CHECK: main (float[2,3] x, int64[3] i,
// CHECK: => (float[2,3] r, int64[3] floor, int64[3] trunc)
// CHECK: r = Mod<fmod = 1>(x, constant)
// CHECK-NEXT: floor = Mod<fmod = 0>(i, constant_1)
// CHECK-NEXT: trunc = Mod<fmod = 1>(i, constant_1)

// IMPORT: tg.mod %{{.*}}, %{{.*}} {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// IMPORT: tg.mod %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
// IMPORT: tg.mod %{{.*}}, %{{.*}} {fmod = true} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
func.func @main(%x: tensor<2x3xf32> {tg.name = "x"}, %i: tensor<3xi64> {tg.name = "i"})
    -> (tensor<2x3xf32> {tg.name = "r"}, tensor<3xi64> {tg.name = "floor"},
        tensor<3xi64> {tg.name = "trunc"}) {
  %c = tg.constant dense<[0.25, -0.5, 0.375]> : tensor<3xf32>
  %r = tg.mod %x, %c {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %k = tg.constant dense<[3, -2, 5]> : tensor<3xi64>
  %floor = tg.mod %i, %k : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %trunc = tg.mod %i, %k {fmod = true} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %r, %floor, %trunc : tensor<2x3xf32>, tensor<3xi64>, tensor<3xi64>
}
