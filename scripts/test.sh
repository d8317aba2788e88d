#!/usr/bin/env bash
#===- scripts/test.sh - Set up, build and run the whole test suite --------===#
#
# README command 2. Runs check-loom (lit + GoogleTest) and ends with one line
# "check-loom: N passed, M failed"; exits non-zero when anything failed.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
"$ROOT/scripts/setup.sh"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cmake --build "$BUILD" --target check-loom 2>&1 | tee "$log" || status=$?

passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$log" | tail -1)
failed=0
for kind in Failed Unresolved "Timed Out" XPASS; do
  n=$(sed -n "s/^ *$kind *: *\([0-9]*\).*/\1/p" "$log" | tail -1)
  failed=$((failed + ${n:-0}))
done
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1  # the build or lit itself failed
fi
echo "check-loom: ${passed:-0} passed, $failed failed"
exit "$status"
