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
# BENCH_TRIALS_CLOCK=cpu times each step by the CPU time it takes on one thread
# (the `cpu:` line of `loom-run --repeat REPEAT --num-threads 1`; PyTorch's by
# time.process_time, one thread): on a
# machine whose cores other work keeps busy a wall clock mostly measures the
# waiting, a CPU clock much less so. Rough, and for one thread, not two.
# PyTorch's time for the same N trials run one after another
# (scripts/bench-trials-torch.py, Debian's python3-torch under /usr/bin/python3,
# 2 threads) is timed in the same rounds; without torch its column is "-".
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

clock=${BENCH_TRIALS_CLOCK:-wall}
case $clock in
  wall) threads=2 ;;
  cpu) threads=1 ;;
  *) echo "bench-trials.sh: error: BENCH_TRIALS_CLOCK=$clock: expected wall or cpu" >&2; exit 1 ;;
esac

# The median of an artifact's runs (wall clock, 2 threads), or its CPU time
# per run on one thread (cpu), in ms.
median_ms() {
  if [ "$clock" = cpu ]; then
    "$bin/loom-run" "$1" --entry "$2" --repeat "$repeat" --num-threads 1 |
      sed -n 's/^cpu: \([0-9.]*\) s per run.*/\1/p' | awk '{ printf "%.3f", $1 * 1000 }'
    return
  fi
  "$bin/loom-run" "$1" --entry "$2" --repeat "$repeat" |
    sed -n 's/.*median \([0-9.]*\) s.*/\1/p' | awk '{ printf "%.3f", $1 * 1000 }'
}

# The median of the values on stdin.
median() {
  sort -n | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2); if (NR % 2) print v[m]; else printf "%.3f", (v[m] + v[m + 1]) / 2 }'
}

torch=""
if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
  torch="/usr/bin/python3 $root/scripts/bench-trials-torch.py"
fi

json="["
printf '%-5s %4s %12s %12s %14s %10s %14s %10s\n' model N "fused ms" "unfused ms" "trials/s" speed-up \
  "torch N ms" "vs torch"
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
    singles="" fuseds="" torches=""
    for _ in $(seq "$rounds"); do
      singles+="$(median_ms "$work/$model-1.so" loss_train_step)"$'\n'
      fuseds+="$(median_ms "$work/$model-fused-$n.so" loss_train_step_trials)"$'\n'
      [ -z "$torch" ] || torches+="$($torch "$model" "$n" "$repeat" "$threads" "$clock")"$'\n'
    done
    single=$(printf '%s' "$singles" | median)
    fused=$(printf '%s' "$fuseds" | median)
    torch_ms=null vs_torch=null
    if [ -n "$torch" ]; then
      torch_ms=$(printf '%s' "$torches" | median)
      vs_torch=$(awk -v p="$torch_ms" -v t="$fused" 'BEGIN { printf "%.2f", p / t }')
    fi
    rate=$(awk -v n="$n" -v t="$fused" 'BEGIN { printf "%.1f", n / (t / 1000) }')
    gain=$(awk -v n="$n" -v s="$single" -v t="$fused" 'BEGIN { printf "%.2f", n * s / t }')
    printf '%-5s %4d %12s %12s %14s %9sx %14s %9sx\n' "$model" "$n" "$fused" "$single" "$rate" "$gain" \
      "${torch_ms/null/-}" "${vs_torch/null/-}"
    json+="{\"model\":\"$model\",\"trials\":$n,\"fused_ms\":$fused,\"unfused_ms\":$single,"
    json+="\"speedup\":$gain,\"torch_sequential_ms\":$torch_ms,\"vs_torch\":$vs_torch},"
  done
done
echo "${json%,}]" > bench-trials.json
echo "wrote bench-trials.json"
