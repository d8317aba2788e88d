#!/usr/bin/env bash
#===- scripts/check-onnx-vs-ort.sh - A real ONNX model: Loom against ORT --===#
#
# Imports an ONNX model with loom-translate (its --dim and --bind options),
# runs Loom's interpreter on random inputs (seed 1, uniform in [-1, 1]) and
# ONNX Runtime (onnxruntime-node, as installed by scripts/setup-bench.sh) on
# the same inputs plus the bound ones, and compares every output:
# loom-run --compare prints the largest error and exits non-zero past the
# tolerance. Used for models whose control flow or recurrent layers the
# importer resolves (docs/ONNX/Import.md).
#
#   scripts/check-onnx-vs-ort.sh model.onnx [--dim N=V]... [--bind N=V]...
#
#   LOOM_BUILD_DIR   build directory (default: <repo>/build)
#   TOLERANCE        largest |loom - ort| / max(1, |ort|) (default 1e-4)
#
# The bound values are given to ONNX Runtime as int64 scalars when integral,
# else float32 scalars (what a sample-rate or flag input is).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
BIN=$BUILD/bin
ORT=$BUILD/bench-cpu/ort/node_modules/onnxruntime-node
if [ $# -lt 1 ] || [ ! -f "$1" ]; then
  echo "usage: $0 model.onnx [--dim N=V]... [--bind N=V]..." >&2
  exit 2
fi
if [ ! -d "$ORT" ]; then
  echo "check-onnx-vs-ort: no onnxruntime-node in $ORT (run LOOM_BUILD_DIR=$BUILD scripts/setup-bench.sh)" >&2
  exit 2
fi
model=$1
shift
binds=()
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = "--bind" ]; then
    j=$((i + 1))
    binds+=("${!j}")
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BIN/loom-translate" --import-onnx "$model" "$@" -o "$work/model.mlir"

# Random inputs for Loom's arguments (their names and shapes from the
# imported signature), and the same plus the bound inputs for ORT.
python3 - "$work" "${binds[@]}" <<'EOF'
import json, random, re, struct, sys
work, binds = sys.argv[1], sys.argv[2:]
text = open(f"{work}/model.mlir").read()
sig = re.search(r"func\.func @main\((.*?)\)\s*->", text, re.S).group(1)
args = re.findall(r"tensor<([0-9x]*)x?(f32|i64|i32)>\s*\{tg\.name = \"([^\"]+)\"", sig)
random.seed(1)
def write(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
loom = []
for dims, ty, name in args:
    shape = [int(d) for d in dims.split("x") if d]
    n = 1
    for d in shape:
        n *= d
    if ty == "f32":
        data = struct.pack(f"<{n}f", *[random.uniform(-1, 1) for _ in range(n)])
        loom.append((name, "F32", shape, data))
    else:
        loom.append((name, "I64" if ty == "i64" else "I32", shape,
                     bytes(n * (8 if ty == "i64" else 4))))
bound = []
for b in binds:
    name, value = b.split("=", 1)
    v = float(value)
    if v == int(v):
        bound.append((name, "I64", [], struct.pack("<q", int(v))))
    else:
        bound.append((name, "F32", [], struct.pack("<f", v)))
write(f"{work}/loom-inputs.safetensors", loom)
write(f"{work}/ort-inputs.safetensors", loom + bound)
EOF

node "$ROOT/bench/cpu/ort-run.js" --ort "$ORT" --model "$model" \
  --inputs "$work/ort-inputs.safetensors" --outputs "$work/ort.safetensors" \
  --threads 2 --warmup 1 --repeat 1 > "$work/ort.json"
"$BIN/loom-run" "$work/model.mlir" --inputs "$work/loom-inputs.safetensors" \
  --compare "$work/ort.safetensors" --tolerance "${TOLERANCE:-1e-4}"
