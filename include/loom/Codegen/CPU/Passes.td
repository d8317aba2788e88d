//===- Passes.td - CPU code generation passes ---------------*- tablegen -*-===//
//
// Part of Loom. The passes of the CPU kernel pipeline (lib/Codegen/CPU,
// docs/Codegen/CPU.md) that upstream MLIR does not have: they tile, vectorise
// and parallelise the kernels of codegen fragments for x86-64 CPUs. The
// pipeline that composes them with upstream passes is C++ (Passes.h,
// `--loom-cpu-kernel-pipeline`). Grouped under banners, alphabetical.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CODEGEN_CPU_PASSES_TD
#define LOOM_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// On tensors (before bufferization)
//===----------------------------------------------------------------------===//

def LoomParallelizeKernels : Pass<"loom-parallelize-kernels", "mlir::ModuleOp"> {
  let summary = "Tile each kernel's result op with scf.forall and fuse its producers";
  let description = [{
    On kernel functions in linalg on tensors: tiles the op computing each
    function's (single) result along its leading parallel dimensions, with
    tiles of size 1 until the forall has at least `min-iterations`
    iterations (or the parallel dimensions run out), and fuses every
    producer into the tile (so a softmax's reductions are computed per
    row). The forall is what loom-forall-to-range hands to the runtime's
    threads.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"64",
           "Iterations the forall should have at least">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def LoomRegisterTiles : Pass<"loom-register-tiles", "mlir::ModuleOp"> {
  let summary = "Register-tile contractions and compute each tile with vectors";
  let description = [{
    On kernel functions in linalg on tensors, after loom-parallelize-kernels:
    every f32 contraction (matmul, batched matmul, a linear layer; a
    `linalg.generic` whose body multiplies and adds and whose operands are
    indexed by projected permutations) is tiled into `rows x columns`
    register tiles of its output's last two dimensions, every other
    parallel loop and every reduction loop with step 1, the reductions
    innermost. Each tile becomes one `vector.contract` of a `rows x 1`
    column of the left operand and a `1 x columns` row of the right one
    (outer products: `rows` broadcasts and `rows x columns / width` fused
    multiply-adds), and the accumulator tile is hoisted out of the
    reduction loops so it stays in registers. Where at least 32 rows share
    the block of the right-hand side (a thread's tile's rows, times the
    trip count of every enclosing `scf.for` the block is defined outside
    of: a recurrent step's product reads the same weights at every step of
    its scan), the block is first copied into `[n / columns][k][columns]`
    order (a `linalg.transpose` of its expanded shape; loop-invariant, it is
    then hoisted out of those loops), so each tile reads it contiguously
    instead of one row per page. Applies only where the output's last
    dimension is contiguous in every operand that uses it and the extents
    are static and divide by the tile (`columns` or half of it; rows:
    `rows` or the largest power of two below it that divides); other
    contractions keep the scalar loops that LLVM's vectoriser handles.
    With fewer rows than `rows` (a matrix-vector product, a recurrent
    step's `[batch, hidden]` rows), the tile is wider instead: the largest
    power-of-two multiple of `columns` up to `rows x columns / rows-used`
    that divides the output row (1x256 and 4x64 on AVX-512; a tile row is
    one vector, and LLVM assembles a vector whose length is not a power of
    two element by element), so it keeps as many
    independent multiply-add chains in flight as a full tile (a 1x32 tile
    waits on the latency of two). Where the right-hand side is packed and
    the tile still holds fewer accumulators than `rows x columns`, the loop
    over the column tiles takes several at once (the most that fit and
    divide its trip count): an LSTM's row of 800 (hidden size 200) as five
    1x32 tiles, `[5][32]`. Each output element sums its terms in the
    same order as before.

    The defaults fit AVX-512 (a 8x32 f32 tile is 16 of its 32 vector
    registers); on AVX2 `columns=16 rows=6` keeps 12 of 16.
    `--loom-cpu-kernel-pipeline` chooses between the two by its
    `vector-width`, which the CPU target derives from its features.
  }];
  let options = [
    Option<"rowsPerTile", "rows", "int64_t", /*default=*/"8",
           "Rows of a register tile (largest tried)">,
    Option<"vectorColumns", "columns", "int64_t", /*default=*/"32",
           "Columns of a register tile (f32 elements; a multiple of 8)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// On buffers (after bufferization)
//===----------------------------------------------------------------------===//

def LoomReadOnlyKernelInputs : Pass<"loom-read-only-kernel-inputs", "mlir::ModuleOp"> {
  let summary = "Mark every tensor argument of a kernel function read-only for bufferization";
  let description = [{
    Just before one-shot bufferization of whole kernels (every target's
    bufferize stage, `addBufferizeToOutParams`): each tensor argument of a
    function with a body gets `bufferization.writable = false`. A kernel's
    arguments are the runtime's buffers: an entry's inputs, constants in the
    artifact's read-only data, other steps' results that later steps read.
    Function arguments are writable by default, and one-shot bufferization
    then updates them in place wherever an op writes into a value derived
    from one: a `tg.scan`'s loop carried its state in the buffer of its
    initial value (the scan's first input), so a GRU whose initial state
    was a constant wrote into read-only memory (a segmentation fault), and
    one with the initial state as an input overwrote it (wrong results from
    the second run on, and a clobbered input). Read-only, such an argument
    is copied once into a buffer of the kernel's own.

    ```mlir
    func.func @k(%h0: tensor<4x16xf32>, ...)
    // becomes
    func.func @k(%h0: tensor<4x16xf32> {bufferization.writable = false}, ...)
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def LoomPrivateTemporaries : Pass<"loom-private-temporaries", "mlir::ModuleOp"> {
  let summary = "Give each use of an empty tensor its own, in kernels with several results";
  let description = [{
    On kernel functions in linalg on tensors, just before bufferization:
    in a function with several results (independent computations that
    tg-form-fragments put in one kernel, such as the two directions of a
    bidirectional recurrence), every value with no contents of its own
    that has several uses (a `tensor.empty`; a `linalg.fill`, reshape or
    `vector.transfer_read` of such a value: the zero accumulators that
    register tiling reads before its loops) is made again, with what it
    reads, for each use after the first.
    CSE had merged the equal ones, and one-shot bufferization would then
    write both computations' temporaries into one buffer (in place, one
    after the other), tying them together; with a buffer each, the
    computations touch disjoint memory and `loom-forall-to-range` can run
    them as separate tasks. Functions with one result are left as they are
    (a buffer reused is memory saved).

    ```mlir
    %e = tensor.empty() : tensor<4x8xf32>
    %a = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
    %b = linalg.transpose ins(%y : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
    // becomes: %b writes into a second tensor.empty
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def LoomForallToRange : Pass<"loom-forall-to-range", "mlir::ModuleOp"> {
  let summary = "Give each kernel function the [begin, end) calling convention";
  let description = [{
    On bufferized kernel functions (docs/Artifact.md): appends two `index`
    arguments `begin` and `end` to every public function and replaces its
    outermost `scf.forall` (on memrefs, no shared outputs) by an `scf.for`
    over the linearised iterations `[begin, end)`, delinearised into the
    forall's induction variables, so that the runtime can split the
    iterations over threads. The trip count is recorded on the function as
    `loom.range`. Fails on a function with more than one top-level forall.
    An allocation of static shape at the top level of the forall's body
    whose deallocation is there too (a temporary of one iteration: the row
    a fused add + softmax computes into, a reduction's accumulator) is made
    once before the loop and freed after it: a thread's iterations run one
    after another, so they share it instead of a malloc and a free each.

    A function without a forall whose top-level ops fall into independent
    tasks (a kernel holding two recurrences, each a loop over its steps)
    runs each task as one iteration: `[begin, end)` then loops over an
    `scf.index_switch` with a case per task, and `loom.range` is the number
    of tasks, so each thread runs its own. A task is the ops that write
    memory or read memory some op writes, joined where they touch a common
    written buffer (an allocation or an output; inputs are only read) or
    one uses another's result; ops touching no written buffer (views,
    allocations, constants, reads of inputs) run before the loop on every
    call, deallocations after it. Tasks without a loop join the first task
    with one; with fewer than two tasks holding a loop, or where an op's
    effects are unknown, nothing changes (`loom.range` 1: the kernel then
    ignores `begin` and `end`).

    A result computed in a temporary and copied out through a reshape (a
    lowering that works on an expanded view returns it collapsed) is
    computed in the output itself first: the temporary becomes the inverse
    reshape of the output argument and the copy goes, so that the loop
    writes the output and may still be split.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
}

def LoomStridedCopiesToLinalg : Pass<"loom-strided-copies-to-linalg"> {
  let summary = "Turn memref.copy between non-contiguous views into linalg.copy";
  let description = [{
    After bufferization, a copy into or out of a strided view (a slice, a
    padded interior) is a `memref.copy` that the LLVM lowering would turn
    into a call of MLIR's C runner library (`memrefCopy`), which an
    artifact must not depend on. This pass rewrites such copies as
    `linalg.copy`, which become loops with the kernel; copies between
    contiguous buffers stay `memref.copy` (an `llvm.memcpy`).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LoomVectorizableLoopOrder : Pass<"loom-vectorizable-loop-order"> {
  let summary = "Choose the innermost loop of each structured op for LLVM's vectoriser";
  let description = [{
    Before linalg ops on buffers become loops, moves innermost the loop
    along which the most operands are read or written contiguously or not
    at all (a register), the other loops keeping their order; ties go to
    the longer loop. A matmul `C[i,j] += A[i,k] * B[k,j]` then runs its `j`
    loop innermost (B and C contiguous, A[i,k] held) instead of `k`
    (which walks B by columns), and a convolution its output-width loop
    instead of the 3-wide filter loop. Each output element still sums its
    terms in the same order: the results do not change. LLVM's loop
    vectoriser then vectorises the innermost loop.

    First, adjacent parallel loops of a `linalg.generic` collapse into one
    where every operand walks both as one contiguous run of its buffer
    (collapsed with `memref.collapse_shape`) or reads neither, and the body
    reads no loop index: an elementwise op over `[N, C, H, W]` with
    per-channel parameters (a batch norm, a per-channel shift) runs over
    `[N, C, H * W]`, so a 7x7 or 14x14 plane is one loop of 49 or 196
    iterations instead of rows too short to vectorise, and what depends on
    the channel alone is computed once per plane instead of once per row.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LoomVectorizeRows : Pass<"loom-vectorize-rows"> {
  let summary = "Rows of elementwise ops and row reductions as explicit vector code";
  let description = [{
    After loom-vectorizable-loop-order, on `linalg.generic` ops on buffers
    with static loops and f32 operands whose body is arith and math ops on
    f32 (and i1), and whose innermost loop (the row) every operand either
    walks contiguously (its last index, stride 1) or does not move along
    (an element held for the row: a row's max, sum, scale): the op becomes
    loops over its outer dimensions around each row's vector code, in
    vectors of `lanes` floats, a loop over the full vectors and one masked
    vector for the remainder, so a row of any width is vectorised.

    - A parallel row (every output moves along it; ops of two or more
      loops): each vector of columns is loaded, computed with the body's
      ops on vectors, and stored; the held operands are loaded once a row
      and broadcast.
    - A reduction row (no output moves along it; each output's yielded
      value is `combiner(out, v)`, the combiner `arith.addf`, `mulf`,
      `maximumf`, `minimumf`, `maxnumf` or `minnumf`, `out` read nowhere
      else): one vector accumulator per output from the combiner's neutral
      element, updated per vector of columns (the remainder's lanes past
      the row masked by a select), its lanes folded pairwise by the
      combiner, and the result combined with the output element. A sum is
      then added in `lanes` partial sums (the interpreter adds in column
      order): the result differs by rounding; a max or min does not.

    Rows narrower than `min-width` and ops that do not match keep the
    loops LLVM vectorises. Why: LLVM fully unrolled a short constant row
    (a softmax's 49 columns in Swin's windows) and vectorised across rows
    with gathers, and did not vectorise a floating-point sum at all (it
    may not reassociate it).
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 elements per vector (16: AVX-512, 8: AVX2)">,
    Option<"minWidth", "min-width", "int64_t", /*default=*/"8",
           "Rows narrower than this keep LLVM's loops">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomVectorizeConvs : Pass<"loom-vectorize-convs", "mlir::ModuleOp"> {
  let summary = "Compute each row of a convolution's output with vector FMAs held in registers";
  let description = [{
    On kernel functions on buffers, after bufferization and
    loom-forall-to-range: every f32 `linalg.conv_2d_nchw_fchw` and
    `linalg.conv_2d_ngchw_gfchw` (grouped and depthwise) with static shapes,
    contiguous rows and a column stride of 1 becomes loops over batch,
    group, blocks of output channels and output rows; each row is cut into
    chunks of up to 4 vectors of `lanes` floats (the last one masked), whose
    accumulators - for as many output channels of the group as fit in
    `accumulators` vectors - are read from the output, updated by one
    `vector.fma` per tap, input channel and vector (the taps unrolled, the
    input channels a loop carrying the accumulators), and written back.
    Each input row vector is loaded once per tap and feeds every channel of
    the block. Every output element is the same sum in the same order
    (channels, then kernel rows, then kernel columns) as the linalg op's
    loops; only the FMA's single rounding differs.

    Why: left to LLVM, a convolution's innermost loop ran over a row whose
    constant length decided the vector width (a 28-wide row: seven 4-wide
    FMAs per tap; a 56-wide one: seven 8-wide), with the output loaded and
    stored for every tap. Convolutions with a column stride above 1 keep
    the scalar loops.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 elements per vector (16: AVX-512, 8: AVX2)">,
    Option<"accumulators", "accumulators", "int64_t", /*default=*/"16",
           "Vectors of accumulators a chunk may hold">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Lowering to LLVM
//===----------------------------------------------------------------------===//

def LoomApproximateMath : Pass<"loom-approximate-math"> {
  let summary = "Replace transcendental math ops by vectorisable polynomials";
  let description = [{
    Applies MLIR's polynomial approximations (exp, log, tanh, erf, ...) so
    that kernels need no libm calls in their inner loops and LLVM can
    vectorise them. The errors against the reference interpreter are
    measured in docs/Compiler.md (The lowering to linalg).
  }];
  let dependentDialects = ["::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def LoomCacheTemporaries : Pass<"loom-cache-temporaries", "mlir::ModuleOp"> {
  let summary = "Re-use kernels' large temporaries across calls instead of mapping them anew";
  let description = [{
    On a kernel module lowered to the LLVM dialect whose allocations call
    the generic allocation functions (`finalize-memref-to-llvm` with
    `use-generic-functions`, as the CPU kernel pipeline runs it): defines
    `_mlir_memref_to_llvm_alloc` and `_mlir_memref_to_llvm_free` in the
    module (internal linkage, so each artifact has its own) over `malloc`
    and `free`, with a cache of freed blocks. A freed block of 64 KiB to
    16 MiB goes into one of 16 slots (an atomic compare-and-exchange, so
    kernels on several threads share them); an allocation of exactly a
    cached block's size takes it back. Without it, a kernel's large
    temporaries (weights packed into tile order, a recurrence's state) were
    mapped, page-faulted in and returned to the system at every call: glibc
    serves them with `mmap` or trims the heap top on `free`. A global
    destructor frees the cached blocks when the artifact is unloaded. A
    module whose allocations do not use these functions is left unchanged.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LoomTeamKernels : Pass<"loom-team-kernels", "mlir::ModuleOp"> {
  let summary = "Split a large recurrence's steps over the threads of a team";
  let description = [{
    On bufferized kernel functions, before `loom-forall-to-range`: a kernel
    without a top-level `scf.forall` whose memory-writing work is one loop
    (a recurrence's steps, docs/Compiler.md "Recurrences") and whose step
    reads at least `min-step-bytes` of loop-invariant buffers (the recurrent
    weights) becomes a team kernel: every thread of the runtime's team calls
    it once, with `begin` its thread index and `end` the team size, and a
    third `index` argument, the team. Each op that writes memory, at the top
    level or in the loop's body, computes its part: a linalg op and a
    `memref.copy` a contiguous slice (rounded to 16 elements) of their
    largest parallel dimension, a loop marked `loom.parallel_tiles` by
    `loom-register-tiles` (a product's tiles) a slice of its iterations,
    run backwards in every other step of the loop around it (each step
    starts on the tiles the step before read last, still in the thread's
    L2), and any other op runs on thread 0 alone. Before an op whose part may touch
    an element another thread's part of an op since the last barrier wrote
    (or may write one such a part read), the kernel calls
    `loom_team_barrier` (and at the end of a step that wrote). Parts are
    compared as slices of one dimension of one view (seen through
    reshapes): an op cut as the op before it was, over the same view,
    dimension, extent and grain, reads only what its own thread wrote. So a
    linalg op or copy is cut, where that needs no barrier, as the ops since
    the last barrier or the next tile loop cut the buffers it shares with
    them (another dimension, or a grain of whole tiles): an LSTM's step has
    two barriers (after its product, before the gates read other threads'
    columns; at its end), not six. Allocations are hoisted out of the loop and, lowered, are
    made by thread 0 and shared (`loom-team-calls`). The function gets the
    `loom.team` attribute and `loom.range` 1, and each buffer argument no
    op writes `llvm.noalias` (the others change between barriers).
    Functions with a stack
    allocation, several top-level loops (independent recurrences, which
    `loom-forall-to-range` runs as tasks), or an op whose effects are
    unknown stay one thread's; there too, the tile loops directly in a
    top-level loop whose step reads at least `min-step-bytes` of invariant
    buffers run backwards in every other step.
  }];
  let options = [
    Option<"minStepBytes", "min-step-bytes", "int64_t", "524288",
           "Loop-invariant bytes a step must read to be split over a team">
  ];
}

def LoomTeamCalls : Pass<"loom-team-calls", "mlir::ModuleOp"> {
  let summary = "Call a team kernel's barrier and allocations through its team";
  let description = [{
    On the LLVM dialect, after `loom-cache-temporaries`: in each function
    marked `loom.team`, whose last argument is the team (an `i64` holding a
    `loom_team *`, include/loom-c/ArtifactABI.h), a call to
    `loom_team_barrier` becomes a call to the team's `barrier`, and calls
    to `_mlir_memref_to_llvm_alloc` and `_mlir_memref_to_llvm_free` become
    calls to the team's `alloc` and `free` with those functions (thread 0
    allocates and the team shares the block; a free waits for every thread
    first). The declaration of `loom_team_barrier` goes.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // LOOM_CODEGEN_CPU_PASSES_TD
