//===- KServe.h - The client's side of the KServe v2 protocol ---*- C++ -*-===//
//
// Part of Loom. What loom-bench-serve sends to loom-serve and reads back
// (docs/tools/loom-serve.md): the model's metadata, inference requests of
// one row with JSON tensors or the binary tensor extension, their answers
// decoded and compared with a reference, and the server's counters read
// from /metrics.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_SERVE_KSERVE_H
#define LOOM_BENCH_SERVE_KSERVE_H

#include "Options.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loom::bench {

/// An input or output as the model's metadata gives it (dimension 0 is -1
/// when the model is batched).
struct TensorMeta {
  std::string name, datatype;
  std::vector<int64_t> shape;
};

struct ModelMeta {
  std::string name;
  std::vector<TensorMeta> inputs, outputs;
  /// 0 when the model has no batch range.
  int64_t maxBatchSize = 0;
  std::vector<int64_t> batchSizes;
};

/// GET /v2/models/NAME's body.
llvm::Expected<ModelMeta> parseModelMeta(llvm::StringRef body);

/// A tensor of a request or an answer; every datatype's values as doubles
/// (FP32, FP64, INT32, INT64 and BOOL are exact in a double).
struct Tensor {
  std::string datatype;
  std::vector<int64_t> shape;
  std::vector<double> values;
};
using Tensors = std::map<std::string, Tensor>;

/// One row of every input of `meta`: floats uniform in [-1, 1), integers in
/// [0, 10), booleans 0 or 1, from `seed`. FP16 and BF16 are refused.
llvm::Expected<Tensors> randomInputs(const ModelMeta &meta, uint64_t seed);

/// An inference request ready to send.
struct EncodedRequest {
  std::string body, contentType;
  /// The Inference-Header-Content-Length of a binary request.
  std::optional<size_t> headerLength;
};

/// The request for `inputs` (every input of `meta`, in its order), asking
/// for every output in the same encoding.
EncodedRequest encodeRequest(const ModelMeta &meta, const Tensors &inputs,
                             Encoding encoding);

/// A 200 answer's body (`headerLength`: its Inference-Header-Content-Length
/// header, present for binary outputs).
llvm::Expected<Tensors>
decodeResponse(llvm::StringRef body,
               std::optional<llvm::StringRef> headerLength);

/// Compares an answer with the reference: every output present with the
/// reference's shape, and every element within `tolerance` of it
/// (|got - want| <= tolerance * max(1, |want|); NaN equals NaN). Returns
/// what differs, or nothing; `worst` gets the largest relative difference.
std::optional<std::string> compareAnswer(const Tensors &reference,
                                         const Tensors &got, double tolerance,
                                         double &worst);

/// The counters of one model on /metrics.
struct ServerCounters {
  double runs = 0, rows = 0;
  double queueSeconds = 0, queued = 0, computeSeconds = 0;
  /// Inference requests answered: with 200, and with any other status.
  double ok = 0, refused = 0;
};

/// Reads `model`'s counters from /metrics' text.
ServerCounters parseMetrics(llvm::StringRef text, llvm::StringRef model);

} // namespace loom::bench

#endif // LOOM_BENCH_SERVE_KSERVE_H
