// --tg-conv-over-concat takes a channel concatenation apart where only
// dense convolutions read it: each convolution convolves every operand with
// its slice of the filter and sums the results (the bias on the first, the
// fused activation after the sum); a pool that is a concatenation's only
// reader moves before it, onto each operand. The rewritten graph computes
// the same values (up to rounding); the cases refused keep their
// concatenations.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: loom-run %t/m.mlir --entry fire --write-random-weights %t/m.safetensors --seed 2 > /dev/null
// RUN: loom-opt %t/m.mlir --tg-conv-over-concat | FileCheck %s
// RUN: loom-opt %t/m.mlir --tg-conv-over-concat -o %t/moved.mlir
// RUN: loom-opt %t/m.mlir --tg-conv-over-concat --tg-fold-weights | FileCheck %s --check-prefix=FOLDED
// RUN: loom-run %t/m.mlir --entry fire --seed 3 --outputs %t/fire.safetensors > /dev/null
// RUN: loom-run %t/moved.mlir --entry fire --seed 3 --compare %t/fire.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %t/m.mlir --entry pooled --seed 4 --outputs %t/pooled.safetensors > /dev/null
// RUN: loom-run %t/moved.mlir --entry pooled --seed 4 --compare %t/pooled.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %t/m.mlir --entry three --seed 5 --outputs %t/three.safetensors > /dev/null
// RUN: loom-run %t/moved.mlir --entry three --seed 5 --compare %t/three.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// SAME: compare: largest error

// SqueezeNet's fire module at batch 2, its concatenation read by a 1x1
// squeeze (ReLU as an op) and a padded 3x3 convolution (ReLU fused).
// CHECK-LABEL: func.func @fire
// CHECK-NOT: tg.concat
// CHECK: %[[E1:.*]] = tg.relu %{{.*}} : tensor<2x32x8x8xf32>
// CHECK: %[[E3:.*]] = tg.relu %{{.*}} : tensor<2x32x8x8xf32>
// CHECK: %[[W1:.*]] = tg.slice %[[S:.*]] {limits = array<i64: 16, 32, 1, 1>, starts = array<i64: 0, 0, 0, 0>}
// CHECK: %[[A:.*]] = tg.conv %[[E1]], %[[W1]], %{{.*}} :
// CHECK: %[[W2:.*]] = tg.slice %[[S]] {limits = array<i64: 16, 64, 1, 1>, starts = array<i64: 0, 32, 0, 0>}
// CHECK: %[[B:.*]] = tg.conv %[[E3]], %[[W2]] :
// CHECK: %[[SUM:.*]] = tg.add %[[B]], %[[A]]
// CHECK: tg.relu %[[SUM]]
// CHECK: tg.conv %[[E1]], %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>} :
// CHECK-NOT: activation
// CHECK: tg.conv %[[E3]], %{{.*}} {pads = array<i64: 1, 1, 1, 1>} :
// CHECK: %[[SUM3:.*]] = tg.add
// CHECK: tg.relu %[[SUM3]]
// CHECK-NOT: tg.concat
// The filter slices are parameters: --tg-fold-weights computes them.
// FOLDED-LABEL: func.func @fire
// FOLDED-NOT: tg.slice
// FOLDED-LABEL: func.func @pooled

// A max pool between the concatenation and the convolution moves onto the
// operands first; then the convolution is taken apart.
// CHECK-LABEL: func.func @pooled
// CHECK: tg.maxpool %arg0 {{.*}} : (tensor<1x32x9x9xf32>) -> tensor<1x32x4x4xf32>
// CHECK: tg.maxpool %arg1 {{.*}} : (tensor<1x16x9x9xf32>) -> tensor<1x16x4x4xf32>
// CHECK-NOT: tg.concat
// CHECK: tg.conv
// CHECK: tg.conv
// CHECK: tg.add

// Three operands: two additions, the bias once.
// CHECK-LABEL: func.func @three
// CHECK-NOT: tg.concat
// CHECK: tg.conv %arg0, %{{.*}}, %{{.*}} {pads
// CHECK: tg.conv %arg1, %{{.*}} {pads
// CHECK: tg.add
// CHECK: tg.conv %arg2, %{{.*}} {pads
// CHECK: tg.add
// CHECK: tg.sigmoid
// CHECK-NOT: tg.concat

// Refused: another reader than a convolution, a grouped convolution, an
// operand of 8 channels, readers whose results together outweigh the
// concatenation (a 1x1 convolution to 64 channels from 32 + 32), a
// concatenation along the height, a filter that is not a parameter; and a
// pool that is not the concatenation's only reader stays after it.
// CHECK-LABEL: func.func @refused
// CHECK-COUNT-7: tg.concat
// CHECK-NOT: tg.concat
// CHECK: return

//--- m.mlir
module attributes {tg.weights = "m.safetensors"} {
func.func @fire(%x: tensor<2x16x8x8xf32>) -> (tensor<2x16x8x8xf32>, tensor<2x8x8x8xf32>) {
  %w1 = tg.weight "w1" : tensor<32x16x1x1xf32>
  %w3 = tg.weight "w3" : tensor<32x16x3x3xf32>
  %ws = tg.weight "ws" : tensor<16x64x1x1xf32>
  %bs = tg.weight "bs" : tensor<16xf32>
  %wt = tg.weight "wt" : tensor<8x64x3x3xf32>
  %bt = tg.weight "bt" : tensor<8xf32>
  %c1 = tg.conv %x, %w1 : (tensor<2x16x8x8xf32>, tensor<32x16x1x1xf32>) -> tensor<2x32x8x8xf32>
  %e1 = tg.relu %c1 : tensor<2x32x8x8xf32>
  %c3 = tg.conv %x, %w3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<2x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<2x32x8x8xf32>
  %e3 = tg.relu %c3 : tensor<2x32x8x8xf32>
  %cat = tg.concat %e1, %e3 {axis = 1 : i64} : (tensor<2x32x8x8xf32>, tensor<2x32x8x8xf32>) -> tensor<2x64x8x8xf32>
  %s = tg.conv %cat, %ws, %bs : (tensor<2x64x8x8xf32>, tensor<16x64x1x1xf32>, tensor<16xf32>) -> tensor<2x16x8x8xf32>
  %r = tg.relu %s : tensor<2x16x8x8xf32>
  %t = tg.conv %cat, %wt, %bt {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<2x64x8x8xf32>, tensor<8x64x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  return %r, %t : tensor<2x16x8x8xf32>, tensor<2x8x8x8xf32>
}

func.func @pooled(%a: tensor<1x32x9x9xf32>, %b: tensor<1x16x9x9xf32>) -> tensor<1x8x4x4xf32> {
  %wp = tg.weight "wp" : tensor<8x48x1x1xf32>
  %cat = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x32x9x9xf32>, tensor<1x16x9x9xf32>) -> tensor<1x48x9x9xf32>
  %p = tg.maxpool %cat {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x48x9x9xf32>) -> tensor<1x48x4x4xf32>
  %y = tg.conv %p, %wp : (tensor<1x48x4x4xf32>, tensor<8x48x1x1xf32>) -> tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}

func.func @three(%a: tensor<1x16x6x6xf32>, %b: tensor<1x32x6x6xf32>, %c: tensor<1x16x6x6xf32>) -> tensor<1x12x3x3xf32> {
  %w = tg.weight "w" : tensor<12x64x3x3xf32>
  %bias = tg.weight "bias" : tensor<12xf32>
  %cat = tg.concat %a, %b, %c {axis = 1 : i64} : (tensor<1x16x6x6xf32>, tensor<1x32x6x6xf32>, tensor<1x16x6x6xf32>) -> tensor<1x64x6x6xf32>
  %y = tg.conv %cat, %w, %bias {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation sigmoid>} : (tensor<1x64x6x6xf32>, tensor<12x64x3x3xf32>, tensor<12xf32>) -> tensor<1x12x3x3xf32>
  return %y : tensor<1x12x3x3xf32>
}

func.func @refused(%a: tensor<1x32x8x8xf32>, %b: tensor<1x32x8x8xf32>, %n: tensor<1x8x8x8xf32>, %wf: tensor<4x64x1x1xf32>)
    -> (tensor<1x4x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x64x8x8xf32>) {
  %w = tg.weight "rw" : tensor<4x64x1x1xf32>
  %wg = tg.weight "rwg" : tensor<4x32x1x1xf32>
  %w40 = tg.weight "rw40" : tensor<4x40x1x1xf32>
  %w64 = tg.weight "rw64" : tensor<64x64x1x1xf32>
  %w32 = tg.weight "rw32" : tensor<4x32x1x1xf32>
  %c0 = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x64x8x8xf32>
  %y0 = tg.conv %c0, %w : (tensor<1x64x8x8xf32>, tensor<4x64x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r0 = tg.relu %c0 : tensor<1x64x8x8xf32>
  %c1 = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x64x8x8xf32>
  %y1 = tg.conv %c1, %wg {groups = 2 : i64} : (tensor<1x64x8x8xf32>, tensor<4x32x1x1xf32>) -> tensor<1x4x8x8xf32>
  %c2 = tg.concat %a, %n {axis = 1 : i64} : (tensor<1x32x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x40x8x8xf32>
  %y2 = tg.conv %c2, %w40 : (tensor<1x40x8x8xf32>, tensor<4x40x1x1xf32>) -> tensor<1x4x8x8xf32>
  %c3 = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x64x8x8xf32>
  %y3 = tg.conv %c3, %w64 : (tensor<1x64x8x8xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x8x8xf32>
  %c4 = tg.concat %a, %b {axis = 2 : i64} : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x32x16x8xf32>
  %y4 = tg.conv %c4, %w32 : (tensor<1x32x16x8xf32>, tensor<4x32x1x1xf32>) -> tensor<1x4x16x8xf32>
  %c5 = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x64x8x8xf32>
  %y5 = tg.conv %c5, %wf : (tensor<1x64x8x8xf32>, tensor<4x64x1x1xf32>) -> tensor<1x4x8x8xf32>
  %c6 = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x64x8x8xf32>
  %p6 = tg.maxpool %c6 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x64x8x8xf32>) -> tensor<1x64x4x4xf32>
  %w6 = tg.conv %p6, %w : (tensor<1x64x4x4xf32>, tensor<4x64x1x1xf32>) -> tensor<1x4x4x4xf32>
  return %y0, %r0, %y1, %y2, %y3, %y4, %y5, %w6, %c6 : tensor<1x4x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x64x8x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x4x4xf32>, tensor<1x64x8x8xf32>
}
}
