#!/usr/bin/env bash
# Usage: compile-as-built.sh OBJ_ROOT SOURCE [FLAG...]
# Checks SOURCE's syntax with the exact command the build compiles it with
# (from OBJ_ROOT/compile_commands.json: its include paths and warnings,
# -Werror=switch included), plus FLAG...; exits with the compiler's status.
set -u
obj=$1 src=$2
shift 2
cmd=$(grep -F '"command": ' "$obj/compile_commands.json" |
  grep -F -- "-c $src\"" | head -1 |
  sed -e 's/^ *"command": "//' -e 's/",$//' -e 's/ -o [^ ]*//' \
      -e 's/ -c [^ ]*$//' -e 's/-fdiagnostics-color//')
if [ -z "$cmd" ]; then
  echo "compile-as-built.sh: $src is not in $obj/compile_commands.json" >&2
  exit 2
fi
cd "$obj" && eval "$cmd -fsyntax-only $* $src"
