// Run-time errors of the reference interpreter are diagnostics at the
// offending op (file:line:col) and make loom-run exit non-zero without
// printing any result.
//
// RUN: rm -rf %t && split-file --leading-lines %s %t
//
// RUN: not loom-run %t/gather.mlir 2>&1 | FileCheck %s --check-prefix=GATHER
// RUN: not loom-run %t/gather.mlir --entry negative 2>&1 | FileCheck %s --check-prefix=GATHER-NEG
// RUN: not loom-run %t/gather.mlir --entry in_callee 2>&1 | FileCheck %s --check-prefix=GATHER-CALL
// RUN: loom-run %t/calls.mlir --entry caller | FileCheck %s --check-prefix=CALL
// RUN: not loom-run %t/calls.mlir --entry recursive 2>&1 | FileCheck %s --check-prefix=RECURSIVE
// RUN: not loom-run %t/calls.mlir --entry calls_external 2>&1 | FileCheck %s --check-prefix=EXTERNAL
// RUN: not loom-run %t/sparse.mlir 2>&1 | FileCheck %s --check-prefix=SPARSE
// RUN: not loom-run %t/large.mlir --max-elements 10 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: loom-run %t/large.mlir --max-elements 16 --print-values 1 | FileCheck %s --check-prefix=LARGE-OK
// RUN: not loom-run %t/large.mlir --entry with_arg --max-elements 10 2>&1 | FileCheck %s --check-prefix=LARGE-ARG
//
// Weights: write a file for gen.mlir, then run modules whose tg.weight ops
// disagree with it. Relative tg.weights paths resolve against the directory
// of the .mlir file, not the working directory.
// RUN: loom-run %t/gen.mlir --write-random-weights %t/w.safetensors | FileCheck %s --check-prefix=GEN
// RUN: loom-run %t/ok.mlir --print-values 8 | FileCheck %s --check-prefix=OK
// RUN: not loom-run %t/dtype.mlir 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not loom-run %t/shape.mlir 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not loom-run %t/missing-name.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not loom-run %t/missing-file.mlir 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not loom-run %t/ok.mlir --weights %t/nonexistent.safetensors 2>&1 | FileCheck %s --check-prefix=NOFILE-FLAG
// RUN: not loom-run %t/no-attr.mlir 2>&1 | FileCheck %s --check-prefix=NOATTR
// RUN: loom-run %t/no-attr.mlir --weights %t/w.safetensors | FileCheck %s --check-prefix=NOATTR-FLAG
// RUN: not loom-run %t/not-safetensors.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE

//--- gather.mlir
func.func @main() -> tensor<2x2xf32> {
  %data = tg.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %i = tg.constant dense<[0, 3]> : tensor<2xi64>
  // GATHER: gather.mlir:[[@LINE+1]]:8: error: 'tg.gather' op gather index 3 is out of range [-3, 3) of axis 0
  %0 = tg.gather %data, %i : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
// GATHER-NOT: outputs:

func.func @negative() -> tensor<2x1xf32> {
  %data = tg.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %i = tg.constant dense<[[-2], [-3]]> : tensor<2x1xi32>
  // GATHER-NEG: gather.mlir:[[@LINE+1]]:8: error: 'tg.gather' op gather index -3 is out of range [-2, 2) of axis 1
  %0 = tg.gather %data, %i {axis = -1 : i64} : (tensor<3x2xf32>, tensor<2x1xi32>) -> tensor<3x2x1xf32>
  %1 = tg.slice %0 {starts = array<i64: 0, 0, 0>, limits = array<i64: 2, 1, 1>} : (tensor<3x2x1xf32>) -> tensor<2x1x1xf32>
  %2 = tg.reshape %1 : (tensor<2x1x1xf32>) -> tensor<2x1xf32>
  return %2 : tensor<2x1xf32>
}
// GATHER-NEG-NOT: outputs:

// The error is reported in the called function.
func.func @in_callee() -> tensor<2x2xf32> {
  %r = func.call @main() : () -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
// GATHER-CALL: gather.mlir:[[@LINE-21]]:8: error: 'tg.gather' op gather index 3 is out of range [-3, 3) of axis 0
// GATHER-CALL-NOT: outputs:

//--- calls.mlir
// func.call runs the callee, multiple results included.
func.func @pair() -> (tensor<1xf32>, tensor<2xf32>) {
  %a = tg.constant dense<1.0> : tensor<1xf32>
  %b = tg.constant dense<[2.0, 3.0]> : tensor<2xf32>
  return %a, %b : tensor<1xf32>, tensor<2xf32>
}
func.func @caller() -> (tensor<2xf32>, tensor<1xf32>) {
  %r:2 = func.call @pair() : () -> (tensor<1xf32>, tensor<2xf32>)
  %s = tg.add %r#1, %r#0 : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
  return %s, %r#0 : tensor<2xf32>, tensor<1xf32>
}
// CALL: result0: tensor<2xf32>
// CALL-NEXT: values: 3 4{{$}}
// CALL-NEXT: result1: tensor<1xf32>
// CALL-NEXT: values: 1{{$}}

// Unbounded recursion is stopped.
// RECURSIVE: calls.mlir:[[@LINE+1]]:1: error: 'func.func' op call depth exceeds 64 (recursion?)
func.func @recursive() -> tensor<1xf32> {
  %r = func.call @recursive() : () -> tensor<1xf32>
  return %r : tensor<1xf32>
}
// RECURSIVE-NOT: outputs:

// EXTERNAL: calls.mlir:[[@LINE+1]]:1: error: 'func.func' op has no body to interpret
func.func private @external() -> tensor<1xf32>
func.func @calls_external() -> tensor<1xf32> {
  %r = func.call @external() : () -> tensor<1xf32>
  return %r : tensor<1xf32>
}
// EXTERNAL-NOT: outputs:

//--- sparse.mlir
func.func @main() -> tensor<2x2xf32> {
  // SPARSE: sparse.mlir:[[@LINE+1]]:8: error: 'tg.constant' op holds a sparse<{{.*}}> : tensor<2x2xf32>; the interpreter reads dense constants only
  %c = tg.constant sparse<[[0, 1]], [5.0]> : tensor<2x2xf32>
  return %c : tensor<2x2xf32>
}
// SPARSE-NOT: outputs:

//--- large.mlir
func.func @main() -> tensor<4x4xf32> {
  %c = tg.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  // LARGE: large.mlir:[[@LINE+1]]:8: error: 'tg.broadcast_to' op would produce a tensor of type 'tensor<4x4xf32>', larger than the interpreter's limit of 10 elements
  %0 = tg.broadcast_to %c : (tensor<4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
// LARGE-NOT: outputs:
// LARGE-OK: result0: tensor<4x4xf32>  mean 2.5  min 1  max 4
// LARGE-OK-NEXT: values: 1 ...{{$}}

func.func @with_arg(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  return %x : tensor<3x4xf32>
}
// LARGE-ARG: loom-run: error: argument 0 (tensor<3x4xf32>) is larger than --max-elements
// LARGE-ARG-NOT: outputs:

//--- gen.mlir
module attributes {tg.weights = "w.safetensors"} {
func.func @main() -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf16>, tensor<2xi64>) {
  %w = tg.weight "w" : tensor<2x3xf32>
  %b = tg.weight "b" : tensor<3xf32>
  %h = tg.weight "h" : tensor<2xf16>
  %ids = tg.weight "ids" : tensor<2xi64>
  return %w, %b, %h, %ids : tensor<2x3xf32>, tensor<3xf32>, tensor<2xf16>, tensor<2xi64>
}
}
// GEN: wrote random weights (seed 0) to {{.*}}w.safetensors

//--- ok.mlir
module attributes {tg.weights = "w.safetensors"} {
func.func @main() -> (tensor<2xi64> {tg.name = "ids"}, tensor<2xf16> {tg.name = "h"}, tensor<3x2xf32> {tg.name = "wt"}) {
  %ids = tg.weight "ids" : tensor<2xi64>
  %h = tg.weight "h" : tensor<2xf16>
  %w = tg.weight "w" : tensor<2x3xf32>
  // The same weight twice.
  %w2 = tg.weight "w" : tensor<2x3xf32>
  %z = tg.sub %w, %w2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %zt = tg.transpose %z {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %ids, %h, %zt : tensor<2xi64>, tensor<2xf16>, tensor<3x2xf32>
}
}
// Integer weights are written as zeros.
// OK: ids: tensor<2xi64>  mean 0  min 0  max 0
// OK-NEXT: values: 0 0{{$}}
// OK: h: tensor<2xf16>
// OK: wt: tensor<3x2xf32>  mean 0  min 0  max 0
// OK-NEXT: values: 0 0 0 0 0 0{{$}}

//--- dtype.mlir
module attributes {tg.weights = "w.safetensors"} {
func.func @main() -> tensor<2x3xf16> {
  // DTYPE: dtype.mlir:[[@LINE+1]]:8: error: 'tg.weight' op {{.*}}w.safetensors: tensor 'w' has dtype F32, expected F16
  %w = tg.weight "w" : tensor<2x3xf16>
  return %w : tensor<2x3xf16>
}
}
// DTYPE-NOT: outputs:

//--- shape.mlir
module attributes {tg.weights = "w.safetensors"} {
func.func @main() -> tensor<3x2xf32> {
  // SHAPE: shape.mlir:[[@LINE+1]]:8: error: 'tg.weight' op {{.*}}w.safetensors: tensor 'w' has shape [2, 3], expected [3, 2]
  %w = tg.weight "w" : tensor<3x2xf32>
  return %w : tensor<3x2xf32>
}
}
// SHAPE-NOT: outputs:

//--- missing-name.mlir
module attributes {tg.weights = "w.safetensors"} {
func.func @main() -> tensor<3xf32> {
  // MISSING: missing-name.mlir:[[@LINE+1]]:8: error: 'tg.weight' op {{.*}}w.safetensors: tensor 'bias' not found (expected F32 [3])
  %b = tg.weight "bias" : tensor<3xf32>
  return %b : tensor<3xf32>
}
}
// MISSING-NOT: outputs:

//--- missing-file.mlir
// NOFILE: missing-file.mlir:[[@LINE+1]]:1: error: cannot load weights: {{.*}}nope.safetensors: cannot open file
module attributes {tg.weights = "nope.safetensors"} {
func.func @main() -> tensor<3xf32> {
  // NOFILE: missing-file.mlir:[[@LINE+1]]:8: error: cannot read this weight: the weights file is unusable
  %b = tg.weight "b" : tensor<3xf32>
  return %b : tensor<3xf32>
}
}
// NOFILE-NOT: outputs:
// NOFILE-FLAG: ok.mlir:[[@LINE-59]]:1: error: cannot load weights: {{.*}}nonexistent.safetensors: cannot open file
// NOFILE-FLAG: ok.mlir:[[@LINE-58]]:10: error: cannot read this weight: the weights file is unusable
// NOFILE-FLAG-NOT: outputs:

//--- no-attr.mlir
// NOATTR: no-attr.mlir:[[@LINE+1]]:1: error: the module uses tg.weight but has no 'tg.weights' attribute naming its safetensors file
module {
func.func @main() -> tensor<3xf32> {
  // NOATTR: no-attr.mlir:[[@LINE+1]]:8: error: cannot read this weight: the weights file is unusable
  %b = tg.weight "b" : tensor<3xf32>
  return %b : tensor<3xf32>
}
}
// NOATTR-NOT: outputs:
// NOATTR-FLAG: outputs:
// NOATTR-FLAG-NEXT: result0: tensor<3xf32>

//--- not-safetensors.mlir
// The .mlir file itself is not a safetensors file.
// GARBAGE: error: cannot load weights: {{.*}}not-safetensors.mlir: header length {{[0-9]+}} {{exceeds|runs past}}
module attributes {tg.weights = "not-safetensors.mlir"} {
func.func @main() -> tensor<3xf32> {
  %b = tg.weight "b" : tensor<3xf32>
  return %b : tensor<3xf32>
}
}
// GARBAGE-NOT: outputs:
