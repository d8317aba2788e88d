//===- GraphImporter.h - The state of one ONNX import -----------*- C++ -*-===//
//
// Part of Loom. The importer of one ONNX graph: its values by name (IR
// values, tensors known at import time, or both), the weights written so
// far, and the module being built. ImportONNX.cpp walks the graph and builds
// the function; NodeContext.cpp keeps the values and gives each handler its
// NodeContext.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_ONNXTOTG_GRAPHIMPORTER_H
#define LOOM_LIB_CONVERSION_ONNXTOTG_GRAPHIMPORTER_H

#include "Importer.h"
#include "loom/Conversion/ONNXToTG/ImportONNX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::onnx_to_tg {

/// A value of the ONNX graph during import: an IR value, a tensor known at
/// import time, or both (once the known tensor has been materialised).
struct ImportedValue {
  enum class Origin { Computed, Initializer, ConstantNode, Folded };
  Origin origin = Origin::Computed;
  Value value;
  std::shared_ptr<const HostTensor> known;
  /// An initializer not decoded yet.
  const onnx::TensorProto *initializer = nullptr;
  bool decodeFailed = false;
  /// A graph input (an argument of the function).
  bool isGraphInput = false;
  int32_t dataType = 0;
  std::vector<int64_t> shape;
};

class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext *context, const ONNXImportOptions &options,
                safetensors::Writer &writer, llvm::StringRef sourceName)
      : context(context), builder(context), options(options), writer(writer),
        sourceName(sourceName.str()),
        fileLoc(mlir::FileLineColLoc::get(context, sourceName, 0, 0)) {
    externalDir = llvm::sys::path::parent_path(sourceName).str();
  }

  /// Imports the (checked, shape-inferred) graph of `model` as a module of
  /// one function; null after an error.
  mlir::OwningOpRef<mlir::ModuleOp> run(onnx::ModelProto &model);

  mlir::MLIRContext *context;
  mlir::OpBuilder builder;
  const ONNXImportOptions &options;
  safetensors::Writer &writer;
  std::string sourceName, externalDir;
  mlir::Location fileLoc;
  llvm::StringMap<ImportedValue> values;
  llvm::StringSet<> weightNames;
  bool usedWeights = false;
  /// Types ONNX's shape inference gave to values, by name.
  llvm::StringMap<const onnx::TypeProto *> onnxTypes;

  ImportedValue *lookup(llvm::StringRef name) {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
  const HostTensor *decode(ImportedValue &v, mlir::Location loc);
  FailureOr<Value> materialize(llvm::StringRef name, ImportedValue &v,
                               mlir::Location loc);
  FailureOr<Value> materializeHost(const HostTensor &t, llvm::StringRef name,
                                   bool asWeight, mlir::Location loc);
  std::string uniqueWeightName(llvm::StringRef base);
  LogicalResult checkAgainstONNX(llvm::StringRef name, const ImportedValue &v,
                                 NodeContext &ctx);
};

/// How diagnostics name a node: its name, or its first output.
std::string describeNode(const onnx::NodeProto &node);

} // namespace loom::onnx_to_tg

#endif // LOOM_LIB_CONVERSION_ONNXTOTG_GRAPHIMPORTER_H
