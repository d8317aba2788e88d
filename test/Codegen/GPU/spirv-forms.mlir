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
