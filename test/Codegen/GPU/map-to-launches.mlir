// RUN: loom-opt %s --loom-gpu-map-to-launches="block-size=64" --split-input-file --verify-diagnostics | FileCheck %s

// One thread per iteration of a 2-D loop nest: 5 x 29 = 145 iterations in 3
// blocks of 64, the last one guarded; the indices delinearised (the last
// dimension fastest); the constants the body uses cloned into the launch.
// CHECK-LABEL: func.func @nest
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c64{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: %[[CST:.*]] = arith.constant 2.0
// CHECK: arith.cmpi ult, %{{.*}}, %c145
// CHECK: scf.if
// CHECK: arith.remui %{{.*}}, %c29
// CHECK: arith.divui %{{.*}}, %c29
// CHECK: arith.remui %{{.*}}, %c5
// CHECK: arith.mulf %{{.*}}, %[[CST]]
// CHECK-NOT: scf.parallel
func.func @nest(%a: memref<5x29xf32>, %b: memref<5x29xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c29 = arith.constant 29 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c5, %c29) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<5x29xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %b[%i, %j] : memref<5x29xf32>
    scf.reduce
  }
  return
}

// -----

// A multiple of the block: no guard. A run of loads, stores and the pure
// ops between them (what canonicalisation leaves of a one-iteration loop)
// is one launch of one thread.
// CHECK-LABEL: func.func @serial
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}) threads({{.*}}) in ({{.*}} = %c64
// CHECK-NOT: scf.if
// CHECK: gpu.terminator
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @serial(%a: memref<128xf32>, %s: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i) = (%c0) to (%c128) step (%c1) {
    %v = memref.load %a[%i] : memref<128xf32>
    memref.store %v, %a[%i] : memref<128xf32>
    scf.reduce
  }
  %x = memref.load %a[%c0] : memref<128xf32>
  %y = arith.addf %x, %x : f32
  memref.store %y, %s[%c0] : memref<1xf32>
  return
}

// -----

func.func @dynamic(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{has a bound that is not a constant}}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.reduce
  }
  return
}

// -----

func.func @scalar(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %x = memref.load %a[%c0] : memref<8xf32>
  // expected-error @+1 {{uses a value a sequential loop computes}}
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %x, %a[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// A load from a parameter the function never writes (a top-k's run-time K)
// is repeated in each launch that uses its value: here the serial launch
// before the parallel loop and the one after it, each with its own load.
// CHECK-LABEL: func.func @invariant_load
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}}[] : memref<i64>
// CHECK: memref.store
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-NOT: memref<i64>
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}}[] : memref<i64>
// CHECK: gpu.terminator
func.func @invariant_load(%k: memref<i64>, %a: memref<8xi64>, %n: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0 : i64
  %kv = memref.load %k[] : memref<i64>
  %ki = arith.index_cast %kv : i64 to index
  %m = arith.minsi %ki, %c8 : index
  memref.store %zero, %a[%m] : memref<8xi64>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %a[%i] : memref<8xi64>
    scf.reduce
  }
  %count = arith.index_cast %m : index to i64
  memref.store %count, %n[] : memref<i64>
  return
}

// -----

// A parallel loop inside a mapped loop's body (what a reduction over dims
// that are not adjacent leaves) runs sequentially in its thread.
// CHECK-LABEL: func.func @nested_parallel
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK: gpu.terminator
func.func @nested_parallel(%a: memref<4x3x5xf32>, %b: memref<4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %r = %c0 to %c3 step %c1 {
      scf.parallel (%j) = (%c0) to (%c5) step (%c1) {
        %v = memref.load %a[%i, %r, %j] : memref<4x3x5xf32>
        %s = memref.load %b[%i, %j] : memref<4x5xf32>
        %t = arith.addf %s, %v : f32
        memref.store %t, %b[%i, %j] : memref<4x5xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}
