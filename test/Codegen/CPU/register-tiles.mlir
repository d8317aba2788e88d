// RUN: loom-opt %s --loom-register-tiles --canonicalize --cse | FileCheck %s
// RUN: loom-opt %s --loom-register-tiles="rows=6 columns=16" --canonicalize --cse | FileCheck %s --check-prefix=AVX2
// RUN: not loom-opt %s --loom-register-tiles="columns=12" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not loom-opt %s --loom-register-tiles="rows=0" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: --loom-register-tiles: rows must be at least 1 and columns a positive multiple of 8 (got rows={{[0-9]+}} columns={{[0-9]+}})

#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#rhsT = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>

// 64 rows share the right-hand side: it is copied into [n/32][k][32] order
// first, and each 8x32 tile accumulates in registers over k.
// CHECK-LABEL: func.func @packed
// CHECK: %[[EXP:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [16, 2, 32]
// CHECK: %[[PACKED:.*]] = linalg.transpose ins(%[[EXP]] : tensor<16x2x32xf32>) outs(%{{.*}} : tensor<2x16x32xf32>) permutation = [1, 0, 2]
// CHECK: scf.for {{.*}} step %c8
// CHECK: scf.for
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} vector<8x1x32xf32>
// CHECK: scf.for {{.*}} iter_args(%[[A:.*]] = %[[ACC]]) -> (vector<8x1x32xf32>)
// CHECK: vector.transfer_read %arg0{{.*}} vector<8x1xf32>
// CHECK: vector.transfer_read %[[PACKED]]{{.*}} vector<1x1x32xf32>
// CHECK: vector.contract {{.*}} into vector<8x1x32xf32>
// CHECK: vector.transfer_write
// CHECK: tensor.collapse_shape
// AVX2-LABEL: func.func @packed
// AVX2: linalg.transpose {{.*}} outs(%{{.*}} : tensor<4x16x16xf32>)
// AVX2: vector.contract {{.*}} vector<4x1xf32>, vector<1x1x16xf32> into vector<4x1x16xf32>
func.func @packed(%a: tensor<64x16xf32>, %b: tensor<16x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x16xf32>, tensor<16x64xf32>) outs(%c : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// Few rows: no copy; 4 rows (the largest power of two dividing 12 up to 8)
// by 16 columns (half the tile, as 48 is no multiple of 32).
// CHECK-LABEL: func.func @small
// CHECK-NOT: linalg.transpose
// CHECK: vector.contract {{.*}} vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @small(%a: tensor<12x40xf32>, %b: tensor<40x48xf32>, %c: tensor<12x48xf32>) -> tensor<12x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<12x40xf32>, tensor<40x48xf32>) outs(%c : tensor<12x48xf32>) -> tensor<12x48xf32>
  return %r : tensor<12x48xf32>
}

// One row (a matrix-vector product, as a recurrent step with batch 1 has):
// the 7 rows the tile does not use become columns, 1x256 (16 accumulator
// vectors; 1x32 would keep 2 multiply-add chains waiting on each other).
// With 4 rows, 4x64. AVX2 (6x16): 1x64, the largest power of two up to
// 6x16 that divides 512; 4x16, as 6x16 / 4 rows is 24 columns.
// CHECK-LABEL: func.func @few_rows
// CHECK: vector.contract {{.*}} vector<1x1xf32>, vector<1x256xf32> into vector<1x256xf32>
// CHECK: vector.contract {{.*}} vector<4x1xf32>, vector<1x64xf32> into vector<4x64xf32>
// AVX2-LABEL: func.func @few_rows
// AVX2: vector.contract {{.*}} vector<1x1xf32>, vector<1x64xf32> into vector<1x64xf32>
// AVX2: vector.contract {{.*}} vector<4x1xf32>, vector<1x16xf32> into vector<4x16xf32>
func.func @few_rows(%a: tensor<1x64xf32>, %b: tensor<64x512xf32>, %c: tensor<1x512xf32>,
                    %d: tensor<4x64xf32>, %e: tensor<64x128xf32>, %f: tensor<4x128xf32>) -> (tensor<1x512xf32>, tensor<4x128xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<1x64xf32>, tensor<64x512xf32>) outs(%c : tensor<1x512xf32>) -> tensor<1x512xf32>
  %s = linalg.matmul ins(%d, %e : tensor<4x64xf32>, tensor<64x128xf32>) outs(%f : tensor<4x128xf32>) -> tensor<4x128xf32>
  return %r, %s : tensor<1x512xf32>, tensor<4x128xf32>
}

// Wide tiles are powers of two: a row of 800 (an LSTM step's four gates of
// hidden size 200) is not cut into 1x160 tiles (one 160-float vector, which
// LLVM widens to 256 and assembles element by element) but into 1x32.
// CHECK-LABEL: func.func @few_rows_not_power_of_two
// CHECK: vector.contract {{.*}} vector<1x1xf32>, vector<1x32xf32> into vector<1x32xf32>
// AVX2-LABEL: func.func @few_rows_not_power_of_two
// AVX2: vector.contract {{.*}} vector<1x1xf32>, vector<1x32xf32> into vector<1x32xf32>
func.func @few_rows_not_power_of_two(%a: tensor<1x40xf32>, %b: tensor<40x800xf32>, %c: tensor<1x800xf32>) -> tensor<1x800xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<1x40xf32>, tensor<40x800xf32>) outs(%c : tensor<1x800xf32>) -> tensor<1x800xf32>
  return %r : tensor<1x800xf32>
}

// A recurrent step's row of 800 (an LSTM's four gates, hidden size 200)
// over packed weights: the 1x32 tiles (800 is no multiple of a wider
// power of two) are taken five at a time, [5][32] (ten accumulator
// vectors, up to the 8x32 a full tile holds). Each tile row stays one
// 32-float vector. AVX2 (6x16): 1x32 tiles, of which three would fit in
// 6x16 but none of 2 and 3 divides the 25: one at a time.
// CHECK-LABEL: func.func @column_tiles_at_once
// CHECK: scf.for %{{.*}} = %c0 to %c25 step %c5
// CHECK: vector.contract {{.*}} vector<1x1xf32>, vector<5x1x32xf32> into vector<1x5x32xf32>
// AVX2-LABEL: func.func @column_tiles_at_once
// AVX2: vector.contract {{.*}} vector<1x1xf32>, vector<1x1x32xf32> into vector<1x1x32xf32>
func.func @column_tiles_at_once(%h0: tensor<1x200xf32>, %w: tensor<200x800xf32>, %c: tensor<1x800xf32>) -> tensor<1x200xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %r = scf.for %i = %c0 to %c32 step %c1 iter_args(%h = %h0) -> (tensor<1x200xf32>) {
    %p = linalg.matmul ins(%h, %w : tensor<1x200xf32>, tensor<200x800xf32>) outs(%c : tensor<1x800xf32>) -> tensor<1x800xf32>
    %n = tensor.extract_slice %p[0, 0] [1, 200] [1, 1] : tensor<1x800xf32> to tensor<1x200xf32>
    scf.yield %n : tensor<1x200xf32>
  }
  return %r : tensor<1x200xf32>
}

// Inside a loop of 32 steps (a recurrence's), 4 rows read the same
// right-hand side at every step: 128 rows share it, so it is copied into
// tile order once, outside the loop. In a loop of 2 steps, 8 rows: no copy.
// CHECK-LABEL: func.func @shared_by_steps
// CHECK: linalg.transpose {{.*}} outs(%{{.*}} : tensor<2x64x64xf32>)
// CHECK: scf.for
// CHECK-NOT: linalg.transpose
// CHECK: vector.contract {{.*}} vector<4x1xf32>, vector<1x1x64xf32> into vector<4x1x64xf32>
// CHECK-LABEL: func.func @few_steps
// CHECK-NOT: linalg.transpose
// CHECK: vector.contract {{.*}} vector<4x1xf32>, vector<1x64xf32> into vector<4x64xf32>
func.func @shared_by_steps(%h0: tensor<4x64xf32>, %w: tensor<64x128xf32>, %c: tensor<4x128xf32>) -> tensor<4x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %r = scf.for %i = %c0 to %c32 step %c1 iter_args(%h = %h0) -> (tensor<4x64xf32>) {
    %p = linalg.matmul ins(%h, %w : tensor<4x64xf32>, tensor<64x128xf32>) outs(%c : tensor<4x128xf32>) -> tensor<4x128xf32>
    %n = tensor.extract_slice %p[0, 0] [4, 64] [1, 1] : tensor<4x128xf32> to tensor<4x64xf32>
    scf.yield %n : tensor<4x64xf32>
  }
  return %r : tensor<4x64xf32>
}
func.func @few_steps(%h0: tensor<4x64xf32>, %w: tensor<64x128xf32>, %c: tensor<4x128xf32>) -> tensor<4x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%h = %h0) -> (tensor<4x64xf32>) {
    %p = linalg.matmul ins(%h, %w : tensor<4x64xf32>, tensor<64x128xf32>) outs(%c : tensor<4x128xf32>) -> tensor<4x128xf32>
    %n = tensor.extract_slice %p[0, 0] [4, 64] [1, 1] : tensor<4x128xf32> to tensor<4x64xf32>
    scf.yield %n : tensor<4x64xf32>
  }
  return %r : tensor<4x64xf32>
}

// A batched matmul: the batch loop steps by 1.
// CHECK-LABEL: func.func @batched
// CHECK: vector.contract {{.*}} vector<1x8x1xf32>, vector<1x1x32xf32> into vector<1x8x32xf32>
func.func @batched(%a: tensor<3x8x5xf32>, %b: tensor<3x5x32xf32>, %c: tensor<3x8x32xf32>) -> tensor<3x8x32xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x8x5xf32>, tensor<3x5x32xf32>) outs(%c : tensor<3x8x32xf32>) -> tensor<3x8x32xf32>
  return %r : tensor<3x8x32xf32>
}

// A row of the tile would be a strided gather of B: left alone.
// CHECK-LABEL: func.func @rhs_transposed
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: return
func.func @rhs_transposed(%a: tensor<64x16xf32>, %b: tensor<64x16xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.generic {indexing_maps = [#lhs, #rhsT, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x16xf32>, tensor<64x16xf32>) outs(%c : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// 13 columns fit no tile; dynamic shapes are not tiled either.
// CHECK-LABEL: func.func @untileable
// CHECK-NOT: vector.
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK-NOT: vector.
// CHECK: return
func.func @untileable(%a: tensor<7x5xf32>, %b: tensor<5x13xf32>, %c: tensor<7x13xf32>,
                      %d: tensor<?x8xf32>, %e: tensor<8x32xf32>, %f: tensor<?x32xf32>) -> (tensor<7x13xf32>, tensor<?x32xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<7x5xf32>, tensor<5x13xf32>) outs(%c : tensor<7x13xf32>) -> tensor<7x13xf32>
  %s = linalg.matmul ins(%d, %e : tensor<?x8xf32>, tensor<8x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %r, %s : tensor<7x13xf32>, tensor<?x32xf32>
}
