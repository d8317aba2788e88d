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

// Two loops over disjoint buffers (a kernel holding both directions of a
// recurrence): two tasks, one per call's iteration of [begin, end); the
// views and allocations run first on every call, the deallocations last.
// CHECK-LABEL: func.func @tasks
// CHECK-SAME: loom.range = 2
// CHECK: memref.alloc
// CHECK: memref.alloc
// CHECK: scf.for %[[T:.*]] = %arg4 to %arg5
// CHECK: scf.index_switch %[[T]]
// CHECK: case 0 {
// CHECK: linalg.fill {{.*}} outs(%[[A:.*]] : memref<8xf32>)
// CHECK: scf.for
// CHECK: memref.copy %[[A]], %arg2
// CHECK: case 1 {
// CHECK: linalg.fill {{.*}} outs(%[[B:.*]] : memref<8xf32>)
// CHECK: scf.for
// CHECK: memref.copy %[[B]], %arg3
// CHECK: default {
// CHECK: memref.dealloc
// CHECK: memref.dealloc
// CHECK: return
func.func @tasks(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %o1: memref<8xf32>, %o2: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    linalg.add ins(%a, %row : memref<8xf32>, memref<8xf32, strided<[1], offset: ?>>) outs(%a : memref<8xf32>)
  }
  memref.copy %a, %o1 : memref<8xf32> to memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%b : memref<8xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %row = memref.subview %y[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    linalg.add ins(%b, %row : memref<8xf32>, memref<8xf32, strided<[1], offset: ?>>) outs(%b : memref<8xf32>)
  }
  memref.copy %b, %o2 : memref<8xf32> to memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  return
}

// The second loop reads what the first wrote: one task, left whole.
// CHECK-LABEL: func.func @dependent_loops
// CHECK-SAME: loom.range = 1
// CHECK-NOT: scf.index_switch
// CHECK: return
func.func @dependent_loops(%x: memref<4x8xf32>, %o1: memref<8xf32>, %o2: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %row = memref.subview %x[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    linalg.add ins(%a, %row : memref<8xf32>, memref<8xf32, strided<[1], offset: ?>>) outs(%a : memref<8xf32>)
  }
  memref.copy %a, %o1 : memref<8xf32> to memref<8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.add ins(%a, %a : memref<8xf32>, memref<8xf32>) outs(%o2 : memref<8xf32>)
  }
  memref.dealloc %a : memref<8xf32>
  return
}

// A temporary of one iteration (the row a fused add + softmax computes
// into, and its max and sum): allocated once per call, before the loop,
// and freed after it, not a malloc and a free per row. The one whose
// deallocation is not in the iteration stays where it is.
// CHECK-LABEL: func.func @row_temporaries
// CHECK-SAME: loom.range = 6
// CHECK: %[[ROW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8xf32>
// CHECK: %[[MAX:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1xf32>
// CHECK: scf.for %{{.*}} = %arg3 to %arg4
// CHECK-NOT: memref.dealloc
// CHECK: memref.alloc() : memref<8xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: }
// CHECK-DAG: memref.dealloc %[[ROW]] : memref<1x8xf32>
// CHECK-DAG: memref.dealloc %[[MAX]] : memref<1xf32>
// CHECK: return
func.func @row_temporaries(%x: memref<6x8xf32>, %bias: memref<1x8xf32>, %out: memref<6x8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  scf.forall (%i) in (6) {
    %row = memref.alloc() {alignment = 64 : i64} : memref<1x8xf32>
    %xs = memref.subview %x[%i, 0] [1, 8] [1, 1] : memref<6x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    linalg.add ins(%xs, %bias : memref<1x8xf32, strided<[8, 1], offset: ?>>, memref<1x8xf32>) outs(%row : memref<1x8xf32>)
    %max = memref.alloc() {alignment = 64 : i64} : memref<1xf32>
    linalg.fill ins(%ninf : f32) outs(%max : memref<1xf32>)
    linalg.reduce ins(%row : memref<1x8xf32>) outs(%max : memref<1xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %m = arith.maximumf %in, %acc : f32
        linalg.yield %m : f32
      }
    %kept = memref.alloc() : memref<8xf32>
    %os = memref.subview %out[%i, 0] [1, 8] [1, 1] : memref<6x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    memref.copy %row, %os : memref<1x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    memref.dealloc %row : memref<1x8xf32>
    memref.dealloc %max : memref<1xf32>
  }
  return
}
