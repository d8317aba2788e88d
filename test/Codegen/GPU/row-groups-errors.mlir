// RUN: loom-opt %s --loom-gpu-select-kernel-classes --loom-gpu-map-row-groups --split-input-file --verify-diagnostics
// RUN: not loom-opt %s --loom-gpu-select-kernel-classes="block-size=16" --split-input-file 2>&1 | FileCheck %s --check-prefix=BLOCK16
// RUN: not loom-opt %s --loom-gpu-map-row-groups="block-size=16" --split-input-file 2>&1 | FileCheck %s --check-prefix=PASS16
// PASS16: error: loom-gpu-map-row-groups: block-size must be in [32, 1024], got 16
// Ops that record the row-group class but cannot be one (docs/Codegen/GPU.md,
// "Row groups"): errors at the op, nothing mapped.

// BLOCK16: error: 'linalg.fill' op records kernel class 'row_group', which block-size 16 leaves out (it needs 32 to 1024 threads)
func.func @alone(%t: memref<9xf32>) {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'linalg.fill' op records kernel class 'row_group' but joins no row group (a run of consecutive ops over the same rows with a row reduction among them, each workgroup reaching only its own row of what the run writes)}}
  linalg.fill {loom.gpu.kernel_class = "row_group"} ins(%zero : f32) outs(%t : memref<9xf32>)
  return
}

// -----

func.func @reduction_first(%x: memref<9x16xf32>, %t: memref<16xf32>) {
  // expected-error @+1 {{'linalg.generic' op records kernel class 'row_group' but is neither a row reduction nor an op whose loops are all parallel and static with a pure payload}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<9x16xf32>) outs(%t : memref<16xf32>) attrs = {loom.gpu.kernel_class = "row_group"} {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The subtraction reads the maximum of row j in column j: no workgroup may
// run it with the maximum's row, whatever the op records.
func.func @across_rows(%x: memref<40x40xf32>, %max: memref<40xf32>, %y: memref<40x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<40x40xf32>) outs(%max : memref<40xf32>) attrs = {loom.gpu.kernel_class = "row_group"} {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  // expected-error @+1 {{'linalg.generic' op records kernel class 'row_group' but joins no row group}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<40x40xf32>, memref<40xf32>) outs(%y : memref<40x40xf32>) attrs = {loom.gpu.kernel_class = "row_group"} {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  }
  return
}
