// RUN: loom-opt %s --loom-gpu-hoist-scratch --allow-unregistered-dialect --split-input-file --verify-diagnostics | FileCheck %s

// Temporaries become parameters after the existing ones, their sizes in
// loom.scratch (an i1 is a byte); copies become linalg.copy.
// CHECK: func.func @k(%{{.*}}: memref<4x3xf32>, %{{.*}}: memref<4x3xf32>, %[[T:.*]]: memref<4xf32>, %[[B:.*]]: memref<5xi1>)
// CHECK-SAME: attributes {loom.scratch = array<i64: 16, 5>}
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: linalg.copy ins(%{{.*}} : memref<4x3xf32>) outs(%{{.*}} : memref<4x3xf32>)
// CHECK: "test.use"(%[[T]], %[[B]])
func.func @k(%a: memref<4x3xf32>, %b: memref<4x3xf32>) {
  %t = memref.alloc() : memref<4xf32>
  %f = memref.alloc() : memref<5xi1>
  memref.copy %a, %b : memref<4x3xf32> to memref<4x3xf32>
  "test.use"(%t, %f) : (memref<4xf32>, memref<5xi1>) -> ()
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

func.func @dynamic(%n: index) {
  // expected-error @+1 {{is a temporary buffer a GPU kernel cannot have}}
  %t = memref.alloc(%n) : memref<?xf32>
  "test.use"(%t) : (memref<?xf32>) -> ()
  return
}
