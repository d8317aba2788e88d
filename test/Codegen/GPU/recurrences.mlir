// RUN: loom-opt %s --loom-gpu-map-recurrences="block-size=32" --split-input-file --verify-diagnostics | FileCheck %s
// RUN: not loom-opt %s --loom-gpu-map-recurrences="block-size=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: loom-gpu-map-recurrences: block-size must be in [1, 1024], got 0

// A recurrence of 6 steps (what convert-tg-to-linalg makes of a tg.scan,
// bufferized): one launch of one workgroup of 32 threads (the block size;
// the widest op has 2 x 40 parallel iterations) around the loop over the
// steps. Each op of a step is a loop that the threads share (thread `tid`
// takes `tid, tid + 32, ...`) followed by a barrier; the product's k loop
// (40 deep) carries its accumulator in a register and runs 8 steps of k per
// iteration; a full reduction (no parallel loop) runs on thread 0.
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c32{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// CHECK: scf.for %[[T:.*]] = %c0{{.*}} to %c6{{.*}} step %c1
// CHECK: scf.for %{{.*}} = %[[TID:.*]] to %c80{{.*}} step %c32
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[TID]] to %c80{{.*}} step %c32
// CHECK: %[[ACC:.*]] = memref.load
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c40{{.*}} step %c8{{.*}} iter_args(%{{.*}} = %[[ACC]]) -> (f32)
// CHECK-COUNT-8: arith.mulf
// CHECK: scf.yield
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0
// CHECK: scf.if %[[FIRST]]
// CHECK: gpu.barrier
// CHECK: memref.subview %{{.*}}[%[[T]], 0, 0]
// CHECK: scf.for %{{.*}} = %[[TID]] to %c80{{.*}} step %c32
// CHECK: gpu.barrier
// CHECK-NOT: linalg.
func.func @step(%h: memref<2x40xf32>, %w: memref<40x40xf32>, %acc: memref<2x40xf32>, %s: memref<f32>, %ys: memref<6x2x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  scf.for %t = %c0 to %c6 step %c1 {
    linalg.fill ins(%zero : f32) outs(%acc : memref<2x40xf32>)
    linalg.matmul ins(%h, %w : memref<2x40xf32>, memref<40x40xf32>) outs(%acc : memref<2x40xf32>)
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                    iterator_types = ["reduction", "reduction"]}
        ins(%acc : memref<2x40xf32>) outs(%s : memref<f32>) {
    ^bb0(%x: f32, %o: f32):
      %m = arith.maximumf %x, %o : f32
      linalg.yield %m : f32
    }
    %y = memref.subview %ys[%t, 0, 0] [1, 2, 40] [1, 1, 1] : memref<6x2x40xf32> to memref<2x40xf32, strided<[40, 1], offset: ?>>
    linalg.copy ins(%acc : memref<2x40xf32>) outs(%y : memref<2x40xf32, strided<[40, 1], offset: ?>>)
  }
  return
}

// -----

// A loop with no structured op inside is not a recurrence (the generic
// class runs it on one thread); a parallel op outside a loop is left to the
// other classes.
// CHECK-LABEL: func.func @other
// CHECK-NOT: gpu.launch
func.func @other(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %b[%i] : memref<8xf32>
  }
  linalg.copy ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  return
}

// -----

// A recurrence that carries a value other than through memory.
func.func @carried(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{carries values other than through memory, which the recurrence class does not map}}
  %r = scf.for %t = %c0 to %c4 step %c1 iter_args(%x = %c0) -> (index) {
    linalg.copy ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
    scf.yield %x : index
  }
  return
}
