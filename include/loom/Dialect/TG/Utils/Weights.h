//===- Weights.h - tg.weight and safetensors files --------------*- C++ -*-===//
//
// Part of Loom. `tg.weight "name"` refers to a tensor in the safetensors file
// named by the module attribute `tg.weights`. These helpers find that file,
// check weights against it, and write random weights for a module.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_UTILS_WEIGHTS_H
#define LOOM_DIALECT_TG_UTILS_WEIGHTS_H

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Support/SafeTensors.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace loom::tg {

/// The safetensors dtype that stores elements of `elementType`, if any.
std::optional<safetensors::DType> dtypeForElementType(mlir::Type elementType);

/// Whether `v` is a parameter: a tg.weight, a tg.constant, or the result of
/// a tg op (without regions) of parameters, which --tg-fold-weights
/// computes at compile time.
bool isParameter(mlir::Value v);

/// Moves the op defining the parameter `v`, and those it is computed from,
/// before `before` where they stand after it in its block (so that an op
/// made at `before` may read `v`).
void hoistParameter(mlir::Value v, mlir::Operation *before);

/// True when the module holds at least one tg.weight.
bool usesWeights(mlir::ModuleOp module);

/// The weights file of `module`: `override` when non-empty, otherwise the
/// `tg.weights` attribute, resolved relative to the directory of the file the
/// module was parsed from. Emits an error at the module and fails when there
/// is neither.
mlir::FailureOr<std::string> resolveWeightsPath(mlir::ModuleOp module,
                                                llvm::StringRef override);

/// Opens the weights file of `module` (see resolveWeightsPath); an unreadable
/// or malformed file is an error at the module.
mlir::FailureOr<safetensors::File> openWeights(mlir::ModuleOp module,
                                               llvm::StringRef override);

/// The weights file of a module, opened on first use (the interpreter and
/// the ONNX exporter read weights lazily so that a module without weights
/// needs no file).
class LazyWeights {
public:
  LazyWeights(mlir::ModuleOp module, std::string override)
      : module(module), override(std::move(override)) {}

  /// The file, with `op`'s tensor checked against its type (checkWeight).
  /// Failures are diagnosed; an unusable file is reported once.
  mlir::FailureOr<const safetensors::File *> fileFor(WeightOp op);

private:
  mlir::ModuleOp module;
  std::string override;
  std::optional<safetensors::File> file;
  bool failedToOpen = false;
};

/// The elements of `value` as the little-endian bytes a safetensors file or
/// an ONNX initializer holds (i1 as one byte 0 or 1 per element).
std::string littleEndianBytes(mlir::DenseElementsAttr value);

/// littleEndianBytes(value) without a copy where the attribute holds them
/// as they are (not a splat, elements of whole bytes, a little-endian
/// host): its raw data; else nullopt.
std::optional<llvm::ArrayRef<char>>
littleEndianView(mlir::DenseElementsAttr value);

/// Checks that `file` holds the tensor `op` names, with the dtype and shape of
/// its result type; emits an error at `op` otherwise.
mlir::LogicalResult checkWeight(WeightOp op, const safetensors::File &file);

/// Writes a safetensors file with a random tensor for every distinct
/// tg.weight of `module`. Values are uniform, scaled by the weight's use:
/// fan-in scaled for filters and matrices, positive around 1 for
/// normalisation scales and variances, small for biases; deterministic for a
/// given seed. Two tg.weight ops with one name must agree on the type.
mlir::LogicalResult writeRandomWeights(mlir::ModuleOp module,
                                       llvm::StringRef path, uint64_t seed);

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_UTILS_WEIGHTS_H
