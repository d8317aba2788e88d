#!/usr/bin/env bash
#===- scripts/run-example.sh - Set up, build and run a bundled model ------===#
#
# README command 1. Builds Loom, writes random weights for the chosen model
# (seed 0) into the build directory, parses, verifies, canonicalises and
# interprets it with loom-run (outputs, time, time per op kind), then
# compiles it ahead of time with loom-compile into a shared object and runs
# that through libloomrt with --check: the same inputs through the
# interpreter, the largest difference, and both latencies.
#
#   scripts/run-example.sh [bert|resnet50|bottleneck]   (default: bert)
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/setup.sh"

model=${1:-bert}
out="$BUILD/examples"
mkdir -p "$out"
case "$model" in
  bert)       mlir="$ROOT/python-free-examples/bert_encoder_layer.mlir" ;;
  bottleneck) mlir="$ROOT/python-free-examples/resnet_bottleneck.mlir" ;;
  resnet50)
    mlir="$out/resnet50.mlir"
    "$BUILD/bin/loom-gen-resnet50" --batch 1 -o "$mlir" ;;
  *) echo "run-example: unknown model '$model' (bert, resnet50, bottleneck)" >&2; exit 2 ;;
esac
weights="$out/$(basename "${mlir%.mlir}").safetensors"

echo "== $model: $mlir"
"$BUILD/bin/loom-opt" "$mlir" --canonicalize -o "$out/$(basename "${mlir%.mlir}").canonical.mlir"
"$BUILD/bin/loom-run" "$mlir" --write-random-weights "$weights" --seed 0
"$BUILD/bin/loom-run" "$mlir" --weights "$weights" --canonicalize --profile --repeat 3
artifact="$out/$(basename "${mlir%.mlir}").so"
echo "== $model: compiled to $artifact"
"$BUILD/bin/loom-compile" "$mlir" --weights-file "$weights" -o "$artifact" --print-schedule --time-stages
"$BUILD/bin/loom-run" "$artifact" --check --repeat 10
