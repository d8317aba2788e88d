//===- safetensors-fuzzer.cpp - Fuzz the safetensors reader -----*- C++ -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target: parses the input as a safetensors file held in memory,
// reads every tensor every way the API allows, and checks invariants that must
// hold for any file the reader accepts (each violation traps):
//  - every accepted tensor passes check() against its own dtype and shape,
//    and its raw bytes have exactly numElements * dtypeSize bytes;
//  - writing the accepted tensors back with Writer and parsing the result
//    gives the same tensors, metadata and bytes.
//
// The input buffer is used in place (no copy, no null terminator), so any
// read past its end is caught by AddressSanitizer.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/SafeTensors.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>

using namespace loom::safetensors;

static void require(bool condition) {
  if (!condition)
    __builtin_trap();
}

/// Returns whether \p err is a failure, consuming it.
static bool failed(llvm::Error err) {
  bool isFailure = static_cast<bool>(err);
  llvm::consumeError(std::move(err));
  return isFailure;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz-input",
      /*RequiresNullTerminator=*/false);
  llvm::Expected<File> file = File::parse(std::move(buffer));
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }

  Writer writer;
  size_t added = 0;
  for (const auto &kv : file->metadata())
    writer.setMetadata(kv.first, kv.second);
  for (const TensorInfo &info : file->tensors()) {
    require(file->lookup(info.name) == &info);
    llvm::ArrayRef<uint8_t> bytes = file->rawBytes(info);
    require(info.numElements() >= 0);
    require(bytes.size() ==
            static_cast<uint64_t>(info.numElements()) * dtypeSize(info.dtype));
    // Touch every byte so ASan sees any out-of-bounds range.
    volatile uint8_t sink = 0;
    for (uint8_t byte : bytes)
      sink = sink ^ byte;
    (void)sink;

    llvm::Expected<std::vector<double>> doubles = file->readAsDouble(info.name);
    llvm::Expected<std::vector<float>> floats = file->readAsFloat(info.name);
    // Reading fails only for BOOL bytes other than 0/1, and then both fail.
    bool readable = static_cast<bool>(doubles);
    require(readable == static_cast<bool>(floats));
    if (readable) {
      require(doubles->size() == static_cast<uint64_t>(info.numElements()));
      require(floats->size() == doubles->size());
    } else {
      require(info.dtype == DType::Bool);
      llvm::consumeError(doubles.takeError());
      llvm::consumeError(floats.takeError());
    }

    require(!failed(file->check(info.name, info.dtype, info.shape)));

    // Only BOOL tensors with bytes other than 0/1 are refused.
    if (failed(writer.addRaw(info.name, info.dtype, info.shape, bytes)))
      require(info.dtype == DType::Bool && !readable);
    else
      ++added;
  }
  require(failed(file->check("\xff not a tensor name", DType::F32, {})));

  // Round trip what was accepted.
  std::string bytes = writer.serialize();
  llvm::Expected<File> again =
      File::parse(llvm::MemoryBuffer::getMemBuffer(bytes, "round-trip", false));
  require(bool(again));
  require(again->metadata() == file->metadata());
  require(again->tensors().size() == added);
  for (const TensorInfo &info : again->tensors()) {
    const TensorInfo *original = file->lookup(info.name);
    require(original && original->dtype == info.dtype &&
            original->shape == info.shape);
    require(again->rawBytes(info) == file->rawBytes(*original));
  }
  return 0;
}
