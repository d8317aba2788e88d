#!/usr/bin/env bash
#===- scripts/bench-trials.sh - Fused trials against sequential trials -----===#
#
# Hydro's inter-trial fusion measured (docs/Training.md, "Fusing trials"):
# the Fashion-MNIST MLP and CNN training steps (SGD with momentum, the
# hyper-parameters as arguments) compiled once unfused and once fused for
# N = 1, 2, 4, 8, 16 trials (--tg-fuse-trials); each artifact run with
# `loom-run --repeat` (median of the runs) on random inputs. The fused step
# does N trials' work, so its throughput is N / median and the speed-up over
# running the trials one after another is N x unfused / fused.
#
#   scripts/bench-trials.sh [BUILD_DIR] [REPEAT] [ROUNDS] [TRIALS] [MODELS]
#                  (default build, 20, 1, "1 2 4 8 16", "mlp cnn")
#
# With ROUNDS > 1 the unfused and the fused step are timed alternately,
# ROUNDS times each, and each figure is the median of the rounds' medians:
# on a machine that other work shares, the ratio of the two is then rough
# but not biased by when each ran.
# Prints a table and writes bench-trials.json in the current directory.
# Measure on an idle machine: the numbers are meaningless while anything
# else runs. Results: docs/benchmarks/train.md.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
repeat=${2:-20}
rounds=${3:-1}
trial_counts=${4:-1 2 4 8 16}
models=${5:-mlp cnn}
bin=$build/bin
for tool in loom-opt loom-compile loom-run; do
  [ -x "$bin/$tool" ] || { echo "bench-trials.sh: error: no $bin/$tool (build first)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The median of an artifact's runs, in ms.
median_ms() {
  "$bin/loom-run" "$1" --entry "$2" --repeat "$repeat" |
    sed -n 's/.*median \([0-9.]*\) s.*/\1/p' | awk '{ printf "%.3f", $1 * 1000 }'
}

# The median of the values on stdin.
median() {
  sort -n | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2); if (NR % 2) print v[m]; else printf "%.3f", (v[m] + v[m + 1]) / 2 }'
}

json="["
printf '%-5s %4s %12s %12s %14s %10s\n' model N "fused ms" "unfused ms" "trials/s" speed-up
for model in $models; do
  step=$work/$model-step.mlir
  # The module's other functions (logits, loss) read the weights.
  "$bin/loom-run" "$root/python-free-examples/fashion-mnist/$model.mlir" \
    --write-random-weights "$work/$model.safetensors" > /dev/null
  "$bin/loom-opt" "$root/python-free-examples/fashion-mnist/$model.mlir" \
    --tg-autodiff="function=loss optimizer=sgd lr=0.05 momentum=0.9 hyper-parameter-arguments=true" \
    -o "$step"
  "$bin/loom-compile" "$step" --weights-file="$work/$model.safetensors" -o "$work/$model-1.so"
  for n in $trial_counts; do
    "$bin/loom-opt" "$step" --tg-fuse-trials="function=loss_train_step trials=$n" \
      -o "$work/$model-fused-$n.mlir"
    "$bin/loom-compile" "$work/$model-fused-$n.mlir" --weights-file="$work/$model.safetensors" \
      -o "$work/$model-fused-$n.so"
    singles="" fuseds=""
    for _ in $(seq "$rounds"); do
      singles+="$(median_ms "$work/$model-1.so" loss_train_step)"$'\n'
      fuseds+="$(median_ms "$work/$model-fused-$n.so" loss_train_step_trials)"$'\n'
    done
    single=$(printf '%s' "$singles" | median)
    fused=$(printf '%s' "$fuseds" | median)
    rate=$(awk -v n="$n" -v t="$fused" 'BEGIN { printf "%.1f", n / (t / 1000) }')
    gain=$(awk -v n="$n" -v s="$single" -v t="$fused" 'BEGIN { printf "%.2f", n * s / t }')
    printf '%-5s %4d %12s %12s %14s %9sx\n' "$model" "$n" "$fused" "$single" "$rate" "$gain"
    json+="{\"model\":\"$model\",\"trials\":$n,\"fused_ms\":$fused,\"unfused_ms\":$single,\"speedup\":$gain},"
  done
done
echo "${json%,}]" > bench-trials.json
echo "wrote bench-trials.json"
