// RUN: loom-opt %s --loom-gpu-select-kernel-classes --split-input-file | FileCheck %s --check-prefix=SELECT
// RUN: loom-opt %s --loom-gpu-select-kernel-classes --loom-gpu-map-matmuls --loom-gpu-map-convs --split-input-file | FileCheck %s
// RUN: loom-opt %s --loom-gpu-map-matmuls --split-input-file | FileCheck %s --check-prefix=ALONE
// A product's or convolution's prologue and epilogue (docs/Codegen/GPU.md, "Kernel
// classes"): the fill of its output with a constant just before it, and
// the elementwise op after it that updates its output in place, are
// recorded in the product's class and taken into its kernel, whose sums
// start from the constant instead of the filled output and whose stores
// are the epilogue's values. One launch instead
// of two or three; run alone (no recorded class) the pass leaves them.

// SELECT-LABEL: func.func @product
// SELECT: linalg.fill {loom.gpu.kernel_class = "matmul_tiles"}
// SELECT: linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"}
// CHECK-LABEL: func.func @product
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: memref.load %arg2
// CHECK: arith.addf %cst{{.*}}, %
// CHECK: memref.store %{{.*}}, %arg2
// CHECK-NOT: linalg.
// CHECK: return
// ALONE-LABEL: func.func @product
// ALONE: linalg.fill
// ALONE: gpu.launch
// ALONE: memref.load %arg2
func.func @product(%a: memref<37x40xf32>, %b: memref<40x45xf32>, %c: memref<37x45xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<37x45xf32>)
  linalg.matmul ins(%a, %b : memref<37x40xf32>, memref<40x45xf32>) outs(%c : memref<37x45xf32>)
  return
}

// -----

// The row form (a product of one row) starts from the constant too.
// CHECK-LABEL: func.func @one_row
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: memref.alloc() : memref<16x8xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.load %arg2
// CHECK: memref.store %{{.*}}, %arg2
func.func @one_row(%a: memref<1x64xf32>, %b: memref<64x96xf32>, %c: memref<1x96xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1x96xf32>)
  linalg.matmul ins(%a, %b : memref<1x64xf32>, memref<64x96xf32>) outs(%c : memref<1x96xf32>)
  return
}

// -----

// A convolution of the class (8 input channels x 3 x 3, 16 output
// channels) takes its fill in the same way.
// SELECT-LABEL: func.func @conv
// SELECT: linalg.fill {loom.gpu.kernel_class = "conv_tiles"}
// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: memref.load %arg2
// CHECK: memref.store %{{.*}}, %arg2
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv(%x: memref<1x8x10x10xf32>, %w: memref<16x8x3x3xf32>, %y: memref<1x16x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x16x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<1x8x10x10xf32>, memref<16x8x3x3xf32>) outs(%y : memref<1x16x8x8xf32>)
  return
}

// -----

// No prologue: a fill of another buffer, a fill with a value that is not a
// constant, a fill with a structured op between it and the product.
// SELECT-LABEL: func.func @not_prologues
// SELECT: linalg.fill {loom.gpu.kernel_class = "generic"} ins(%cst : f32) outs(%arg3
// SELECT: linalg.fill {loom.gpu.kernel_class = "generic"} ins(%{{.*}} : f32) outs(%arg2
// SELECT: linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"}
// SELECT: linalg.fill {loom.gpu.kernel_class = "generic"} ins(%cst : f32) outs(%arg2
// SELECT: linalg.copy {loom.gpu.kernel_class = "generic"}
// SELECT: linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"}
// CHECK-LABEL: func.func @not_prologues
// CHECK-COUNT-3: linalg.fill
func.func @not_prologues(%a: memref<37x40xf32>, %b: memref<40x45xf32>, %c: memref<37x45xf32>,
                         %d: memref<37x45xf32>, %v: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %loaded = memref.load %v[] : memref<f32>
  linalg.fill ins(%zero : f32) outs(%d : memref<37x45xf32>)
  linalg.fill ins(%loaded : f32) outs(%c : memref<37x45xf32>)
  linalg.matmul ins(%a, %b : memref<37x40xf32>, memref<40x45xf32>) outs(%c : memref<37x45xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<37x45xf32>)
  linalg.copy ins(%d : memref<37x45xf32>) outs(%d : memref<37x45xf32>)
  linalg.matmul ins(%a, %b : memref<37x40xf32>, memref<40x45xf32>) outs(%c : memref<37x45xf32>)
  return
}

// -----

// An epilogue: the bias and residual sum after the product, updating its
// output in place. Prologue, product and epilogue are one launch; each
// output element is stored once, as the epilogue makes it of the sum (the
// bias and the residual loaded at its position).
// SELECT-LABEL: func.func @epilogue
// SELECT: linalg.fill {loom.gpu.kernel_class = "matmul_tiles"}
// SELECT: linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"}
// SELECT: loom.gpu.kernel_class = "matmul_tiles"
// CHECK-LABEL: func.func @epilogue
// CHECK: gpu.launch
// CHECK-NOT: memref.load %arg4
// CHECK: %[[SUM:.*]] = arith.addf %cst{{.*}}, %
// CHECK: %[[BIAS:.*]] = memref.load %arg2[
// CHECK: %[[RES:.*]] = memref.load %arg3[
// CHECK: %[[B:.*]] = arith.addf %[[SUM]], %[[BIAS]]
// CHECK: %[[R:.*]] = arith.addf %[[B]], %[[RES]]
// CHECK: memref.store %[[R]], %arg4
// CHECK-NOT: linalg.
// CHECK: return
func.func @epilogue(%a: memref<37x40xf32>, %b: memref<40x45xf32>, %bias: memref<45xf32>,
                    %res: memref<37x45xf32>, %c: memref<37x45xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<37x45xf32>)
  linalg.matmul ins(%a, %b : memref<37x40xf32>, memref<40x45xf32>) outs(%c : memref<37x45xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias, %res : memref<37x45xf32>, memref<45xf32>, memref<37x45xf32>) outs(%c : memref<37x45xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %z : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Not epilogues: an op that reads the output transposed (another element
// than its own), and one that writes another buffer.
// SELECT-LABEL: func.func @not_epilogues
// SELECT: linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"}
// SELECT: loom.gpu.kernel_class = "generic"
// SELECT: linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"}
// SELECT: loom.gpu.kernel_class = "generic"
func.func @not_epilogues(%a: memref<40x40xf32>, %b: memref<40x40xf32>, %c: memref<40x40xf32>,
                         %d: memref<40x40xf32>) {
  linalg.matmul ins(%a, %b : memref<40x40xf32>, memref<40x40xf32>) outs(%c : memref<40x40xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<40x40xf32>) outs(%c : memref<40x40xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  }
  linalg.matmul ins(%a, %b : memref<40x40xf32>, memref<40x40xf32>) outs(%c : memref<40x40xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<40x40xf32>) outs(%d : memref<40x40xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = arith.maximumf %x, %x : f32
    linalg.yield %r : f32
  }
  return
}
