// RUN: loom-opt %s --loom-gpu-select-kernel-classes | FileCheck %s
// RUN: loom-opt %s --loom-gpu-select-kernel-classes="matmul-min-depth=4 row-min-length=8" | FileCheck %s --check-prefix=LOW
// RUN: loom-opt %s --loom-gpu-select-kernel-classes="generic-only=true" | FileCheck %s --check-prefix=GENERIC
// RUN: loom-opt %s --loom-gpu-select-kernel-classes="block-size=16" | FileCheck %s --check-prefix=NOROWS
// The map stage's one choice of class per op, recorded on it
// (docs/Codegen/GPU.md, "Kernel classes"), and what the map stage makes of
// it: each class's pass maps the ops that record it.
// RUN: loom-opt %s --loom-gpu-select-kernel-classes --loom-gpu-map-recurrences --loom-gpu-map-matmuls --loom-gpu-map-convs --loom-gpu-map-row-reductions | FileCheck %s --check-prefix=MAPPED

// A product 131 deep: the matrix-product class.
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {{.*}}loom.gpu.kernel_class = "matmul_tiles"
// GENERIC-LABEL: func.func @matmul
// GENERIC: loom.gpu.kernel_class = "generic"
// MAPPED-LABEL: func.func @matmul
// MAPPED: gpu.launch
// MAPPED-NOT: loom.gpu.kernel_class
// MAPPED: return
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

// A product 8 deep: below the class's 16 steps, generic (a matrix product
// with matmul-min-depth=4).
// CHECK-LABEL: func.func @shallow
// CHECK: linalg.matmul {loom.gpu.kernel_class = "generic"}
// LOW-LABEL: func.func @shallow
// LOW: linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"}
// MAPPED-LABEL: func.func @shallow
// MAPPED: linalg.matmul {loom.gpu.kernel_class = "generic"}
func.func @shallow(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// A convolution of 5 input channels x 3 x 3 taps to 9 output channels.
// CHECK-LABEL: func.func @conv
// CHECK: linalg.conv_2d_nchw_fchw {dilations = {{.*}}, loom.gpu.kernel_class = "conv_tiles"
// MAPPED-LABEL: func.func @conv
// MAPPED: gpu.launch
// MAPPED-NOT: linalg.conv
func.func @conv(%x: memref<2x5x13x15xf32>, %w: memref<9x5x3x3xf32>, %y: memref<2x9x6x7xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : memref<2x5x13x15xf32>, memref<9x5x3x3xf32>) outs(%y : memref<2x9x6x7xf32>)
  return
}

// Rows of 131 (the row class), then of 16 (generic; a row reduction with
// row-min-length=8); no row class where block-size is below 32.
// CHECK-LABEL: func.func @rows
// CHECK: loom.gpu.kernel_class = "row_reduction"
// CHECK: loom.gpu.kernel_class = "generic"
// LOW-LABEL: func.func @rows
// LOW: loom.gpu.kernel_class = "row_reduction"
// LOW: loom.gpu.kernel_class = "row_reduction"
// NOROWS-LABEL: func.func @rows
// NOROWS: loom.gpu.kernel_class = "generic"
// NOROWS: loom.gpu.kernel_class = "generic"
// MAPPED-LABEL: func.func @rows
// MAPPED: gpu.subgroup_reduce maximumf
// MAPPED: linalg.generic {{.*}}loom.gpu.kernel_class = "generic"
func.func @rows(%x: memref<7x131xf32>, %out: memref<7xf32>, %s: memref<3x16xf32>, %t: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<7x131xf32>) outs(%out : memref<7xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<3x16xf32>) outs(%t : memref<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  return
}

// A recurrence: its loop records the class, its ops none (they are the
// recurrence's); the copy after it is generic.
// CHECK-LABEL: func.func @scan
// CHECK: scf.for
// CHECK-NOT: loom.gpu.kernel_class
// CHECK: } {loom.gpu.kernel_class = "recurrence"}
// CHECK: linalg.copy {{.*}}loom.gpu.kernel_class = "generic"
// GENERIC-LABEL: func.func @scan
// GENERIC: } {loom.gpu.kernel_class = "recurrence"}
// MAPPED-LABEL: func.func @scan
// MAPPED: gpu.launch
// MAPPED-NOT: "recurrence"
// MAPPED: linalg.copy {{.*}}loom.gpu.kernel_class = "generic"
func.func @scan(%h: memref<2x40xf32>, %w: memref<40x40xf32>, %acc: memref<2x40xf32>, %ys: memref<6x2x40xf32>, %last: memref<2x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  scf.for %t = %c0 to %c6 step %c1 {
    linalg.fill ins(%zero : f32) outs(%acc : memref<2x40xf32>)
    linalg.matmul ins(%h, %w : memref<2x40xf32>, memref<40x40xf32>) outs(%acc : memref<2x40xf32>)
    %y = memref.subview %ys[%t, 0, 0] [1, 2, 40] [1, 1, 1] : memref<6x2x40xf32> to memref<2x40xf32, strided<[40, 1], offset: ?>>
    linalg.copy ins(%acc : memref<2x40xf32>) outs(%y : memref<2x40xf32, strided<[40, 1], offset: ?>>)
  }
  linalg.copy ins(%acc : memref<2x40xf32>) outs(%last : memref<2x40xf32>)
  return
}
