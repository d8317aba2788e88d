//===- StageProtocol.cpp - Front-end and stage ranks' messages ------------===//
//
// Part of Loom. See StageProtocol.h. A frame is a 24-byte header (magic
// "LMST", kind, job id, payload bytes; little-endian, as both sides are
// x86-64 here) and its payload.
//
//===----------------------------------------------------------------------===//

#include "StageProtocol.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstring>
#include <map>

using namespace loom;
using namespace loom::serve;
using namespace loom::serve::stage;
using loom::rt::Error;

namespace {

constexpr uint32_t kMagic = 0x5453'4d4c; // "LMST"

struct Header {
  uint32_t magic;
  uint32_t kind;
  uint64_t id;
  uint64_t bytes;
};
static_assert(sizeof(Header) == 24);

bool knownKind(uint32_t k) {
  return k >= uint32_t(FrameKind::Hello) && k <= uint32_t(FrameKind::Refusal);
}

std::vector<loom_tensor_desc> descs(const loom_model *model, int64_t entry,
                                    bool inputs) {
  int64_t n = inputs ? loom_entry_num_inputs(model, entry)
                     : loom_entry_num_outputs(model, entry);
  std::vector<loom_tensor_desc> out(n);
  for (int64_t i = 0; i < n; ++i) {
    if (inputs)
      loom_entry_input(model, entry, i, &out[i]);
    else
      loom_entry_output(model, entry, i, &out[i]);
  }
  return out;
}

} // namespace

Error stage::writeFrame(const rt::comm::Socket &s, FrameKind kind, uint64_t id,
                        const std::vector<const std::vector<uint8_t> *> &parts,
                        rt::comm::Deadline deadline, const std::string &what) {
  Header h{kMagic, uint32_t(kind), id, 0};
  for (const std::vector<uint8_t> *p : parts)
    h.bytes += p->size();
  if (Error e = rt::comm::writeAll(s, &h, sizeof(h), deadline, what))
    return e;
  for (const std::vector<uint8_t> *p : parts)
    if (Error e = rt::comm::writeAll(s, p->data(), p->size(), deadline, what))
      return e;
  return Error::ok();
}

Error stage::readFrame(const rt::comm::Socket &s, Frame &out,
                       rt::comm::Deadline deadline, const std::string &what,
                       uint64_t maxPayload) {
  Header h;
  if (Error e = rt::comm::readAll(s, &h, sizeof(h), deadline, what))
    return e;
  if (h.magic != kMagic || !knownKind(h.kind))
    return rt::makeError(LOOM_ERROR_COMMUNICATION,
                         what + " sent something that is not a loom-serve "
                                "stage frame");
  if (h.bytes > maxPayload)
    return rt::makeError(LOOM_ERROR_COMMUNICATION,
                         what + " sent a frame of " + std::to_string(h.bytes) +
                             " bytes, more than the " +
                             std::to_string(maxPayload) + " expected");
  out.kind = FrameKind(h.kind);
  out.id = h.id;
  out.payload.resize(h.bytes);
  return rt::comm::readAll(s, out.payload.data(), h.bytes, deadline, what);
}

std::vector<uint8_t> stage::encodeHello(const Hello &h) {
  int64_t fields[5] = {h.rank, h.worldSize, h.stage, h.replica, h.numStages};
  std::vector<uint8_t> out(sizeof(fields) + sizeof(h.artifactHash));
  std::memcpy(out.data(), fields, sizeof(fields));
  std::memcpy(out.data() + sizeof(fields), &h.artifactHash,
              sizeof(h.artifactHash));
  return out;
}

llvm::Expected<Hello> stage::decodeHello(const std::vector<uint8_t> &payload) {
  int64_t fields[5];
  Hello h;
  if (payload.size() != sizeof(fields) + sizeof(h.artifactHash))
    return llvm::createStringError("a hello of %zu bytes, not %zu",
                                   payload.size(),
                                   sizeof(fields) + sizeof(h.artifactHash));
  std::memcpy(fields, payload.data(), sizeof(fields));
  std::memcpy(&h.artifactHash, payload.data() + sizeof(fields),
              sizeof(h.artifactHash));
  h.rank = fields[0];
  h.worldSize = fields[1];
  h.stage = fields[2];
  h.replica = fields[3];
  h.numStages = fields[4];
  return h;
}

llvm::Expected<uint64_t> stage::hashArtifact(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read %s",
                                   path.c_str());
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : (*buffer)->getBuffer()) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

llvm::Expected<StageEntries> stage::findStageEntries(const loom_model *model) {
  std::map<std::string, std::map<int64_t, int64_t>> byFunction;
  for (int64_t e = 0; e < loom_model_num_entries(model); ++e) {
    llvm::StringRef name = loom_model_entry_name(model, e);
    if (!name.consume_back("_forward"))
      continue;
    size_t s = name.rfind("_s");
    int64_t k = 0;
    if (s == llvm::StringRef::npos || name.substr(s + 2).getAsInteger(10, k) ||
        k < 0)
      continue;
    byFunction[name.substr(0, s).str()][k] = e;
  }
  StageEntries out;
  if (byFunction.empty())
    return out;
  if (byFunction.size() > 1)
    return llvm::createStringError(
        "the artifact has the stage entries of %zu functions ('%s_s0_forward', "
        "'%s_s0_forward', ...); a served pipeline is one function's",
        byFunction.size(), byFunction.begin()->first.c_str(),
        std::next(byFunction.begin())->first.c_str());
  out.function = byFunction.begin()->first;
  for (auto [k, entry] : byFunction.begin()->second) {
    if (k != int64_t(out.forward.size()))
      return llvm::createStringError(
          "the stage entries of '%s' skip stage %zu", out.function.c_str(),
          out.forward.size());
    out.forward.push_back(entry);
  }
  return out;
}

std::vector<loom_tensor_desc> stage::entryInputs(const loom_model *model,
                                                 int64_t entry) {
  return descs(model, entry, /*inputs=*/true);
}

std::vector<loom_tensor_desc> stage::entryOutputs(const loom_model *model,
                                                  int64_t entry) {
  return descs(model, entry, /*inputs=*/false);
}

llvm::Expected<std::vector<std::vector<uint8_t>>>
stage::splitTensors(const std::vector<uint8_t> &payload,
                    const std::vector<loom_tensor_desc> &descs,
                    const std::string &what) {
  uint64_t total = 0;
  for (const loom_tensor_desc &d : descs)
    total += uint64_t(d.bytes);
  if (payload.size() != total)
    return llvm::createStringError("%s: %zu bytes, not the %llu of its "
                                   "%zu tensors",
                                   what.c_str(), payload.size(),
                                   (unsigned long long)total, descs.size());
  std::vector<std::vector<uint8_t>> out;
  size_t at = 0;
  for (const loom_tensor_desc &d : descs) {
    out.emplace_back(payload.begin() + at, payload.begin() + at + d.bytes);
    at += d.bytes;
  }
  return out;
}
