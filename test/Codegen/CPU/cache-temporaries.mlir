// RUN: loom-opt %s --split-input-file --verify-diagnostics --loom-cache-temporaries | FileCheck %s
// RUN: loom-opt %s --split-input-file --verify-diagnostics --loom-cache-temporaries | FileCheck %s --check-prefix=MALLOC

// A kernel whose allocations call the generic functions gets their
// definitions (internal: one cache per artifact), the 16 slots, and a
// destructor that frees what the slots hold; its own malloc declaration
// is kept, not declared twice.
// CHECK-LABEL: module
// CHECK-DAG: llvm.mlir.global internal @__loom_cached_temporaries() {{.*}} : !llvm.array<16 x ptr>
// CHECK-DAG: llvm.func internal @_mlir_memref_to_llvm_alloc(%{{.*}}: i64) -> !llvm.ptr
// CHECK-DAG: llvm.func internal @_mlir_memref_to_llvm_free(%{{.*}}: !llvm.ptr)
// CHECK-DAG: llvm.func internal @__loom_release_cached_temporaries()
// CHECK-DAG: llvm.mlir.global_dtors dtors = [@__loom_release_cached_temporaries]
// CHECK-DAG: llvm.cmpxchg
// CHECK-DAG: llvm.func @kernel
// MALLOC-COUNT-1: llvm.func @malloc(
// MALLOC-NOT: llvm.func @malloc(
module {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
  llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
  llvm.func @kernel(%n: i64) {
    %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    llvm.call @_mlir_memref_to_llvm_free(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// Without allocations, nothing is added.
// CHECK-LABEL: module
// CHECK-NOT: __loom_cached_temporaries
// CHECK: llvm.func @plain
module {
  llvm.func @plain() {
    llvm.return
  }
}

// -----

// A module that already defines the allocation function is refused.
module {
  // expected-error @+1 {{loom-cache-temporaries: '_mlir_memref_to_llvm_alloc' is already defined}}
  llvm.func @_mlir_memref_to_llvm_alloc(%n: i64) -> !llvm.ptr {
    %p = llvm.mlir.zero : !llvm.ptr
    llvm.return %p : !llvm.ptr
  }
}
