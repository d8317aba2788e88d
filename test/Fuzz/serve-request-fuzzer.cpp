//===- serve-request-fuzzer.cpp - Fuzz loom-serve's request reader --------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target: reads the input as a KServe v2 inference request for a
// model of two batched inputs (x: FP32 [-1, 3], ids: INT64 [-1, 2]) and two
// outputs, the way loom-serve does (tools/loom-serve/InferRequest.cpp), and
// checks what must hold of every request it accepts (each violation traps):
//  - every input has its rows' bytes, 1 to maxBatch rows;
//  - the outputs asked for are the model's, each with a binary flag;
//  - the response written for zero outputs of those rows is the JSON its
//    header length says (binary outputs after it).
// A refused request must be a 4xx. The first byte chooses the binary
// extension: 0, none; else the next two bytes are the
// Inference-Header-Content-Length, in decimal, and the rest is the body.
//
//===----------------------------------------------------------------------===//

#include "Protocol.h"

#include "llvm/Support/JSON.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace loom;
using namespace loom::serve;

static void require(bool condition) {
  if (!condition)
    __builtin_trap();
}

static const ModelSignature &signature() {
  static const ModelSignature sig = [] {
    ModelSignature s;
    s.name = "model";
    s.inputs = {{"x", ElemKind::F32, {-1, 3}, 12},
                {"ids", ElemKind::I64, {-1, 2}, 16}};
    s.outputs = {{"y", ElemKind::F32, {-1, 2}, 8},
                 {"mask", ElemKind::I1, {-1, 4}, 4}};
    s.batchSizes = {1, 2, 4};
    s.maxBatch = 4;
    return s;
  }();
  return sig;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  std::optional<std::string> lengthText;
  size_t skip = 1;
  if (data[0] != 0) {
    if (size < 3)
      return 0;
    lengthText = std::to_string(data[1] | (data[2] << 8));
    skip = 3;
  }
  // A copy of exactly the body: a read past it is AddressSanitizer's.
  std::string body(reinterpret_cast<const char *>(data) + skip, size - skip);
  std::optional<llvm::StringRef> headerLength;
  if (lengthText)
    headerLength = *lengthText;
  const ModelSignature &model = signature();
  InferRequest request;
  std::optional<HttpError> error =
      parseInferRequest(model, body, headerLength, request);
  if (error) {
    require(error->status >= 400 && error->status < 500);
    require(!error->message.empty());
    return 0;
  }
  require(request.rows >= 1 && request.rows <= model.maxBatch);
  require(request.inputs.size() == model.inputs.size());
  for (size_t i = 0; i < model.inputs.size(); ++i)
    require(int64_t(request.inputs[i].size()) ==
            request.rows * model.inputs[i].rowBytes);
  require(request.outputs.size() == request.binary.size());
  std::vector<std::vector<uint8_t>> outputs;
  for (const TensorSpec &o : model.outputs)
    outputs.emplace_back(request.rows * o.rowBytes, 0);
  for (size_t o : request.outputs)
    require(o < model.outputs.size());
  HttpBody response = formatInferResponse(model, request, outputs);
  size_t jsonLength = response.headerLength.value_or(response.body.size());
  require(jsonLength <= response.body.size());
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse(llvm::StringRef(response.body).take_front(jsonLength));
  require(bool(parsed));
  return 0;
}
