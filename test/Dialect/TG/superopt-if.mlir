// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-zoo.mlir target=h100 search=backtrack check=true report=%t.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-zoo.mlir target=h100 search=eqsat check=true" | FileCheck %s

// A function with run-time control flow is searched run by run: the
// straight-line ops before the tg.if, inside each region, and after it, each
// as a graph of its own (values from elsewhere are its inputs), rewritten in
// place. check=true compares the whole function, tg.if included, with the
// original on random inputs in the interpreter.

// CHECK-LABEL: func.func @if_segments
// The run before the tg.if: batchnorm and relu fold into the convolution.
// CHECK: %[[C:.*]] = tg.conv {{.*}}activation = #tg<activation relu>
// CHECK: %[[Y:.*]] = tg.if %{{.*}} : tensor<i1> -> (tensor<1x16x10x10xf32>) {
// Inside the then region, the same on a value from outside it.
// CHECK-NOT: tg.batchnorm
// CHECK: %[[T:.*]] = tg.conv %[[C]], {{.*}}activation = #tg<activation relu>
// CHECK: tg.yield %[[T]]
// CHECK: } else {
// CHECK: tg.yield %[[C]]
// CHECK: }
// CHECK-NOT: tg.batchnorm
// CHECK-NOT: tg.relu
// CHECK: return %[[Y]]
func.func @if_segments(%x: tensor<1x8x10x10xf32>, %flag: tensor<i1>) -> tensor<1x16x10x10xf32> {
  %w = tg.weight "w" : tensor<16x8x3x3xf32>
  %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x10x10xf32>
  %s = tg.weight "s" : tensor<16xf32>
  %b = tg.weight "b" : tensor<16xf32>
  %m = tg.weight "m" : tensor<16xf32>
  %v = tg.weight "v" : tensor<16xf32>
  %n = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x16x10x10xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x10x10xf32>
  %r = tg.relu %n : tensor<1x16x10x10xf32>
  %y = tg.if %flag : tensor<i1> -> (tensor<1x16x10x10xf32>) {
    %w2 = tg.weight "w2" : tensor<16x16x3x3xf32>
    %c2 = tg.conv %r, %w2 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x10x10xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x10x10xf32>
    %n2 = tg.batchnorm %c2, %s, %b, %m, %v : (tensor<1x16x10x10xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x10x10xf32>
    %r2 = tg.relu %n2 : tensor<1x16x10x10xf32>
    tg.yield %r2 : tensor<1x16x10x10xf32>
  } else {
    tg.yield %r : tensor<1x16x10x10xf32>
  }
  return %y : tensor<1x16x10x10xf32>
}

// REPORT: "function": "if_segments segment 1/2"
// REPORT: "ratio": {{[1-9]}}
// REPORT: "function": "if_segments segment 2/2"
