//===- ONNXTensors.h - ONNX tensors and element types -----------*- C++ -*-===//
//
// Part of Loom. Shared by the ONNX importer, the exporter and the
// conformance harness: the map between ONNX element types, MLIR element
// types and safetensors dtypes, and a strict decoder of onnx.TensorProto
// that treats its input as hostile (every inconsistency is an llvm::Error,
// never an out-of-bounds read or an allocation larger than the data).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CONVERSION_ONNXCOMMON_ONNXTENSORS_H
#define LOOM_CONVERSION_ONNXCOMMON_ONNXTENSORS_H

#include "loom/Support/Shapes.h"
#include "loom/Support/SafeTensors.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::onnxutil {

/// The name ONNX gives element type `dataType` ("float", "int64", ...), or
/// "type N" for values outside the enum.
std::string dataTypeName(int32_t dataType);

/// True for FLOAT, DOUBLE, FLOAT16 and BFLOAT16.
bool isFloatDataType(int32_t dataType);

/// The MLIR element type that holds ONNX element type `dataType` in tg
/// (f32, f64, f16, bf16, i64, i32, i1), or null when tg has none.
mlir::Type getTGElementType(mlir::MLIRContext *context, int32_t dataType);

/// The ONNX element type of MLIR element type `type`, if any.
std::optional<int32_t> getONNXDataType(mlir::Type type);

/// A tensor whose value is known on the host: floats as doubles, integers
/// and bools as int64 (uint64 as its bit pattern).
struct HostTensor {
  int32_t dataType = onnx::TensorProto::FLOAT;
  std::vector<int64_t> shape;
  std::vector<double> floats;
  std::vector<int64_t> ints;

  bool isFloat() const { return isFloatDataType(dataType); }
  int64_t numElements() const {
    return static_cast<int64_t>(isFloat() ? floats.size() : ints.size());
  }
  double asDouble(size_t i) const {
    return isFloat() ? floats[i] : static_cast<double>(ints[i]);
  }
  int64_t asInt(size_t i) const {
    return isFloat() ? static_cast<int64_t>(floats[i]) : ints[i];
  }
  /// A tensor of `dataType` and `shape` with every element `value`.
  static HostTensor splat(int32_t dataType, std::vector<int64_t> shape,
                          double value);
};

/// Number of elements of `shape`, or -1 if a dimension is negative or the
/// product overflows (loom/Support/Shapes.h).
inline int64_t numElementsOf(llvm::ArrayRef<int64_t> shape) {
  return checkedNumElements(shape);
}

/// Decodes `tensor` (raw_data, the typed fields, or external data read from a
/// file under `externalDataDir`; absolute paths and `..` are refused).
/// Element types beyond float, double, float16, bfloat16, bool and the
/// integers (string, complex) are errors.
llvm::Expected<HostTensor> decodeTensor(const onnx::TensorProto &tensor,
                                        llvm::StringRef externalDataDir);

/// Checks, without decoding, that the data of `tensor` fits its shape and
/// element type (external data is checked when it is read).
llvm::Error checkTensorData(const onnx::TensorProto &tensor);

/// Rounds the values of `t` to its element type (float16, bfloat16, float)
/// and wraps integers to their width, as a Cast to that type does.
void roundToDataType(HostTensor &t);

/// Adds `t` to `writer` as tensor `name` with the safetensors dtype of its
/// element type.
llvm::Error addToWriter(safetensors::Writer &writer, llvm::StringRef name,
                        const HostTensor &t);

} // namespace loom::onnxutil

#endif // LOOM_CONVERSION_ONNXCOMMON_ONNXTENSORS_H
