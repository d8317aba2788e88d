// RUN: loom-opt %s --loom-gpu-select-kernel-classes --split-input-file --verify-diagnostics | FileCheck %s
// RUN: loom-opt %s --loom-gpu-select-kernel-classes --split-input-file --verify-diagnostics --loom-gpu-map-matmuls --loom-gpu-map-row-reductions | FileCheck %s --check-prefix=MAPPED
// A class an op already records (docs/Codegen/GPU.md, "Kernel classes") is
// kept when the class takes the op whatever its thresholds, and is an
// error at the op otherwise.

// A product 16 deep kept in the generic class, and one 8 deep (below the
// class's threshold) made a matrix product (of 4 rows: its row form); a
// row of 4 made the row class's.
// CHECK-LABEL: func.func @respected
// CHECK: linalg.matmul {loom.gpu.kernel_class = "generic"}
// CHECK: linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"}
// CHECK: loom.gpu.kernel_class = "row_reduction"
// MAPPED-LABEL: func.func @respected
// MAPPED: linalg.matmul {loom.gpu.kernel_class = "generic"}
// MAPPED: gpu.launch
// MAPPED: memref.alloc() : memref<16x8xf32, #gpu.address_space<workgroup>>
// MAPPED: gpu.launch
// MAPPED: gpu.subgroup_reduce add
// MAPPED-NOT: linalg.
// MAPPED: return
func.func @respected(%a: memref<4x16xf32>, %b: memref<16x4xf32>, %c: memref<4x4xf32>,
                     %d: memref<4x8xf32>, %e: memref<8x4xf32>, %f: memref<4x4xf32>,
                     %s: memref<3x4xf32>, %t: memref<3xf32>) {
  linalg.matmul {loom.gpu.kernel_class = "generic"} ins(%a, %b : memref<4x16xf32>, memref<16x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"} ins(%d, %e : memref<4x8xf32>, memref<8x4xf32>) outs(%f : memref<4x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<3x4xf32>) outs(%t : memref<3xf32>) attrs = {loom.gpu.kernel_class = "row_reduction"} {
  ^bb0(%in: f32, %acc: f32):
    %x = arith.addf %acc, %in : f32
    linalg.yield %x : f32
  }
  return
}

// -----

func.func @copy_as_matmul(%a: memref<4x4xf32>, %b: memref<4x4xf32>) {
  // expected-error @+1 {{'linalg.copy' op records kernel class 'matmul_tiles' but is not a matrix product of the class (a contraction whose inputs are indexed by loops only, with one k loop)}}
  linalg.copy {loom.gpu.kernel_class = "matmul_tiles"} ins(%a : memref<4x4xf32>) outs(%b : memref<4x4xf32>)
  return
}

// -----

func.func @matmul_as_conv(%a: memref<4x16xf32>, %b: memref<16x4xf32>, %c: memref<4x4xf32>) {
  // expected-error @+1 {{'linalg.matmul' op records kernel class 'conv_tiles' but is not a convolution of the class}}
  linalg.matmul {loom.gpu.kernel_class = "conv_tiles"} ins(%a, %b : memref<4x16xf32>, memref<16x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

func.func @unknown(%a: memref<4x4xf32>, %b: memref<4x4xf32>) {
  // expected-error @+1 {{'linalg.copy' op has loom.gpu.kernel_class = "tiles", which names no kernel class (one of recurrence, matmul_tiles, conv_tiles, row_group, row_reduction, generic)}}
  linalg.copy {loom.gpu.kernel_class = "tiles"} ins(%a : memref<4x4xf32>) outs(%b : memref<4x4xf32>)
  return
}

// -----

func.func @not_a_recurrence(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{'scf.for' op records kernel class 'recurrence' but is not a recurrence (a top-level scf.for of a kernel function with a structured op inside)}}
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %a[%i] : memref<8xf32>
  } {loom.gpu.kernel_class = "recurrence"}
  return
}

// -----

func.func @recurrence_as_generic(%a: memref<4x4xf32>, %b: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  // expected-error @+1 {{'scf.for' op records kernel class 'generic' but is a recurrence, which only the recurrence class maps}}
  scf.for %i = %c0 to %c3 step %c1 {
    linalg.copy ins(%a : memref<4x4xf32>) outs(%b : memref<4x4xf32>)
  } {loom.gpu.kernel_class = "generic"}
  return
}
