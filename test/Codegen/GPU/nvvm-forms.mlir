// RUN: loom-opt %s --pass-pipeline="builtin.module(gpu.module(loom-gpu-nvvm-forms))" --split-input-file --verify-diagnostics | FileCheck %s

// The canonical forms of a row-reduction kernel rewritten for NVVM: the
// workgroup alloc a workgroup attribution (NVVM would call malloc for it),
// the subgroup queries in terms of 32-lane warps of the known block size
// (128 threads: 4 warps), the subgroup reduction a butterfly of xor
// shuffles over 32 lanes (offsets 1 to 16).
// CHECK-LABEL: gpu.func @row
// CHECK-SAME: workgroup(%[[SHARED:.*]] : memref<128xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.alloc
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: arith.divui %{{.*}}, %c32
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32, %c32_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c16_i32, %c32_i32
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: memref.store %{{.*}}, %[[SHARED]]
// CHECK: memref.store %c4, %{{.*}}
// CHECK: memref.store %c32, %{{.*}}
gpu.module @kernels {
  gpu.func @row(%x: memref<128xf32>, %n: memref<2xindex>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %shared = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<128xf32>
    %id = gpu.subgroup_id : index
    %r = gpu.subgroup_reduce add %v : (f32) -> f32
    memref.store %r, %shared[%id] : memref<128xf32, #gpu.address_space<workgroup>>
    %count = gpu.num_subgroups : index
    %width = gpu.subgroup_size : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    memref.store %count, %n[%c0] : memref<2xindex>
    memref.store %width, %n[%c1] : memref<2xindex>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @global(%x: memref<128xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    // expected-error @+1 {{allocates memory a CUDA kernel cannot have (NVVM would call malloc)}}
    %m = memref.alloc() : memref<128xf32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{reduces over subgroups with 24 threads, not a multiple of a warp (32)}}
  gpu.func @partial_warp(%x: memref<24xf32>) kernel attributes {known_block_size = array<i32: 24, 1, 1>} {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<24xf32>
    %r = gpu.subgroup_reduce add %v : (f32) -> f32
    memref.store %r, %x[%tid] : memref<24xf32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{uses subgroups but has no known block size}}
  gpu.func @unknown(%x: memref<24xf32>) kernel {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<24xf32>
    %r = gpu.subgroup_reduce add %v : (f32) -> f32
    memref.store %r, %x[%tid] : memref<24xf32>
    gpu.return
  }
}
