#!/usr/bin/env bash
#===- scripts/gpu-zoo.sh - Every zoo model through the GPU targets -------===#
#
# Compiles every loom-zoo model (the small variants below) for
# --target=vulkan and --target=cuda:sm_80,sm_90a; validates each SPIR-V
# module with spirv-val; runs each Vulkan artifact on the Vulkan device
# (lavapipe where there is no GPU) with --check against the interpreter
# (relative error at most 1e-4); and prints ptxas's report of every CUDA
# kernel (scripts/ptxas-report.py: --summary, or every kernel with
# PTXAS_TABLE=kernels), failing when one spills. The table of
# docs/Codegen/GPU.md is its output. The lit tests
# (test/Codegen/GPU/zoo-*.test) run a subset of it.
#
#   scripts/gpu-zoo.sh [WORK_DIR]
#
#   LOOM_BUILD_DIR       build directory (default: <repo>/build)
#   RUN=0                compile and validate only (no Vulkan runs)
#   LOOM_DEVICE_TIMEOUT  seconds a run may wait for the device (the runtime's
#                        default is 60; nasnet-a at 224x224 needs more on
#                        lavapipe)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
BIN=$BUILD/bin
WORK=${1:-$(mktemp -d)}
mkdir -p "$WORK"

MODELS=(
  "resnet50 --image=32"
  "resnext50-32x4d --image=32"
  "inception-v3 --image=75"
  "squeezenet1.1 --image=32"
  "nasnet-a"
  "nasrnn --seq=2 --hidden=64"
  "bert-base --layers=1 --seq=8 --vocab=100"
  "bert-1layer --seq=8 --vocab=100"
  "multimodal --seq=4 --layers=1 --vocab=100"
  "dlrm --vocab=100"
  "candle-uno --hidden=64 --layers=1"
)

reports=()
for spec in "${MODELS[@]}"; do
  read -r model opts <<<"$spec"
  dir=$WORK/$model
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  "$BIN/loom-zoo" "$model" $opts -o "$dir/model.mlir" \
    --weights="$dir/model.safetensors"
  "$BIN/loom-compile" "$dir/model.mlir" --target=vulkan \
    --dump-kernels="$dir/vulkan" -o "$dir/vulkan.so"
  spirv-val --target-env vulkan1.3 "$dir/vulkan/image.spv"
  "$BIN/loom-compile" "$dir/model.mlir" --target=cuda:sm_80,sm_90a \
    --dump-kernels="$dir/cuda" -o "$dir/cuda.so"
  reports+=("$model=$dir/cuda")
  if [[ "${RUN:-1}" != 0 ]]; then
    "$BIN/loom-run" "$dir/vulkan.so" --device=vulkan --check --repeat=1 \
      | grep -E '^check:' | sed "s/^/$model vulkan: /"
  else
    echo "$model: compiled; SPIR-V valid"
  fi
done
if [[ "${PTXAS_TABLE:-summary}" == kernels ]]; then
  python3 "$ROOT/scripts/ptxas-report.py" --no-spills "${reports[@]}"
else
  python3 "$ROOT/scripts/ptxas-report.py" --summary --no-spills "${reports[@]}"
fi
