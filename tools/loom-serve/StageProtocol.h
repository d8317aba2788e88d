//===- StageProtocol.h - Front-end and stage ranks' messages ----*- C++ -*-===//
//
// Part of Loom. What loom-serve's front-end and the ranks serving a
// pipeline's stages say to each other over TCP (docs/tools/loom-serve.md
// "Serving a pipeline across ranks"): frames of a fixed header and a
// payload; a rank's hello (which rank, which stage, which artifact), a job
// (a stage's inputs, concatenated in the entry's order), its result (the
// stage's outputs) or failure (a message), and heartbeats. Both sides load
// the same artifact, so the entry's descriptors give every tensor's size;
// and which stages an artifact has, from its entries' names.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_STAGEPROTOCOL_H
#define LOOM_TOOLS_LOOMSERVE_STAGEPROTOCOL_H

#include "../../lib/Runtime/Comm/Socket.h"

#include "loom-c/Runtime.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::serve::stage {

enum class FrameKind : uint32_t {
  Hello = 1,     ///< rank -> front-end, once: a Hello payload
  Job = 2,       ///< front-end -> rank: the stage's inputs
  Result = 3,    ///< rank -> front-end: the stage's outputs for job `id`
  Failure = 4,   ///< rank -> front-end: job `id`'s run failed (a message)
  Heartbeat = 5, ///< rank -> front-end, every --stage-heartbeat-ms
  Refusal = 6,   ///< front-end -> rank: it is turned away (a message)
};

struct Frame {
  FrameKind kind = FrameKind::Heartbeat;
  uint64_t id = 0;
  std::vector<uint8_t> payload;
};

/// A rank's introduction: its place in its launcher's world, the stage it
/// serves and its replica (0: the primary; 1, 2, ...: standbys, taking over
/// in that order), and the artifact it loaded (artifactHash).
struct Hello {
  int64_t rank = 0, worldSize = 1, stage = 0, replica = 0, numStages = 0;
  uint64_t artifactHash = 0;
};

/// The largest message (a failure's, a refusal's) either side accepts.
inline constexpr uint64_t kMaxMessageBytes = 64 * 1024;

/// Writes one frame whose payload is \p parts, concatenated.
rt::Error writeFrame(const rt::comm::Socket &s, FrameKind kind, uint64_t id,
                     const std::vector<const std::vector<uint8_t> *> &parts,
                     rt::comm::Deadline deadline, const std::string &what);
/// Reads one frame; a frame that is not one (its magic, its kind) or whose
/// payload is over \p maxPayload bytes (what the reader expects at most:
/// a peer cannot make it allocate more) is an error.
rt::Error readFrame(const rt::comm::Socket &s, Frame &out,
                    rt::comm::Deadline deadline, const std::string &what,
                    uint64_t maxPayload);

std::vector<uint8_t> encodeHello(const Hello &h);
llvm::Expected<Hello> decodeHello(const std::vector<uint8_t> &payload);

/// FNV-1a of the artifact's bytes: the two sides loaded the same file.
llvm::Expected<uint64_t> hashArtifact(const std::string &path);

/// A partitioned artifact's stages: the forward entries
/// "<function>_s<k>_forward" (--pipe-partition's stage functions) for
/// k = 0 .. S-1, by k.
struct StageEntries {
  std::string function;
  std::vector<int64_t> forward;
};
/// The stages of \p model; none (an empty list) when it has no stage
/// entries; an error when they are not those of one function, numbered
/// from 0 without a gap.
llvm::Expected<StageEntries> findStageEntries(const loom_model *model);

/// The descriptors of \p entry's inputs or outputs.
std::vector<loom_tensor_desc> entryInputs(const loom_model *model,
                                          int64_t entry);
std::vector<loom_tensor_desc> entryOutputs(const loom_model *model,
                                           int64_t entry);

/// Splits \p payload into tensors of \p descs' sizes; an error unless it
/// holds exactly those bytes.
llvm::Expected<std::vector<std::vector<uint8_t>>>
splitTensors(const std::vector<uint8_t> &payload,
             const std::vector<loom_tensor_desc> &descs,
             const std::string &what);

} // namespace loom::serve::stage

#endif // LOOM_TOOLS_LOOMSERVE_STAGEPROTOCOL_H
