// RUN: loom-opt %s --loom-strided-copies-to-linalg | FileCheck %s

// A copy out of a strided view becomes a linalg.copy (loops with the
// kernel, no call of MLIR's runner library); so does one into a view.
// CHECK-LABEL: func.func @from_view(
// CHECK-SAME: %[[SRC:.*]]: memref<8x16xf32>, %[[DST:.*]]: memref<4x5xf32>)
// CHECK: %[[VIEW:.*]] = memref.subview %[[SRC]]
// CHECK: linalg.copy ins(%[[VIEW]] : memref<4x5xf32, strided<[16, 1], offset: 18>>) outs(%[[DST]] : memref<4x5xf32>)
// CHECK-NOT: memref.copy
func.func @from_view(%src: memref<8x16xf32>, %dst: memref<4x5xf32>) {
  %v = memref.subview %src[1, 2] [4, 5] [1, 1] : memref<8x16xf32> to memref<4x5xf32, strided<[16, 1], offset: 18>>
  memref.copy %v, %dst : memref<4x5xf32, strided<[16, 1], offset: 18>> to memref<4x5xf32>
  return
}

// CHECK-LABEL: func.func @into_view(
// CHECK: linalg.copy
// CHECK-NOT: memref.copy
func.func @into_view(%src: memref<4x5xf32>, %dst: memref<8x16xf32>) {
  %v = memref.subview %dst[1, 2] [4, 5] [1, 1] : memref<8x16xf32> to memref<4x5xf32, strided<[16, 1], offset: 18>>
  memref.copy %src, %v : memref<4x5xf32> to memref<4x5xf32, strided<[16, 1], offset: 18>>
  return
}

// Between contiguous buffers it stays a memref.copy (an llvm.memcpy).
// CHECK-LABEL: func.func @contiguous(
// CHECK: memref.copy
// CHECK-NOT: linalg.copy
func.func @contiguous(%src: memref<4x5xf32>, %dst: memref<4x5xf32>) {
  memref.copy %src, %dst : memref<4x5xf32> to memref<4x5xf32>
  return
}
