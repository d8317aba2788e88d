//===- PerOp.h - Loom's steps beside ONNX Runtime's nodes -------*- C++ -*-===//
//
// Part of Loom. loom-bench-cpu --per-op: for a compiled model, the time of
// each of Loom's steps (the runtime's profile, LOOM_PROFILE=FILE.json) beside
// the time ONNX Runtime's profile gives the nodes that step computes.
//
// A step knows the ONNX nodes it came from: `loom-compile --step-sources`
// lists, per step, the names of the nodes of its ops (the importer makes each
// node's name the location of the ops it becomes). ONNX Runtime's profile
// names the nodes of its optimised graph: an original node keeps its name; a
// node a fusion made is named after the node it replaced with a "/" and the
// fusion after it (`/l0/fc1/MatMul/MatMulAddFusion`); a node the NCHWc
// transformer made after the tensor it writes (`/l0/conv/Conv_output_0_nchwc`,
// PyTorch naming that tensor after its node); other nodes afresh (`Gelu`,
// `gemm_input_reshape`, `ReorderInput`). A node of the first three kinds is
// put on the step whose sources hold the name it stands for
// (`ortNodeOrigins`); the rest are listed apart, by operator.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_CPU_PEROP_H
#define LOOM_BENCH_CPU_PEROP_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

/// One of Loom's steps with its ONNX Runtime counterpart.
struct PerOpStep {
  int64_t index = 0;
  /// The step's kind (`kernel`, `onednn.matmul`, ...) and its tg ops
  /// joined by '+' without the dialect (`matmul+add+gelu`).
  std::string kind, ops;
  /// The ONNX nodes it came from.
  std::vector<std::string> sources;
  /// Milliseconds per inference: the median execution times the executions
  /// per run.
  double loomMs = 0;
  /// ONNX Runtime's matched nodes, and their milliseconds per inference.
  std::vector<std::string> ortNodes;
  double ortMs = 0;
};

/// ONNX Runtime's nodes that no step claims, by operator.
struct PerOpUnmatched {
  std::string op;
  int64_t nodes = 0;
  double ortMs = 0;
};

struct PerOpTable {
  std::vector<PerOpStep> steps;
  std::vector<PerOpUnmatched> unmatched;
  /// Whether ONNX Runtime's profile is in (else only Loom's column).
  bool haveOrt = false;
  double loomTotalMs() const;
  double ortTotalMs() const;
};

/// The ONNX node names ONNX Runtime's profile node `name` may stand for, most
/// likely first: the name itself; then, for a node the NCHWc transformer made
/// (`/a/Conv_output_0_nchwc`, `/a/Conv_output_0_nchwc_token_3`), the tensor
/// it is named after and, where that tensor is PyTorch's `NODE_output_N`,
/// NODE; for any other, the node a fusion replaced (the name before each "/"
/// suffix).
std::vector<llvm::StringRef> ortNodeOrigins(llvm::StringRef name);

/// Joins loom-compile's --step-sources file, the runtime's profile
/// (LOOM_PROFILE=FILE.json) and, when `ortProfile` is not empty, ort-run.js's
/// --profile file, for the entry called `entry`.
llvm::Expected<PerOpTable> buildPerOpTable(llvm::StringRef stepSources,
                                           llvm::StringRef loomProfile,
                                           llvm::StringRef ortProfile,
                                           llvm::StringRef entry = "main");

/// Prints `table` for `model`: a summary by step kind and ops, then the
/// `rows` steps where Loom loses most to ONNX Runtime (or, without it, the
/// slowest), then ONNX Runtime's unmatched nodes.
void printPerOpTable(llvm::raw_ostream &os, llvm::StringRef model,
                     const PerOpTable &table, unsigned rows);

llvm::json::Object perOpJSON(const PerOpTable &table);

} // namespace loom::bench

#endif // LOOM_BENCH_CPU_PEROP_H
