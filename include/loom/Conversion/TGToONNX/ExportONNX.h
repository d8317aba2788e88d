//===- ExportONNX.h - tg graphs to ONNX models ------------------*- C++ -*-===//
//
// Part of Loom. Writes a function of tg ops, with its weights, as an ONNX
// model (opset 17, IR version 8) that onnx::checker accepts, so that a model
// Loom holds can be run by other runtimes and compared with them.
//
//   mlir::ModuleOp module = ...;          // tg ops, tg.weights names a file
//   loom::ONNXExportOptions options;      // entry "main", opset 17, checked
//   if (mlir::failed(loom::exportONNXToFile(module, "model.onnx", options)))
//     ...                                 // diagnostics were emitted
//
// Every tg op has an ONNX spelling (gelu, which opset 17 lacks, becomes its
// erf or tanh formula; a fused conv activation a second node; enlarge a
// Pad). `tg.weight` tensors become initializers read from the module's
// safetensors file (or `weightsFile`), `tg.constant` ones initializers too.
// Graph inputs and outputs take their names from the `tg.name` argument and
// result attributes (else argN / resultN), node names from NameLoc
// locations where there are some.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CONVERSION_TGTOONNX_EXPORTONNX_H
#define LOOM_CONVERSION_TGTOONNX_EXPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace loom {

/// Options of exportONNX().
struct ONNXExportOptions {
  /// Function to export; empty: @main, or the module's only function.
  std::string entry;
  /// Safetensors file of the tg.weight tensors; empty: the module's
  /// `tg.weights` attribute, relative to the .mlir file it was read from.
  std::string weightsFile;
  /// Write ONNX's textual syntax instead of a serialized ModelProto.
  bool text = false;
  /// Run onnx::checker on the result (an error if it rejects it).
  bool check = true;
  /// ModelProto.producer_name.
  std::string producerName = "loom";
};

/// The opset of the default domain exported models use.
constexpr int64_t kONNXExportOpset = 17;

/// Writes the entry function of `module` to `os` as an ONNX model. Emits
/// diagnostics (at the offending op) and fails on ops or types ONNX cannot
/// express, missing weights, or a model the checker rejects; nothing is
/// written then.
mlir::LogicalResult exportONNX(mlir::ModuleOp module, llvm::raw_ostream &os,
                               const ONNXExportOptions &options = {});

/// exportONNX() into the file at `path` (written only when the export
/// succeeds; a failure to write is a diagnostic at the module). With
/// `options.text` unset, a path ending in ".onnxtext" still gets text.
mlir::LogicalResult exportONNXToFile(mlir::ModuleOp module,
                                     llvm::StringRef path,
                                     const ONNXExportOptions &options = {});

} // namespace loom

#endif // LOOM_CONVERSION_TGTOONNX_EXPORTONNX_H
