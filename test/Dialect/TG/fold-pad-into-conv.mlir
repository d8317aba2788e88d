// RUN: loom-opt %s -canonicalize | FileCheck %s
// The folded convolutions compute the same values (the interpreter on the
// same random inputs, before and after).
// RUN: rm -rf %t && mkdir %t
// RUN: loom-opt %s -canonicalize -o %t/folded.mlir
// RUN: loom-run %s --entry main --seed 3 --outputs %t/before.safetensors > /dev/null
// RUN: loom-run %t/folded.mlir --entry main --seed 3 --compare %t/before.safetensors --tolerance 1e-6 | FileCheck %s --check-prefix=SAME
// SAME: compare: largest error {{.*}}(tolerance 1e-06)
//
// A zero tg.pad of a convolution's input on its spatial dimensions only
// moves into the convolution's pads (PyTorch's F.pad before a causal or
// dilated convolution), also through a reshape that only inserts a unit
// dimension (the importer's 1-D convolution as a 2-D one of height 1). A
// pad of the channels, or with another value, stays; so does a pad that
// another op reads too.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x4x9x9xf32>, %[[W:[^:]*]]: tensor<6x4x3x3xf32>, %[[S:[^:]*]]: tensor<2x4x50xf32>, %[[V:[^:]*]]: tensor<5x4x1x2xf32>, %[[U:[^:]*]]: tensor<6x5x3x3xf32>)
// Asymmetric, added to the convolution's own pads.
// CHECK: tg.conv %[[X]], %[[W]] {pads = array<i64: 3, 1, 1, 2>} : (tensor<1x4x9x9xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x11x10xf32>
// Through the unit-dimension reshape: a causal, dilated 1-D convolution.
// CHECK: %[[R:.*]] = tg.reshape %[[S]] : (tensor<2x4x50xf32>) -> tensor<2x4x1x50xf32>
// CHECK: tg.conv %[[R]], %[[V]] {dilations = array<i64: 1, 4>, pads = array<i64: 0, 4, 0, 0>}
// The channels padded, or a pad of ones: unchanged.
// CHECK: %[[PC:.*]] = tg.pad %[[X]] {high = array<i64: 0, 1, 0, 0>, low = array<i64: 0, 0, 0, 0>}
// CHECK: tg.conv %[[PC]], %[[U]]
// CHECK: %[[P1:.*]] = tg.pad %[[X]] {{.*}}value = 1.000000e+00
// CHECK: tg.conv %[[P1]], %[[W]]
// Read by another op too: the pad stays for it, the convolution folds it.
// CHECK: %[[P2:.*]] = tg.pad %[[X]] {high = array<i64: 0, 0, 1, 1>, low = array<i64: 0, 0, 1, 1>}
// CHECK: tg.conv %[[X]], %[[W]] {pads = array<i64: 1, 1, 1, 1>}
// CHECK: tg.relu %[[P2]]
func.func @main(%x: tensor<1x4x9x9xf32>, %w: tensor<6x4x3x3xf32>, %s: tensor<2x4x50xf32>, %v: tensor<5x4x1x2xf32>, %u: tensor<6x5x3x3xf32>) -> (tensor<1x6x11x9xf32>, tensor<2x5x1x50xf32>, tensor<1x6x7x7xf32>, tensor<1x6x9x9xf32>, tensor<1x6x9x9xf32>, tensor<1x4x11x11xf32>) {
  %p = tg.pad %x {low = array<i64: 0, 0, 2, 0>, high = array<i64: 0, 0, 0, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x11x10xf32>
  %a = tg.conv %p, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x11x10xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x11x10xf32>
  %as = tg.slice %a {starts = array<i64: 0, 0, 0, 0>, limits = array<i64: 1, 6, 11, 9>} : (tensor<1x6x11x10xf32>) -> tensor<1x6x11x9xf32>
  %sp = tg.pad %s {low = array<i64: 0, 0, 4>, high = array<i64: 0, 0, 0>} : (tensor<2x4x50xf32>) -> tensor<2x4x54xf32>
  %sr = tg.reshape %sp : (tensor<2x4x54xf32>) -> tensor<2x4x1x54xf32>
  %b = tg.conv %sr, %v {dilations = array<i64: 1, 4>} : (tensor<2x4x1x54xf32>, tensor<5x4x1x2xf32>) -> tensor<2x5x1x50xf32>
  %pc = tg.pad %x {low = array<i64: 0, 0, 0, 0>, high = array<i64: 0, 1, 0, 0>} : (tensor<1x4x9x9xf32>) -> tensor<1x5x9x9xf32>
  %c = tg.conv %pc, %u : (tensor<1x5x9x9xf32>, tensor<6x5x3x3xf32>) -> tensor<1x6x7x7xf32>
  %p1 = tg.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, value = 1.0 : f64} : (tensor<1x4x9x9xf32>) -> tensor<1x4x11x11xf32>
  %d = tg.conv %p1, %w : (tensor<1x4x11x11xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x9x9xf32>
  %p2 = tg.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x11x11xf32>
  %e = tg.conv %p2, %w : (tensor<1x4x11x11xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x9x9xf32>
  %r = tg.relu %p2 : tensor<1x4x11x11xf32>
  return %as, %b, %c, %d, %e, %r : tensor<1x6x11x9xf32>, tensor<2x5x1x50xf32>, tensor<1x6x7x7xf32>, tensor<1x6x9x9xf32>, tensor<1x6x9x9xf32>, tensor<1x4x11x11xf32>
}
