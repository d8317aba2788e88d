//===- Prepare.h - A decoder's weights, artifact and export -----*- C++ -*-===//
//
// Part of Loom. What a row of loom-bench-decode runs on, made once per model
// and capacity in the work directory: the zoo's module and random weights
// (loom-zoo NAME --seq P --context C --weights W --seed S), Loom's artifact
// (loom-compile), and the same model in the past/present ONNX form for ONNX
// Runtime (scripts/export-decoder.py). An ONNX file given as the model is
// compiled by loom-compile as it is and run by ONNX Runtime as it is.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_DECODE_PREPARE_H
#define LOOM_BENCH_DECODE_PREPARE_H

#include "Options.h"
#include "PeerSides.h"

#include <string>

namespace loom::bench {

struct PreparedModel {
  /// The artifact, and what the peers run.
  std::string artifact;
  PeerModel peer;
  int64_t capacity = 0, promptBound = 0;
  /// Bytes of every weight stored, and of those a decode step reads in
  /// full: all but the tables it gathers one row of (GPT-2's
  /// transformer.wpe, Llama's model.embed_tokens); 0 when unknown (an ONNX
  /// file).
  int64_t weightBytes = 0, decodeWeightBytes = 0;
  double compileSeconds = 0;
  int64_t compilePeakRssKb = 0;
  /// Why a side cannot run: no artifact (Loom), no export (ONNX Runtime),
  /// no torch module (PyTorch); empty when it can.
  std::string loomReason, ortReason, torchReason;
};

/// Makes the model of `o` at `capacity` in `dir` (the export only with
/// `withOnnx`). An error only when nothing can run.
llvm::Expected<PreparedModel> prepareModel(const DecodeOptions &o,
                                           int64_t capacity,
                                           llvm::StringRef dir, bool withOnnx);

} // namespace loom::bench

#endif // LOOM_BENCH_DECODE_PREPARE_H
