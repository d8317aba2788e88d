// RUN: loom-opt %s --pass-pipeline="builtin.module(gpu.module(loom-gpu-spirv-forms))" --split-input-file --verify-diagnostics | FileCheck %s

// The canonical forms rewritten for SPIR-V: the workgroup alloc in the
// Workgroup storage class (convert-gpu-to-spirv makes it a Workgroup
// variable), every subgroup reduction non-uniform, and a maximumf reduction
// as maxnumf with NaN propagated by a second reduction (whether any lane
// holds a NaN).
// CHECK-LABEL: gpu.func @row
// CHECK: %[[SHARED:.*]] = memref.alloc() : memref<128xf32, #spirv.storage_class<Workgroup>>
// CHECK: gpu.subgroup_reduce add %{{.*}} : (f32) -> f32
// CHECK: %[[NUM:.*]] = gpu.subgroup_reduce maxnumf %[[V:.*]] : (f32) -> f32
// CHECK: %[[ISNAN:.*]] = arith.cmpf uno, %[[V]], %[[V]]
// CHECK: %[[FLAG:.*]] = arith.select %[[ISNAN]]
// CHECK: %[[ANY:.*]] = gpu.subgroup_reduce maxnumf %[[FLAG]] : (f32) -> f32
// CHECK: %[[SEEN:.*]] = arith.cmpf ogt, %[[ANY]]
// CHECK: arith.select %[[SEEN]], %cst{{.*}}, %[[NUM]]
// CHECK-NOT: uniform
// CHECK: memref.store %{{.*}}, %[[SHARED]]
gpu.module @kernels {
  gpu.func @row(%x: memref<128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %shared = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<128xf32>
    %s = gpu.subgroup_reduce add %v uniform : (f32) -> f32
    %m = gpu.subgroup_reduce maximumf %s uniform : (f32) -> f32
    memref.store %m, %shared[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @global(%x: memref<128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    // expected-error @+1 {{allocates memory a Vulkan kernel cannot have: only statically shaped workgroup memory}}
    %m = memref.alloc() : memref<128xf32>
    gpu.return
  }
}

// -----

// A constant table a kernel reads (a nearest-neighbour resize's source
// indices): an array in the Function storage class that each thread fills
// with the table's values at its entry, read by the same loads; the global
// is gone (SPIR-V lowers no memref.get_global).
// CHECK-LABEL: gpu.module @kernels
// CHECK-NOT: memref.global
// CHECK-LABEL: gpu.func @table
// CHECK: %[[T:.*]] = memref.alloca() : memref<2x3xi32, #spirv.storage_class<Function>>
// CHECK: %[[C5:.*]] = arith.constant 5 : i32
// CHECK-NEXT: memref.store %[[C5]], %[[T]][%c1{{.*}}, %c2{{.*}}]
// CHECK-NOT: memref.get_global
// CHECK: memref.load %[[T]]
gpu.module @kernels {
  memref.global "private" constant @indices : memref<2x3xi32> = dense<[[0, 1, 2], [3, 4, 5]]>
  gpu.func @table(%x: memref<6xi32>) kernel attributes {known_block_size = array<i32: 6, 1, 1>} {
    %t = memref.get_global @indices : memref<2x3xi32>
    %tid = gpu.thread_id x
    %c3 = arith.constant 3 : index
    %r = arith.divui %tid, %c3 : index
    %c = arith.remui %tid, %c3 : index
    %v = memref.load %t[%r, %c] : memref<2x3xi32>
    memref.store %v, %x[%tid] : memref<6xi32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  memref.global "private" @weights : memref<4xf32> = dense<1.0>
  gpu.func @mutable(%x: memref<4xf32>) kernel attributes {known_block_size = array<i32: 4, 1, 1>} {
    // expected-error @+1 {{reads a global a Vulkan kernel cannot hold: only constant tables of at most 4096 elements}}
    %t = memref.get_global @weights : memref<4xf32>
    gpu.return
  }
}

// -----

// A loop with results whose trip count is not a positive constant (a
// thread's share of a row, from its id) inside `scf.if (lower < upper)`
// that yields the initial value otherwise (scf-to-spirv leaves a loop's
// results undefined after no iteration); a loop of a constant positive trip
// count, and one without results, stay as they are.
// CHECK-LABEL: gpu.func @trips
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[ANY:.*]] = arith.cmpi slt, %[[TID]], %[[N:.*]] : index
// CHECK: %[[R:.*]] = scf.if %[[ANY]] -> (f32) {
// CHECK:   %[[L:.*]] = scf.for %{{.*}} = %[[TID]] to %[[N]] step %{{.*}} iter_args(%{{.*}} = %[[INIT:.*]]) -> (f32)
// CHECK:   scf.yield %[[L]] : f32
// CHECK: } else {
// CHECK:   scf.yield %[[INIT]] : f32
// CHECK: }
// CHECK-NOT: scf.if
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args
// CHECK-NOT: scf.if
// CHECK: scf.for %{{.*}} = %[[TID]] to %[[N]] step
// CHECK-NOT: scf.if
// CHECK: gpu.return
gpu.module @kernels {
  gpu.func @trips(%x: memref<33xf32>, %y: memref<3xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c33 = arith.constant 33 : index
    %c64 = arith.constant 64 : index
    %init = arith.constant 0xFF800000 : f32
    %tid = gpu.thread_id x
    %m = scf.for %i = %tid to %c33 step %c64 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %x[%i] : memref<33xf32>
      %n = arith.maxnumf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %m, %y[%c0] : memref<3xf32>
    %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %x[%i] : memref<33xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %y[%c1] : memref<3xf32>
    scf.for %i = %tid to %c33 step %c64 {
      memref.store %init, %x[%i] : memref<33xf32>
    }
    gpu.return
  }
}
