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
# (scripts/bench-trials-torch.py, Debian's python3-torch under /usr/bin/python3)
# is timed in the same rounds; without torch its columns are "-".
# The headroom: each step's FLOPs, counted from its graph (each tg op's
# work, `loom-opt --tg-estimate-cost`), over its time give its GFLOP/s, set
# beside this machine's peak measured in the same run: the best of ROUNDS
# runs of a 1024x1024x1024 matrix product compiled by loom-compile (oneDNN),
# timed the same way as the steps. When one unfused trial already runs at
# more than half the peak, fusing trials cannot double the throughput here.
# PyTorch is timed at 1 and at 2 threads (the issue's target is stated for
# the machine's 2 cores; with the CPU clock its time is the CPU time of both
# threads); "vs torch" compares with the one at the thread count of Loom's
# runs, "vs 2T" with the 2-thread one.
# Prints a table and writes bench-trials.json in the current directory:
# {"clock", "threads", "peak_gflops_per_s", "rows": [one object per row]}.
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
command -v jq > /dev/null || { echo "bench-trials.sh: error: needs jq" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

clock=${BENCH_TRIALS_CLOCK:-wall}
# With the CPU clock, PyTorch's 2 threads sleep rather than spin while they
# wait (GNU OpenMP's passive policy), so that its CPU time counts the work.
case $clock in
  wall) threads=2 torch2_env="" ;;
  cpu) threads=1 torch2_env="OMP_WAIT_POLICY=passive" ;;
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

# The FLOPs of function $2 of module $1, counted from its graph.
flops_of() {
  "$bin/loom-opt" "$1" --tg-estimate-cost="target=h100 report=$work/cost.json" -o /dev/null
  jq -r --arg f "$2" '.functions[] | select(.function == $f) | .flops' "$work/cost.json"
}

# GFLOP/s of $1 FLOPs in $2 ms.
gflops() {
  awk -v f="$1" -v t="$2" 'BEGIN { printf "%.2f", f / (t / 1000) / 1e9 }'
}

# The median of the values on stdin.
median() {
  sort -n | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2); if (NR % 2) print v[m]; else printf "%.3f", (v[m] + v[m + 1]) / 2 }'
}

torch=""
if /usr/bin/python3 -c 'import torch' 2> /dev/null; then
  torch="/usr/bin/python3 $root/scripts/bench-trials-torch.py"
fi

# This machine's peak: a large product, timed as the steps are.
peak_n=1024
peak_t="tensor<${peak_n}x${peak_n}xf32>"
cat > "$work/peak.mlir" << MLIR
func.func @peak(%a: $peak_t, %b: $peak_t) -> $peak_t {
  %c = tg.matmul %a, %b : ($peak_t, $peak_t) -> $peak_t
  return %c : $peak_t
}
MLIR
"$bin/loom-compile" "$work/peak.mlir" -o "$work/peak.so"
peak_flops=$(flops_of "$work/peak.mlir" peak)
peaks=""
for _ in $(seq "$rounds"); do
  peaks+="$(median_ms "$work/peak.so" peak)"$'\n'
done
peak_ms=$(printf '%s' "$peaks" | sort -n | head -1)
peak=$(gflops "$peak_flops" "$peak_ms")
echo "peak: $peak GFLOP/s (${peak_n}^3 matmul, best of $rounds: $peak_ms ms; clock $clock, $threads thread(s))"

rows=""
printf '%-5s %4s %-9s %10s %10s %9s %8s %8s %8s %7s %11s %11s %8s %8s\n' model N form "fused ms" \
  "unfused ms" "trials/s" speed-up "fus GF/s" "unf GF/s" "unf/pk" "torch1T ms" "torch2T ms" "vs torch" \
  "vs 2T"
# One row: model $1, N $2, form $3, its fused ms $4 and FLOPs $5 (the
# unfused and PyTorch figures are the caller's).
row() {
  local model=$1 n=$2 form=$3 fused=$4 fused_flops=$5
  local vs_torch=null vs_torch2=null
  if [ -n "$torch" ]; then
    local same=$torch2_ms
    [ "$threads" = 1 ] && same=$torch1_ms
    vs_torch=$(awk -v p="$same" -v t="$fused" 'BEGIN { printf "%.2f", p / t }')
    vs_torch2=$(awk -v p="$torch2_ms" -v t="$fused" 'BEGIN { printf "%.2f", p / t }')
  fi
  local rate gain fused_gf single_gf of_peak
  rate=$(awk -v n="$n" -v t="$fused" 'BEGIN { printf "%.1f", n / (t / 1000) }')
  gain=$(awk -v n="$n" -v s="$single" -v t="$fused" 'BEGIN { printf "%.2f", n * s / t }')
  fused_gf=$(gflops "$fused_flops" "$fused")
  single_gf=$(gflops "$single_flops" "$single")
  of_peak=$(awk -v g="$single_gf" -v p="$peak" 'BEGIN { printf "%.2f", g / p }')
  printf '%-5s %4d %-9s %10s %10s %9s %7sx %8s %8s %7s %11s %11s %7sx %7sx\n' "$model" "$n" "$form" \
    "$fused" "$single" "$rate" "$gain" "$fused_gf" "$single_gf" "$of_peak" "${torch1_ms/null/-}" \
    "${torch2_ms/null/-}" "${vs_torch/null/-}" "${vs_torch2/null/-}"
  rows+="{\"model\":\"$model\",\"trials\":$n,\"form\":\"$form\",\"fused_ms\":$fused,"
  rows+="\"unfused_ms\":$single,\"speedup\":$gain,\"fused_flops\":$fused_flops,"
  rows+="\"unfused_flops\":$single_flops,\"fused_gflops_per_s\":$fused_gf,"
  rows+="\"unfused_gflops_per_s\":$single_gf,\"unfused_fraction_of_peak\":$of_peak,"
  rows+="\"torch_1_thread_ms\":$torch1_ms,\"torch_2_threads_ms\":$torch2_ms,"
  rows+="\"vs_torch\":$vs_torch,\"vs_torch_2_threads\":$vs_torch2},"
}

for model in $models; do
  step=$work/$model-step.mlir
  # The module's other functions (logits, loss) read the weights.
  "$bin/loom-run" "$root/python-free-examples/fashion-mnist/$model.mlir" \
    --write-random-weights "$work/$model.safetensors" > /dev/null
  "$bin/loom-opt" "$root/python-free-examples/fashion-mnist/$model.mlir" \
    --tg-autodiff="function=loss optimizer=sgd lr=0.05 momentum=0.9 hyper-parameter-arguments=true" \
    -o "$step"
  "$bin/loom-compile" "$step" --weights-file="$work/$model.safetensors" -o "$work/$model-1.so"
  single_flops=$(flops_of "$step" loss_train_step)
  # The fused forms: a model with convolutions also fuses them as dense
  # convolutions per trial (per-trial-convolutions=true).
  forms="batched"
  grep -q "tg.conv" "$step" && forms="grouped per-trial"
  for n in $trial_counts; do
    declare -A flops=() times=()
    for form in $forms; do
      base=$work/$model-$form-$n
      "$bin/loom-opt" "$step" -o "$base.mlir" --tg-fuse-trials="function=loss_train_step trials=$n \
per-trial-convolutions=$([ "$form" = per-trial ] && echo true || echo false)"
      "$bin/loom-compile" "$base.mlir" --weights-file="$work/$model.safetensors" -o "$base.so"
      flops[$form]=$(flops_of "$base.mlir" loss_train_step_trials)
      times[$form]=""
    done
    singles="" torches1="" torches2=""
    for _ in $(seq "$rounds"); do
      singles+="$(median_ms "$work/$model-1.so" loss_train_step)"$'\n'
      for form in $forms; do
        times[$form]+="$(median_ms "$work/$model-$form-$n.so" loss_train_step_trials)"$'\n'
      done
      if [ -n "$torch" ]; then
        torches1+="$($torch "$model" "$n" "$repeat" 1 "$clock")"$'\n'
        torches2+="$(env $torch2_env $torch "$model" "$n" "$repeat" 2 "$clock")"$'\n'
      fi
    done
    single=$(printf '%s' "$singles" | median)
    torch1_ms=null torch2_ms=null
    if [ -n "$torch" ]; then
      torch1_ms=$(printf '%s' "$torches1" | median)
      torch2_ms=$(printf '%s' "$torches2" | median)
    fi
    for form in $forms; do
      row "$model" "$n" "$form" "$(printf '%s' "${times[$form]}" | median)" "${flops[$form]}"
    done
  done
done
echo "{\"clock\":\"$clock\",\"threads\":$threads,\"peak_gflops_per_s\":$peak,\"rows\":[${rows%,}]}" |
  jq . > bench-trials.json
echo "wrote bench-trials.json"
