//===- Passes.td - GPU code generation passes ---------------*- tablegen -*-===//
//
// Part of Loom. The passes of the GPU kernel pipeline (lib/Codegen/GPU,
// docs/Codegen/GPU.md) that upstream MLIR does not have: they turn the
// bufferized kernels of codegen fragments into gpu.launch_func calls of
// gpu.func kernels with static launch sizes, in one gpu.module. The pipeline
// that composes them with upstream passes is C++ (Passes.h,
// `--loom-gpu-kernel-pipeline`). Alphabetical.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CODEGEN_GPU_PASSES_TD
#define LOOM_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomGPUHoistScratch : Pass<"loom-gpu-hoist-scratch", "mlir::ModuleOp"> {
  let summary = "Turn a kernel function's temporary buffers into parameters";
  let description = [{
    On bufferized kernel functions (one per codegen fragment): every
    statically shaped `memref.alloc` in a function's body becomes a new
    parameter appended after the existing ones (its deallocations are
    dropped), and the function records the bytes of each in the
    `loom.scratch` array attribute, in parameter order. A GPU kernel cannot
    allocate device memory: the schedule gives each scratch parameter an
    arena slice of the device. Every `memref.copy` becomes a `linalg.copy`
    (so that it is mapped to threads like every other linalg op). A dynamic
    allocation is an error.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LoomGPUFoldTransposes : Pass<"loom-gpu-fold-transposes", "mlir::ModuleOp"> {
  let summary = "Fold transposes into the matrix products that compute or read them";
  let description = [{
    The GPU's linalg stage, after tg to linalg, on tensors
    (docs/Codegen/GPU.md, "Transposes taken by products"):

    * a transpose whose input is a contraction's result that nothing else
      reads (the heads of an attention merged back), the contraction's
      output the zeros of a `linalg.fill`, becomes that contraction
      writing its result through the permutation: the same payload and
      inputs, its output indexing map composed with the inverse of the
      transpose's, the fill into a tensor of the transpose's shape;
    * every other `linalg.transpose` becomes the `linalg.generic` it is
      (its input read through the permutation), which linalg's elementwise
      fusion, run after this pass, then fuses into the ops of the kernel
      that read it: a matrix product reading a transposed operand (an
      attention's heads split off, its keys transposed) reads it where it
      is.

    The tiled class takes any layout of its inputs and output
    (docs/Codegen/GPU.md, "Kernel classes"). Only transposes are
    generalized: the named ops the classes match by name (`linalg.fill` as
    a product's prologue, the convolutions by linalg's convolution
    interface) stay named. A transpose nothing fuses stays a kernel of its
    own, mapped as before.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LoomGPUParallelFirst : Pass<"loom-gpu-parallel-first", "mlir::ModuleOp"> {
  let summary = "Put a generic op's parallel loops before its reductions";
  let description = [{
    The generic class's first step, before
    `convert-linalg-to-parallel-loops` (which makes a parallel loop of the
    parallel dimensions before the first reduction only, and sequential
    loops of the rest): every `linalg.generic` at the top level of a kernel
    function whose iterators are not all parallel ones before all
    reductions has its loops interchanged so that they are (each kind in
    its order), so that `loom-gpu-map-to-launches` gives a thread to every
    output element. A mean over two dimensions that are not adjacent
    (Faster R-CNN's RoIAlign samples, [150, 7, 2, 7, 2, 256] to
    [150, 7, 7, 256]) was 1,050 threads each looping over 7,168 additions
    (and a spill on sm_90a); now 1.9 million threads of 4.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LoomGPUMapToLaunches : Pass<"loom-gpu-map-to-launches", "mlir::ModuleOp"> {
  let summary = "Map each top-level loop nest of a kernel function to a gpu.launch";
  let description = [{
    On kernel functions after `convert-linalg-to-parallel-loops`: each
    top-level `scf.parallel` with constant bounds becomes one `gpu.launch`
    whose threads each run one iteration (the iteration space linearised,
    `block-size` threads per block, blocks along x and then y so that no
    grid dimension exceeds 65535, a guard for the last block), and each run
    of other top-level ops that touch memory (a sequential loop: a full
    reduction; the loads and stores of a loop canonicalised away), with the
    pure ops computing on their values, becomes a `gpu.launch` of one
    thread; a run is cut into launches of at most `max-buffers` buffers
    (Vulkan binds each as a storage buffer: lavapipe allows 32 per stage) at
    ops that use nothing the run computed before them (a concatenation of
    89 scalars: 3 launches, not one of 90 buffers). A parallel loop that
    uses a value such a run computes is an error. Pure ops the body uses
    (constants, views of the parameters) and
    loads from parameters the function never writes (a top-k's run-time K)
    are cloned into it, so that a launch captures only the function's
    parameters and several launches may use one such value. A parallel loop
    left inside a launch's body (a reduction over dimensions that are not
    adjacent) runs as sequential loops in its thread. Launch sizes are
    constants: what `gpu-kernel-outlining` records as known sizes and the
    schedule writes into `gpu.dispatch` steps.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "Threads per block (at most 1024)">,
    Option<"maxBuffers", "max-buffers", "int64_t", /*default=*/"32",
           "Buffers a launch of one thread binds at most, where the run can "
           "be cut">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def LoomGPUMapConvs : Pass<"loom-gpu-map-convs", "mlir::ModuleOp"> {
  let summary = "Map each convolution of a kernel function to a launch of implicit-GEMM tiles in workgroup memory";
  let description = [{
    The convolution kernel class (docs/Codegen/GPU.md). On bufferized
    kernel functions, after `loom-gpu-map-matmuls`: a linalg op is a
    **convolution** of this class when it is one by linalg's convolution
    interface (`linalg.conv_2d_nchw_fchw`, `conv_2d_ngchw_gfchw`,
    `conv_3d_ncdhw_fcdhw`, a generic one: strides, dilations and groups
    anyhow); its output is f32 and indexed by loops only; its payload is
    exactly `out + input * filter`; it has at least `min-channels` output
    channels per group (with fewer, a depthwise convolution's one or a
    ResNeXt group's four, most rows of a tile would be zeros and the
    generic class computes fewer products); and its reduction (input
    channels per group x filter window) has at least `min-depth` steps. It is computed as an implicit GEMM over the
    tiles of `loom-gpu-map-matmuls`: per group, A[m][k] is the filter
    (m: the output channels; k: the input channels and the window,
    linearised), B[k][n] the input's patches (n: the batch and the output
    image, linearised; each element read through the input's indexing map,
    `oh * stride + kh * dilation`), C[m][n] the output. One `gpu.launch`
    with a workgroup of 128 threads per tile of C and group (64 x 64 or
    16 x 16, as `loom-gpu-map-matmuls` chooses by `large-tile-blocks`): per
    step of 16 along k the threads stage the filter tile and the patch tile
    in workgroup memory (two `memref.alloc` of f32 in
    `#gpu.address_space<workgroup>`), zeros past the edges; a
    `gpu.barrier`; each thread accumulates its register tile of output
    elements; a `gpu.barrier`; then each thread adds its sums to the
    output. Padding is
    the padded input's (the op reads it as it is).
    An op that records `loom.gpu.kernel_class`
    (`loom-gpu-select-kernel-classes`) is this class's when it names it,
    whatever `min-depth` and `min-channels`, and never when it names
    another; the match above decides only for an op that records none
    (this pass run alone). A convolution's prologue (the fill of its
    output with a constant just before it) and epilogue (the elementwise
    op after it updating its output in place) that record the class are
    taken into its kernel as a product's are (`loom-gpu-map-matmuls`).
  }];
  let options = [
    Option<"minDepth", "min-depth", "int64_t", /*default=*/"16",
           "The fewest reduction steps of a convolution mapped to tiles; "
           "shallower ones stay in the generic class">,
    Option<"minChannels", "min-channels", "int64_t", /*default=*/"8",
           "The fewest output channels per group of a convolution mapped "
           "to tiles (half a tile's rows)">,
    Option<"largeTileBlocks", "large-tile-blocks", "int64_t",
           /*default=*/"264",
           "Map an op to 64 x 64 output tiles (32 sums a thread) when that "
           "makes at least this many workgroups (264: two per multiprocessor "
           "of an H100), else to 16 x 16 tiles (2 a thread); negative: "
           "always 16 x 16">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"false",
           "CUDA only: a product whose inputs are both multiplied in bf16 or "
           "both in f16 (--precision) runs on tensor cores (mma.sync "
           "m16n8k16, f32 accumulation; tiles 64 x 64 or 32 x 32); every "
           "tiled product stages contiguous rows with vector loads">,
    Option<"emulateTensorCores", "emulate-tensor-cores", "bool",
           /*default=*/"false",
           "The tensor-core form on any API, each mma.sync computed from "
           "the lanes' fragments through workgroup memory, and the vector "
           "loads' grouping as scalar loads (a check of the form on "
           "lavapipe)">,
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "With tensor-cores (CUDA, every chip sm_90a) or "
           "emulate-tensor-cores: bf16 and f16 products take the warpgroup "
           "form, one wgmma.mma_async m64nNk16 a staged step from tiles in "
           "core-matrix order (docs/Codegen/GPU.md, \"Warpgroup products\"); "
           "TF32 keeps mma.sync">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def LoomGPUMapMatmuls : Pass<"loom-gpu-map-matmuls", "mlir::ModuleOp"> {
  let summary = "Map each matrix product of a kernel function to a launch of tiles in workgroup memory";
  let description = [{
    The matrix-product kernel class (docs/Codegen/GPU.md). On bufferized
    kernel functions, before `loom-gpu-map-convs`: a linalg op is a
    **matrix product** when it is a contraction (docs/Codegen/GPU.md: static
    extents, two inputs and an f32 output, the payload exactly
    `out + a * b`, each loop a batch loop (indexing the output and both
    inputs), an m loop (the output and A), an n loop (the output and B, the
    input the output's innermost index varies) or a k loop (a reduction
    indexing A and B)), its inputs are indexed by loops only (`linalg.matmul`,
    `batch_matmul`, a transposed operand, a broadcast weight), it has one k
    loop, and k has at
    least `min-depth` steps. Such an op becomes one `gpu.launch` with a
    workgroup of 128 threads (16 columns `tx` of 8 rows `ty`) per output
    tile and batch position (the grid at most 65535 x 65535): 64 x 64 where
    that makes at least `large-tile-blocks` workgroups, else 16 x 16. Per
    step of 16 along k the threads stage the A tile (`[m][k]`, tile rows x
    16) and the B tile (`[k][n]`, 16 x tile columns) in workgroup memory
    (two `memref.alloc` of f32 in `#gpu.address_space<workgroup>`, the
    canonical form of shared memory), neighbouring threads loading
    neighbouring elements (with `tensor-cores`, groups of 2 or 4
    consecutive elements a thread in one vector load where the operand's
    rows are contiguous and aligned: docs/Codegen/GPU.md, "Vector loads")
    and zeros past the matrix's edges; a
    `gpu.barrier`; each thread accumulates its register tile, rows
    `ty + 8 i` and columns `tx + 16 j` (2 x 1 elements of a small tile,
    8 x 4 of a large one: each step of k reads its rows of A and columns
    of B once from the tiles); a `gpu.barrier`. Then each thread adds its sums to the output elements
    inside the matrix. With `tensor-cores`, a product whose two inputs are
    multiplied in one narrow type (both bf16 or both f16: --precision) takes
    the tensor-core form instead: tiles of 64 x 64 or 32 x 32 staged in that
    type, the four warps 2 x 2 over the tile, one `nvvm.mma.sync` m16n8k16
    (f32 accumulators) per 16 x 8 of a warp's quarter and step
    (docs/Codegen/GPU.md, "Tensor cores"); `emulate-tensor-cores` takes the
    same form on any API with each mma.sync computed through workgroup
    memory. Every other linalg op is left to the other classes.
    An op that records `loom.gpu.kernel_class`
    (`loom-gpu-select-kernel-classes`) is this class's when it names it,
    whatever `min-depth`, and never when it names another; the match above
    decides only for an op that records none (this pass run alone). A
    product's **prologue**, the `linalg.fill` of its output with a constant
    just before it (only pure ops that are not structured ops between),
    that records the class too (the selection records it so) is taken
    into the product's kernel: the sums start from the constant instead of
    the output's elements, and the fill goes with the product. So is its
    **epilogue**, the op just after it whose loops are all parallel, that
    updates the product's output in place at its own position (a bias, an
    activation, a residual sum): each output element is stored as the
    epilogue's payload makes it of the sum, its other inputs loaded there.
  }];
  let options = [
    Option<"minDepth", "min-depth", "int64_t", /*default=*/"16",
           "The fewest reduction steps of a product mapped to tiles; "
           "shallower ones stay in the other classes">,
    Option<"largeTileBlocks", "large-tile-blocks", "int64_t",
           /*default=*/"264",
           "Map an op to 64 x 64 output tiles (32 sums a thread) when that "
           "makes at least this many workgroups (264: two per multiprocessor "
           "of an H100), else to 16 x 16 tiles (2 a thread); negative: "
           "always 16 x 16">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"false",
           "CUDA only: a product whose inputs are both multiplied in bf16 or "
           "both in f16 (--precision) runs on tensor cores (mma.sync "
           "m16n8k16, f32 accumulation; tiles 64 x 64 or 32 x 32); every "
           "tiled product stages contiguous rows with vector loads">,
    Option<"emulateTensorCores", "emulate-tensor-cores", "bool",
           /*default=*/"false",
           "The tensor-core form on any API, each mma.sync computed from "
           "the lanes' fragments through workgroup memory, and the vector "
           "loads' grouping as scalar loads (a check of the form on "
           "lavapipe)">,
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "With tensor-cores (CUDA, every chip sm_90a) or "
           "emulate-tensor-cores: bf16 and f16 products take the warpgroup "
           "form, one wgmma.mma_async m64nNk16 a staged step from tiles in "
           "core-matrix order (docs/Codegen/GPU.md, \"Warpgroup products\"); "
           "TF32 keeps mma.sync">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def LoomGPUMapRecurrences : Pass<"loom-gpu-map-recurrences", "mlir::ModuleOp"> {
  let summary = "Map each recurrence (a sequential loop of structured ops) of a kernel function to a launch of one workgroup";
  let description = [{
    The recurrence kernel class (docs/Codegen/GPU.md). On bufferized kernel
    functions, before the other classes: a **recurrence** is a top-level
    `scf.for` of a kernel function with a linalg op inside (what
    `convert-tg-to-linalg` makes of a `tg.scan`: one iteration per step,
    the step's slices of the sequences as views at the loop's index). It
    becomes one `gpu.launch` of one workgroup that runs the loop, so that
    the carried values stay in device memory from one step to the next
    and the steps run in order in one launch. Each linalg op in the loop
    becomes a loop nest (`scf.parallel` over its parallel loops, as
    `convert-linalg-to-parallel-loops` makes it), whose parallel
    iterations, linearised, are shared among the workgroup's
    `min(block-size, the widest op's parallel iterations)` threads (thread
    `tid` takes `tid, tid + threads, ...`), followed by a `gpu.barrier`;
    other writes of the step (a full reduction) run on thread 0, followed
    by a barrier; a sequential loop inside that holds parallel loops (a
    nested recurrence) is run by every thread, its parallel loops shared
    alike. Every barrier is reached by every thread. A loop carrying
    values (iteration arguments), a parallel loop with reductions or
    non-constant bounds, and a write with results are errors. A launch
    whose threads would take more than 60,000 loop back edges (counted from
    the constant bounds) is cut into launches of consecutive steps that
    stay within that: lavapipe leaves every loop of an invocation once its
    loops together have iterated 65,535 times, and a bounded launch is what
    a GPU's scheduler expects.
    A loop that records `loom.gpu.kernel_class`
    (`loom-gpu-select-kernel-classes`) is this class's when it names it
    (it must be a recurrence), and never when it names another; the match
    above decides only for a loop that records none (this pass run alone).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "The most threads of a recurrence's workgroup (at most 1024)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def LoomGPUMapRowGroups : Pass<"loom-gpu-map-row-groups", "mlir::ModuleOp"> {
  let summary = "Map each run of ops over the same rows (a layer norm, a softmax) to one launch of a workgroup per row";
  let description = [{
    The row-group kernel class (docs/Codegen/GPU.md, "Row groups"). On
    bufferized kernel functions, before the row-reduction class: a **row
    group** is a run of consecutive linalg ops of a kernel function's body
    (only pure ops that are not structured ops between them) over the same
    rows, each either a row reduction (as `loom-gpu-map-row-reductions`
    takes it) or a **parallel member**, an op whose loops are all parallel
    and static, the leading ones the rows' loops (a per-row value such as a
    mean's division when there are no others, a row's elements otherwise:
    a layer norm's normalisation), its payload pure; every buffer a member
    writes is reached by every member as the buffer itself (not a view),
    indexed by the row loops first and by no row loop after, so that no
    workgroup reaches another row's part of what the group writes. A group
    is formed around a row reduction of rows of at least `min-length`
    elements read contiguously: the parallel members over its rows just
    before it, then members over its rows after it, while the whole stays
    a group and one thread runs at most 60,000 loop iterations. It becomes
    one `gpu.launch` with a workgroup per row of `clamp(next power of 2 of
    the longest row, 32, largest power of 2 in block-size)` threads that
    runs the members in order with a `gpu.barrier` between two: a
    reduction as the row-reduction class reduces a row, a parallel member
    with each thread taking the row's positions `tid, tid + threads, ...`.
    A layer norm (a mean, its division, a variance and the normalisation)
    is one launch instead of five, a softmax one instead of four; the row's
    elements stay in the chip's caches between its passes.

    An op that records `loom.gpu.kernel_class = "row_group"` is this
    class's: the consecutive ops that record it are grouped as above
    whatever the thresholds (any row length and layout, a group of one op),
    and an op that joins no group is an error. The match above decides only
    for ops that record no class (this pass run alone).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "The most threads of a row's workgroup (32 to 1024)">,
    Option<"minLength", "min-length", "int64_t", /*default=*/"32",
           "The fewest elements of the row reduction a group forms "
           "around">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LoomGPUMapRowReductions : Pass<"loom-gpu-map-row-reductions", "mlir::ModuleOp"> {
  let summary = "Map each row reduction of a kernel function to a launch of one workgroup per row";
  let description = [{
    The row-reduction kernel class (docs/Codegen/GPU.md). On bufferized
    kernel functions, before `convert-linalg-to-parallel-loops`: a linalg op
    is a **row reduction** when its loops are parallel loops (the rows)
    followed by at least one reduction loop (a row: the reduction loops
    linearised), its one output is f32 and indexed by parallel loops only,
    every shaped input that a reduction loop indexes has the last loop as
    its innermost index (a row is contiguous; a row read with strides is
    taken too where there is one row only or a row passes the 60,000 loop
    iterations of one thread, which the generic class would give a
    thread), its payload is pure and
    yields `combiner(out, x)` with the output used there only (`addf`,
    `mulf`, `maximumf`, `minimumf`, `maxnumf`, `minnumf`), and a row has at
    least `min-length` elements. Such an op becomes one `gpu.launch` with a
    workgroup per row (a grid of at most 65535 x 65535) of
    `clamp(next power of 2 of the row length, 32, largest power of 2 in
    block-size)` threads:
    each thread folds the elements `tid, tid + threads, ...` of its row from
    the combiner's identity; `gpu.subgroup_reduce` reduces each subgroup;
    lane 0 of each subgroup stores its value in workgroup memory (a
    `memref.alloc` in `#gpu.address_space<workgroup>` of one element per
    thread, so any subgroup width fits: the canonical form of shared
    memory); after a `gpu.barrier` every subgroup folds those values
    (strided by the subgroup size, `gpu.num_subgroups` of them) and reduces
    them again, and thread 0 combines the result with the output element.
    The subgroup width is read at run time (`gpu.subgroup_size`): nothing
    assumes 32. Every other linalg op is left to the generic class
    (`loom-gpu-map-to-launches`).
    An op that records `loom.gpu.kernel_class`
    (`loom-gpu-select-kernel-classes`) is this class's when it names it,
    whatever `min-length` and the rows' layout`, and never when it names another; the match above
    decides only for an op that records none (this pass run alone).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "The most threads of a row's workgroup (32 to 1024)">,
    Option<"minLength", "min-length", "int64_t", /*default=*/"32",
           "The fewest elements of a row mapped to a workgroup; shorter "
           "rows stay in the generic class">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def LoomGPUMapSelections : Pass<"loom-gpu-map-selections", "mlir::ModuleOp"> {
  let summary = "Map each tg.topk, tg.nonzero and tg.non_max_suppression of a kernel function to parallel launches";
  let description = [{
    The selection kernel class (docs/Codegen/GPU.md, "Selections"). On
    kernel functions on tg tensors, before `convert-tg-to-linalg` (the scf
    loops it lowers these ops to run on one thread): each op becomes
    `gpu.launch`es on the buffers of its operands (`bufferization.to_buffer`)
    and of its results (`memref.alloc`s made tensors by
    `bufferization.to_tensor`, returned as out-parameters by bufferization),
    with scratch buffers as `memref.alloc`s that `loom-gpu-hoist-scratch`
    turns into parameters:

    - `tg.nonzero`: one workgroup; each thread counts the non-zero elements
      of its contiguous chunk, a workgroup scan (Hillis-Steele in workgroup
      memory, unrolled) gives each chunk its first column, each thread
      writes its elements' coordinates and zeros its padding columns.
    - `tg.topk`: a workgroup per line (the axis at one position of the other
      dimensions): a bitonic sort of the line's positions, padded to a power
      of 2, by the op's order (value, then the lower position; padding and
      positions past `valid` last), in workgroup memory where it fits in
      16 KiB (4,096 positions), else in a scratch row; the first
      `min(k, valid)` written out, zeros after. A line whose sort would
      pass the loop budget is cut into chunks of a power of 2 positions: a
      launch of a workgroup per (line, chunk) sorts each chunk and keeps its
      first `min(k, chunk)` positions as candidates (a scratch buffer), then
      the workgroup per line sorts the candidates instead of the line (the
      same order on the same positions, so the first k are the line's);
      the chunk length is the one of the fewest loop iterations per thread
      over the two launches.
    - `tg.non_max_suppression` (f32): the IoU-bitmask form: a workgroup per
      class sorts its candidates by score and counts them (a sort past one
      launch's budget continues in launches of its own); a workgroup per
      class sweeps the words of 32 candidates in order (the word's
      surviving candidates resolved alike by every thread, then the later
      words' suppression bits OR-ed by the threads together), cut into
      launches of words, each after a launch of a thread per (class,
      candidate of its words, word) that computes which later candidates
      of the word the candidate suppresses (the masks a tile at a time, at
      most 512 MiB); one workgroup writes the kept rows and the padding.

    Every loop's trip count is known from the static sizes, and an op is
    mapped only when each thread of each launch takes at most 60,000 loop
    iterations (lavapipe ends an invocation's loops after 65,535); one that
    is not (or non-f32 boxes) keeps its scf lowering. Nothing assumes a
    subgroup width.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "Threads per workgroup (1 to 1024)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def LoomGPUMergeModules : Pass<"loom-gpu-merge-modules", "mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    After `gpu-kernel-outlining` (one gpu.module per launch): moves every
    gpu.func into the gpu.module `loom_kernels` and points each
    `gpu.launch_func` at it, so that a device image is one module whose
    entry points are the kernels (one SPIR-V module, one PTX module per
    chip). Each kernel is renamed after the module outlining put it in
    (`<function>_kernel`, `<function>_kernel_0`, ...: unique). The symbols
    outlining copied into each module with its kernel (the constant globals
    of an index table) come too: one equivalent to a symbol already merged
    is dropped, another of the same name is renamed and its kernel's uses
    with it. A kernel equal to one merged before it but for its name (the
    same text: body, arguments, attributes and the symbols it uses) is
    dropped and its launches point at that one, so that repeated ops (a
    detector's post-processing for each of its classes) make one entry
    point and one pipeline.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LoomGPUNVVMForms : Pass<"loom-gpu-nvvm-forms", "mlir::gpu::GPUModuleOp"> {
  let summary = "Rewrite the canonical forms of shared memory and subgroups for NVVM";
  let description = [{
    The CUDA path's rewrite of what the kernel classes emit in their one
    canonical form (docs/Codegen/GPU.md), before `convert-gpu-to-nvvm`, which
    would otherwise miscompile or reject it:

    - a `memref.alloc` of workgroup memory in a kernel's entry block becomes
      a workgroup attribution of its `gpu.func` (NVVM lowers an alloc to a
      call of `malloc`, a silent miscompile); any other `memref.alloc` in a
      kernel is an error;
    - `gpu.subgroup_size` becomes 32 (a warp), `gpu.subgroup_id` the linear
      thread index divided by 32 and `gpu.num_subgroups` the warps of the
      kernel's known block size (NVVM lowers none of them);
    - every float `arith.mulf`, `arith.addf` and `arith.subf` may contract
      (`fastmath<contract>`), so that NVPTX fuses a product and the sum it
      feeds into one `fma.rn` (one rounding instead of two: the tiled
      product's inner loop was `mul.rn.f32` and `add.rn.f32` pairs, half the
      rate of the FMA units);
    - `gpu.subgroup_reduce` becomes a butterfly of `gpu.shuffle xor` over
      the 32 lanes of a warp (which NVVM lowers to `shfl.sync`); a kernel
      that reduces over subgroups must have a multiple of 32 threads (the
      shuffles take every lane of a warp).

    The Vulkan path needs no such rewrite: SPIR-V has the subgroup builtins
    and group operations, and lowers the alloc to a Workgroup variable.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomGPUSelectKernelClasses : Pass<"loom-gpu-select-kernel-classes", "mlir::ModuleOp"> {
  let summary = "Choose the kernel class of every structured op and recurrence of a kernel function";
  let description = [{
    The map stage's one choice of kernel class (docs/Codegen/GPU.md,
    "Kernel classes"), on bufferized kernel functions after
    `loom-gpu-hoist-scratch`: every top-level `scf.for` of a kernel function
    that is a recurrence, and every linalg op outside a launch and outside
    a recurrence, records the class that maps it in the discardable string
    attribute `loom.gpu.kernel_class`: `recurrence`; then `row_group` on
    the runs of ops that form row groups (`loom-gpu-map-row-groups`) among
    the ops no product or convolution class takes; then the first of
    `matmul_tiles`, `conv_tiles` and `row_reduction` whose match holds
    (a `linalg.fill` of a product's or convolution's output with a
    constant just before it, its prologue, and the elementwise op just
    after it that updates its output in place, its epilogue, record the
    product's class)
    under this pass's thresholds (none with `generic-only`; no row class
    where `block-size` is below 32 or above 1024), else `generic`. Each
    class's pass then maps the ops that record it, and the generic class
    what is left. An op that already records a class keeps it when the
    class takes the op whatever its thresholds (a product 4 deep as
    `matmul_tiles`, any op as `generic`) and the pipeline runs the class;
    otherwise, and for a name that is no class, it is an error at the op.

    ```mlir
    linalg.matmul {loom.gpu.kernel_class = "matmul_tiles"}
        ins(%a, %b : memref<37x131xf32>, memref<131x45xf32>)
        outs(%c : memref<37x45xf32>)
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "The kernel pipeline's threads per block (the row class needs "
           "32 to 1024)">,
    Option<"genericOnly", "generic-only", "bool", /*default=*/"false",
           "Every op but recurrences in the generic class">,
    Option<"matmulMinDepth", "matmul-min-depth", "int64_t",
           /*default=*/"16",
           "The fewest reduction steps of a product of the matrix-product "
           "class (loom-gpu-map-matmuls's min-depth)">,
    Option<"convMinDepth", "conv-min-depth", "int64_t", /*default=*/"16",
           "The fewest reduction steps of a convolution of the convolution "
           "class (loom-gpu-map-convs's min-depth)">,
    Option<"convMinChannels", "conv-min-channels", "int64_t",
           /*default=*/"8",
           "The fewest output channels per group of a convolution of the "
           "convolution class (loom-gpu-map-convs's min-channels)">,
    Option<"rowMinLength", "row-min-length", "int64_t", /*default=*/"32",
           "The fewest elements of a row of the row-reduction class "
           "(loom-gpu-map-row-reductions's min-length)">,
  ];
}

def LoomGPUSPIRVForms : Pass<"loom-gpu-spirv-forms", "mlir::gpu::GPUModuleOp"> {
  let summary = "Rewrite the canonical form of shared memory for SPIR-V";
  let description = [{
    The Vulkan path's rewrite of the canonical form of shared memory
    (docs/Codegen/GPU.md), before `convert-gpu-to-spirv`: each `memref.alloc`
    in `#gpu.address_space<workgroup>` is given the `Workgroup` storage
    class, which `convert-gpu-to-spirv` lowers to a Workgroup variable of
    the entry point (SPIR-V has no `gpu.func` workgroup attributions, and
    upstream's memory space mapping takes only numeric spaces). A
    `memref.alloc` of any other memory or of a dynamic shape, and a use of
    one other than a load or a store, are errors. A `gpu.subgroup_reduce`
    of `maximumf` or `minimumf` (which SPIR-V's group operations do not
    have) becomes the `maxnumf`/`minnumf` reduction and a second reduction
    that says whether any lane holds a NaN, the result then NaN. A
    `memref.get_global` of a constant global (an index table, such as a
    nearest-neighbour resize's) becomes an array in the `Function` storage
    class that each thread fills with the table's values at the kernel's
    entry (SPIR-V lowers no global), the globals are erased; a table of
    more than 4096 elements, a global that is not constant, and a use of
    one other than a load are errors. Every
    `gpu.subgroup_reduce` loses its `uniform` flag (canonicalisation sets
    it): Vulkan has the non-uniform group operations only. An `scf.for`
    with results whose trip count is not a positive constant is put inside
    `scf.if (lower < upper)`, whose else branch yields its initial values:
    MLIR 22's scf-to-spirv keeps a loop's results in variables only its
    body stores, undefined after a loop of no iteration (a row reduction's
    thread past the row's end).
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect",
                           "::mlir::scf::SCFDialect"];
}

def LoomGPUSPIRVBarriers : Pass<"loom-gpu-spirv-barriers", "mlir::spirv::ModuleOp"> {
  let summary = "Make every workgroup barrier of a SPIR-V module order storage-buffer memory too";
  let description = [{
    After `convert-gpu-to-spirv`: every `spirv.ControlBarrier` of the
    workgroup whose memory semantics order workgroup memory also orders
    storage-buffer memory (`UniformMemory` added), as `gpu.barrier`'s
    contract says (every access before it visible to the workgroup);
    upstream's lowering orders workgroup memory only. The recurrence class
    (docs/Codegen/GPU.md) passes each op's results to the next op of a step
    through storage buffers.
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

def LoomGPUSPIRVEntryPoints : Pass<"loom-gpu-spirv-entry-points", "mlir::ModuleOp"> {
  let summary = "Give each kernel the SPIR-V entry point ABI of its block size";
  let description = [{
    Before `convert-gpu-to-spirv`, which makes only kernels with a
    `spirv.entry_point_abi` entry points: sets it on every gpu.func kernel
    from its `known_block_size` (what outlining recorded from the launch's
    constant sizes), as the workgroup size of the entry point's LocalSize
    execution mode. A kernel without known block sizes is an error.
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

#endif // LOOM_CODEGEN_GPU_PASSES_TD
