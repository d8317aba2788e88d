#!/usr/bin/env bash
#===- scripts/setup.sh - Install Loom's dependencies, configure, build ----===#
#
# Idempotent: installs the Debian packages Loom needs (only the missing ones;
# `apt-get update` first), configures build/ with CMake + Ninja against
# LLVM/MLIR 22, and builds. Re-running only rebuilds what changed.
#
#   LOOM_BUILD_DIR   build directory (default: <repo>/build)
#   LOOM_BUILD_TYPE  CMake build type (default: Release)
#   LOOM_JOBS        parallel build jobs (default: nproc)
#   LOOM_WERROR      1 (default): configure with -DLOOM_WERROR=ON, every
#                    compiler warning in Loom's code an error, as in CI;
#                    0: warnings stay warnings (a compiler other than the
#                    clang-22 this script installs)
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
BUILD_TYPE=${LOOM_BUILD_TYPE:-Release}
JOBS=${LOOM_JOBS:-$(nproc)}
WERROR=ON
if [ "${LOOM_WERROR:-1}" = 0 ]; then WERROR=OFF; fi

PACKAGES=(
  cmake ninja-build ccache
  clang-22 libclang-rt-22-dev          # compiler; libFuzzer for the fuzz targets
  lld-22                               # links the artifacts loom-compile writes
  libdnnl-dev libopenblas-dev          # libloomrt: oneDNN and OpenBLAS steps
  libgomp1                             # GNU OpenMP, the pool oneDNN and kernels share
  llvm-22 llvm-22-dev llvm-22-tools    # LLVM, lit, FileCheck, llvm-objcopy (artifact tests)
  libmlir-22-dev mlir-22-tools         # libMLIR.so, mlir-tblgen
  libz3-dev                            # SMT solver (rule verification)
  libgtest-dev libgmock-dev            # GoogleTest
  libonnx-dev libprotobuf-dev protobuf-compiler  # ONNX import/export
  libonnx-testdata                     # the ONNX backend conformance suite
  dataset-fashion-mnist                # Fashion-MNIST: loom-train and its tests
  openmpi-bin libopenmpi-dev           # multi-rank runtime: the MPI communicator and %mpirun tests
  mesa-vulkan-drivers libvulkan-dev    # Vulkan target: the loader, and lavapipe to run SPIR-V kernels on the CPU
  spirv-tools                          # spirv-val on every generated SPIR-V kernel
  jq                                   # scripts/bench-trials.sh: the FLOPs of loom-opt's cost report
  xz-utils                             # scripts/gpu-check.sh: a GPU machine's stage, compressed to travel
  libcpp-httplib-dev                   # loom-serve: the HTTP server (header-only cpp-httplib, thread pool)
  libonig-dev                          # the tokenizer: Oniguruma, the regex engine of HuggingFace's tokenizers
  curl                                 # loom-serve's lit tests: the HTTP client
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libcurl4-openssl-dev  # LLVM's CMake exports
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DLOOM_WERROR="$WERROR"
elif ! grep -q "^LOOM_WERROR:BOOL=$WERROR\$" "$BUILD/CMakeCache.txt"; then
  # An existing build keeps its other settings; this one follows LOOM_WERROR.
  cmake -S "$ROOT" -B "$BUILD" -DLOOM_WERROR="$WERROR"
fi
cmake --build "$BUILD" -j "$JOBS"
