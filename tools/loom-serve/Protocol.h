//===- Protocol.h - KServe v2 requests and responses ------------*- C++ -*-===//
//
// Part of Loom. The KServe v2 inference protocol's JSON bodies for one
// ModelSignature: an inference request read (JSON tensors, or the binary
// tensor extension: a JSON header of Inference-Header-Content-Length bytes,
// then each input with parameters.binary_data_size, in order) and checked
// against the model's inputs, with a 4xx and a message for everything
// wrong; the response written (JSON data, or binary outputs when asked);
// the model's metadata; the error body.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_PROTOCOL_H
#define LOOM_TOOLS_LOOMSERVE_PROTOCOL_H

#include "Signature.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::serve {

/// A request the server refuses: the HTTP status and why.
struct HttpError {
  int status;
  std::string message;
};

/// An inference request, checked against its model.
struct InferRequest {
  std::optional<std::string> id;
  /// Rows along dimension 0 (1 for a model that is not batched).
  int64_t rows = 1;
  /// The bytes of each of the model's inputs, in the model's order.
  std::vector<std::vector<uint8_t>> inputs;
  /// The outputs to answer with (indices into the model's) and whether
  /// each is sent as binary data.
  std::vector<size_t> outputs;
  std::vector<bool> binary;
};

/// Reads \p body (\p headerLength: the Inference-Header-Content-Length
/// header, when given) as a request for \p model.
std::optional<HttpError>
parseInferRequest(const ModelSignature &model, llvm::StringRef body,
                  std::optional<llvm::StringRef> headerLength,
                  InferRequest &request);

/// A response body and how to send it.
struct HttpBody {
  std::string body;
  std::string contentType;
  /// For binary outputs: the length of the JSON header.
  std::optional<size_t> headerLength;
};

/// The answer to \p request: \p outputs are the request's rows of every
/// output of the model.
HttpBody formatInferResponse(const ModelSignature &model,
                             const InferRequest &request,
                             const std::vector<std::vector<uint8_t>> &outputs);

/// Parses \p text into \p value: a 400 for malformed JSON, or JSON nested
/// deeper than 64 levels (refused before parsing: the parser recurses once
/// a level, and a body of a million '[' must not overflow the stack).
std::optional<HttpError> parseJsonBody(llvm::StringRef text,
                                       std::optional<llvm::json::Value> &value);

/// GET /v2/models/NAME.
std::string modelMetadata(const ModelSignature &model);
/// {"error": message}.
std::string errorBody(llvm::StringRef message);
/// A readiness answer: {"name": NAME (when not empty), "ready": ..., and
/// "error": why not, when \p whyNot has a reason}.
std::string readyBody(llvm::StringRef name,
                      const std::optional<std::string> &whyNot);

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_PROTOCOL_H
