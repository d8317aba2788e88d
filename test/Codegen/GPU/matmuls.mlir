// RUN: loom-opt %s --loom-gpu-map-matmuls --split-input-file | FileCheck %s
// RUN: loom-opt %s --loom-gpu-map-matmuls="min-depth=4" --split-input-file | FileCheck %s --check-prefix=SHALLOW
// RUN: loom-opt %s --loom-gpu-map-matmuls="large-tile-blocks=0" --split-input-file | FileCheck %s --check-prefix=LARGE

// With 64 x 64 tiles (large-tile-blocks=0): one workgroup for the 37 x 45
// output, a 64 x 16 tile of A and a 16 x 64 tile of B, and per step of k
// each thread reads 8 elements of A and 4 of B for 32 multiply-adds.
// LARGE-LABEL: func.func @matmul
// LARGE: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// LARGE: %[[A:.*]] = memref.alloc() : memref<64x16xf32, #gpu.address_space<workgroup>>
// LARGE: %[[B:.*]] = memref.alloc() : memref<16x64xf32, #gpu.address_space<workgroup>>
// LARGE: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1{{.*}} iter_args
// LARGE-COUNT-8: memref.load %[[A]]
// LARGE-COUNT-4: memref.load %[[B]]
// LARGE-COUNT-32: arith.mulf
// LARGE: gpu.barrier

// A matrix product of 37 x 131 by 131 x 45: one workgroup of 128 threads
// per 16 x 16 output tile (3 x 3 tiles), 16 x 16 tiles of A and B in
// workgroup memory, 9 steps of 16 along k, each staging both tiles (loads
// guarded at the matrix's edges, zeros past them), a barrier, 16
// multiply-adds into two sums per thread, a barrier; then each thread adds
// its sums to the output, guarded at the edges.
// CHECK-LABEL: func.func @matmul
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c9{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: %[[A:.*]] = memref.alloc() : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK: %[[B:.*]] = memref.alloc() : memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c131{{.*}} step %c16{{.*}} iter_args
// CHECK: arith.cmpi ult, %{{.*}}, %c37
// CHECK: scf.if
// CHECK: memref.load %{{.*}} : memref<37x131xf32>
// CHECK: } else {
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.load %{{.*}} : memref<131x45xf32>
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1{{.*}} iter_args
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[B]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %{{.*}}, %c45
// CHECK: scf.if
// CHECK: memref.load %{{.*}} : memref<37x45xf32>
// CHECK: arith.addf
// CHECK: memref.store %{{.*}} : memref<37x45xf32>
// CHECK-NOT: linalg.generic
func.func @matmul(%a: memref<37x131xf32>, %b: memref<131x45xf32>, %c: memref<37x45xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<37x131xf32>, memref<131x45xf32>) outs(%c : memref<37x45xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A batch of 3 products with B transposed in memory (indexed [n][k]) and
// the operands in the other order: 3 x 2 x 1 tiles.
// CHECK-LABEL: func.func @batch_transposed
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: gpu.barrier
func.func @batch_transposed(%bt: memref<3x9x20xf32>, %a: memref<3x17x20xf32>, %c: memref<3x17x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%bt, %a : memref<3x9x20xf32>, memref<3x17x20xf32>) outs(%c : memref<3x17x9xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %y, %x : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not matrix products of this class: a payload that is not exactly
// out + a * b (a bias inside), an input indexed by both m and n, and a
// product 8 deep (shallower than min-depth 16; with min-depth=4, tiled: 5
// rows, one more than the row form takes).
// CHECK-LABEL: func.func @biased
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @biased(%a: memref<4x32xf32>, %b: memref<32x4xf32>, %c: memref<4x4xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x32xf32>, memref<32x4xf32>) outs(%c : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %p, %one : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @both
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
func.func @both(%a: memref<4x4x32xf32>, %b: memref<32x4xf32>, %c: memref<4x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x4x32xf32>, memref<32x4xf32>) outs(%c : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @shallow
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// SHALLOW-LABEL: func.func @shallow
// SHALLOW: gpu.launch
// SHALLOW: scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step %c16
func.func @shallow(%a: memref<5x8xf32>, %b: memref<8x4xf32>, %c: memref<5x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<5x8xf32>, memref<8x4xf32>) outs(%c : memref<5x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The row form: a product of at most 4 rows (a decoder's step) is a
// workgroup of 128 threads per row and 8 adjacent columns, 8 columns x 16
// slices of k: each thread sums its column over k = slice, slice + 16, ...,
// the 16 partials meet in workgroup memory (16 x 8) behind one barrier, and
// slice 0 adds them in slice order to the output. 100 columns: 13
// workgroups a row, 2 rows: 26.
// CHECK-LABEL: func.func @rows
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c26{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: memref.alloc() : memref<16x8xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SLICE:.*]] = arith.divui %{{.*}}, %c8
// CHECK: scf.for %{{.*}} = %[[SLICE]] to %c768{{.*}} step %c16
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
func.func @rows(%a: memref<2x768xf32>, %b: memref<768x100xf32>, %c: memref<2x100xf32>) {
  linalg.matmul ins(%a, %b : memref<2x768xf32>, memref<768x100xf32>) outs(%c : memref<2x100xf32>)
  return
}
