//===- SafeTensors.cpp - Strict safetensors reader/writer -------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//
//
// Implementation notes:
//  - llvm::json::parse recurses once per nesting level and silently keeps one
//    of two duplicate keys, so the header is first scanned for its nesting
//    depth (bounded before parsing) and, once parsed, for duplicate keys.
//  - All multi-byte values are read with memcpy-based little-endian loads:
//    the data section has no alignment guarantee.
//  - Every size computation on untrusted values uses checked arithmetic.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/SafeTensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

using namespace llvm;

namespace loom {
namespace safetensors {

//===----------------------------------------------------------------------===//
// DType helpers
//===----------------------------------------------------------------------===//

static constexpr DType kAllDTypes[] = {
    DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
    DType::I32, DType::I16, DType::I8,  DType::U8,   DType::Bool};

StringRef dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return "F64";
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I16:
    return "I16";
  case DType::I8:
    return "I8";
  case DType::U8:
    return "U8";
  case DType::Bool:
    return "BOOL";
  }
  llvm_unreachable("unknown DType");
}

std::optional<DType> parseDType(StringRef name) {
  for (DType dtype : kAllDTypes)
    if (dtypeName(dtype) == name)
      return dtype;
  return std::nullopt;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  llvm_unreachable("unknown DType");
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string result;
  raw_string_ostream os(result);
  os << '[';
  interleaveComma(shape, os);
  os << ']';
  return result;
}

/// Rounds a double to float (nearest even). Defined for every input, unlike a
/// plain cast of a finite value outside the float range.
static float doubleToFloat(double value) {
  if (std::isfinite(value) && std::fabs(value) > double(FLT_MAX)) {
    // The midpoint between FLT_MAX and 2^128 rounds to even, i.e. infinity.
    const double midpoint = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
    float magnitude = std::fabs(value) >= midpoint
                          ? std::numeric_limits<float>::infinity()
                          : FLT_MAX;
    return value < 0 ? -magnitude : magnitude;
  }
  return static_cast<float>(value);
}

//===----------------------------------------------------------------------===//
// TensorInfo
//===----------------------------------------------------------------------===//

/// Element count of \p shape, or std::nullopt for a negative dimension or an
/// overflow. Any zero dimension makes the count zero whatever the others are.
static std::optional<int64_t> elementCount(ArrayRef<int64_t> shape) {
  if (any_of(shape, [](int64_t d) { return d < 0; }))
    return std::nullopt;
  if (is_contained(shape, 0))
    return 0;
  int64_t count = 1;
  for (int64_t dim : shape) {
    std::optional<int64_t> next = checkedMul(count, dim);
    if (!next)
      return std::nullopt;
    count = *next;
  }
  return count;
}

/// Byte size of a tensor, or std::nullopt on overflow / negative dimension.
static std::optional<int64_t> byteSize(DType dtype, ArrayRef<int64_t> shape) {
  std::optional<int64_t> count = elementCount(shape);
  if (!count)
    return std::nullopt;
  return checkedMul(*count, static_cast<int64_t>(dtypeSize(dtype)));
}

int64_t TensorInfo::numElements() const {
  return elementCount(shape).value_or(-1);
}

//===----------------------------------------------------------------------===//
// JSON structure scans
//===----------------------------------------------------------------------===//

/// Deeper nesting is rejected before llvm::json::parse sees it (a valid
/// header nests 3 levels).
static constexpr unsigned kMaxJsonDepth = 16;

/// Returns the index one past the closing quote of the string starting at
/// \p i (which holds '"'), or text.size() if it is unterminated.
static size_t skipString(StringRef text, size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i; // Skip the escaped character (for \u, the digits are harmless).
    else if (text[i] == '"')
      return i + 1;
  }
  return text.size();
}

/// Maximum nesting depth of arrays and objects in \p text (any text; strings
/// are skipped), stopping early once it exceeds \p limit.
static unsigned nestingDepth(StringRef text, unsigned limit) {
  unsigned depth = 0, maxDepth = 0;
  for (size_t i = 0; i < text.size() && maxDepth <= limit;) {
    char c = text[i];
    if (c == '"') {
      i = skipString(text, i);
      continue;
    }
    if (c == '{' || c == '[')
      maxDepth = std::max(maxDepth, ++depth);
    else if ((c == '}' || c == ']') && depth > 0)
      --depth;
    ++i;
  }
  return maxDepth;
}

namespace {
/// A key seen twice in one JSON object: the top-level object when
/// \c nested is false, otherwise an object under the top-level key \c outer.
struct DuplicateKey {
  bool nested = false;
  std::string outer;
  std::string key;
};
} // namespace

/// Finds the first duplicate key of any object in \p text, which must be
/// valid JSON nesting at most kMaxJsonDepth levels.
static std::optional<DuplicateKey> findDuplicateKey(StringRef text) {
  struct Frame {
    bool isObject;
    bool expectKey;
    StringSet<> keys;
    std::string lastKey;
  };
  SmallVector<Frame, 4> stack;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '"') {
      size_t end = skipString(text, i);
      if (!stack.empty() && stack.back().isObject && stack.back().expectKey) {
        Frame &top = stack.back();
        // Decode escapes the same way the real parse did.
        std::string key;
        if (Expected<json::Value> decoded = json::parse(text.slice(i, end))) {
          if (std::optional<StringRef> str = decoded->getAsString())
            key = str->str();
        } else {
          consumeError(decoded.takeError());
        }
        if (!top.keys.insert(key).second) {
          DuplicateKey dup;
          dup.key = key;
          dup.nested = stack.size() > 1;
          if (dup.nested)
            dup.outer = stack.front().lastKey;
          return dup;
        }
        top.lastKey = std::move(key);
        top.expectKey = false;
      }
      i = end;
      continue;
    }
    if (c == '{' || c == '[') {
      stack.emplace_back();
      stack.back().isObject = c == '{';
      stack.back().expectKey = c == '{';
    } else if (c == '}' || c == ']') {
      if (!stack.empty())
        stack.pop_back();
    } else if (c == ',' && !stack.empty() && stack.back().isObject) {
      stack.back().expectKey = true;
    }
    ++i;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// File
//===----------------------------------------------------------------------===//

static constexpr StringLiteral kMetadataKey = "__metadata__";

File::~File() = default;

Error File::makeError(const Twine &message) const {
  return createStringError(Twine(Path) + ": " + message);
}

Expected<File> File::open(StringRef path) {
  // Only regular files: a device such as /dev/zero would never end.
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(path, status))
    return createStringError(Twine(path) +
                             ": cannot open file: " + ec.message());
  if (!sys::fs::is_regular_file(status))
    return createStringError(Twine(path) + ": not a regular file");
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createStringError(
        Twine(path) + ": cannot open file: " + buffer.getError().message());
  return parse(std::move(*buffer));
}

/// Reads a JSON value that must be a non-negative integer (no fraction or
/// exponent notation). \p max bounds the accepted value.
static std::optional<uint64_t> getNonNegativeInteger(const json::Value &value,
                                                     uint64_t max) {
  std::optional<uint64_t> result = value.getAsUINT64();
  if (!result || *result > max)
    return std::nullopt;
  return result;
}

/// Builds an error of the file being parsed ("path: message").
using FileErrorFn = function_ref<Error(const Twine &)>;

/// The JSON header of the file `bytes`, after its 8-byte length.
static Expected<StringRef> splitHeader(StringRef bytes, FileErrorFn error) {
  if (bytes.size() < 8)
    return error("file is too short (" + Twine(bytes.size()) +
                 " bytes) to hold the 8-byte header length");
  uint64_t headerSize =
      support::endian::read<uint64_t>(bytes.data(), endianness::little);
  uint64_t available = bytes.size() - 8;
  if (headerSize > File::kMaxHeaderSize)
    return error("header length " + Twine(headerSize) +
                 " exceeds the limit of " + Twine(File::kMaxHeaderSize) +
                 " bytes (100 MiB)");
  if (headerSize > available)
    return error("header length " + Twine(headerSize) +
                 " runs past the end of the file (" + Twine(bytes.size()) +
                 " bytes)");
  return bytes.substr(8, headerSize);
}

/// Parses the header: UTF-8 JSON nesting at most kMaxJsonDepth levels, an
/// object without duplicate keys at any level.
static Expected<json::Value> parseHeaderJSON(StringRef header,
                                             FileErrorFn error) {
  size_t badOffset = 0;
  if (!json::isUTF8(header, &badOffset))
    return error("header is not valid UTF-8 (bad byte at header offset " +
                 Twine(badOffset) + ")");
  if (nestingDepth(header, kMaxJsonDepth) > kMaxJsonDepth)
    return error("header JSON nests deeper than " + Twine(kMaxJsonDepth) +
                 " levels");
  Expected<json::Value> root = json::parse(header);
  if (!root)
    return error("header is not valid JSON: " + toString(root.takeError()));
  if (!root->getAsObject())
    return error("header JSON is not an object");
  if (std::optional<DuplicateKey> dup = findDuplicateKey(header)) {
    if (!dup->nested && dup->key == kMetadataKey)
      return error("duplicate '__metadata__' entry in header");
    if (!dup->nested)
      return error("duplicate tensor name '" + dup->key + "'");
    if (dup->outer == kMetadataKey)
      return error("__metadata__ has duplicate key '" + dup->key + "'");
    return error("tensor '" + dup->outer + "': duplicate key '" + dup->key +
                 "' in header entry");
  }
  return root;
}

/// Reads the "__metadata__" entry, an object of strings, into `metadata`.
static Error readMetadata(const json::Value &value,
                          std::map<std::string, std::string> &metadata,
                          FileErrorFn error) {
  const json::Object *object = value.getAsObject();
  if (!object)
    return error("__metadata__ is not an object of strings");
  for (const auto &kv : *object) {
    std::optional<StringRef> str = kv.second.getAsString();
    if (!str)
      return error("__metadata__ is not an object of strings: value of key '" +
                   StringRef(kv.first) + "' is not a string");
    metadata[kv.first.str()] = str->str();
  }
  return Error::success();
}

/// The "dtype" of a tensor entry: the name of a supported dtype.
static Expected<DType> readEntryDType(const json::Object &entry,
                                      FileErrorFn entryError) {
  const json::Value *dtypeValue = entry.get("dtype");
  if (!dtypeValue)
    return entryError("missing dtype");
  std::optional<StringRef> dtypeStr = dtypeValue->getAsString();
  if (!dtypeStr)
    return entryError("dtype is not a string");
  std::optional<DType> dtype = parseDType(*dtypeStr);
  if (!dtype)
    return entryError("unknown or unsupported dtype '" + *dtypeStr + "'");
  return *dtype;
}

/// The "shape" of a tensor entry: an array of non-negative integers.
static Expected<std::vector<int64_t>> readEntryShape(const json::Object &entry,
                                                     FileErrorFn entryError) {
  const json::Value *shapeValue = entry.get("shape");
  if (!shapeValue)
    return entryError("missing shape");
  const json::Array *shapeArray = shapeValue->getAsArray();
  if (!shapeArray)
    return entryError("shape is not an array of non-negative integers");
  std::vector<int64_t> shape;
  for (auto [index, dimValue] : enumerate(*shapeArray)) {
    std::optional<uint64_t> dim = getNonNegativeInteger(
        dimValue, uint64_t(std::numeric_limits<int64_t>::max()));
    if (!dim)
      return entryError("shape is not an array of "
                        "non-negative integers (dimension " +
                        Twine(index) + ")");
    shape.push_back(static_cast<int64_t>(*dim));
  }
  return shape;
}

/// The "data_offsets" of a tensor entry into `info`: [begin, end) within
/// the data section of `dataSize` bytes.
static Error readEntryOffsets(const json::Object &entry, uint64_t dataSize,
                              TensorInfo &info, FileErrorFn entryError) {
  const json::Value *offsetsValue = entry.get("data_offsets");
  if (!offsetsValue)
    return entryError("missing data_offsets");
  const json::Array *offsets = offsetsValue->getAsArray();
  std::optional<uint64_t> begin, end;
  if (offsets && offsets->size() == 2) {
    begin = getNonNegativeInteger((*offsets)[0], UINT64_MAX);
    end = getNonNegativeInteger((*offsets)[1], UINT64_MAX);
  }
  if (!begin || !end)
    return entryError("data_offsets is not an array of two "
                      "non-negative integers");
  if (*begin > *end)
    return entryError("data_offsets begin " + Twine(*begin) +
                      " is greater than end " + Twine(*end));
  if (*end > dataSize)
    return entryError("data_offsets end " + Twine(*end) +
                      " is past the end of the data section (" +
                      Twine(dataSize) + " bytes)");
  info.begin = *begin;
  info.end = *end;
  return Error::success();
}

/// Reads the header entry of tensor `name`: exactly dtype, shape and
/// data_offsets, consistent with each other and the data section.
static Expected<TensorInfo> readTensorEntry(StringRef name,
                                            const json::Value &value,
                                            uint64_t dataSize,
                                            FileErrorFn error) {
  auto entryError = [&](const Twine &message) {
    return error("tensor '" + name + "': " + message);
  };
  const json::Object *entry = value.getAsObject();
  if (!entry)
    return entryError("entry is not a JSON object");
  for (const auto &kv : *entry) {
    StringRef key = kv.first;
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      return entryError("unknown key '" + key +
                        "' in entry (expected only dtype, shape, "
                        "data_offsets)");
  }

  TensorInfo info;
  info.name = name.str();
  Expected<DType> dtype = readEntryDType(*entry, entryError);
  if (!dtype)
    return dtype.takeError();
  info.dtype = *dtype;
  Expected<std::vector<int64_t>> shape = readEntryShape(*entry, entryError);
  if (!shape)
    return shape.takeError();
  info.shape = std::move(*shape);
  std::optional<int64_t> expectedBytes = byteSize(info.dtype, info.shape);
  if (!expectedBytes)
    return entryError("shape " + formatShape(info.shape) + " of dtype " +
                      dtypeName(info.dtype) + " overflows: too many elements");
  if (Error err = readEntryOffsets(*entry, dataSize, info, entryError))
    return std::move(err);
  if (info.end - info.begin != static_cast<uint64_t>(*expectedBytes))
    return entryError(
        "data_offsets [" + Twine(info.begin) + ", " + Twine(info.end) +
        ") span " + Twine(info.end - info.begin) + " bytes but dtype " +
        dtypeName(info.dtype) + " with shape " + formatShape(info.shape) +
        " needs " + Twine(*expectedBytes) + " bytes");
  return info;
}

/// Checks that the tensors' byte ranges tile the data section of `dataSize`
/// bytes: no two overlap and no byte belongs to no tensor.
static Error checkDataLayout(ArrayRef<TensorInfo> tensors, uint64_t dataSize,
                             FileErrorFn error) {
  // Overlap: sort the non-empty ranges by start; each must start at or after
  // the furthest end seen so far. Empty ranges overlap nothing.
  std::vector<const TensorInfo *> byOffset;
  for (const TensorInfo &info : tensors)
    if (info.begin != info.end)
      byOffset.push_back(&info);
  llvm::sort(byOffset, [](const TensorInfo *a, const TensorInfo *b) {
    return std::tie(a->begin, a->end, a->name) <
           std::tie(b->begin, b->end, b->name);
  });
  const TensorInfo *furthest = nullptr;
  for (const TensorInfo *info : byOffset) {
    if (furthest && info->begin < furthest->end)
      return error("tensors '" + furthest->name + "' and '" + info->name +
                   "' overlap: data_offsets [" + Twine(furthest->begin) + ", " +
                   Twine(furthest->end) + ") and [" + Twine(info->begin) +
                   ", " + Twine(info->end) + ")");
    if (!furthest || info->end > furthest->end)
      furthest = info;
  }

  // No holes: the ranges, in order, must tile the whole data section, as
  // the safetensors format requires.
  uint64_t covered = 0;
  for (const TensorInfo *info : byOffset) {
    if (info->begin != covered)
      return error("bytes [" + Twine(covered) + ", " + Twine(info->begin) +
                   ") of the data section belong to no tensor "
                   "(before tensor '" +
                   info->name + "')");
    covered = info->end;
  }
  if (covered != dataSize)
    return error("bytes [" + Twine(covered) + ", " + Twine(dataSize) +
                 ") at the end of the data section belong to no "
                 "tensor");
  return Error::success();
}

Expected<File> File::parse(std::unique_ptr<MemoryBuffer> buffer) {
  if (!buffer)
    return createStringError("<null>: no buffer to parse");
  File file;
  file.Path = buffer->getBufferIdentifier().str();
  file.Buffer = std::move(buffer);
  StringRef bytes = file.Buffer->getBuffer();
  auto error = [&](const Twine &message) { return file.makeError(message); };

  Expected<StringRef> header = splitHeader(bytes, error);
  if (!header)
    return header.takeError();
  file.DataStart = 8 + header->size();
  file.DataSize = bytes.size() - file.DataStart;
  Expected<json::Value> root = parseHeaderJSON(*header, error);
  if (!root)
    return root.takeError();
  const json::Object &object = *root->getAsObject();

  // Visit entries in name order so the first error reported is stable.
  std::vector<StringRef> names;
  names.reserve(object.size());
  for (const auto &entry : object)
    names.push_back(entry.first);
  llvm::sort(names);
  for (StringRef name : names) {
    const json::Value &value = *object.get(name);
    if (name == kMetadataKey) {
      if (Error err = readMetadata(value, file.Metadata, error))
        return std::move(err);
      continue;
    }
    Expected<TensorInfo> info =
        readTensorEntry(name, value, file.DataSize, error);
    if (!info)
      return info.takeError();
    file.Tensors.push_back(std::move(*info));
  }
  if (Error err = checkDataLayout(file.Tensors, file.DataSize, error))
    return std::move(err);

  // Names came from sorted keys; keep that invariant explicit.
  assert(llvm::is_sorted(file.Tensors,
                         [](const TensorInfo &a, const TensorInfo &b) {
                           return a.name < b.name;
                         }));
  return file;
}

const TensorInfo *File::lookup(StringRef name) const {
  auto it = partition_point(
      Tensors, [&](const TensorInfo &info) { return info.name < name; });
  if (it == Tensors.end() || it->name != name)
    return nullptr;
  return &*it;
}

Expected<const TensorInfo *> File::find(StringRef name) const {
  if (const TensorInfo *info = lookup(name))
    return info;
  return makeError("tensor '" + name + "' not found");
}

ArrayRef<uint8_t> File::rawBytes(const TensorInfo &info) const {
  if (info.begin > info.end || info.end > DataSize)
    return {};
  const uint8_t *data =
      reinterpret_cast<const uint8_t *>(Buffer->getBufferStart()) + DataStart;
  return ArrayRef<uint8_t>(data + info.begin, info.end - info.begin);
}

namespace {
/// Decodes element \p i of a little-endian array of \p dtype into either a
/// double or a float, rounding once (to nearest even) from the stored type.
template <typename T>
Error decodeAll(const File &file, const TensorInfo &info,
                ArrayRef<uint8_t> bytes, std::vector<T> &out) {
  constexpr bool toFloat = std::is_same_v<T, float>;
  size_t count = bytes.size() / dtypeSize(info.dtype);
  out.resize(count);
  const uint8_t *p = bytes.data();
  auto load = [&](auto tag, size_t i) {
    using U = decltype(tag);
    return support::endian::read<U>(p + i * sizeof(U), endianness::little);
  };
  for (size_t i = 0; i < count; ++i) {
    T value;
    switch (info.dtype) {
    case DType::F64: {
      double d = bit_cast<double>(load(uint64_t(), i));
      if constexpr (toFloat)
        value = doubleToFloat(d);
      else
        value = d;
      break;
    }
    case DType::F32:
      value = bit_cast<float>(load(uint32_t(), i));
      break;
    case DType::F16:
      value = halfToFloat(load(uint16_t(), i));
      break;
    case DType::BF16:
      value = bfloat16ToFloat(load(uint16_t(), i));
      break;
    case DType::I64:
      value = static_cast<T>(static_cast<int64_t>(load(uint64_t(), i)));
      break;
    case DType::I32:
      value = static_cast<T>(static_cast<int32_t>(load(uint32_t(), i)));
      break;
    case DType::I16:
      value = static_cast<T>(static_cast<int16_t>(load(uint16_t(), i)));
      break;
    case DType::I8:
      value = static_cast<T>(static_cast<int8_t>(p[i]));
      break;
    case DType::U8:
      value = static_cast<T>(p[i]);
      break;
    case DType::Bool:
      if (p[i] > 1)
        return createStringError(Twine(file.path()) + ": tensor '" + info.name +
                                 "': BOOL element " + Twine(i) +
                                 " has byte value " + Twine(unsigned(p[i])) +
                                 " (expected 0 or 1)");
      value = static_cast<T>(p[i]);
      break;
    }
    out[i] = value;
  }
  return Error::success();
}
} // namespace

/// Every element of the tensor `info` (found by File::find) of `file`.
template <typename T>
static Expected<std::vector<T>> readAs(const File &file,
                                       Expected<const TensorInfo *> info) {
  if (!info)
    return info.takeError();
  std::vector<T> result;
  if (Error err = decodeAll(file, **info, file.rawBytes(**info), result))
    return err;
  return result;
}

Expected<std::vector<double>> File::readAsDouble(StringRef name) const {
  return readAs<double>(*this, find(name));
}

Expected<std::vector<float>> File::readAsFloat(StringRef name) const {
  return readAs<float>(*this, find(name));
}

Error File::check(StringRef name, DType expected,
                  ArrayRef<int64_t> expectedShape) const {
  const TensorInfo *info = lookup(name);
  if (!info)
    return makeError("tensor '" + name + "' not found (expected " +
                     dtypeName(expected) + " " + formatShape(expectedShape) +
                     ")");
  if (info->dtype != expected)
    return makeError("tensor '" + name + "' has dtype " +
                     dtypeName(info->dtype) + ", expected " +
                     dtypeName(expected));
  if (ArrayRef<int64_t>(info->shape) != expectedShape)
    return makeError("tensor '" + name + "' has shape " +
                     formatShape(info->shape) + ", expected " +
                     formatShape(expectedShape));
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

Error Writer::checkNew(StringRef name, ArrayRef<int64_t> shape,
                       int64_t &numElements) const {
  if (!json::isUTF8(name))
    return createStringError("tensor name is not valid UTF-8");
  if (name == kMetadataKey)
    return createStringError("tensor name '__metadata__' is reserved");
  if (Tensors.count(name.str()))
    return createStringError("duplicate tensor name '" + name + "'");
  std::optional<int64_t> count = elementCount(shape);
  if (!count)
    return createStringError("tensor '" + name + "': shape " +
                             formatShape(shape) +
                             " has a negative dimension or too many elements");
  numElements = *count;
  return Error::success();
}

/// Converts \p value to an integer of the given width after truncation toward
/// zero; fails for NaN, infinities and values outside the range.
static std::optional<int64_t> toInteger(double value, unsigned bits,
                                        bool isSigned) {
  if (std::isnan(value))
    return std::nullopt;
  double truncated = std::trunc(value);
  // Both bounds are powers of two, hence exact doubles.
  double lo = isSigned ? -std::ldexp(1.0, bits - 1) : 0.0;
  double hiExclusive = std::ldexp(1.0, isSigned ? bits - 1 : bits);
  if (!(truncated >= lo && truncated < hiExclusive))
    return std::nullopt;
  return static_cast<int64_t>(truncated);
}

Error Writer::add(StringRef name, DType dtype, ArrayRef<int64_t> shape,
                  ArrayRef<double> values) {
  int64_t count = 0;
  if (Error err = checkNew(name, shape, count))
    return err;
  if (static_cast<uint64_t>(count) != values.size())
    return createStringError("tensor '" + name + "': shape " +
                             formatShape(shape) + " has " + Twine(count) +
                             " elements but " + Twine(values.size()) +
                             " values were given");
  std::optional<int64_t> size = byteSize(dtype, shape);
  if (!size)
    return createStringError("tensor '" + name + "': byte size overflows");

  Entry entry;
  entry.dtype = dtype;
  entry.shape.assign(shape.begin(), shape.end());
  entry.owned.resize(static_cast<size_t>(*size));
  uint8_t *out = entry.owned.data();
  using support::endian::write;
  for (size_t i = 0, e = values.size(); i != e; ++i) {
    double value = values[i];
    auto bad = [&](StringRef why) {
      std::string text;
      raw_string_ostream os(text);
      os << "tensor '" << name << "': value " << value << " at element " << i
         << " " << why << " " << dtypeName(dtype);
      return createStringError(text);
    };
    // An integer type U: the value truncated toward zero, if in range.
    auto writeInteger = [&](auto zero, bool isSigned) {
      using U = decltype(zero);
      std::optional<int64_t> integer =
          toInteger(value, 8 * sizeof(U), isSigned);
      if (integer)
        write<U>(out + sizeof(U) * i, static_cast<U>(*integer),
                 endianness::little);
      return integer.has_value();
    };
    bool inRange = true;
    switch (dtype) {
    case DType::F64:
      write<uint64_t>(out + 8 * i, bit_cast<uint64_t>(value),
                      endianness::little);
      break;
    case DType::F32:
      write<uint32_t>(out + 4 * i, bit_cast<uint32_t>(doubleToFloat(value)),
                      endianness::little);
      break;
    // Rounding double -> float -> half/bfloat16 equals rounding directly:
    // float carries more than 2p+2 bits for p = 11 and p = 8, so double
    // rounding is innocuous.
    case DType::F16:
      write<uint16_t>(out + 2 * i, floatToHalf(doubleToFloat(value)),
                      endianness::little);
      break;
    case DType::BF16:
      write<uint16_t>(out + 2 * i, floatToBFloat16(doubleToFloat(value)),
                      endianness::little);
      break;
    case DType::I64:
      inRange = writeInteger(uint64_t(), /*isSigned=*/true);
      break;
    case DType::I32:
      inRange = writeInteger(uint32_t(), /*isSigned=*/true);
      break;
    case DType::I16:
      inRange = writeInteger(uint16_t(), /*isSigned=*/true);
      break;
    case DType::I8:
      inRange = writeInteger(uint8_t(), /*isSigned=*/true);
      break;
    case DType::U8:
      inRange = writeInteger(uint8_t(), /*isSigned=*/false);
      break;
    case DType::Bool:
      if (value != 0.0 && value != 1.0)
        return bad("is not 0 or 1, as required for");
      out[i] = value == 1.0 ? 1 : 0;
      break;
    }
    if (!inRange)
      return bad("is out of range for");
  }
  Tensors.emplace(name.str(), std::move(entry));
  return Error::success();
}

Error Writer::checkRaw(StringRef name, DType dtype, ArrayRef<int64_t> shape,
                       ArrayRef<uint8_t> bytes) const {
  int64_t count = 0;
  if (Error err = checkNew(name, shape, count))
    return err;
  std::optional<int64_t> size = byteSize(dtype, shape);
  if (!size || static_cast<uint64_t>(*size) != bytes.size())
    return createStringError(
        "tensor '" + name + "': " + Twine(bytes.size()) +
        " bytes given but dtype " + dtypeName(dtype) + " with shape " +
        formatShape(shape) + " needs " +
        (size ? Twine(*size) : Twine("an overflowing number of")) + " bytes");
  if (dtype == DType::Bool)
    for (size_t i = 0, e = bytes.size(); i != e; ++i)
      if (bytes[i] > 1)
        return createStringError("tensor '" + name + "': BOOL element " +
                                 Twine(i) + " has byte value " +
                                 Twine(unsigned(bytes[i])) +
                                 " (expected 0 or 1)");
  return Error::success();
}

Error Writer::addRaw(StringRef name, DType dtype, ArrayRef<int64_t> shape,
                     ArrayRef<uint8_t> bytes) {
  return addBytes(name, dtype, shape, bytes, /*copy=*/true);
}

Error Writer::addView(StringRef name, DType dtype, ArrayRef<int64_t> shape,
                      ArrayRef<uint8_t> bytes) {
  return addBytes(name, dtype, shape, bytes, /*copy=*/false);
}

Error Writer::addBytes(StringRef name, DType dtype, ArrayRef<int64_t> shape,
                       ArrayRef<uint8_t> bytes, bool copy) {
  if (Error err = checkRaw(name, dtype, shape, bytes))
    return err;
  Entry entry;
  entry.dtype = dtype;
  entry.shape.assign(shape.begin(), shape.end());
  if (copy)
    entry.owned.assign(bytes.begin(), bytes.end());
  else
    entry.view = bytes;
  Tensors.emplace(name.str(), std::move(entry));
  return Error::success();
}

void Writer::setMetadata(StringRef key, StringRef value) {
  auto sanitize = [](StringRef s) {
    return json::isUTF8(s) ? s.str() : json::fixUTF8(s);
  };
  Metadata[sanitize(key)] = sanitize(value);
}

std::string Writer::header() const {
  std::string header;
  {
    raw_string_ostream os(header);
    json::OStream json(os);
    json.object([&] {
      if (!Metadata.empty())
        json.attributeObject(kMetadataKey, [&] {
          for (const auto &kv : Metadata)
            json.attribute(kv.first, kv.second);
        });
      uint64_t offset = 0;
      for (const auto &kv : Tensors) {
        const Entry &entry = kv.second;
        json.attributeObject(kv.first, [&] {
          json.attribute("dtype", dtypeName(entry.dtype));
          json.attributeArray("shape", [&] {
            for (int64_t dim : entry.shape)
              json.value(dim);
          });
          json.attributeArray("data_offsets", [&] {
            json.value(offset);
            json.value(offset + entry.bytes().size());
          });
        });
        offset += entry.bytes().size();
      }
    });
  }
  header.append(alignTo(header.size(), 8) - header.size(), ' ');

  char lengthBytes[8];
  support::endian::write<uint64_t>(lengthBytes, header.size(),
                                   endianness::little);
  return std::string(lengthBytes, 8) + header;
}

uint64_t Writer::serializedSize() const {
  uint64_t size = header().size();
  for (const auto &kv : Tensors)
    size += kv.second.bytes().size();
  return size;
}

void Writer::writeTo(raw_ostream &os) const {
  os << header();
  for (const auto &kv : Tensors) {
    ArrayRef<uint8_t> bytes = kv.second.bytes();
    os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }
}

void Writer::forEachTensor(
    function_ref<void(StringRef, DType, ArrayRef<int64_t>, ArrayRef<uint8_t>)>
        fn) const {
  for (const auto &kv : Tensors)
    fn(kv.first, kv.second.dtype, kv.second.shape, kv.second.bytes());
}

std::unique_ptr<MemoryBuffer> Writer::toBuffer(StringRef name) const {
  /// A stream into the buffer's bytes, in order.
  class Filler : public raw_ostream {
  public:
    explicit Filler(char *at) : at(at) { SetUnbuffered(); }

  private:
    void write_impl(const char *data, size_t size) override {
      std::memcpy(at + written, data, size);
      written += size;
    }
    uint64_t current_pos() const override { return written; }
    char *at;
    uint64_t written = 0;
  };
  std::unique_ptr<WritableMemoryBuffer> buffer =
      WritableMemoryBuffer::getNewUninitMemBuffer(serializedSize(), name);
  Filler os(buffer->getBufferStart());
  writeTo(os);
  return buffer;
}

std::string Writer::serialize() const {
  std::string result;
  result.reserve(serializedSize());
  raw_string_ostream os(result);
  writeTo(os);
  return result;
}

Error Writer::write(StringRef path) const {
  Expected<sys::fs::TempFile> temp =
      sys::fs::TempFile::create(path + ".tmp-%%%%%%%%");
  if (!temp)
    return createStringError(Twine(path) + ": cannot create temporary file: " +
                             toString(temp.takeError()));
  {
    raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    writeTo(os);
    os.flush();
    if (std::error_code ec = os.error()) {
      os.clear_error();
      std::string message = ec.message();
      if (Error err = temp->discard())
        consumeError(std::move(err));
      return createStringError(Twine(path) + ": write failed: " + message);
    }
  }
  if (Error err = temp->keep(path)) {
    std::string message = toString(std::move(err));
    if (Error discardErr = temp->discard())
      consumeError(std::move(discardErr));
    return createStringError(Twine(path) +
                             ": cannot rename temporary file "
                             "into place: " +
                             message);
  }
  return Error::success();
}

} // namespace safetensors
} // namespace loom
