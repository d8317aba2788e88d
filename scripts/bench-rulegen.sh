#!/usr/bin/env bash
#===- scripts/bench-rulegen.sh - Benchmark the rule generator -------------===#
#
# Runs loom-rulegen at K = 3 and K = 4 (the default operator set unless
# --ops says otherwise), each with --stats-json, then prints one table (the
# count of every stage and the seconds of every stage, one column per K) and
# writes a combined JSON file. Results are recorded in
# docs/benchmarks/rulegen.md.
#
#   scripts/bench-rulegen.sh                 # K = 3 and K = 4 (K = 4: ~15 min)
#   scripts/bench-rulegen.sh --k 3           # K = 3 only
#   scripts/bench-rulegen.sh --k 3,4 --out /tmp/rulegen-bench --threads 2
#
# Options: --k LIST (comma-separated K values; default 3,4), --build DIR
# (default $LOOM_BUILD_DIR or build/), --out DIR (rules files, per-K JSON,
# logs and rulegen-bench.json; default a new temporary directory), --threads
# N (default 2), --ops LIST (default: loom-rulegen's default set), and any
# further arguments after `--`, passed to loom-rulegen as they are.
#
# Plain bash: the statistics JSON (pretty-printed, one key per line) is
# flattened with awk; no python or jq is needed.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
KS=3,4
OUT=
THREADS=2
OPS=
EXTRA=()

usage() { sed -n '/^# Runs/,/^#===-/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    --k) KS=$2; shift 2 ;;
    --k=*) KS=${1#--k=}; shift ;;
    --build) BUILD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-rulegen: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

RULEGEN=$BUILD/bin/loom-rulegen
if [ ! -x "$RULEGEN" ]; then
  echo "bench-rulegen: $RULEGEN not found; build it: ninja -C $BUILD loom-rulegen" >&2
  exit 1
fi
[ -n "$OUT" ] || OUT=$(mktemp -d "${TMPDIR:-/tmp}/rulegen-bench.XXXXXX")
mkdir -p "$OUT"
IFS=, read -r -a KLIST <<< "$KS"
for k in "${KLIST[@]}"; do
  case $k in [1-5]) ;; *) echo "bench-rulegen: K must be 1..5, got '$k'" >&2; exit 2 ;; esac
done

# Flattens pretty-printed JSON into "a.b.c<TAB>value" lines.
flatten() {
  awk '
    function key(line) { sub(/^[ \t]*"/, "", line); sub(/".*/, "", line); return line }
    /^[ \t]*"[^"]*": *(\{\}|\[\]),?$/ { next }
    /^[ \t]*"[^"]*": *\{/ { path[++depth] = key($0); next }
    /^[ \t]*\}/ { if (depth > 0) depth--; next }
    /^[ \t]*"[^"]*": / {
      k = key($0); v = $0; sub(/^[^:]*: */, "", v); sub(/,$/, "", v)
      p = ""; for (i = 1; i <= depth; ++i) p = p path[i] "."
      print p k "\t" v
    }' "$1"
}
# Value of a flattened key in a stats file ("-" if absent).
value() {
  local v
  v=$(flatten "$1" | awk -F'\t' -v k="$2" '$1 == k { print $2; exit }')
  echo "${v:--}"
}

echo "loom-rulegen benchmark: K = $KS, threads $THREADS, ops ${OPS:-default}; outputs in $OUT"
echo "machine: $(nproc) cores, $(uname -m), load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
for k in "${KLIST[@]}"; do
  args=(--max-ops "$k" --threads "$THREADS" --quiet -o "$OUT/rules-k$k.mlir"
        --stats-json "$OUT/stats-k$k.json")
  [ -z "$OPS" ] || args+=(--ops "$OPS")
  echo "K = $k: $RULEGEN ${args[*]} ${EXTRA[*]}"
  start=$(date +%s)
  if ! "$RULEGEN" "${args[@]}" "${EXTRA[@]}" 2> "$OUT/log-k$k.txt"; then
    echo "bench-rulegen: loom-rulegen failed for K = $k (see $OUT/log-k$k.txt):" >&2
    tail -5 "$OUT/log-k$k.txt" >&2
    exit 1
  fi
  echo "  done in $(( $(date +%s) - start )) s"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end"

# The table: one row per statistic, one column per K.
ROWS=(
  "graphs visited|visited"
  "graphs enumerated|enumerated"
  "  recompute a tensor|redundant_graphs"
  "fingerprint classes|classes"
  "candidate pairs|candidates"
  "  pruned: common subgraph|pruned.common_subgraph"
  "  pruned: congruence|pruned.congruence"
  "  pruned: renaming|pruned.renaming"
  "to verify|to_verify"
  "verified (proved)|verified"
  "  of which derived by rewriting (no proof)|verified_by_rewriting"
  "rejected (counterexample)|rejected"
  "timeouts|timeouts"
  "unproved|unproved"
  "  pruned: implied by smaller|pruned.implied_by_smaller"
  "    of which derived by rewriting|pruned.implied_by_rewriting"
  "  generalised (restated, re-proved)|generalization.generalized"
  "  already general|generalization.already_general"
  "  kept at enumeration shapes|generalization.kept_not_reproved"
  "  dropped: not provable on their own|generalization.dropped_not_provable_alone"
  "  pruned: identical after generalising|pruned.identical_after_generalization"
  "final rules|final_rules"
  "axioms|axioms.count"
  "axiom instances checked|axioms.checked_instances"
  "seconds: axiom check (beside enumeration)|seconds.axiom_check"
  "seconds: enumerate|seconds.enumerate"
  "seconds:   of which fingerprints|seconds.fingerprint"
  "seconds: prune|seconds.prune"
  "seconds: verify|seconds.verify"
  "seconds: implication|seconds.implication"
  "seconds: generalise|seconds.generalize"
  "seconds: emit|seconds.emit"
  "seconds: total|seconds.total"
)
echo
printf '| %-42s |' "stage"
for k in "${KLIST[@]}"; do printf ' %12s |' "K = $k"; done
printf '\n| %-42s |' "------------------------------------------"
for k in "${KLIST[@]}"; do printf ' %12s |' "-----------:"; done
echo
for row in "${ROWS[@]}"; do
  label=${row%%|*}
  key=${row#*|}
  line=$(printf '| %-42s |' "$label")
  any=
  for k in "${KLIST[@]}"; do
    v=$(value "$OUT/stats-k$k.json" "$key")
    [ "$v" = "-" ] || any=1
    case $key in seconds.*) [ "$v" = "-" ] || v=$(printf '%.2f' "$v") ;; esac
    line+=$(printf ' %12s |' "$v")
  done
  [ -z "$any" ] || echo "$line"
done

# The combined JSON: the machine and one entry per K (loom-rulegen's own
# statistics, as written).
{
  echo "{"
  echo "  \"machine\": {\"cores\": $(nproc), \"arch\": \"$(uname -m)\"},"
  echo "  \"runs\": {"
  n=0
  for k in "${KLIST[@]}"; do
    n=$((n + 1))
    printf '    "k%s": ' "$k"
    sed '1!s/^/    /' "$OUT/stats-k$k.json"
    [ "$n" -lt "${#KLIST[@]}" ] && echo "    ,"
  done
  echo "  }"
  echo "}"
} > "$OUT/rulegen-bench.json"
echo
echo "combined JSON: $OUT/rulegen-bench.json"
