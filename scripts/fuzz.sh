#!/usr/bin/env bash
#===- scripts/fuzz.sh - Run Loom's libFuzzer targets for a bounded time ---===#
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 120)
#
# Seeds each fuzzer with the checked-in inputs (test/Fuzz/Inputs/<target>/)
# and every .mlir test split at its `// -----` markers, runs it for the given
# time, and copies any crasher into test/Fuzz/Inputs/<target>/ so that it
# becomes a regression test (test/Fuzz/regressions.test runs them all).
# Exits non-zero when a fuzzer found a crash.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
SECONDS_PER_TARGET=${1:-120}
"$ROOT/scripts/setup.sh" >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
found=0

fuzz() {
  local target=$1 binary=$2 inputs="$ROOT/test/Fuzz/Inputs/$1"
  local corpus="$work/$target/corpus" artifacts="$work/$target/artifacts"
  mkdir -p "$corpus" "$artifacts"
  cp "$inputs"/* "$corpus/" 2>/dev/null || true
  if [ "$target" = parse-verify-interpret ]; then
    local i=0
    while IFS= read -r -d '' f; do
      awk -v p="$corpus/t$i" 'BEGIN{n=0} /^\/\/ -----/{n++; next} {print > (p "_" n ".mlir")}' "$f"
      i=$((i + 1))
    done < <(find "$ROOT/test" "$ROOT/python-free-examples" -name '*.mlir' -print0)
  fi
  echo "== fuzzing $target for ${SECONDS_PER_TARGET}s ($(ls "$corpus" | wc -l) seed inputs)"
  "$BUILD/bin/$binary" -max_total_time="$SECONDS_PER_TARGET" -timeout=20 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "$corpus" 2>&1 | grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|==.*ERROR|SUMMARY)" || true
  for crash in "$artifacts"/*; do
    [ -e "$crash" ] || continue
    name="$inputs/$(basename "$crash")"
    cp "$crash" "$name"
    echo "!! $target: crasher saved as $name"
    found=1
  done
}

fuzz parse-verify-interpret loom-fuzz-parse-verify-interpret
fuzz safetensors loom-safetensors-fuzzer
fuzz artifact loom-artifact-fuzzer
# Built only with loom-serve (cpp-httplib).
if [ -x "$BUILD/bin/loom-serve-request-fuzzer" ]; then
  fuzz serve-request loom-serve-request-fuzzer
fi
exit "$found"
