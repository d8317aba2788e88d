// RUN: loom-opt %s --loom-vectorize-rows="lanes=16" | FileCheck %s
// RUN: loom-opt %s --loom-vectorize-rows="lanes=8" | FileCheck %s --check-prefix=AVX2

#row = affine_map<(d0, d1) -> (d0, d1)>
#kept = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1, d0)>

// A row max over 49 columns: its three full vectors each into an
// accumulator of its own (a loop over groups of them, so that no combine
// waits on the one before), the 49th column a masked load into the first
// whose other lanes keep theirs, the accumulators folded pairwise, then the
// lanes, and the result folded into the output element.
// CHECK-LABEL: func.func @row_max
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %c147 step %c1
// CHECK: %[[NEG:.*]] = vector.broadcast %cst{{.*}} : f32 to vector<16xf32>
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c48 step %c48{{.*}} iter_args(%[[A0:.*]] = %[[NEG]], %[[A1:.*]] = %[[NEG]], %[[A2:.*]] = %[[NEG]])
// CHECK:   vector.load %arg0[%[[R]], %{{.*}}] : memref<147x49xf32>, vector<16xf32>
// CHECK:   arith.maximumf %[[A0]]
// CHECK:   arith.maximumf %[[A1]]
// CHECK:   arith.maximumf %[[A2]]
// CHECK: vector.constant_mask [1] : vector<16xi1>
// CHECK: vector.maskedload
// CHECK: arith.select
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.shuffle {{.*}} [0, 1, 2, 3, 4, 5, 6, 7]
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: vector.extract
// CHECK: memref.load %arg1[%[[R]]]
// CHECK: memref.store
// CHECK-NOT: linalg.generic
// On AVX2, six full vectors: a loop over groups of four, two more, the
// masked remainder.
// AVX2-LABEL: func.func @row_max
// AVX2: scf.for %{{.*}} = %{{.*}} to %c32 step %c32{{.*}} iter_args
// AVX2-COUNT-4: arith.maximumf
// AVX2: scf.yield
// AVX2: vector.load %arg0[%{{.*}}, %c32{{.*}}]
// AVX2: vector.load %arg0[%{{.*}}, %c40{{.*}}]
// AVX2: vector.constant_mask [1] : vector<8xi1>
func.func @row_max(%x: memref<147x49xf32>, %m: memref<147xf32>) {
  linalg.generic {indexing_maps = [#row, #kept], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<147x49xf32>) outs(%m : memref<147xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// The sum of exp(x - max): the exponential on vectors, the row's max
// loaded once and broadcast, the sum in partial sums (16 in each of three
// accumulators).
// CHECK-LABEL: func.func @exp_sum
// CHECK: %[[M:.*]] = memref.load %arg1
// CHECK: %[[MB:.*]] = vector.broadcast %[[M]] : f32 to vector<16xf32>
// CHECK: scf.for {{.*}} iter_args
// CHECK:   %[[D:.*]] = arith.subf %{{.*}}, %[[MB]] : vector<16xf32>
// CHECK:   %[[E:.*]] = math.exp %[[D]] : vector<16xf32>
// CHECK:   arith.addf %{{.*}}, %[[E]] : vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @exp_sum(%x: memref<147x49xf32>, %m: memref<147xf32>, %s: memref<147xf32>) {
  linalg.generic {indexing_maps = [#row, #kept, #kept], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<147x49xf32>, memref<147xf32>) outs(%s : memref<147xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %0 = arith.subf %in, %mx : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %out, %1 : f32
    linalg.yield %2 : f32
  }
  return
}

// A parallel row (e * (1 / sum)): full vectors in a loop, the remainder a
// masked load and store; the constant 1 broadcast.
// CHECK-LABEL: func.func @scale
// CHECK: scf.for %[[R:.*]] =
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c48 step %c16 {
// CHECK:   vector.load %arg0[%[[R]], %[[J]]]
// CHECK:   arith.divf {{.*}} : vector<16xf32>
// CHECK:   arith.mulf {{.*}} : vector<16xf32>
// CHECK:   vector.store {{.*}}, %arg2[%[[R]], %[[J]]]
// CHECK: vector.maskedstore %arg2[%[[R]], %c48{{.*}}]
// CHECK-NOT: linalg.generic
func.func @scale(%e: memref<147x49xf32>, %s: memref<147xf32>, %y: memref<147x49xf32, strided<[49, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#row, #kept, #row], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : memref<147x49xf32>, memref<147xf32>) outs(%y : memref<147x49xf32, strided<[49, 1], offset: ?>>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %c1 = arith.constant 1.0 : f32
    %0 = arith.divf %c1, %sum : f32
    %1 = arith.mulf %in, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// Not rows this pass takes: an operand walked with a stride along the
// innermost loop, and a sum whose combiner reads the output twice.
// CHECK-LABEL: func.func @strided
// CHECK: linalg.generic
// CHECK-LABEL: func.func @not_a_combiner
// CHECK: linalg.generic
func.func @strided(%x: memref<49x147xf32>, %y: memref<147x49xf32>) {
  linalg.generic {indexing_maps = [#col, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<49x147xf32>) outs(%y : memref<147x49xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
func.func @not_a_combiner(%x: memref<147x49xf32>, %s: memref<147xf32>) {
  linalg.generic {indexing_maps = [#row, #kept], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<147x49xf32>) outs(%s : memref<147xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %out, %out : f32
    %1 = arith.addf %0, %in : f32
    linalg.yield %1 : f32
  }
  return
}
