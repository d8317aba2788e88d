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
