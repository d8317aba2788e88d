// RUN: loom-opt %s --loom-gpu-map-row-reductions --split-input-file --verify-diagnostics | FileCheck %s
// RUN: loom-opt %s --loom-gpu-map-row-reductions="min-length=1" --split-input-file | FileCheck %s --check-prefix=SHORT
// RUN: loom-opt %s --loom-gpu-map-row-reductions="block-size=100" --split-input-file | FileCheck %s --check-prefix=BLOCK100

// A row maximum (a softmax's first step): 7 rows of 131, one workgroup per
// row of 128 threads (131 rounded up to a power of 2, at most block-size),
// each folding its part of the row from the identity (-inf), a subgroup
// reduction, lane 0 of each subgroup storing into workgroup memory (one
// element per thread: any subgroup width fits), a barrier, every subgroup
// folding the num_subgroups values strided by the subgroup size, and
// thread 0 combining with the output. No guard: 7 blocks are 7 rows.
// With block-size=100: 64 threads (a power of 2, whole warps).
// BLOCK100-LABEL: func.func @row_max
// BLOCK100: threads({{.*}}) in ({{.*}} = %c64{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK-LABEL: func.func @row_max
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c7{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: %[[SHARED:.*]] = memref.alloc() : memref<128xf32, #gpu.address_space<workgroup>>
// CHECK: arith.minui %{{.*}}, %c6
// CHECK: %[[PART:.*]] = scf.for %{{.*}} = %{{.*}} to %c131{{.*}} step %c128{{.*}} iter_args(%{{.*}} = %cst{{.*}}) -> (f32)
// CHECK: memref.load
// CHECK: arith.maximumf
// CHECK: %[[SG:.*]] = gpu.subgroup_reduce maximumf %[[PART]] : (f32) -> f32
// CHECK: %[[LANE:.*]] = gpu.lane_id
// CHECK: %[[ID:.*]] = gpu.subgroup_id : index
// CHECK: scf.if
// CHECK: memref.store %[[SG]], %[[SHARED]][%[[ID]]]
// CHECK: gpu.barrier
// CHECK: %[[N:.*]] = gpu.num_subgroups : index
// CHECK: %[[W:.*]] = gpu.subgroup_size : index
// CHECK: %[[ALL:.*]] = scf.for %{{.*}} = %[[LANE]] to %[[N]] step %[[W]]
// CHECK: %[[ROW:.*]] = gpu.subgroup_reduce maximumf %[[ALL]] : (f32) -> f32
// CHECK-NOT: arith.andi
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = memref.load %{{.*}} : memref<7xf32>
// CHECK: %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[ROW]]
// CHECK: memref.store %[[NEW]]
// CHECK-NOT: linalg.generic
func.func @row_max(%x: memref<7x131xf32>, %out: memref<7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<7x131xf32>) outs(%out : memref<7xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A layer norm's variance: the payload before the combiner (a broadcast
// mean, a square) computed per element; 70000 rows in a grid of 65535 x 2
// whose last column is guarded at the store only (every thread reaches the
// barrier); two trailing reduction loops linearised (2 x 40 = 80 per row:
// 128 threads).
// CHECK-LABEL: func.func @variance
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c65535{{.*}}, {{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}},
// CHECK: scf.for %{{.*}} = %{{.*}} to %c80{{.*}} step %c128
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.barrier
// CHECK: gpu.subgroup_reduce add
// CHECK: arith.cmpi ult, %{{.*}}, %c70000
// CHECK: arith.andi
func.func @variance(%x: memref<70000x2x40xf32>, %mean: memref<70000xf32>, %out: memref<70000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %mean : memref<70000x2x40xf32>, memref<70000xf32>) outs(%out : memref<70000xf32>) {
  ^bb0(%in: f32, %m: f32, %acc: f32):
    %d = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not row reductions, left to the generic class: a matrix product (the
// reduction loop is not the innermost index of %b: a row is not
// contiguous), a payload that uses the output other than in the combiner,
// a combiner the class does not take (subf), an i32 output, and rows of 8
// (shorter than min-length 32; with min-length=1, a workgroup of 32).
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @matmul(%a: memref<8x64xf32>, %b: memref<64x16xf32>, %c: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x64xf32>, memref<64x16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @output_twice
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @output_twice(%x: memref<4x64xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %p = arith.mulf %acc, %in : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @subtract
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @subtract(%x: memref<4x64xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.subf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @integer
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @integer(%x: memref<4x64xi32>, %out: memref<4xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xi32>) outs(%out : memref<4xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %s = arith.addi %acc, %in : i32
    linalg.yield %s : i32
  }
  return
}

// CHECK-LABEL: func.func @short
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// SHORT-LABEL: func.func @short
// SHORT: gpu.launch blocks({{.*}}) in ({{.*}} = %c4{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c32{{.*}},
// SHORT: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step %c32
func.func @short(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows read with strides (a 1 x 64 mask broadcast along the row of 64 x 4)
// where the generic class would be worse: a single row (Mask R-CNN's
// largest box coordinate: one workgroup, not one thread) and rows past
// 60,000 elements (2 rows of 70,000 x 1, the mask a column); 4 rows of 64
// x 4 are left to the generic class (a thread per row).
// CHECK-LABEL: func.func @one_row
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128
// CHECK-NOT: linalg.generic
func.func @one_row(%x: memref<64x4xf32>, %m: memref<64x1xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x, %m : memref<64x4xf32>, memref<64x1xf32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %mask: f32, %acc: f32):
    %p = arith.mulf %in, %mask : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @long_rows
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128
// CHECK-NOT: linalg.generic
func.func @long_rows(%x: memref<2x70000x1xf32>, %m: memref<70000x1xf32>, %out: memref<2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %m : memref<2x70000x1xf32>, memref<70000x1xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%in: f32, %mask: f32, %acc: f32):
    %p = arith.mulf %in, %mask : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @short_rows(%x: memref<4x64x4xf32>, %m: memref<64x1xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %m : memref<4x64x4xf32>, memref<64x1xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %mask: f32, %acc: f32):
    %p = arith.mulf %in, %mask : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
