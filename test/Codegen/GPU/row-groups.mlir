// RUN: loom-opt %s --loom-gpu-select-kernel-classes --split-input-file | FileCheck %s --check-prefix=SELECT
// RUN: loom-opt %s --loom-gpu-select-kernel-classes="row-min-length=8" --split-input-file | FileCheck %s --check-prefix=LOW
// RUN: loom-opt %s --loom-gpu-select-kernel-classes --loom-gpu-map-row-groups --loom-gpu-map-row-reductions --split-input-file | FileCheck %s
// RUN: loom-opt %s --loom-gpu-map-row-groups --split-input-file | FileCheck %s --check-prefix=ALONE
// The row-group class (docs/Codegen/GPU.md, "Row groups"): a run of ops
// over the same rows, a row reduction among them, as one launch of a
// workgroup per row, a barrier between two ops.

// A layer norm as the GPU pipeline bufferizes it: the sum's initial value,
// the sum, the mean (a per-row value), the variance's initial value, the
// variance, the normalisation. One launch of 6 workgroups of 64 threads
// (rows of 40): five barriers between the six ops and one inside each
// reduction. Run alone, the pass forms the same group.
// SELECT-LABEL: func.func @layer_norm
// SELECT-COUNT-6: loom.gpu.kernel_class = "row_group"
// CHECK-LABEL: func.func @layer_norm
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c64{{.*}},
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1{{.*}} step %c64
// CHECK: memref.store %{{.*}} : memref<6xf32>
// CHECK: gpu.barrier
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.barrier
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.barrier
// CHECK: arith.divf
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1{{.*}} step %c64
// CHECK: gpu.barrier
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.barrier
// CHECK: gpu.subgroup_reduce add
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %{{.*}} to %c40{{.*}} step %c64
// CHECK: math.sqrt
// CHECK: memref.store %{{.*}} : memref<6x40xf32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
// CHECK: return
// ALONE-LABEL: func.func @layer_norm
// ALONE: gpu.launch
// ALONE-NOT: gpu.launch
// ALONE-NOT: linalg.
// ALONE: return
func.func @layer_norm(%x: memref<6x40xf32>, %g: memref<40xf32>, %arg3: memref<6x40xf32>,
                      %arg4: memref<6xf32>, %mean: memref<6xf32>, %var: memref<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 40.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  linalg.fill ins(%zero : f32) outs(%arg4 : memref<6xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<6x40xf32>) outs(%arg4 : memref<6xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%arg4 : memref<6xf32>) outs(%mean : memref<6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.divf %in, %n : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%var : memref<6xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : memref<6x40xf32>, memref<6xf32>) outs(%var : memref<6xf32>) {
  ^bb0(%in: f32, %m: f32, %acc: f32):
    %d = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %g, %mean, %var : memref<6x40xf32>, memref<40xf32>, memref<6xf32>, memref<6xf32>) outs(%arg3 : memref<6x40xf32>) {
  ^bb0(%in: f32, %gamma: f32, %m: f32, %v: f32, %out: f32):
    %vn = arith.divf %v, %n : f32
    %ve = arith.addf %vn, %eps : f32
    %sd = math.sqrt %ve : f32
    %d = arith.subf %in, %m : f32
    %y = arith.divf %d, %sd : f32
    %z = arith.mulf %y, %gamma : f32
    linalg.yield %z : f32
  }
  return
}

// -----

// A row maximum, then an op that reads it across the rows (the maximum of
// row j subtracted in column j): a workgroup would read what another
// writes, so the group ends before it. The fill and the maximum are one
// launch; the subtraction is left to the generic class.
// SELECT-LABEL: func.func @across_rows
// SELECT: linalg.fill {loom.gpu.kernel_class = "row_group"}
// SELECT: loom.gpu.kernel_class = "row_group"
// SELECT: loom.gpu.kernel_class = "generic"
// CHECK-LABEL: func.func @across_rows
// CHECK: gpu.launch
// CHECK: gpu.subgroup_reduce maximumf
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic
func.func @across_rows(%x: memref<40x40xf32>, %max: memref<40xf32>, %y: memref<40x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%max : memref<40xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<40x40xf32>) outs(%max : memref<40xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<40x40xf32>, memref<40xf32>) outs(%y : memref<40x40xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// The same maximum read through a reshape of it (a [40, 1] shape, as an
// RMS norm's keepdims mean is): each element keeps its linear position, so
// the subtraction reads its own row's and joins the group. Through any
// other view (a subview, even of the whole buffer) the class does not
// follow it, and the group ends before the subtraction.
// SELECT-LABEL: func.func @through_a_reshape
// SELECT-COUNT-3: loom.gpu.kernel_class = "row_group"
func.func @through_a_reshape(%x: memref<40x40xf32>, %max: memref<40xf32>, %y: memref<40x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%max : memref<40xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<40x40xf32>) outs(%max : memref<40xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  %col = memref.expand_shape %max [[0, 1]] output_shape [40, 1] : memref<40xf32> into memref<40x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %col : memref<40x40xf32>, memref<40x1xf32>) outs(%y : memref<40x40xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// SELECT-LABEL: func.func @through_a_subview
// SELECT: linalg.fill {loom.gpu.kernel_class = "row_group"}
// SELECT: loom.gpu.kernel_class = "row_group"
// SELECT: loom.gpu.kernel_class = "generic"
func.func @through_a_subview(%x: memref<40x40xf32>, %max: memref<40xf32>, %y: memref<40x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.fill ins(%ninf : f32) outs(%max : memref<40xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<40x40xf32>) outs(%max : memref<40xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  %all = memref.subview %max[0] [40] [1] : memref<40xf32> to memref<40xf32, strided<[1]>>
  %col = memref.expand_shape %all [[0, 1]] output_shape [40, 1] : memref<40xf32, strided<[1]>> into memref<40x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %col : memref<40x40xf32>, memref<40x1xf32>) outs(%y : memref<40x40xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// Two groups back to back: a softmax over rows of 2 x 3 (two row loops),
// then a sum over rows of 5 x 48 of another input; the map pass splits the
// run of ops recording the class where the rows change: two launches, of
// 6 and 5 workgroups.
// SELECT-LABEL: func.func @two_groups
// SELECT-COUNT-7: loom.gpu.kernel_class = "row_group"
// CHECK-LABEL: func.func @two_groups
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c6{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c64{{.*}},
// CHECK: arith.divf
// CHECK: gpu.terminator
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c5{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c64{{.*}},
// CHECK: gpu.subgroup_reduce add
// CHECK-NOT: linalg.
// CHECK: return
func.func @two_groups(%x: memref<2x3x50xf32>, %y: memref<2x3x50xf32>, %max: memref<2x3xf32>, %sum: memref<2x3xf32>,
                      %z: memref<5x48xf32>, %t: memref<5xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%max : memref<2x3xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<2x3x50xf32>) outs(%max : memref<2x3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<2x3xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %max : memref<2x3x50xf32>, memref<2x3xf32>) outs(%sum : memref<2x3xf32>) {
  ^bb0(%in: f32, %m: f32, %acc: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %max, %sum : memref<2x3x50xf32>, memref<2x3xf32>, memref<2x3xf32>) outs(%y : memref<2x3x50xf32>) {
  ^bb0(%in: f32, %m: f32, %s: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %s : f32
    linalg.yield %q : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<5xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%z : memref<5x48xf32>) outs(%t : memref<5xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Rows of 16, shorter than the selection's row-min-length (32): no group,
// the sum is generic; with row-min-length=8 the fill and the sum are a
// group.
// SELECT-LABEL: func.func @short_rows
// SELECT: linalg.fill {loom.gpu.kernel_class = "generic"}
// SELECT: loom.gpu.kernel_class = "generic"
// LOW-LABEL: func.func @short_rows
// LOW: linalg.fill {loom.gpu.kernel_class = "row_group"}
// LOW: loom.gpu.kernel_class = "row_group"
func.func @short_rows(%x: memref<9x16xf32>, %t: memref<9xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%t : memref<9xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<9x16xf32>) outs(%t : memref<9xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}
