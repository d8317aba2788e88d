//===- Passes.td - tg transformation passes ----------------*- tablegen -*-===//
//
// Part of Loom. Passes are grouped under banners and kept alphabetical.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_TG_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

def TGCheckBounds : Pass<"tg-check-bounds", "mlir::func::FuncOp"> {
  let summary = "Prove that every tg.bound's length fits its padded dimension";
  let description = [{
    Runs MLIR's integer range analysis (`IntegerRangeAnalysis`, over the
    `InferIntRangeInterface` models of the tg ops that compute lengths:
    lib/Dialect/TG/Transforms/LengthRanges.cpp) and checks every `tg.bound`:
    its length must lie in [0, size of its dimension]. A length that may be
    negative or exceed the size is an error at the `tg.bound` op, giving the
    inferred range; with `print=true` every bound's inferred range is
    remarked at its op. The IR is not changed.

    ```
    loom-opt model.mlir --tg-check-bounds
    loom-opt model.mlir --tg-check-bounds=print=true
    ```

    ```mlir
    %idx, %n = tg.nonzero %m : (tensor<6xi1>) -> (tensor<1x6xi64>, tensor<i64>)
    // remark: length in [0, 6] of dimension 1 (size 6)
    %b = tg.bound %idx, %n {dim = 1 : i64} : tensor<1x6xi64>, tensor<i64>
    ```
  }];
  let options = [
    Option<"print", "print", "bool", /*default=*/"false",
           "Remark the inferred range of every bound's length">
  ];
}

def TGCheckWeights : Pass<"tg-check-weights", "mlir::ModuleOp"> {
  let summary = "Check every tg.weight against the module's safetensors file";
  let description = [{
    Opens the safetensors file named by the module attribute `tg.weights`
    (relative to the directory of the module's source file) or by the
    `weights-file` option, and checks that every `tg.weight` names a tensor
    of the file with the dtype and shape of its result type. Each mismatch is
    an error at the `tg.weight` op; the IR is not changed.

    ```
    loom-opt model.mlir --tg-check-weights
    loom-opt model.mlir --tg-check-weights=weights-file=other.safetensors
    ```
  }];
  let options = [
    Option<"weightsFile", "weights-file", "std::string", /*default=*/"",
           "Safetensors file to check against (default: the module's "
           "tg.weights attribute)">
  ];
}

//===----------------------------------------------------------------------===//
// Analyses
//===----------------------------------------------------------------------===//

def TGEstimateCost : Pass<"tg-estimate-cost", "mlir::ModuleOp"> {
  let summary = "Estimate the run time of every function with a cost model";
  let description = [{
    Computes, for every function of the module, the FLOPs, bytes and
    estimated seconds of each tg op with the chosen cost model, and writes a
    JSON report (`report=FILE`) and/or a table on stderr (`print=true`). The
    IR is not changed.

    Targets: `cpu` (a roofline calibrated on this machine by a short
    micro-benchmark of the interpreter's kernels), `h100`, `h200` (datasheet
    rooflines), `measured` (each distinct op timed once with the reference
    interpreter and cached in `cost-db=FILE`).

    ```
    loom-opt model.mlir --tg-estimate-cost="target=h100 report=cost.json"
    loom-opt model.mlir --tg-estimate-cost="target=measured cost-db=costs.json print=true"
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Cost model: cpu, h100, h200 or measured">,
    Option<"report", "report", "std::string", /*default=*/"",
           "Write a JSON report to this file">,
    Option<"costDb", "cost-db", "std::string", /*default=*/"",
           "Cost database for target=measured (created if absent)">,
    Option<"print", "print", "bool", /*default=*/"false",
           "Print a per-op-kind table to stderr">
  ];
}

//===----------------------------------------------------------------------===//
// Optimisations
//===----------------------------------------------------------------------===//

def TGConv3dAs2d : Pass<"tg-conv3d-as-2d", "mlir::func::FuncOp"> {
  let summary = "Rewrite 3-D convolutions as sums of 2-D ones over depth slices";
  let description = [{
    Rewrites each `tg.conv` with 3 spatial dimensions, `[N, C, D, H, W]` by
    `[O, C/g, KD, KH, KW]`, as the sum over the kernel's depth taps `t` of
    2-D convolutions: the input padded in depth and transposed to `[N, D,
    C, H, W]`, its depths `t * dilation + i * stride` (a strided slice)
    taken as `N * OD` images `[C, H, W]`, convolved with the filter's depth
    tap `[O, C/g, KH, KW]` (the H and W strides, pads, dilations and the
    groups of the 3-D convolution), the bias on the last tap, the fused
    activation after the sum, and the result transposed back to `[N, O,
    OD, OH, OW]`. The 2-D convolutions are what the oneDNN backend and the
    vectorised generated convolutions run; the sum is a chain of adds that
    oneDNN takes as its convolutions' sum post-op. Exact in real arithmetic
    (the taps are summed in another order). A bf16 or f16 convolution of
    several depth taps stays 3-D: it accumulates in f32 and is rounded
    once (docs/Precision.md), where a sum of taps would round each. `loom-compile` runs it after
    `--tg-fold-batchnorm` (`--conv3d-as-2d=false` keeps 3-D convolutions),
    leaving the 3-D convolutions that a library backend it forms fragments
    with runs as they are (oneDNN's 3-D convolution over NCDHW, cuDNN's):
    on the CPU it rewrites those oneDNN does not take (not f32) and all of
    them with `--conv-backend=codegen`.

    A kernel that spans depth alone (`[O, C/g, KD, 1, 1]`, R(2+1)D's
    temporal convolutions) with unit strides and no pads in height and
    width is instead one 2-D convolution over `[N, C, D, H * W]` (a reshape,
    no copy) with the kernel `[O, C/g, KD, 1]`: no transpose, slice or sum.

    ```
    loom-opt video.mlir --tg-conv3d-as-2d
    ```
  }];
}

def TGEraseBounds : Pass<"tg-erase-bounds", "mlir::func::FuncOp"> {
  let summary = "Replace every tg.bound by its input";
  let description = [{
    A `tg.bound` is the identity; it states which part of a padded value is
    valid. Once what a consumer needs from the bounds is recorded (the
    function results' `tg.bounded_dim` and `tg.length_result`, which the
    importer derives from the `tg.bound` feeding the return), the ops can
    go: loom-compile runs this pass first, so fragment formation, the
    schedule and the memory plan see plain static tensors, and no bound is
    ever copied.

    ```mlir
    %b = tg.bound %x, %n {dim = 0 : i64} : tensor<8xf32>, tensor<i64>
    %y = tg.relu %b : tensor<8xf32>
    // after --tg-erase-bounds:
    %y = tg.relu %x : tensor<8xf32>
    ```
  }];
}

def TGFoldBatchNorm : Pass<"tg-fold-batchnorm", "mlir::func::FuncOp"> {
  let summary = "Fold inference batchnorm into the convolution before it, or into a per-channel affine";
  let description = [{
    Rewrites `batchnorm(conv(x, W, b), gamma, beta, mean, var)`, when the
    convolution's result has no other use, has no fused activation and the
    batchnorm parameters are weights or constants, into
    `conv(x, W * k, (b - mean) * k + beta)` with
    `k = gamma * rsqrt(var + epsilon)` per output channel, written as tg ops
    on the parameters; `--tg-fold-weights` then computes them at compile
    time. Any other batchnorm with such parameters (a pre-activation
    network's: DenseNet's layers normalise a concatenation) becomes
    `x * k + (beta - mean * k)`, both reshaped to `[1, C, 1, ...]`: a
    multiply and an add by one value per channel, which the oneDNN backend
    runs as one binary step in the convolutions' layout and generated code
    as an elementwise kernel. Exact in real arithmetic; the float result
    differs from the unfolded graph by rounding only.

    ```
    loom-opt model.mlir --tg-fold-batchnorm --tg-fold-weights
    ```
  }];
}

def TGPoolBeforeConv1x1 : Pass<"tg-pool-before-conv1x1", "mlir::func::FuncOp"> {
  let summary = "Average-pool before a 1x1 convolution instead of after it";
  let description = [{
    Rewrites `avgpool(conv(x, W, b))`, where the convolution is pointwise
    (1x1 filter, unit strides, no padding, no fused activation, any
    groups), its result has no other use and the pool has no padding, into
    `conv(avgpool(x), W, b)`. Both are linear, one mixing channels, the
    other pixels; without padding every window is whole and divided by its
    size, so the bias passes through the mean. Exact in real arithmetic
    (the float result differs by rounding only). Applied where the
    convolution's multiply-adds saved, `C_in / groups * C_out * (pixels
    before - pixels after)`, exceed the pool's extra work on the wider side,
    `(C_in - C_out) * pixels after * window`: DenseNet's transitions
    (`conv1x1` halving the channels, then a 2x2 stride-2 average pool) run
    their convolution on a quarter of the pixels.

    ```
    loom-opt model.mlir --tg-pool-before-conv1x1
    ```
  }];
}

def TGConvOverConcat : Pass<"tg-conv-over-concat", "mlir::func::FuncOp"> {
  let summary = "Convolve a channel concatenation's operands instead of copying them together";
  let description = [{
    Two rewrites that let a concatenation's copy go away:

    * `pool(concat(x1, ..., xn))` -> `concat(pool(x1), ..., pool(xn))`
      (max, average and global average pools) where the pool is the
      concatenation's only reader and it joins batches or channels: a pool
      works on each image and channel alone, and the concatenation then
      copies the pooled, smaller tensors.
    * `conv(concat(x1, ..., xn), W, b)` along the channels ->
      `conv(x1, W1, b) + ... + conv(xn, Wn)`, `Wi` the filter's slice of
      `xi`'s input channels (a parameter: the slices fold at compile time),
      the fused activation applied to the sum. Done for all of a
      concatenation's readers at once, only when every reader is a dense
      convolution (one group) of its result, every operand has at least 16
      channels, and the partial sums move less memory than the copy:
      `(n - 1) * (elements of the readers' results) < elements of the
      concatenation` (each addition writes and reads a result once more; a
      library convolution adds it as its sum post-op). SqueezeNet's fire
      modules (64 + 64 channels of expand, read by a 16-channel squeeze)
      and U-Net decoders (a skip concatenated to an upsampled map, read by
      a narrower 3x3 convolution) pass; Inception's blocks (four branches
      read by several convolutions and a pool) and DenseNet's (a batch norm
      reads them) do not.

    Convolution is linear in its input channels (zero padding included), so
    both are exact in real arithmetic; the float result differs by rounding
    only. `loom-compile` runs it on CPU targets (`--conv-over-concat`).

    ```
    loom-opt model.mlir --tg-conv-over-concat --tg-fold-weights
    ```
  }];
}

def TGScaleAfterMatmul : Pass<"tg-scale-after-matmul", "mlir::func::FuncOp"> {
  let summary = "Scale a matmul's result instead of a moved operand";
  let description = [{
    Rewrites `matmul(x / c, y)` (or `x * c`, `c * x`, on either operand),
    where `c` is a constant of one element, the scaled operand has no other
    use and is the result of a transpose, slice or reshape, and the
    product's only user is a softmax or an elementwise op, into
    `matmul(x, y) / c`. An attention's `softmax(q / sqrt(d) @ k^T)`: the
    scale joins the softmax's generated kernel, and `q`'s slice of the
    packed QKV product and its transpose become strided operands of the
    product (docs/Compiler.md, "Views folded into matrix products")
    instead of a kernel that copies them. Exact in real arithmetic; the
    float result differs by rounding only (not at all when `c` is a power of
    two).

    ```
    loom-opt model.mlir --tg-scale-after-matmul
    ```
  }];
}

def TGSinkSplits : Pass<"tg-sink-splits", "mlir::func::FuncOp"> {
  let summary = "Apply the same op to every piece of a split once, before it";
  let description = [{
    Rewrites a `tg.split` each of whose results has one use, the same op
    with the same attributes at the same operand position in every piece,
    into that op applied once to the whole tensor and the split after it:

    * an elementwise op (`relu`, `add`, `cast`, ...) whose other operands
      either are one value broadcast along the split axis (size 1 or absent
      there) or are parameters (weights, constants or ops on them) as large
      as the piece along it, concatenated along that axis;
    * a `batchnorm` of a split along the channels (axis 1), its four
      parameters (parameters too) concatenated.

    Repeated until nothing changes, so a split of a split is passed too.
    A rewrite that merged operators sharing an input (tg-superopt's
    `conv(x, concat(W1, W2))` followed by a split) then has its
    per-branch batchnorm and activation on the merged operator, where
    `--tg-fold-batchnorm` folds them and the backends fuse them, and the
    split alone after it (a view on the CPU: docs/Compiler.md,
    "Concatenations and splits in place"). Exact: every element is computed
    by the same op from the same operands.

    ```
    loom-opt model.mlir --tg-sink-splits --tg-fold-batchnorm
    ```
  }];
}

def TGTrimConvTaps : Pass<"tg-trim-conv-taps", "mlir::func::FuncOp"> {
  let summary = "Drop the convolution taps that read only padding";
  let description = [{
    Rewrites each `tg.conv` (1-D, 2-D or 3-D, any strides, dilations,
    groups, bias and activation, any filter) some of whose filter taps read
    zero padding for every output position, given the input size, pads,
    stride and dilation: the filter becomes a `tg.slice` of the taps that
    can read the input and the pads shrink so that every kept tap reads the
    element it read before and the output keeps its size; a dimension left
    with one tap gets dilation 1. DeepLabV3's ASPP convolutions (3x3,
    dilation = padding = 24 or 36, on a 16 x 16 plane) become 1x1
    convolutions without padding, their eight outer taps having read zeros
    only; at dilation 12 every tap reads the plane and nothing changes.

    Exact in real arithmetic: the dropped taps only ever multiplied zeros
    of the padding, and every kept tap multiplies the elements it did
    before (the index arithmetic is in `TrimConvTaps.cpp`); a backend may
    sum the products in another order (a 1x1 convolution as a matrix
    product), so float results differ by rounding at most. Taps are
    dropped only from the ends of a dimension, and only as far as the new
    padding stays non-negative.
    `loom-compile` runs it before its other convolution rewrites (after
    the canonicalisation that folds a `tg.pad` into a convolution's pads);
    `--tg-fold-weights` then slices a parameter filter at compile time.

    ```
    loom-opt model.mlir --tg-trim-conv-taps
    ```
  }];
}

def TGNarrowProducts : Pass<"tg-narrow-products", "mlir::ModuleOp"> {
  let summary = "Run matrix products and convolutions in bf16 or f16, or on TF32 operands (an autocast policy)";
  let description = [{
    Rewrites every `tg.matmul` and `tg.conv` whose operands and result are
    f32 into the same op on operands cast to `type` (bf16 or f16), its
    result cast back to f32: `loom-compile --precision=bf16|f16`'s policy
    (docs/Precision.md). A narrow product or convolution accumulates in f32
    and rounds its result once to its type (the lowering and the library
    steps; the interpreter emulates that rounding); everything else
    (normalisations, softmax, reductions, elementwise ops, `tg.attention`)
    stays f32. Casts of weights are computed by `--tg-fold-weights`: the
    weights a product reads are stored narrow.

    ```mlir
    %y = tg.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
    // becomes
    %xn = tg.cast %x : tensor<8x64xf32> to tensor<8x64xbf16>
    %wn = tg.cast %w : tensor<64x32xf32> to tensor<64x32xbf16>
    %yn = tg.matmul %xn, %wn : (tensor<8x64xbf16>, tensor<64x32xbf16>) -> tensor<8x32xbf16>
    %y = tg.cast %yn : tensor<8x32xbf16> to tensor<8x32xf32>
    ```

    A cast back to f32 that only feeds another narrowed product's cast to
    the same type is skipped: the two casts are the identity on a narrow
    value.

    With `type=tf32` (`loom-compile --precision=tf32`) the products stay
    f32: both multiplicands of each (a convolution's input and filter, not
    its bias) are rounded by a `tg.round_tf32` of their own, just before the
    product (one per use: each joins its product's kernel), and the result
    is f32, as a tensor core computes an f32 product in TF32. The roundings
    are not folded, not even of weights: the GPU's tiled classes round an
    operand as they load it and multiply on tensor cores where both
    operands are so rounded.

    ```mlir
    %y = tg.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
    // with type=tf32 becomes
    %xr = tg.round_tf32 %x : tensor<8x64xf32>
    %wr = tg.round_tf32 %w : tensor<64x32xf32>
    %y = tg.matmul %xr, %wr : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
    ```

    ```
    loom-opt model.mlir --tg-narrow-products=type=bf16 --tg-fold-weights
    ```
  }];
  let options = [
    Option<"type", "type", "std::string", /*default=*/"\"bf16\"",
           "The narrow type: bf16 or f16; or tf32 (f32 products on "
           "operands rounded to TF32)">,
  ];
}

def TGFoldWeights : Pass<"tg-fold-weights", "mlir::ModuleOp"> {
  let summary = "Compute every op whose operands are weights or constants";
  let description = [{
    Evaluates, with the reference interpreter's kernels, every tg op whose
    operands are all `tg.weight`s, `tg.constant`s or results of such ops,
    and replaces it by a `tg.constant` of its result: parameter preparation
    (transposed weight matrices, folded batchnorm, reshaped biases) then
    costs nothing at run time.

    The contract: a fold never changes a result the unfolded program would
    give. Each op is computed in its own element type
    (`tg::evaluateAtCompileTime`, docs/Interpreter.md "Compile-time
    evaluation"): an op with an f32, f16 or bf16 operand or result in the
    interpreter's f32 domain, an op entirely in f64 and integers in its f64
    domain (exact for integers below 2^53), `tg.cast` in f64 (its one
    rounding is to its result type); every result is rounded to its
    element type before another op reads it. So a cast to an integer, a
    comparison, a floor or an argmax after f32 arithmetic gives what it
    gives at run time: T5's relative-position buckets (`log(d / 8) /
    log(16) * 8` cast to an integer) are 10 for distance 16 in f32 and were
    9 when folded in f64.

    Data-movement ops (concatenation, split, slice, transpose, reshape) of
    element types of whole bytes are folded by copying bytes instead, the
    same values without a double per element; a chain of them (the tree
    of concatenations tg-superopt's merged products leave) becomes one
    constant where another op reads it, its inner nodes none.
    Ops whose value depends on the other ranks of a world (`TG_ReadsWorld`)
    are never folded, nor, unless `fold-roundings`, roundings the reading
    op's kernel carries out (`TG_KeptUnfolded`: `tg.round_tf32`,
    docs/Precision.md); a folded `tg.round_tf32` becomes a `tg.constant`
    marked `tg.tf32_values` (its values are TF32). loom-compile folds the
    roundings that only library steps read (a cuBLASLt or cuDNN step would
    otherwise round its weight at every inference).
    Weights are read from the module's `tg.weights` file or `weights-file`.
    Computed results larger than `max-elements` are left alone (values
    known at compile time are held as doubles: 512 MiB at the default);
    data movement folded by copying bytes is bounded by `max-moved-bytes`
    instead (1 GiB a result: a classifier's 411 MB weight matrix
    transposed for its product is folded, not transposed at every
    inference).

    ```
    loom-opt model.mlir --tg-fold-weights
    ```
  }];
  let options = [
    Option<"weightsFile", "weights-file", "std::string", /*default=*/"",
           "Safetensors file of the weights (default: the module's "
           "tg.weights attribute)">,
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"(1 << 26)",
           "Largest computed result folded, in elements">,
    Option<"maxMovedBytes", "max-moved-bytes", "int64_t",
           /*default=*/"(int64_t(1) << 30)",
           "Largest result of data movement folded by copying, in bytes">,
    Option<"foldRoundings", "fold-roundings", "bool", /*default=*/"false",
           "Fold tg.round_tf32 of parameters too, into tg.constant marked "
           "tg.tf32_values">,
  ];
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

def TGFuseTrials : Pass<"tg-fuse-trials", "mlir::ModuleOp"> {
  let summary = "Fuse N independent trials of a training step into one function";
  let description = [{
    Hydro's inter-trial fusion. From `function` (a training step built by
    `--tg-autodiff`, best with `hyper-parameter-arguments=true`, or any
    function, whose float `tg.weight`s are taken as parameters), adds
    `@<function>_trials` computing `trials` independent trials at once.
    Every parameter, optimizer state and hyper-parameter argument (the
    argument attributes `tg.parameter`, `tg.optimizer_state`,
    `tg.hyper_parameter`) gains a leading trial dimension `[N, ...]`; the
    function's own inputs are shared by the trials unless
    `per-trial-inputs=true`; every result is `[N, ...]`.

    Values that depend on no per-trial argument are computed once; every
    other op is rewritten into its fused form: elementwise ops (the
    `TG_Elementwise` class) and `tg.matmul` broadcast the trial dimension as
    a leading batch dimension (a product becomes a batched product);
    reductions, softmax, layernorm and data movement act per trial (their
    axes shift by one); convolutions become grouped convolutions with the
    trials folded into the channels (`groups * N` groups), as does inference
    batchnorm (or, with `per-trial-convolutions=true`, N dense convolutions
    on the trials' slices of the `[N, ...]` form, concatenated); pooling
    folds the trials into the batch; the losses
    (`softmax_cross_entropy`, `mse_loss`) are computed per trial. An op with
    a per-trial operand and no fused form is an error at the op, naming it.
    `loom-run --check-trials=N` checks the fused function against N
    separate runs on the reference interpreter.

    ```
    loom-opt step.mlir --tg-fuse-trials="function=loss_train_step trials=8"
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The function to fuse (default: the module's only function)">,
    Option<"trials", "trials", "int64_t", /*default=*/"2",
           "Number of trials N">,
    Option<"perTrialInputs", "per-trial-inputs", "bool", /*default=*/"false",
           "Give the function's own inputs a trial dimension too">,
    Option<"perTrialConvolutions", "per-trial-convolutions", "bool",
           /*default=*/"false",
           "Compute each convolution as N dense ones on the trials' slices "
           "instead of one grouped convolution">,
    Option<"name", "name", "std::string", /*default=*/"\"\"",
           "Name of the new function (default: <function>_trials)">,
    Option<"plantWrongRule", "plant-wrong-rule", "bool", /*default=*/"false",
           "Test only: fuse tg.softmax over the wrong axis (the suite checks "
           "that --check-trials catches it)">,
  ];
}

#endif // LOOM_DIALECT_TG_TRANSFORMS_PASSES_TD
