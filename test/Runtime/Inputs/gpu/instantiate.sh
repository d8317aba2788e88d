#!/usr/bin/env bash
# Usage: instantiate.sh TEMPLATE OUT KEY=VALUE...
# Writes TEMPLATE with each @KEY@ replaced by VALUE (the manifests and
# sources of the hand-built GPU artifacts, at the sizes a test asks for).
set -eu
template=$1 out=$2
shift 2
args=()
for kv in "$@"; do
  args+=(-e "s|@${kv%%=*}@|${kv#*=}|g")
done
sed "${args[@]}" "$template" > "$out"
if grep -q '@[A-Z]*@' "$out"; then
  echo "instantiate.sh: $out still has a placeholder: $(grep -o '@[A-Z]*@' "$out" | head -1)" >&2
  exit 1
fi
