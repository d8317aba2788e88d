// --tg-check-weights checks every tg.weight against the module's safetensors
// file: silent on a match, an error at the offending op (or at the module when
// the file itself is unusable) otherwise, and the IR is not changed.
//
// RUN: rm -rf %t && split-file --leading-lines %s %t
// RUN: loom-run %t/gen.mlir --write-random-weights %t/w.safetensors
//
// RUN: loom-opt %t/ok.mlir --tg-check-weights 2> %t/ok.err | FileCheck %s --check-prefix=OK
// RUN: count 0 < %t/ok.err
// RUN: not loom-opt %t/bad.mlir --tg-check-weights 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not loom-opt %t/missing-file.mlir --tg-check-weights 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not loom-opt %t/no-attr.mlir --tg-check-weights 2>&1 | FileCheck %s --check-prefix=NOATTR
// The weights-file option replaces the attribute.
// RUN: loom-opt %t/no-attr.mlir --tg-check-weights=weights-file=%t/w.safetensors 2> %t/flag.err | FileCheck %s --check-prefix=FLAG
// RUN: count 0 < %t/flag.err
// RUN: not loom-opt %t/ok.mlir --tg-check-weights=weights-file=%t/nope.safetensors 2>&1 | FileCheck %s --check-prefix=FLAG-NOFILE
// A module without tg.weight ops needs no file at all.
// RUN: loom-opt %t/no-weights.mlir --tg-check-weights 2> %t/none.err | FileCheck %s --check-prefix=NONE
// RUN: count 0 < %t/none.err

//--- gen.mlir
module attributes {tg.weights = "w.safetensors"} {
func.func @main() -> (tensor<2x3xf32>, tensor<3xf16>, tensor<4xi64>) {
  %w = tg.weight "fc.weight" : tensor<2x3xf32>
  %b = tg.weight "fc.bias" : tensor<3xf16>
  %i = tg.weight "ids" : tensor<4xi64>
  return %w, %b, %i : tensor<2x3xf32>, tensor<3xf16>, tensor<4xi64>
}
}

//--- ok.mlir
// OK: module attributes {tg.weights = "w.safetensors"}
module attributes {tg.weights = "w.safetensors"} {
// OK-NEXT: func.func @main
func.func @main(%x: tensor<5x2xf32>) -> tensor<5x3xf32> {
  // OK-NEXT: tg.weight "fc.weight" : tensor<2x3xf32>
  %w = tg.weight "fc.weight" : tensor<2x3xf32>
  // OK-NEXT: tg.weight "ids" : tensor<4xi64>
  %i = tg.weight "ids" : tensor<4xi64>
  // OK-NEXT: tg.matmul
  %y = tg.matmul %x, %w : (tensor<5x2xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %y : tensor<5x3xf32>
}
}

//--- bad.mlir
module attributes {tg.weights = "w.safetensors"} {
func.func @main() -> (tensor<2x3xf16>, tensor<3x2xf32>, tensor<3xf16>, tensor<4xi32>, tensor<1xf32>) {
  // BAD: bad.mlir:[[@LINE+1]]:8: error: 'tg.weight' op {{.*}}w.safetensors: tensor 'fc.weight' has dtype F32, expected F16
  %a = tg.weight "fc.weight" : tensor<2x3xf16>
  // BAD: bad.mlir:[[@LINE+1]]:8: error: 'tg.weight' op {{.*}}w.safetensors: tensor 'fc.weight' has shape [2, 3], expected [3, 2]
  %b = tg.weight "fc.weight" : tensor<3x2xf32>
  // This one matches and is not reported.
  // BAD-NOT: error: {{.*}}'fc.bias'
  %c = tg.weight "fc.bias" : tensor<3xf16>
  // BAD: bad.mlir:[[@LINE+1]]:8: error: 'tg.weight' op {{.*}}w.safetensors: tensor 'ids' has dtype I64, expected I32
  %d = tg.weight "ids" : tensor<4xi32>
  // BAD: bad.mlir:[[@LINE+1]]:8: error: 'tg.weight' op {{.*}}w.safetensors: tensor 'fc.scale' not found (expected F32 [1])
  %e = tg.weight "fc.scale" : tensor<1xf32>
  return %a, %b, %c, %d, %e : tensor<2x3xf16>, tensor<3x2xf32>, tensor<3xf16>, tensor<4xi32>, tensor<1xf32>
}
}
// BAD-NOT: error:

//--- missing-file.mlir
// NOFILE: missing-file.mlir:[[@LINE+1]]:1: error: cannot load weights: {{.*}}nope.safetensors: cannot open file: No such file or directory
module attributes {tg.weights = "nope.safetensors"} {
func.func @main() -> tensor<2x3xf32> {
  %w = tg.weight "fc.weight" : tensor<2x3xf32>
  return %w : tensor<2x3xf32>
}
}
// NOFILE-NOT: error:

//--- no-attr.mlir
// NOATTR: no-attr.mlir:[[@LINE+1]]:1: error: the module uses tg.weight but has no 'tg.weights' attribute naming its safetensors file
module {
func.func @main() -> tensor<2x3xf32> {
  %w = tg.weight "fc.weight" : tensor<2x3xf32>
  return %w : tensor<2x3xf32>
}
}
// NOATTR-NOT: error:
// FLAG: module {
// FLAG-NEXT: func.func @main() -> tensor<2x3xf32> {
// FLAG-NEXT: tg.weight "fc.weight" : tensor<2x3xf32>
// FLAG-NOFILE: ok.mlir:{{[0-9]+}}:1: error: cannot load weights: {{.*}}nope.safetensors: cannot open file

//--- no-weights.mlir
// NONE: func.func @main
// NONE-NEXT: tg.constant
func.func @main() -> tensor<2xf32> {
  %c = tg.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
