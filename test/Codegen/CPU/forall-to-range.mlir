// RUN: loom-opt %s --loom-forall-to-range | FileCheck %s

// A result computed in a temporary and copied out through a reshape (as
// maxpool_grad's [N, C, OH, sh, OW, sw] spread is): the temporary becomes
// the output, expanded; the copy and the deallocation go, and the loop is
// split over threads (range 4).
// CHECK-LABEL: func.func @spread
// CHECK-SAME: loom.range = 4
// CHECK: memref.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [4, 3, 2]
// CHECK-NOT: memref.alloc
// CHECK: scf.for %{{.*}} = %arg2 to %arg3
// CHECK-NOT: memref.collapse_shape
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @spread(%x: memref<4x6xf32>, %out: memref<4x6xf32>) {
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x3x2xf32>
  %e = memref.expand_shape %x [[0], [1, 2]] output_shape [4, 3, 2] : memref<4x6xf32> into memref<4x3x2xf32>
  scf.forall (%i) in (4) {
    %s = memref.subview %e[%i, 0, 0] [1, 3, 2] [1, 1, 1] : memref<4x3x2xf32> to memref<1x3x2xf32, strided<[6, 2, 1], offset: ?>>
    %d = memref.subview %alloc[%i, 0, 0] [1, 3, 2] [1, 1, 1] : memref<4x3x2xf32> to memref<1x3x2xf32, strided<[6, 2, 1], offset: ?>>
    memref.copy %s, %d : memref<1x3x2xf32, strided<[6, 2, 1], offset: ?>> to memref<1x3x2xf32, strided<[6, 2, 1], offset: ?>>
  }
  %c = memref.collapse_shape %alloc [[0], [1, 2]] : memref<4x3x2xf32> into memref<4x6xf32>
  memref.copy %c, %out : memref<4x6xf32> to memref<4x6xf32>
  memref.dealloc %alloc : memref<4x3x2xf32>
  return
}

// The output is also written before the loop: the temporary stays, and
// one call runs the whole loop (range 1), since every call would copy it
// whole.
// CHECK-LABEL: func.func @written
// CHECK-SAME: loom.range = 1
// CHECK: memref.alloc
// CHECK: memref.copy %collapse_shape, %arg1
func.func @written(%x: memref<4x6xf32>, %out: memref<4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<4x6xf32>)
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x3x2xf32>
  %e = memref.expand_shape %x [[0], [1, 2]] output_shape [4, 3, 2] : memref<4x6xf32> into memref<4x3x2xf32>
  scf.forall (%i) in (4) {
    %s = memref.subview %e[%i, 0, 0] [1, 3, 2] [1, 1, 1] : memref<4x3x2xf32> to memref<1x3x2xf32, strided<[6, 2, 1], offset: ?>>
    %d = memref.subview %alloc[%i, 0, 0] [1, 3, 2] [1, 1, 1] : memref<4x3x2xf32> to memref<1x3x2xf32, strided<[6, 2, 1], offset: ?>>
    memref.copy %s, %d : memref<1x3x2xf32, strided<[6, 2, 1], offset: ?>> to memref<1x3x2xf32, strided<[6, 2, 1], offset: ?>>
  }
  %c = memref.collapse_shape %alloc [[0], [1, 2]] : memref<4x3x2xf32> into memref<4x6xf32>
  memref.copy %c, %out : memref<4x6xf32> to memref<4x6xf32>
  memref.dealloc %alloc : memref<4x3x2xf32>
  return
}
