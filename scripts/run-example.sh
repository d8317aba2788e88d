#!/usr/bin/env bash
#===- scripts/run-example.sh - Set up, build and run a bundled model ------===#
#
# README command 1. Builds Loom, writes random weights for the chosen model
# (seed 0) into the build directory, then parses, verifies, canonicalises and
# interprets it with loom-run, printing its outputs, the time taken and the
# time per op kind.
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
