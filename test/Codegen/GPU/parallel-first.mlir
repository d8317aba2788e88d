// RUN: loom-opt %s --loom-gpu-parallel-first | FileCheck %s
// RUN: loom-opt %s --loom-gpu-parallel-first --convert-linalg-to-parallel-loops --loom-gpu-map-to-launches | FileCheck %s --check-prefix=LAUNCH

// A sum over two dimensions that are not adjacent (RoIAlign's samples): the
// parallel loops come first, each kind in its order, the maps follow them,
// so that a launch has a thread per output element (3 x 5 = 15) that sums
// its 2 x 2 inputs; without the interchange the parallel loop is the first
// dimension alone (3 threads, each looping over the rest).
// CHECK: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// LAUNCH-LABEL: func.func @sum
// LAUNCH: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c15,
#in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
func.func @sum(%x: memref<3x2x5x2xf32>, %y: memref<3x5xf32>) {
  linalg.generic {indexing_maps = [#in, #out],
                  iterator_types = ["parallel", "reduction", "parallel", "reduction"]}
      ins(%x : memref<3x2x5x2xf32>) outs(%y : memref<3x5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}

// Parallel loops first already (a row sum): unchanged.
// CHECK-LABEL: func.func @rows
// CHECK: iterator_types = ["parallel", "reduction"]
#rin = affine_map<(d0, d1) -> (d0, d1)>
#rout = affine_map<(d0, d1) -> (d0)>
func.func @rows(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#rin, #rout],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}
