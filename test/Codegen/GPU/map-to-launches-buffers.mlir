// RUN: loom-opt %s --loom-gpu-map-to-launches="max-buffers=3" --split-input-file | FileCheck %s

// A run of one thread's stores (a concatenation of scalars, what
// canonicalisation leaves of its one-element copies) is cut into launches
// of at most 3 buffers: its ops use nothing the run computed, so each cut
// is free (the loads of parameters never written are cloned into the
// launch that uses them). Without the cut: one launch of 6 buffers.
// CHECK-LABEL: func.func @concat
// CHECK: gpu.launch
// CHECK-DAG: memref.load %arg0
// CHECK-DAG: memref.load %arg1
// CHECK-NOT: %arg2
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-DAG: memref.load %arg2
// CHECK-DAG: memref.load %arg3
// CHECK-NOT: %arg4
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.load %arg4
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @concat(%a0: memref<1xi64>, %a1: memref<1xi64>, %a2: memref<1xi64>,
                  %a3: memref<1xi64>, %a4: memref<1xi64>,
                  %out: memref<5xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %v0 = memref.load %a0[%c0] : memref<1xi64>
  memref.store %v0, %out[%c0] : memref<5xi64>
  %v1 = memref.load %a1[%c0] : memref<1xi64>
  memref.store %v1, %out[%c1] : memref<5xi64>
  %v2 = memref.load %a2[%c0] : memref<1xi64>
  memref.store %v2, %out[%c2] : memref<5xi64>
  %v3 = memref.load %a3[%c0] : memref<1xi64>
  memref.store %v3, %out[%c3] : memref<5xi64>
  %v4 = memref.load %a4[%c0] : memref<1xi64>
  memref.store %v4, %out[%c4] : memref<5xi64>
  return
}

// -----

// A run whose later ops use a value it loaded is not cut, past the limit
// or not: the value lives in the one thread's registers.
// CHECK-LABEL: func.func @uses
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
func.func @uses(%t: memref<1xi64>, %o0: memref<1xi64>, %o1: memref<1xi64>,
                %o2: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : i64
  memref.store %c7, %t[%c0] : memref<1xi64>
  %r = memref.load %t[%c0] : memref<1xi64>
  memref.store %r, %o0[%c0] : memref<1xi64>
  memref.store %r, %o1[%c0] : memref<1xi64>
  memref.store %r, %o2[%c0] : memref<1xi64>
  return
}
