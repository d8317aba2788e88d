// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-zoo.mlir target=h100 search=backtrack check=true" -split-input-file | FileCheck %s --check-prefixes=CHECK,MERGED
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-zoo.mlir target=h100 search=eqsat check=true" -split-input-file | FileCheck %s --check-prefixes=CHECK,MERGED
// RUN: loom-opt %s --tg-superopt="rules=%loom_src_root/test/Search/Inputs/rules-zoo.mlir target=h100 search=eqsat extract=greedy check=true" -split-input-file | FileCheck %s --check-prefixes=CHECK,GREEDY

// Batchnorm folds into the convolution (its weights become a bias and a
// scaled filter, computed from weights alone, so free), then the relu fuses
// into the convolution. The rules were written at witness shapes (12 -> 14
// channels, 16x18 pixels); they apply here at 8 -> 16 channels, 10x10.

// CHECK-LABEL: func.func @conv_bn_relu
// CHECK-NOT: tg.batchnorm
// CHECK-NOT: tg.relu
// CHECK: tg.rsqrt
// CHECK: %[[Y:.*]] = tg.conv %{{.*}}, %{{.*}}, %{{.*}} {activation = #tg<activation relu>, {{.*}}pads = array<i64: 1, 1, 1, 1>{{.*}}} : (tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x10x10xf32>
// CHECK: return %[[Y]]
func.func @conv_bn_relu(%x: tensor<1x8x10x10xf32>) -> tensor<1x16x10x10xf32> {
  %w = tg.weight "w" : tensor<16x8x3x3xf32>
  %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x10x10xf32>
  %s = tg.weight "s" : tensor<16xf32>
  %b = tg.weight "b" : tensor<16xf32>
  %m = tg.weight "m" : tensor<16xf32>
  %v = tg.weight "v" : tensor<16xf32>
  %n = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x16x10x10xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x10x10xf32>
  %r = tg.relu %n : tensor<1x16x10x10xf32>
  return %r : tensor<1x16x10x10xf32>
}

// -----

// A multi-output rule: the query, key and value projections share their
// input and become one matmul on concatenated weights and a split; the
// three bias adds move before the split and become one. Greedy extraction
// misses it: it charges the shared matmul to each of the three results
// (tree cost), which the ILP does not (DAG cost).

// CHECK-LABEL: func.func @qkv
// GREEDY-COUNT-3: tg.matmul
// GREEDY-NOT: tg.split
// MERGED: %[[W:.*]] = tg.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x96xf32>
// MERGED: %[[M:.*]] = tg.matmul %{{.*}}, %[[W]] : (tensor<1x16x32xf32>, tensor<32x96xf32>) -> tensor<1x16x96xf32>
// MERGED: %[[A:.*]] = tg.add %[[M]], %{{.*}} : (tensor<1x16x96xf32>, tensor<96xf32>) -> tensor<1x16x96xf32>
// MERGED: %{{.*}}:3 = tg.split %[[A]] {axis = 2 : i64, sizes = array<i64: 32, 32, 32>}
// MERGED-NOT: tg.matmul
func.func @qkv(%x: tensor<1x16x32xf32>) -> (tensor<1x16x32xf32>, tensor<1x16x32xf32>, tensor<1x16x32xf32>) {
  %wq = tg.weight "wq" : tensor<32x32xf32>
  %wk = tg.weight "wk" : tensor<32x32xf32>
  %wv = tg.weight "wv" : tensor<32x32xf32>
  %bq = tg.weight "bq" : tensor<32xf32>
  %bk = tg.weight "bk" : tensor<32xf32>
  %bv = tg.weight "bv" : tensor<32xf32>
  %q = tg.matmul %x, %wq : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
  %k = tg.matmul %x, %wk : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
  %v = tg.matmul %x, %wv : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
  %q1 = tg.add %q, %bq : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  %k1 = tg.add %k, %bk : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  %v1 = tg.add %v, %bv : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  return %q1, %k1, %v1 : tensor<1x16x32xf32>, tensor<1x16x32xf32>, tensor<1x16x32xf32>
}

// -----

// No rule applies at these shapes (the conv has a 2x2 kernel, which no rule
// was written for): the function is left as it is.

// CHECK-LABEL: func.func @untouched
// CHECK-NEXT: tg.weight
// CHECK-NEXT: tg.conv
// CHECK-NEXT: tg.relu
// CHECK-NEXT: return
func.func @untouched(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x5x5xf32> {
  %w = tg.weight "w" : tensor<4x4x2x2xf32>
  %c = tg.conv %x, %w : (tensor<1x4x6x6xf32>, tensor<4x4x2x2xf32>) -> tensor<1x4x5x5xf32>
  %r = tg.relu %c : tensor<1x4x5x5xf32>
  return %r : tensor<1x4x5x5xf32>
}
