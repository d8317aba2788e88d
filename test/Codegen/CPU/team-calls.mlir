// RUN: loom-opt %s --split-input-file --verify-diagnostics --loom-team-calls | FileCheck %s

// In a team kernel (its last argument the team), the barrier and the
// allocations are calls through the team's fields: barrier (0), alloc (1,
// given the module's allocation function), free (2); the barrier's
// declaration goes. Another function's allocations stay as they are.
// CHECK-NOT: llvm.func @loom_team_barrier
// CHECK-LABEL: llvm.func @kernel(
// CHECK: %[[TEAM:.*]] = llvm.inttoptr %arg2 : i64 to !llvm.ptr
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[TEAM]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[B:.*]] = llvm.load %[[F0]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call %[[B]](%[[TEAM]]) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK: %[[A:.*]] = llvm.mlir.addressof @_mlir_memref_to_llvm_alloc
// CHECK: llvm.getelementptr %{{.*}}[1]
// CHECK: llvm.call %{{.*}}(%{{.*}}, %[[A]], %arg0) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
// CHECK: %[[F:.*]] = llvm.mlir.addressof @_mlir_memref_to_llvm_free
// CHECK: llvm.getelementptr %{{.*}}[2]
// CHECK: llvm.call %{{.*}}(%{{.*}}, %[[F]], %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-LABEL: llvm.func @other(
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc(%arg0)
module {
  llvm.func @loom_team_barrier(i64)
  llvm.func internal @_mlir_memref_to_llvm_alloc(%n: i64) -> !llvm.ptr {
    %z = llvm.mlir.zero : !llvm.ptr
    llvm.return %z : !llvm.ptr
  }
  llvm.func internal @_mlir_memref_to_llvm_free(%p: !llvm.ptr) {
    llvm.return
  }
  llvm.func @kernel(%n: i64, %begin: i64, %team: i64) attributes {loom.team} {
    llvm.call @loom_team_barrier(%team) : (i64) -> ()
    %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    llvm.call @_mlir_memref_to_llvm_free(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
  llvm.func @other(%n: i64) {
    %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
    llvm.return
  }
}

// -----

// expected-error @below {{is a team kernel without its team argument}}
llvm.func @bad(%p: !llvm.ptr) attributes {loom.team} {
  llvm.return
}
