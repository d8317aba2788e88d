//===- Reader.h - The manifest reader's parts -------------------*- C++ -*-===//
//
// Part of Loom. The one reader of a manifest (readManifest, Schema.h), split
// by concern; private to lib/Artifact. Every reader fills its record and
// returns true, or records the first failure (naming the field as a path:
// entries[0].programs[0].steps[3].args.src) and returns false.
//
//   Reader.cpp             the manifest's top level; typed fields; tensors
//   ReadSteps.cpp          a program's steps, one reader per step kind
//   ReadEntries.cpp        devices, weights, the source, entries
//   ReadWorld.cpp          the world: ranks, channels, results
//   ReadPipelinedStep.cpp  the pipelined step: slots and actions
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_ARTIFACT_READER_H
#define LOOM_LIB_ARTIFACT_READER_H

#include "loom/Artifact/Json.h"
#include "loom/Artifact/Schema.h"

#include <optional>
#include <string>
#include <vector>

namespace loom::artifact::detail {

/// \p path's element \p i: `path[i]`.
inline std::string at(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

/// Reads typed fields of JSON objects, remembering the first failure.
class Reader {
public:
  std::optional<ReadError> error;
  /// The manifest's version (kManifestVersion to kTiedManifestVersion).
  int64_t version = kManifestVersion;
  /// The world's ranks, while they are read.
  int64_t numRanks = 0;

  // Typed fields (Reader.cpp). An optional field that is absent leaves
  // \p out as it is.
  bool fail(const std::string &path, const std::string &why);
  const Json *member(const Json &obj, const std::string &path,
                     const std::string &key, bool required = true);
  /// The array \p key of \p obj, or nullptr (failed).
  const std::vector<Json> *array(const Json &obj, const std::string &path,
                                 const std::string &key);
  bool string(const Json &obj, const std::string &path, const std::string &key,
              std::string &out, bool required = true);
  bool integer(const Json &obj, const std::string &path, const std::string &key,
               int64_t &out, bool required = true, int64_t min = 0);
  bool number(const Json &obj, const std::string &path, const std::string &key,
              double &out, bool required = true);
  bool boolean(const Json &obj, const std::string &path,
               const std::string &key, bool &out);
  bool ints(const Json &obj, const std::string &path, const std::string &key,
            std::vector<int64_t> &out);
  bool strings(const Json &obj, const std::string &path,
               const std::string &key, std::vector<std::string> &out);
  /// A string member naming one of an enumeration's values.
  template <typename Enum, typename ParseFn>
  bool enumeration(const Json &obj, const std::string &path,
                   const std::string &key, const char *what, ParseFn parse,
                   Enum &out) {
    std::string name;
    if (!string(obj, path, key, name))
      return false;
    std::optional<Enum> parsed = parse(name);
    if (!parsed)
      return fail(path + "." + key,
                  "unknown " + std::string(what) + " '" + name + "'");
    out = *parsed;
    return true;
  }
  bool checksum(const Json &obj, const std::string &path, uint64_t &out);
  /// Device index \p d names one of the manifest's \p numDevices.
  bool device(const std::string &path, int64_t d, int64_t numDevices);
  bool tensor(const Json &t, const std::string &path, TensorDesc &out);
  bool tensors(const Json &obj, const std::string &path,
               const std::string &key, std::vector<TensorDesc> &out);
  /// The entry's output bounds name a dimension and a rank-0 i64 output.
  bool bounds(const Entry &e, const std::string &path);
  /// Each tied output names another input, of its dtype and shape, which no
  /// other output is tied to.
  bool ties(const Entry &e, const std::string &path);

  // Steps, one reader per kind (ReadSteps.cpp).
  /// A step's "args" and "attrs" objects with their paths.
  struct Operands {
    const Json &args;
    std::string ap;
    const Json &attrs;
    std::string tp;
  };
  bool step(const Json &s, const std::string &path, Step &out);
  bool library(StepKind kind, const Operands &o, Step &out);
  bool activation(const Operands &o, PostOp &out);
  /// A library step's operand_type and result_type (LibraryElementTypes).
  bool elementTypes(const Operands &o, LibraryElementTypes &out);
  bool convolution(const Operands &o, ConvolutionOperands &out,
                   size_t minSpatial, size_t maxSpatial);
  bool conv2d(const Operands &o, Step &out);
  bool filterGrad(const Operands &o, Step &out);
  bool matmul(const Operands &o, Step &out);
  bool pool2d(const Operands &o, Step &out);
  bool concat(const Operands &o, Step &out);
  bool binary(const Operands &o, Step &out);
  bool sgemm(const Operands &o, Step &out);
  bool dispatch(const Operands &o, Step &out);
  bool cublasMatmul(const Operands &o, Step &out);
  bool cudnnConv(const Operands &o, Step &out);
  bool topK(const Operands &o, Step &out);
  bool nonMaxSuppression(const Operands &o, Step &out);
  bool nonZero(const Operands &o, Step &out);
  bool updateSlice(const Operands &o, Step &out);
  bool attention(const Operands &o, Step &out);
  bool worldGroup(const Operands &o, WorldGroup &out);
  bool worldRank(const Operands &o, Step &out);
  bool allGather(const Operands &o, Step &out);
  /// A dynamic step's element type: one libloomrt's steps compute on.
  bool dynamicDtype(const Operands &o, std::string &out);

  // Devices, weights, the source, entries (ReadEntries.cpp).
  bool device(const Json &d, const std::string &path, Device &out);
  bool weights(const Json &w, Weights &out);
  bool source(const Json &j, Manifest &m);
  bool program(const Json &p, const std::string &path, int64_t numDevices,
               Program &out);
  bool buffer(const Json &b, const std::string &path, const Entry &e,
              int64_t numDevices, Buffer &out);
  bool checkSteps(const Entry &e, const std::string &path);
  bool checkDevices(const Manifest &m);
  bool entry(const Json &e, const std::string &path, int64_t numDevices,
             Entry &out);

  // The world (ReadWorld.cpp).
  bool rank(const Json &r, const std::string &path, const Manifest &m,
            Rank &out);
  bool world(const Json &w, Manifest &m);
  bool channels(const World &world);
  bool results(const Json &w, World &world);

  // The pipelined step (ReadPipelinedStep.cpp; docs/Artifact.md "The
  // pipelined step").
  bool slot(const Json &j, const std::string &path, const Manifest &m,
            Slot &out);
  bool slotRef(const Json &obj, const std::string &path,
               const std::string &key, const Rank &rank, int64_t &out);
  bool microBatch(const Json &obj, const std::string &path, const World &w,
                  int64_t &out);
  bool fits(const std::string &path, const Slot &slot,
            const std::string &dtype, int64_t bytes);
  bool compute(const Json &j, const std::string &path, const Manifest &m,
               const Rank &rank, ComputeAction &out);
  bool exchange(const Json &j, const std::string &path, const World &w,
                const Rank &rank, ExchangeAction &out);
  bool accumulate(const Json &j, const std::string &path, const World &w,
                  const Rank &rank, AccumulateAction &out);
  bool allReduce(const Json &j, const std::string &path, int64_t self,
                 const Rank &rank, AllReduceAction &out);
  bool update(const Json &j, const std::string &path, const World &w,
              const Rank &rank, UpdateAction &out);
  bool optimizer(const Json &w, Optimizer &out);
  bool action(const Json &j, const std::string &path, const Manifest &m,
              const Rank &rank, Action &out);
  bool step(const Json &r, const std::string &path, const Manifest &m,
            Rank &out);
};

} // namespace loom::artifact::detail

#endif // LOOM_LIB_ARTIFACT_READER_H
