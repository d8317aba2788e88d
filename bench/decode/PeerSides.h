//===- PeerSides.h - ONNX Runtime and PyTorch columns -----------*- C++ -*-===//
//
// Part of Loom. The peers of loom-bench-decode, each a child process per
// request so that one peer's model is in memory at a time:
//
//  - ONNX Runtime through bench/decode/ort-decode.js (onnxruntime-node, as
//    loom-bench-cpu's ort-run.js, whose helpers it shares) on the export
//    scripts/export-decoder.py writes;
//  - PyTorch 1.13 eager through bench/decode/torch-decode.py, the same
//    torch.nn module on the zoo's weights.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_DECODE_PEERSIDES_H
#define LOOM_BENCH_DECODE_PEERSIDES_H

#include "Bandwidth.h"
#include "Options.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

enum class Peer { Ort, Torch };

/// "ort" or "torch".
const char *peerName(Peer p);

/// The model as the peers see it.
struct PeerModel {
  /// The export (ONNX Runtime) and the weights and architecture (PyTorch).
  std::string onnx, weights, arch;
  /// Rows of the position and rotary tables.
  int64_t capacity = 0;
};

/// One child run: a decode step at `context` (0: none), a prefill of
/// `prefillLength` tokens (0: none), the logits of `promptIds` (empty: none)
/// into `logitsOut`.
struct PeerRequest {
  int64_t context = 0, prefillLength = 0;
  std::vector<int64_t> promptIds;
  std::string logitsOut;
};

struct PeerResult {
  std::optional<double> decodeMs, prefillMs;
  /// Of the child, and of the child before it loaded the model.
  int64_t peakRssKb = 0, baselineRssKb = 0;
  /// Why it did not run (empty when it did).
  std::string failure;
};

/// Why `p` cannot run with `o` (node, onnxruntime-node, python or torch
/// missing), or success.
llvm::Error checkPeer(Peer p, const DecodeOptions &o);

/// The copy and read-only bandwidth measured by a child process (this
/// executable with --bandwidth-only): on every CPU the bench started with,
/// not the one a Loom team bound this thread to, and outside this process's
/// peak memory.
llvm::Expected<Bandwidth> measureBandwidthInChild(const DecodeOptions &o);

PeerResult runPeer(Peer p, const DecodeOptions &o, const PeerModel &m,
                   const PeerRequest &r);

/// Exports the zoo model of `weights` to `out` (scripts/export-decoder.py).
llvm::Error exportOnnx(const DecodeOptions &o, const PeerModel &m,
                       llvm::StringRef out);

} // namespace loom::bench

#endif // LOOM_BENCH_DECODE_PEERSIDES_H
