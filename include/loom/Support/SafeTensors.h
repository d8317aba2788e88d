//===- SafeTensors.h - Strict safetensors reader/writer ---------*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//
//
// A small, strict reader and writer for the safetensors format
// (https://github.com/huggingface/safetensors):
//
//   [u64 little-endian N][N bytes of UTF-8 JSON header][data section]
//
// The header is a JSON object mapping tensor names to
//   {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
// plus an optional "__metadata__" object of string to string. Offsets are
// relative to the start of the data section.
//
// The reader treats its input as hostile: every malformed file is reported as
// an llvm::Error whose message starts with the file's path (and names the
// tensor concerned), never as a crash or an out-of-bounds read.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_SAFETENSORS_H
#define LOOM_SUPPORT_SAFETENSORS_H

#include "loom/Support/NarrowFloats.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loom {
namespace safetensors {

/// Element types supported by this library (a subset of the safetensors
/// dtypes). Files using other dtypes (U16, U32, U64, F8_*, ...) are rejected.
enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

/// Returns the safetensors spelling of \p dtype: "F64", "F32", "F16", "BF16",
/// "I64", "I32", "I16", "I8", "U8" or "BOOL".
llvm::StringRef dtypeName(DType dtype);

/// Parses a safetensors dtype spelling (case-sensitive, as written by
/// dtypeName). Returns std::nullopt for unknown or unsupported spellings.
std::optional<DType> parseDType(llvm::StringRef name);

/// Size in bytes of one element of \p dtype (Bool is one byte).
size_t dtypeSize(DType dtype);

// halfToFloat, floatToHalf, bfloat16ToFloat, floatToBFloat16: NarrowFloats.h.

/// Formats a shape as "[2, 3]" (and a scalar as "[]").
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Describes one tensor of a safetensors file.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  /// Dimensions, outermost first. Empty for a scalar.
  std::vector<int64_t> shape;
  /// Byte range [begin, end) relative to the start of the data section.
  uint64_t begin = 0, end = 0;

  /// Product of the dimensions (1 for a scalar, 0 if any dimension is 0).
  /// Returns -1 if a dimension is negative or the product overflows int64_t,
  /// which never happens for a TensorInfo produced by File.
  int64_t numElements() const;
};

/// A parsed, validated safetensors file. The whole file is held in memory
/// (memory-mapped where possible); tensor data is read lazily.
class File {
public:
  /// Largest accepted JSON header, in bytes.
  static constexpr uint64_t kMaxHeaderSize = 100ull * 1024 * 1024;

  /// Reads and validates the file at \p path. Error messages start with the
  /// path, e.g. "foo.safetensors: header length 9999 runs past the end of the
  /// file (120 bytes)".
  static llvm::Expected<File> open(llvm::StringRef path);

  /// Validates a file already in memory. The buffer identifier is used as the
  /// path in error messages. The buffer need not be null-terminated.
  static llvm::Expected<File> parse(std::unique_ptr<llvm::MemoryBuffer> buffer);

  File(File &&) = default;
  File &operator=(File &&) = default;
  File(const File &) = delete;
  File &operator=(const File &) = delete;
  ~File();

  /// All tensors, sorted by name.
  llvm::ArrayRef<TensorInfo> tensors() const { return Tensors; }

  /// Returns the tensor called \p name, or nullptr when there is none.
  const TensorInfo *lookup(llvm::StringRef name) const;

  /// The "__metadata__" map (empty when the file has none).
  const std::map<std::string, std::string> &metadata() const {
    return Metadata;
  }

  /// The little-endian bytes of \p info, which must come from this file's
  /// tensors(). Returns an empty array if the range is not inside the data
  /// section (which cannot happen for this file's own tensors).
  llvm::ArrayRef<uint8_t> rawBytes(const TensorInfo &info) const;

  /// Reads tensor \p name, converting every element to double. Bool reads as
  /// 0/1 (a byte other than 0 or 1 is an error); integers are exact where
  /// representable (|v| <= 2^53), otherwise rounded to nearest even.
  llvm::Expected<std::vector<double>> readAsDouble(llvm::StringRef name) const;

  /// Like readAsDouble but converts to float, rounding to nearest even
  /// directly from the stored type (no double rounding). F64 values beyond
  /// the float range become +-infinity.
  llvm::Expected<std::vector<float>> readAsFloat(llvm::StringRef name) const;

  /// Checks that tensor \p name exists with exactly dtype \p expected and shape
  /// \p expectedShape. Each mismatch is an error naming the tensor, what was
  /// expected and what was found.
  llvm::Error check(llvm::StringRef name, DType expected,
                    llvm::ArrayRef<int64_t> expectedShape) const;

  /// The path (buffer identifier) of this file.
  llvm::StringRef path() const { return Path; }

private:
  File() = default;
  llvm::Error makeError(const llvm::Twine &message) const;
  llvm::Expected<const TensorInfo *> find(llvm::StringRef name) const;

  std::unique_ptr<llvm::MemoryBuffer> Buffer;
  std::string Path;
  std::vector<TensorInfo> Tensors;
  std::map<std::string, std::string> Metadata;
  /// Offset of the data section within Buffer, and its size.
  uint64_t DataStart = 0, DataSize = 0;
};

/// Builds a safetensors file. Tensors are laid out contiguously in name order.
class Writer {
public:
  /// Adds tensor \p name converting \p values (row-major, one per element) to
  /// \p dtype: F32/F16/BF16 round to nearest even (overflow gives infinity);
  /// integer types truncate toward zero after a range check (NaN, infinities
  /// and out-of-range values are errors); Bool accepts only 0 and 1.
  /// Also an error: a duplicate or reserved ("__metadata__") or non-UTF-8
  /// name, a negative dimension, or values.size() != element count.
  llvm::Error add(llvm::StringRef name, DType dtype,
                  llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<double> values);

  /// Adds tensor \p name from its little-endian bytes. bytes.size() must be
  /// element count * dtypeSize(dtype); Bool bytes must be 0 or 1. Same name
  /// and shape rules as add().
  llvm::Error addRaw(llvm::StringRef name, DType dtype,
                     llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<uint8_t> bytes);

  /// As addRaw, but the tensor's bytes are not copied: the writer refers to
  /// \p bytes, which must outlive its last serialize(), writeTo() or
  /// forEachTensor() (a compile's weights, read from a mapped file or an
  /// attribute, are stored without a second copy in memory).
  llvm::Error addView(llvm::StringRef name, DType dtype,
                      llvm::ArrayRef<int64_t> shape,
                      llvm::ArrayRef<uint8_t> bytes);

  /// Sets a "__metadata__" entry (replacing any previous value). Invalid UTF-8
  /// in \p key or \p value is replaced by U+FFFD.
  void setMetadata(llvm::StringRef key, llvm::StringRef value);

  /// Returns the file contents. Deterministic: tensors sorted by name, the
  /// JSON header padded with spaces so that its length is a multiple of 8.
  std::string serialize() const;

  /// The size of serialize()'s result, without building it.
  uint64_t serializedSize() const;

  /// Writes serialize()'s bytes to \p os, the header and then each tensor's
  /// bytes from where they are (never the whole file in memory).
  void writeTo(llvm::raw_ostream &os) const;

  /// serialize()'s bytes in a buffer of their own named \p name, written
  /// into it directly (one copy of the tensors, not the two of
  /// MemoryBuffer::getMemBufferCopy(serialize())): what File::parse reads
  /// when a file is made in memory (ONNX's initializers).
  std::unique_ptr<llvm::MemoryBuffer> toBuffer(llvm::StringRef name) const;

  /// Calls \p fn with each tensor, in the file's order (by name).
  void forEachTensor(llvm::function_ref<void(llvm::StringRef name, DType dtype,
                                             llvm::ArrayRef<int64_t> shape,
                                             llvm::ArrayRef<uint8_t> bytes)>
                         fn) const;

  /// Writes serialize() to \p path through a temporary file in the same
  /// directory that is renamed over \p path, so a failed write never leaves a
  /// partial file behind. Error messages start with \p path.
  llvm::Error write(llvm::StringRef path) const;

private:
  struct Entry {
    DType dtype;
    std::vector<int64_t> shape;
    /// The bytes the writer owns (add, addRaw), or none and \c view.
    std::vector<uint8_t> owned;
    llvm::ArrayRef<uint8_t> view;
    llvm::ArrayRef<uint8_t> bytes() const {
      return owned.empty() ? view : llvm::ArrayRef<uint8_t>(owned);
    }
  };
  llvm::Error checkNew(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                       int64_t &numElements) const;
  llvm::Error checkRaw(llvm::StringRef name, DType dtype,
                       llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<uint8_t> bytes) const;
  /// addRaw (\p copy) or addView.
  llvm::Error addBytes(llvm::StringRef name, DType dtype,
                       llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<uint8_t> bytes, bool copy);
  /// The length prefix and the padded JSON header.
  std::string header() const;

  std::map<std::string, Entry> Tensors;
  std::map<std::string, std::string> Metadata;
};

} // namespace safetensors
} // namespace loom

#endif // LOOM_SUPPORT_SAFETENSORS_H
