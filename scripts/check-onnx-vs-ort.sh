#!/usr/bin/env bash
#===- scripts/check-onnx-vs-ort.sh - A real ONNX model: Loom against ORT --===#
#
# Imports an ONNX model with loom-translate (its --dim and --bind options),
# with --feed NAME=VALUE an input both Loom and ORT get as that scalar value
# at run time (not bound: a run-time If on it stays a tg.if); COMPILED=1
# also compiles the model and compares the artifact's outputs;
# runs Loom's interpreter on random inputs (SEED, SCALE below) and
# ONNX Runtime (onnxruntime-node, as installed by scripts/setup-bench.sh) on
# the same inputs plus the bound ones, and compares every output:
# loom-run --compare prints the largest error and exits non-zero past the
# tolerance. Used for models whose control flow or recurrent layers the
# importer resolves (docs/ONNX/Import.md).
#
#   scripts/check-onnx-vs-ort.sh model.onnx [--dim N=V]... [--bind N=V]... [--feed N=V]...
#
#   LOOM_BUILD_DIR   build directory (default: <repo>/build)
#   TOLERANCE        largest |loom - ort| / max(1, |ort|) (default 1e-4)
#   SEED, SCALE      random inputs: seed (default 1), uniform in [-SCALE, SCALE]
#                    (default 1); a data-dependent If takes the branch they
#                    select, so two seeds or scales may be needed for both
#   INT_HIGH         integer inputs (token ids, indices) uniform in
#                    [0, INT_HIGH] (default 0: all zeros)
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
feeds=()
translate=()
while [ $# -gt 0 ]; do
  case "$1" in
  --bind) binds+=("$2"); translate+=("$1" "$2"); shift 2 ;;
  --feed) feeds+=("$2"); shift 2 ;;
  *) translate+=("$1"); shift ;;
  esac
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$BIN/loom-translate" --import-onnx "$model" "${translate[@]}" -o "$work/model.mlir"

# Random inputs for Loom's arguments (their names and shapes from the
# imported signature), and the same plus the bound inputs for ORT.
python3 - "$work" "${#binds[@]}" "${binds[@]}" "${feeds[@]}" <<'EOF'
import json, os, random, re, struct, sys
work, nbind = sys.argv[1], int(sys.argv[2])
binds, feeds = sys.argv[3:3 + nbind], sys.argv[3 + nbind:]
fed = dict(f.split("=", 1) for f in feeds)
text = open(f"{work}/model.mlir").read()
sig = re.search(r"func\.func @main\((.*?)\)\s*->", text, re.S).group(1)
args = re.findall(r"tensor<([0-9x]*)x?(f32|i64|i32)>\s*\{tg\.name = \"([^\"]+)\"", sig)
random.seed(int(os.environ.get("SEED", "1")))
int_high = os.environ.get("INT_HIGH", "0")
if not int_high.isdigit():
    sys.exit(f"check-onnx-vs-ort: INT_HIGH='{int_high}' is not a "
             "non-negative integer")
int_high = int(int_high)
scale = float(os.environ.get("SCALE", "1"))
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
    if name in fed:
        v = float(fed[name])
        fmt = {"f32": "f", "i64": "q", "i32": "i"}[ty]
        data = struct.pack(f"<{n}{fmt}", *[v if ty == "f32" else int(v)] * n)
        loom.append((name, ty.upper(), shape, data))
    elif ty == "f32":
        data = struct.pack(f"<{n}f", *[random.uniform(-scale, scale) for _ in range(n)])
        loom.append((name, "F32", shape, data))
    else:
        high = int_high
        fmt = "q" if ty == "i64" else "i"
        data = struct.pack(f"<{n}{fmt}",
                           *[random.randint(0, high) for _ in range(n)])
        loom.append((name, "I64" if ty == "i64" else "I32", shape, data))
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
if [ "${COMPILED:-0}" = 1 ]; then
  "$BIN/loom-compile" "$work/model.mlir" -o "$work/model.so"
  "$BIN/loom-run" "$work/model.so" --inputs "$work/loom-inputs.safetensors" \
    --compare "$work/ort.safetensors" --tolerance "${TOLERANCE:-1e-4}"
fi
