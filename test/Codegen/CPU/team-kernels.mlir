// RUN: loom-opt %s --split-input-file --loom-team-kernels | FileCheck %s
// RUN: loom-opt %s --split-input-file --loom-team-kernels="min-step-bytes=4194304" | FileCheck %s --check-prefix=SMALL

// A recurrence whose step reads 1 MiB of weights (%w, never written in the
// loop) becomes a team kernel: thread, team size and team arguments; the
// step's temporary allocated once before the loop; the product's tile loop
// (loom.parallel_tiles) cut into the thread's tiles; the elementwise op
// sliced as the tile loop is (whole tiles of 64 columns, not multiples of
// 16), so each thread reads only what it wrote and no barrier comes
// between them; the copy into a view of a different layout sliced the same
// way (no barrier either); a barrier at the end of the step (the next step
// reads the state). The buffers no thread writes stay `noalias`; the
// output does not. The thread's tiles run backwards in every other step
// (the step's parity selects the mirrored tile: each step starts on the
// tiles the one before read last, still in the thread's L2).
// CHECK-LABEL: func.func @step(
// CHECK-SAME: memref<256x1024xf32> {llvm.noalias}, %{{[a-z0-9]+}}: memref<4x1x1024xf32>,
// CHECK-SAME: %[[T:[a-z0-9]+]]: index, %[[N:[a-z0-9]+]]: index, %[[TEAM:[a-z0-9]+]]: index)
// CHECK-SAME: loom.range = 1
// CHECK-SAME: loom.team
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<1x1024xf32>
// CHECK: scf.for %[[STEP:[a-z0-9]+]] =
// CHECK: arith.ceildivui %{{.*}}, %[[N]]
// CHECK: arith.muli %[[T]],
// CHECK: arith.muli %{{.*}}, %c64
// CHECK: %[[BEGIN:[a-z0-9_]+]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[END:[a-z0-9_]+]] = arith.addi %[[BEGIN]], %{{.*}} : index
// CHECK: %[[K:[a-z0-9_]+]] = arith.subi %[[STEP]], %c0 : index
// CHECK: %[[COUNT:[a-z0-9_]+]] = arith.divui %[[K]], %c1 : index
// CHECK: %[[BIT:[a-z0-9_]+]] = arith.andi %[[COUNT]],
// CHECK: %[[ODD:[a-z0-9_]+]] = arith.cmpi ne, %[[BIT]],
// CHECK: %[[SUM:[a-z0-9_]+]] = arith.addi %[[BEGIN]], %[[END]] : index
// CHECK: %[[LAST:[a-z0-9_]+]] = arith.subi %[[SUM]], %c64
// CHECK: scf.for %[[J:[a-z0-9_]+]] = %[[BEGIN]] to %[[END]] step %c64 {
// CHECK-NEXT: %[[MIRROR:[a-z0-9_]+]] = arith.subi %[[LAST]], %[[J]] : index
// CHECK-NEXT: %[[TILE:[a-z0-9_]+]] = arith.select %[[ODD]], %[[MIRROR]], %[[J]] : index
// CHECK-NEXT: vector.transfer_read %{{.*}}[%c0, %[[TILE]]]
// CHECK-NEXT: vector.transfer_write %{{.*}}, %{{.*}}[%c0, %[[TILE]]]
// CHECK: } {loom.parallel_tiles}
// CHECK-NOT: loom_team_barrier
// CHECK: %[[C:.*]] = arith.ceildivui %{{.*}}, %[[N]]
// CHECK: arith.ceildivui %[[C]], %c64
// CHECK-NOT: loom_team_barrier
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<1x?xf32
// CHECK-NOT: loom_team_barrier
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<1x?xf32, {{.*}}> to memref<1x?xf32
// CHECK-NEXT: func.call @loom_team_barrier(%[[TEAM]])
// CHECK-NEXT: }
// CHECK: memref.dealloc %[[TMP]]
// SMALL-LABEL: func.func @step(
// SMALL-NOT: loom.team
// SMALL-NOT: loom_team_barrier
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @step(%h0: memref<1x256xf32>, %w: memref<256x1024xf32>, %out: memref<4x1x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %p = ub.poison : f32
  scf.for %t = %c0 to %c4 step %c1 {
    %tmp = memref.alloc() : memref<1x1024xf32>
    scf.for %j = %c0 to %c1024 step %c64 {
      %v = vector.transfer_read %w[%c0, %j], %p {in_bounds = [true, true]} : memref<256x1024xf32>, vector<1x64xf32>
      vector.transfer_write %v, %tmp[%c0, %j] {in_bounds = [true, true]} : vector<1x64xf32>, memref<1x1024xf32>
    } {loom.parallel_tiles}
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%tmp : memref<1x1024xf32>) outs(%tmp : memref<1x1024xf32>) {
    ^bb0(%in: f32, %o: f32):
      %e = math.tanh %in : f32
      linalg.yield %e : f32
    }
    %d = memref.subview %out[%t, 0, 0] [1, 1, 1024] [1, 1, 1] : memref<4x1x1024xf32> to memref<1x1024xf32, strided<[1024, 1], offset: ?>>
    memref.copy %tmp, %d : memref<1x1024xf32> to memref<1x1024xf32, strided<[1024, 1], offset: ?>>
    memref.dealloc %tmp : memref<1x1024xf32>
  }
  return
}

// -----

// Two recurrences run as tasks (no team): the tile loop of the one whose
// step reads 1 MiB of weights still runs backwards in every other step;
// the one reading 256 KiB (it stays in L2) keeps its order.
// CHECK-LABEL: func.func @tasks(
// CHECK-NOT: loom.team
// CHECK: scf.for %[[S:[a-z0-9_]+]] = %c0 to %c4 step %c1 {
// CHECK: %[[Q:[a-z0-9_]+]] = arith.subi %[[S]], %c0 : index
// CHECK: %[[COUNT:[a-z0-9_]+]] = arith.divui %[[Q]], %c1 : index
// CHECK: %[[BIT:[a-z0-9_]+]] = arith.andi %[[COUNT]],
// CHECK: %[[ODD:[a-z0-9_]+]] = arith.cmpi ne, %[[BIT]],
// CHECK: %[[SUM:[a-z0-9_]+]] = arith.addi %c0, %c1024 : index
// CHECK: %[[LAST:[a-z0-9_]+]] = arith.subi %[[SUM]], %c64 : index
// CHECK: scf.for %[[J:[a-z0-9_]+]] = %c0 to %c1024 step %c64 {
// CHECK-NEXT: %[[MIRROR:[a-z0-9_]+]] = arith.subi %[[LAST]], %[[J]] : index
// CHECK-NEXT: %[[TILE:[a-z0-9_]+]] = arith.select %[[ODD]], %[[MIRROR]], %[[J]] : index
// CHECK-NEXT: vector.transfer_read %{{.*}}[%c0, %[[TILE]]]
// CHECK: scf.for
// CHECK-NOT: arith.select
// CHECK: return
func.func @tasks(%w: memref<256x1024xf32>, %small: memref<64x1024xf32>, %a: memref<1x1024xf32>, %b: memref<1x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %p = ub.poison : f32
  scf.for %t = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c1024 step %c64 {
      %v = vector.transfer_read %w[%c0, %j], %p {in_bounds = [true, true]} : memref<256x1024xf32>, vector<256x64xf32>
      %r = vector.extract %v[0] : vector<64xf32> from vector<256x64xf32>
      vector.transfer_write %r, %a[%c0, %j] {in_bounds = [true]} : vector<64xf32>, memref<1x1024xf32>
    } {loom.parallel_tiles}
  }
  scf.for %t = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c1024 step %c64 {
      %v = vector.transfer_read %small[%c0, %j], %p {in_bounds = [true, true]} : memref<64x1024xf32>, vector<64x64xf32>
      %r = vector.extract %v[0] : vector<64xf32> from vector<64x64xf32>
      vector.transfer_write %r, %b[%c0, %j] {in_bounds = [true]} : vector<64xf32>, memref<1x1024xf32>
    } {loom.parallel_tiles}
  }
  return
}

// -----

// Two loops (independent recurrences, run as tasks by loom-forall-to-range)
// and a stack allocation: left alone.
// CHECK-LABEL: func.func @two(
// CHECK-NOT: loom.team
// CHECK-LABEL: func.func @stack(
// CHECK-NOT: loom.team
func.func @two(%w: memref<512x1024xf32>, %a: memref<1x1024xf32>, %b: memref<1x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = ub.poison : f32
  scf.for %t = %c0 to %c4 step %c1 {
    %v = vector.transfer_read %w[%t, %c0], %p {in_bounds = [true, true]} : memref<512x1024xf32>, vector<1x1024xf32>
    vector.transfer_write %v, %a[%c0, %c0] {in_bounds = [true, true]} : vector<1x1024xf32>, memref<1x1024xf32>
  }
  scf.for %t = %c0 to %c4 step %c1 {
    %v = vector.transfer_read %w[%t, %c0], %p {in_bounds = [true, true]} : memref<512x1024xf32>, vector<1x1024xf32>
    vector.transfer_write %v, %b[%c0, %c0] {in_bounds = [true, true]} : vector<1x1024xf32>, memref<1x1024xf32>
  }
  return
}
func.func @stack(%w: memref<512x1024xf32>, %a: memref<1x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = ub.poison : f32
  %s = memref.alloca() : memref<1x1024xf32>
  scf.for %t = %c0 to %c4 step %c1 {
    %v = vector.transfer_read %w[%t, %c0], %p {in_bounds = [true, true]} : memref<512x1024xf32>, vector<1x1024xf32>
    vector.transfer_write %v, %s[%c0, %c0] {in_bounds = [true, true]} : vector<1x1024xf32>, memref<1x1024xf32>
  }
  memref.copy %s, %a : memref<1x1024xf32> to memref<1x1024xf32>
  return
}

// -----

// A loop of scalar loads and stores (a scatter-add over its updates, as
// tg.scatter_add lowers when large) reads 4 MiB no step writes, but no op
// of its step is one the team could share: left alone (a team would run it
// on thread 0 with a barrier per update).
// CHECK-LABEL: func.func @scatter(
// CHECK-NOT: loom.team
// CHECK-NOT: loom_team_barrier
func.func @scatter(%idx: memref<1048576xi64>, %upd: memref<1048576xf32>, %out: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1048576 : index
  scf.for %i = %c0 to %n step %c1 {
    %j = memref.load %idx[%i] : memref<1048576xi64>
    %k = arith.index_cast %j : i64 to index
    %u = memref.load %upd[%i] : memref<1048576xf32>
    %o = memref.load %out[%k] : memref<1024xf32>
    %s = arith.addf %o, %u : f32
    memref.store %s, %out[%k] : memref<1024xf32>
  }
  return
}

// -----

// An LSTM-like step: the product's accumulator set from %zero (the copy
// cut as the tile loop after it is, tiles of 64 columns: no barrier
// between them), the tile loop reading the whole state %h, an elementwise
// op reading two halves of the product's row (columns other threads'
// tiles wrote: the barrier kept), the new state copied over %h and into
// the output (the same slices of %new as the elementwise op wrote, and %h
// last read before that barrier: no barrier), and the end of the step
// (the next product reads all of %h: a barrier). Two barriers a step.
// CHECK-LABEL: func.func @gates(
// CHECK: scf.for
// CHECK-NOT: loom_team_barrier
// CHECK: arith.ceildivui %{{.*}}, %c64
// CHECK-NOT: loom_team_barrier
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<1x?xf32, strided<[1024, 1], offset: ?>> to memref<1x?xf32
// CHECK-NOT: loom_team_barrier
// CHECK: } {loom.parallel_tiles}
// CHECK: func.call @loom_team_barrier
// CHECK: linalg.generic
// CHECK-NOT: loom_team_barrier
// CHECK: memref.copy
// CHECK-NOT: loom_team_barrier
// CHECK: memref.copy
// CHECK-NEXT: func.call @loom_team_barrier
// CHECK-NEXT: }
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gates(%h: memref<1x512xf32>, %w: memref<512x1024xf32>, %zero: memref<1x1024xf32>, %out: memref<4x1x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %p = ub.poison : f32
  scf.for %t = %c0 to %c4 step %c1 {
    %acc = memref.alloc() : memref<1x1024xf32>
    %new = memref.alloc() : memref<1x512xf32>
    memref.copy %zero, %acc : memref<1x1024xf32> to memref<1x1024xf32>
    scf.for %j = %c0 to %c1024 step %c64 {
      %a = vector.transfer_read %acc[%c0, %j], %p {in_bounds = [true, true]} : memref<1x1024xf32>, vector<1x64xf32>
      %r = scf.for %k = %c0 to %c512 step %c1 iter_args(%x = %a) -> (vector<1x64xf32>) {
        %hk = memref.load %h[%c0, %k] : memref<1x512xf32>
        %v = vector.transfer_read %w[%k, %j], %p {in_bounds = [true, true]} : memref<512x1024xf32>, vector<1x64xf32>
        %b = vector.broadcast %hk : f32 to vector<1x64xf32>
        %y = vector.fma %b, %v, %x : vector<1x64xf32>
        scf.yield %y : vector<1x64xf32>
      }
      vector.transfer_write %r, %acc[%c0, %j] {in_bounds = [true, true]} : vector<1x64xf32>, memref<1x1024xf32>
    } {loom.parallel_tiles}
    %i = memref.subview %acc[0, 0] [1, 512] [1, 1] : memref<1x1024xf32> to memref<1x512xf32, strided<[1024, 1]>>
    %g = memref.subview %acc[0, 512] [1, 512] [1, 1] : memref<1x1024xf32> to memref<1x512xf32, strided<[1024, 1], offset: 512>>
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i, %g : memref<1x512xf32, strided<[1024, 1]>>, memref<1x512xf32, strided<[1024, 1], offset: 512>>) outs(%new : memref<1x512xf32>) {
    ^bb0(%a0: f32, %a1: f32, %o: f32):
      %e = arith.mulf %a0, %a1 : f32
      linalg.yield %e : f32
    }
    memref.copy %new, %h : memref<1x512xf32> to memref<1x512xf32>
    %d = memref.subview %out[%t, 0, 0] [1, 1, 512] [1, 1, 1] : memref<4x1x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    memref.copy %new, %d : memref<1x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    memref.dealloc %new : memref<1x512xf32>
    memref.dealloc %acc : memref<1x1024xf32>
  }
  return
}
