//===- ImportONNX.h - ONNX models to the tg dialect -------------*- C++ -*-===//
//
// Part of Loom. Imports an ONNX model (binary protobuf or ONNX's textual
// syntax) into a module holding one func.func of tg ops:
//
//   1. parse the ModelProto (a truncated or hostile file is an error);
//   2. pin symbolic input dimensions (`dims`, `inputShapes`);
//   3. report every operator no handler imports (one diagnostic per operator
//      type, naming the node and the opset);
//   4. check the model (onnx::checker), infer shapes, convert it to
//      `targetOpset` with ONNX's version converter, infer shapes again;
//   5. import node by node through one handler table
//      (lib/Conversion/ONNXToTG/), folding shape computations to constants.
//
// Initializers become `tg.weight` ops whose tensors are added to a
// safetensors writer (the caller writes the file and names it with
// `weightsAttr`); small integer ones and scalars become `tg.constant`.
// Nothing here throws or aborts on bad input: every problem is a diagnostic
// at a location naming the model file and, where there is one, the node.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CONVERSION_ONNXTOTG_IMPORTONNX_H
#define LOOM_CONVERSION_ONNXTOTG_IMPORTONNX_H

#include "loom/Support/SafeTensors.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

/// How the bytes of a model are written.
enum class ONNXFormat {
  /// A serialized ModelProto (`.onnx`).
  Binary,
  /// ONNX's textual syntax (`.onnxtext`), read with onnx::OnnxParser.
  Text
};

/// One tensor read from a serialized onnx.TensorProto (the input_N.pb and
/// output_N.pb files of the ONNX backend tests).
struct ONNXTensor {
  std::string name;
  /// The ONNX element type (onnx.TensorProto.DataType) and its name
  /// ("float", "int64", ...).
  int32_t dataType = 0;
  std::string typeName;
  std::vector<int64_t> shape;
  /// Every element as a double (integers exactly up to 2^53; bool as 0/1).
  std::vector<double> values;
  /// For a value bound to a graph input (ONNXImportOptions::boundInputs):
  /// `shape` is not given and is the input's declared one (`values` must
  /// fill it), or [N] for N values when the declared shape is not static.
  bool shapeFromInput = false;
};

/// Options of importONNX().
struct ONNXImportOptions {
  /// Opset of the default ONNX domain the model is converted to before
  /// import; 0 keeps the model's own. A model that the version converter
  /// cannot convert is imported at its own opset (with a warning): the
  /// handlers know the older forms too.
  int64_t targetOpset = 17;
  /// Sizes of symbolic input dimensions, by `dim_param` name.
  llvm::StringMap<int64_t> dims;
  /// Shapes of graph inputs, by input name; they replace the declared ones
  /// (the conformance harness passes the shapes of its input data).
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Graph inputs bound to values at import time: they become constants
  /// instead of function arguments (for inputs that tg needs as attributes:
  /// a Reshape's shape, a Resize's scales, ...). `dataType` 0 takes the
  /// input's declared type. The module records every binding in the
  /// attribute `loom.onnx.bound_inputs` (name -> dense elements).
  llvm::StringMap<ONNXTensor> boundInputs;
  /// Value of the module attribute `tg.weights` (the weights file, relative
  /// to the .mlir file). Empty: no attribute (and an error if the model
  /// needs weights).
  std::string weightsAttr;
  /// Name of the imported function.
  std::string functionName = "main";
  /// Initializers of floating-point type become tg.weight ops unless they
  /// have at most this many elements (0: only rank-0 or one-element ones).
  int64_t maxConstantElements = 1;
  /// Constant nodes and folded values with at most this many elements
  /// become tg.constant, bigger ones tg.weight.
  int64_t maxInlineConstantElements = 1024;
  /// Run onnx::checker before import.
  bool check = true;
  /// Turn exporters' spellings of LayerNormalization (ReduceMean, Sub, Pow,
  /// ReduceMean, Add, Sqrt, Div, Mul, Add) and Gelu (Div, Erf, Add, Mul,
  /// Mul) back into tg.layernorm and tg.gelu.
  bool fuseIdioms = true;
};

/// Registers the dialects an imported module uses (func, tg).
void registerONNXImportDialects(mlir::DialectRegistry &registry);

/// Imports the model in `bytes`. `sourceName` names it in diagnostics and
/// locations. Weights are added to `weights`. Returns null after emitting
/// diagnostics.
mlir::OwningOpRef<mlir::ModuleOp>
importONNX(llvm::StringRef bytes, llvm::StringRef sourceName, ONNXFormat format,
           mlir::MLIRContext *context, const ONNXImportOptions &options,
           safetensors::Writer &weights);

/// The highest opset of the default domain that the linked ONNX library
/// knows (its checker, shape inference and version converter).
int64_t getMaxKnownONNXOpset();

/// What a model declares, read without importing it.
struct ONNXModelInfo {
  /// Opset of the default domain.
  int64_t opset = 0;
  /// Distinct operator types of the top-level graph, sorted; operators of
  /// other domains as "domain:Type".
  std::vector<std::string> operators;
  struct Input {
    std::string name;
    int32_t dataType = 0;
    /// -1 for a dimension without a fixed size.
    std::vector<int64_t> shape;
    /// "tensor", or what else the value is ("sequence", "optional", "map",
    /// "sparse tensor"), which tg does not have.
    std::string kind = "tensor";
  };
  /// The graph inputs that are not initializers, in order (the arguments of
  /// the imported function).
  std::vector<Input> inputs;
  /// The graph outputs, in order (the results of the imported function).
  std::vector<Input> outputs;
};

/// Parses a model and summarises it.
llvm::Expected<ONNXModelInfo> describeONNXModel(llvm::StringRef bytes,
                                                ONNXFormat format);

/// The operator types the importer has a handler for, sorted.
std::vector<std::string> getSupportedONNXOperators();

/// The operator types among those that the importer evaluates only when
/// their inputs are known at import time (tg has no such operator), sorted.
std::vector<std::string> getFoldOnlyONNXOperators();

/// Parses a serialized TensorProto. Errors (truncated or malformed data,
/// element types other than float, double, float16, bfloat16, the integer
/// types and bool, data that does not fit the shape) name `what`.
llvm::Expected<ONNXTensor> readONNXTensor(llvm::StringRef bytes,
                                          llvm::StringRef what);

} // namespace loom

#endif // LOOM_CONVERSION_ONNXTOTG_IMPORTONNX_H
