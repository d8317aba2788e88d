//===- ONNXTensors.cpp - ONNX tensors and element types -------------------===//
//
// Part of Loom. See ONNXTensors.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/ONNXCommon/ONNXTensors.h"

#include "loom/Dialect/TG/IR/TGTypes.h"
#include "loom/Interpreter/Precision.h"
#include "loom/Support/ElementTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace loom;
using namespace loom::onnxutil;
using llvm::StringRef;
using TP = onnx::TensorProto;

std::string onnxutil::dataTypeName(int32_t dataType) {
  switch (dataType) {
  case TP::FLOAT:
    return "float";
  case TP::UINT8:
    return "uint8";
  case TP::INT8:
    return "int8";
  case TP::UINT16:
    return "uint16";
  case TP::INT16:
    return "int16";
  case TP::INT32:
    return "int32";
  case TP::INT64:
    return "int64";
  case TP::STRING:
    return "string";
  case TP::BOOL:
    return "bool";
  case TP::FLOAT16:
    return "float16";
  case TP::DOUBLE:
    return "double";
  case TP::UINT32:
    return "uint32";
  case TP::UINT64:
    return "uint64";
  case TP::COMPLEX64:
    return "complex64";
  case TP::COMPLEX128:
    return "complex128";
  case TP::BFLOAT16:
    return "bfloat16";
  default:
    return "type " + std::to_string(dataType);
  }
}

bool onnxutil::isFloatDataType(int32_t dataType) {
  return dataType == TP::FLOAT || dataType == TP::DOUBLE ||
         dataType == TP::FLOAT16 || dataType == TP::BFLOAT16;
}

mlir::Type onnxutil::getTGElementType(mlir::MLIRContext *context,
                                      int32_t dataType) {
  auto kind = elemKindOfONNX(dataType);
  return kind ? tg::getElementType(context, *kind) : mlir::Type();
}

std::optional<int32_t> onnxutil::getONNXDataType(mlir::Type type) {
  auto kind = tg::elemKindOf(type);
  if (!kind)
    return std::nullopt;
  return elementTypeInfo(*kind).onnxDataType;
}

HostTensor HostTensor::splat(int32_t dataType, std::vector<int64_t> shape,
                             double value) {
  HostTensor t;
  t.dataType = dataType;
  int64_t n = numElementsOf(shape);
  t.shape = std::move(shape);
  if (t.isFloat())
    t.floats.assign(n < 0 ? 0 : n, value);
  else
    t.ints.assign(n < 0 ? 0 : n, static_cast<int64_t>(value));
  return t;
}


namespace {

/// Size in bytes of one element in raw_data, or 0 for unsupported types.
size_t rawElementSize(int32_t dataType) {
  switch (dataType) {
  case TP::FLOAT:
  case TP::INT32:
  case TP::UINT32:
    return 4;
  case TP::DOUBLE:
  case TP::INT64:
  case TP::UINT64:
    return 8;
  case TP::FLOAT16:
  case TP::BFLOAT16:
  case TP::INT16:
  case TP::UINT16:
    return 2;
  case TP::INT8:
  case TP::UINT8:
  case TP::BOOL:
    return 1;
  default:
    return 0;
  }
}

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Decodes `n` little-endian elements of `dataType` from `bytes`.
void decodeRaw(int32_t dataType, const uint8_t *p, int64_t n, HostTensor &t) {
  using namespace llvm::support;
  for (int64_t i = 0; i < n; ++i) {
    switch (dataType) {
    case TP::FLOAT: {
      uint32_t bits = endian::read32le(p + 4 * i);
      float f;
      std::memcpy(&f, &bits, 4);
      t.floats.push_back(f);
      break;
    }
    case TP::DOUBLE: {
      uint64_t bits = endian::read64le(p + 8 * i);
      double d;
      std::memcpy(&d, &bits, 8);
      t.floats.push_back(d);
      break;
    }
    case TP::FLOAT16:
      t.floats.push_back(safetensors::halfToFloat(endian::read16le(p + 2 * i)));
      break;
    case TP::BFLOAT16:
      t.floats.push_back(
          safetensors::bfloat16ToFloat(endian::read16le(p + 2 * i)));
      break;
    case TP::INT64:
    case TP::UINT64:
      t.ints.push_back(static_cast<int64_t>(endian::read64le(p + 8 * i)));
      break;
    case TP::INT32:
      t.ints.push_back(static_cast<int32_t>(endian::read32le(p + 4 * i)));
      break;
    case TP::UINT32:
      t.ints.push_back(endian::read32le(p + 4 * i));
      break;
    case TP::INT16:
      t.ints.push_back(static_cast<int16_t>(endian::read16le(p + 2 * i)));
      break;
    case TP::UINT16:
      t.ints.push_back(endian::read16le(p + 2 * i));
      break;
    case TP::INT8:
      t.ints.push_back(static_cast<int8_t>(p[i]));
      break;
    case TP::UINT8:
      t.ints.push_back(p[i]);
      break;
    case TP::BOOL:
      t.ints.push_back(p[i] != 0);
      break;
    }
  }
}

/// Reads the external data of `tensor` (`location`, `offset`, `length`).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readExternal(const TP &tensor, StringRef dir, uint64_t expectedBytes) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &entry : tensor.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    if (key == "location") {
      location = value.str();
    } else if (key == "offset" || key == "length") {
      uint64_t v;
      if (value.getAsInteger(10, v))
        return makeError("external data " + key + " '" + value +
                         "' is not a non-negative integer");
      if (key == "offset")
        offset = v;
      else
        length = v;
    }
  }
  if (location.empty())
    return makeError("external data without a location");
  if (llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         ".."))
    return makeError("external data location '" + location +
                     "' must be a relative path below the model's directory");
  if (length && *length != expectedBytes)
    return makeError("external data length " + llvm::Twine(*length) +
                     " differs from the tensor's size of " +
                     llvm::Twine(expectedBytes) + " bytes");
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, location);
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return makeError("cannot read external data '" + path +
                     "': " + file.getError().message());
  uint64_t size = (*file)->getBufferSize();
  if (offset > size || size - offset < expectedBytes)
    return makeError("external data '" + path + "' holds " + llvm::Twine(size) +
                     " bytes, too few for " + llvm::Twine(expectedBytes) +
                     " bytes at offset " + llvm::Twine(offset));
  return llvm::MemoryBuffer::getMemBufferCopy(
      (*file)->getBuffer().substr(offset, expectedBytes), path);
}

} // namespace

llvm::Expected<HostTensor> onnxutil::decodeTensor(const TP &tensor,
                                                  StringRef externalDataDir) {
  HostTensor t;
  t.dataType = tensor.data_type();
  std::string what = tensor.name().empty() ? std::string("tensor")
                                           : "tensor '" + tensor.name() + "'";
  for (int64_t d : tensor.dims())
    t.shape.push_back(d);
  int64_t n = numElementsOf(t.shape);
  if (n < 0)
    return makeError(what + " has an invalid shape (a negative dimension or "
                            "an element count that overflows)");
  size_t elemSize = rawElementSize(t.dataType);
  if (elemSize == 0)
    return makeError(what + " has element type " + dataTypeName(t.dataType) +
                     ", which Loom does not support");
  if (tensor.has_segment())
    return makeError(what + " is segmented, which Loom does not support");
  auto count = [&](int64_t have) -> llvm::Error {
    if (have != n)
      return makeError(what + " has " + llvm::Twine(have) +
                       " elements of data for shape with " + llvm::Twine(n) +
                       " elements");
    return llvm::Error::success();
  };
  auto bytesFor = llvm::checkedMulUnsigned<uint64_t>(n, elemSize);
  if (!bytesFor)
    return makeError(what + " is too large");

  bool external = tensor.data_location() == TP::EXTERNAL;
  if (external || tensor.has_raw_data()) {
    std::unique_ptr<llvm::MemoryBuffer> ext;
    StringRef bytes;
    if (external) {
      auto buf = readExternal(tensor, externalDataDir, *bytesFor);
      if (!buf)
        return makeError(what + ": " + llvm::toString(buf.takeError()));
      ext = std::move(*buf);
      bytes = ext->getBuffer();
    } else {
      bytes = tensor.raw_data();
    }
    if (bytes.size() != *bytesFor)
      return makeError(what + " has " + llvm::Twine(bytes.size()) +
                       " bytes of raw data, expected " +
                       llvm::Twine(*bytesFor) + " for its shape and type");
    if (t.isFloat())
      t.floats.reserve(n);
    else
      t.ints.reserve(n);
    decodeRaw(t.dataType, reinterpret_cast<const uint8_t *>(bytes.data()), n,
              t);
    return t;
  }

  switch (t.dataType) {
  case TP::FLOAT:
    if (auto e = count(tensor.float_data_size()))
      return std::move(e);
    t.floats.assign(tensor.float_data().begin(), tensor.float_data().end());
    break;
  case TP::DOUBLE:
    if (auto e = count(tensor.double_data_size()))
      return std::move(e);
    t.floats.assign(tensor.double_data().begin(), tensor.double_data().end());
    break;
  case TP::FLOAT16:
  case TP::BFLOAT16:
    if (auto e = count(tensor.int32_data_size()))
      return std::move(e);
    for (int32_t v : tensor.int32_data()) {
      auto bits = static_cast<uint16_t>(v);
      t.floats.push_back(t.dataType == TP::FLOAT16
                             ? safetensors::halfToFloat(bits)
                             : safetensors::bfloat16ToFloat(bits));
    }
    break;
  case TP::INT64:
    if (auto e = count(tensor.int64_data_size()))
      return std::move(e);
    t.ints.assign(tensor.int64_data().begin(), tensor.int64_data().end());
    break;
  case TP::UINT32:
  case TP::UINT64:
    if (auto e = count(tensor.uint64_data_size()))
      return std::move(e);
    for (uint64_t v : tensor.uint64_data())
      t.ints.push_back(static_cast<int64_t>(v));
    break;
  default: // INT32, INT16, INT8, UINT16, UINT8, BOOL
    if (auto e = count(tensor.int32_data_size()))
      return std::move(e);
    for (int32_t v : tensor.int32_data())
      t.ints.push_back(t.dataType == TP::BOOL ? (v != 0) : v);
    roundToDataType(t);
    break;
  }
  return t;
}

llvm::Error onnxutil::checkTensorData(const TP &tensor) {
  std::string what = tensor.name().empty() ? std::string("tensor")
                                           : "tensor '" + tensor.name() + "'";
  std::vector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  int64_t n = numElementsOf(shape);
  if (n < 0)
    return makeError(what + " has an invalid shape (a negative dimension or "
                            "an element count that overflows)");
  if (tensor.data_location() == TP::EXTERNAL)
    return llvm::Error::success();
  int32_t type = tensor.data_type();
  size_t elemSize = rawElementSize(type);
  if (elemSize == 0)
    return llvm::Error::success(); // Reported if the tensor is ever used.
  if (tensor.has_raw_data()) {
    auto bytes = llvm::checkedMulUnsigned<uint64_t>(n, elemSize);
    if (!bytes || tensor.raw_data().size() != *bytes)
      return makeError(what + " has " + llvm::Twine(tensor.raw_data().size()) +
                       " bytes of raw data for " + llvm::Twine(n) +
                       " elements of " + dataTypeName(type));
    return llvm::Error::success();
  }
  int64_t have;
  switch (type) {
  case TP::FLOAT:
    have = tensor.float_data_size();
    break;
  case TP::DOUBLE:
    have = tensor.double_data_size();
    break;
  case TP::INT64:
    have = tensor.int64_data_size();
    break;
  case TP::UINT32:
  case TP::UINT64:
    have = tensor.uint64_data_size();
    break;
  default:
    have = tensor.int32_data_size();
    break;
  }
  if (have != n)
    return makeError(what + " has " + llvm::Twine(have) +
                     " elements of data for a shape with " + llvm::Twine(n) +
                     " elements");
  return llvm::Error::success();
}

void onnxutil::roundToDataType(HostTensor &t) {
  switch (t.dataType) {
  // One rounding from the double, as tg.cast (interp::roundToElemKind): a
  // double cast to float16 through float would be rounded twice.
  case TP::FLOAT:
    for (double &v : t.floats)
      v = interp::roundToElemKind(v, ElemKind::F32);
    break;
  case TP::FLOAT16:
    for (double &v : t.floats)
      v = interp::roundToElemKind(v, ElemKind::F16);
    break;
  case TP::BFLOAT16:
    for (double &v : t.floats)
      v = interp::roundToElemKind(v, ElemKind::BF16);
    break;
  case TP::INT32:
    for (int64_t &v : t.ints)
      v = static_cast<int32_t>(static_cast<uint32_t>(v));
    break;
  case TP::INT16:
    for (int64_t &v : t.ints)
      v = static_cast<int16_t>(static_cast<uint16_t>(v));
    break;
  case TP::INT8:
    for (int64_t &v : t.ints)
      v = static_cast<int8_t>(static_cast<uint8_t>(v));
    break;
  case TP::UINT32:
    for (int64_t &v : t.ints)
      v = static_cast<uint32_t>(v);
    break;
  case TP::UINT16:
    for (int64_t &v : t.ints)
      v = static_cast<uint16_t>(v);
    break;
  case TP::UINT8:
    for (int64_t &v : t.ints)
      v = static_cast<uint8_t>(v);
    break;
  case TP::BOOL:
    for (int64_t &v : t.ints)
      v = v != 0;
    break;
  default:
    break;
  }
}

llvm::Error onnxutil::addToWriter(safetensors::Writer &writer, StringRef name,
                                  const HostTensor &t) {
  auto kind = elemKindOfONNX(t.dataType);
  if (!kind)
    return makeError("tensor '" + name + "' has element type " +
                     dataTypeName(t.dataType) +
                     ", which a tg weight cannot hold");
  safetensors::DType dtype = elementTypeInfo(*kind).dtype;
  if (t.isFloat())
    return writer.add(name, dtype, t.shape, t.floats);
  // Integers go byte by byte so that values beyond 2^53 stay exact.
  size_t size = safetensors::dtypeSize(dtype);
  std::vector<uint8_t> bytes(t.ints.size() * size);
  for (size_t i = 0; i < t.ints.size(); ++i) {
    uint64_t v = static_cast<uint64_t>(t.ints[i]);
    for (size_t b = 0; b < size; ++b)
      bytes[i * size + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  return writer.addRaw(name, dtype, t.shape, bytes);
}
