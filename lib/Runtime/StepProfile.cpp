//===- StepProfile.cpp - The measured times of a pipelined step -----------===//
//
// Part of Loom. See StepProfile.h.
//
//===----------------------------------------------------------------------===//

#include "StepProfile.h"

#include "loom/Artifact/Json.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <thread>
#include <unistd.h>

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;
using art::Json;

namespace {

/// Bytes of the host name sent to rank 0 (padded with zeros).
constexpr int64_t kHostBytes = 256;

int64_t timesOf(const art::Rank &rank, int64_t steps) {
  return steps * int64_t(rank.actions.size()) * 2;
}

/// What an action of \p rank is, for the simulator's attribution
/// (docs/Runtime.md "Step profile").
Json describe(const art::Manifest &m, const art::Rank &rank,
              const art::Action &action) {
  Json j = Json::makeObject();
  j.set("kind", std::string(art::actionKindName(action.kind())));
  switch (action.kind()) {
  case art::ActionKind::Compute: {
    const auto &c = std::get<art::ComputeAction>(action.record);
    j.set("entry", m.entries[c.entry].name).set("micro_batch", c.microBatch);
    break;
  }
  case art::ActionKind::Exchange: {
    Json messages = Json::makeArray();
    for (const art::ExchangeMessage &x :
         std::get<art::ExchangeAction>(action.record).messages) {
      const art::Channel &c = rank.channels[x.channel];
      Json msg = Json::makeObject();
      msg.set("channel", c.name)
          .set("send", c.direction == art::ChannelDirection::Send)
          .set("peer", c.peer)
          .set("bytes", c.bytes)
          .set("micro_batch", x.microBatch);
      messages.push(std::move(msg));
    }
    j.set("messages", std::move(messages));
    break;
  }
  case art::ActionKind::Accumulate: {
    const auto &a = std::get<art::AccumulateAction>(action.record);
    j.set("into", std::string(art::slotKindName(rank.slots[a.dst].kind)))
        .set("micro_batch", a.microBatch);
    break;
  }
  case art::ActionKind::AllReduce: {
    const auto &a = std::get<art::AllReduceAction>(action.record);
    int64_t bytes = 0;
    for (int64_t slot : a.slots)
      bytes += rank.slots[slot].bytes;
    j.set("ranks", Json::integers(a.ranks)).set("bytes", bytes);
    break;
  }
  case art::ActionKind::Update: {
    const auto &a = std::get<art::UpdateAction>(action.record);
    j.set("parameters", int64_t(a.params.size()));
    break;
  }
  }
  return j;
}

} // namespace

std::string rt::hostName() {
  char name[kHostBytes] = {};
  if (gethostname(name, sizeof(name) - 1) != 0)
    return "unknown";
  return name;
}

Error rt::gatherStepProfile(comm::Communicator &comm, const art::World &world,
                            int64_t steps, const RankTimes &mine,
                            std::vector<RankTimes> &all,
                            comm::Deadline deadline) {
  std::vector<comm::Message> messages;
  std::vector<std::vector<char>> hosts;
  using Dir = comm::Message::Direction;
  if (comm.rank() != 0) {
    std::vector<char> host(kHostBytes, 0);
    std::copy_n(mine.host.begin(),
                std::min<size_t>(mine.host.size(), kHostBytes - 1),
                host.begin());
    std::vector<int64_t> ns = mine.ns;
    messages.push_back({Dir::Send, 0, host.data(), kHostBytes});
    messages.push_back(
        {Dir::Send, 0, ns.data(), int64_t(ns.size() * sizeof(int64_t))});
    return comm.exchange(messages, deadline);
  }
  all.assign(world.ranks.size(), RankTimes());
  all[0] = mine;
  hosts.assign(world.ranks.size(), std::vector<char>(kHostBytes, 0));
  for (int r = 1; r < int(world.ranks.size()); ++r) {
    all[r].rank = r;
    all[r].ns.resize(timesOf(world.ranks[r], steps));
    messages.push_back({Dir::Recv, r, hosts[r].data(), kHostBytes});
    messages.push_back({Dir::Recv, r, all[r].ns.data(),
                        int64_t(all[r].ns.size() * sizeof(int64_t))});
  }
  if (Error err = comm.exchange(messages, deadline))
    return err;
  for (int r = 1; r < int(world.ranks.size()); ++r)
    all[r].host = std::string(hosts[r].data());
  return Error::ok();
}

Error rt::writeStepProfile(const std::string &path, const art::Manifest &m,
                           int64_t steps, const std::vector<RankTimes> &ranks) {
  // Times count from the earliest action's start on any rank.
  int64_t epoch = INT64_MAX;
  for (const RankTimes &r : ranks)
    if (!r.ns.empty())
      epoch = std::min(epoch, r.ns.front());
  Json out = Json::makeObject();
  out.set("format", "loom-step-profile")
      .set("version", 1)
      .set("unit", "ns")
      .set("micro_batches", m.world.microBatches)
      .set("steps", steps)
      .set("cores", int64_t(std::thread::hardware_concurrency()));
  Json list = Json::makeArray();
  for (const RankTimes &r : ranks) {
    const art::Rank &rank = m.world.ranks[r.rank];
    if (int64_t(r.ns.size()) != timesOf(rank, steps))
      return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                       "step profile: rank " + std::to_string(r.rank) +
                           " recorded " + std::to_string(r.ns.size()) +
                           " times, not 2 per action and step");
    Json actions = Json::makeArray();
    for (const art::Action &a : rank.actions)
      actions.push(describe(m, rank, a));
    Json times = Json::makeArray();
    size_t perStep = rank.actions.size() * 2;
    for (int64_t s = 0; s < steps; ++s) {
      std::vector<int64_t> step(r.ns.begin() + s * perStep,
                                r.ns.begin() + (s + 1) * perStep);
      for (int64_t &t : step)
        t -= epoch;
      times.push(Json::integers(step));
    }
    Json j = Json::makeObject();
    j.set("rank", r.rank)
        .set("host", r.host)
        .set("actions", std::move(actions))
        .set("times", std::move(times));
    list.push(std::move(j));
  }
  out.set("ranks", std::move(list));
  std::string text = out.print(1) + "\n";
  FILE *f = std::fopen(path.c_str(), "w");
  bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f)
    ok &= std::fclose(f) == 0;
  if (!ok)
    return makeError(LOOM_ERROR_IO, "cannot write the step profile " + path);
  return Error::ok();
}
