//===- ReadWorld.cpp - The world: ranks, channels, results ----------------===//
//
// Part of Loom. See Reader.h. Each rank's devices, programs and channels;
// every device driven and every program run by exactly one rank; both
// sides of each channel; the results; then the ranks' steps run together
// (checkWorldStep, WorldStep.cpp).
//
//===----------------------------------------------------------------------===//

#include "Reader.h"

#include <algorithm>

using namespace loom;
using namespace loom::artifact;
using namespace loom::artifact::detail;

bool Reader::rank(const Json &r, const std::string &path, const Manifest &m,
                  Rank &out) {
  if (!ints(r, path, "devices", out.devices))
    return false;
  for (int64_t d : out.devices)
    if (!device(path + ".devices", d, m.devices.size()))
      return false;
  const std::vector<Json> *programs = array(r, path, "programs");
  const std::vector<Json> *channels =
      programs ? array(r, path, "channels") : nullptr;
  if (!channels)
    return false;
  if (programs->size() != m.entries.size())
    return fail(path + ".programs", "expected one list per entry (" +
                                        std::to_string(m.entries.size()) +
                                        ")");
  for (size_t e = 0; e < programs->size(); ++e) {
    std::string pp = at(path + ".programs", e);
    out.programs.emplace_back();
    if (!(*programs)[e].isArray())
      return fail(pp, "expected an array of program indices");
    for (const Json &p : (*programs)[e].array()) {
      const std::vector<Program> &ps = m.entries[e].programs;
      if (!p.isInteger() || p.integer() < 0 ||
          p.integer() >= int64_t(ps.size()))
        return fail(pp, "expected indices of entry " + std::to_string(e) +
                            "'s " + std::to_string(ps.size()) + " programs");
      int64_t device = ps[p.integer()].device;
      if (std::find(out.devices.begin(), out.devices.end(), device) ==
          out.devices.end())
        return fail(pp, "program " + std::to_string(p.integer()) +
                            " runs on device " + std::to_string(device) +
                            ", which is not one of this rank's");
      out.programs.back().push_back(p.integer());
    }
  }
  for (size_t c = 0; c < channels->size(); ++c) {
    std::string cp = at(path + ".channels", c);
    const Json &j = (*channels)[c];
    Channel ch;
    std::string direction;
    if (!string(j, cp, "name", ch.name) ||
        !string(j, cp, "direction", direction) ||
        !integer(j, cp, "peer", ch.peer) ||
        !integer(j, cp, "bytes", ch.bytes) || !string(j, cp, "dtype", ch.dtype))
      return false;
    if (direction != "send" && direction != "recv")
      return fail(cp + ".direction", "expected send or recv");
    ch.direction =
        direction == "send" ? ChannelDirection::Send : ChannelDirection::Recv;
    if (!dtypeBytes(ch.dtype))
      return fail(cp + ".dtype", "unknown dtype '" + ch.dtype + "'");
    out.channels.push_back(std::move(ch));
  }
  return step(r, path, m, out);
}

/// Each channel's peer is another rank that lists the other side under the
/// same name, with the same size and dtype.
bool Reader::channels(const World &world) {
  int64_t numRanks = world.ranks.size();
  for (int64_t r = 0; r < numRanks; ++r) {
    const std::vector<Channel> &cs = world.ranks[r].channels;
    for (size_t i = 0; i < cs.size(); ++i) {
      const Channel &c = cs[i];
      std::string cp = at(at("world.ranks", r) + ".channels", i);
      if (c.peer >= numRanks || c.peer == r)
        return fail(cp + ".peer", "rank " + std::to_string(c.peer) +
                                      " is not another rank of the " +
                                      std::to_string(numRanks));
      const std::vector<Channel> &other = world.ranks[c.peer].channels;
      bool matched = std::any_of(other.begin(), other.end(), [&](const auto &o) {
        return o.name == c.name && o.peer == r &&
               o.direction != c.direction && o.bytes == c.bytes &&
               o.dtype == c.dtype;
      });
      if (!matched)
        return fail(cp, "rank " + std::to_string(c.peer) +
                            " has no matching side of channel '" + c.name +
                            "' (the other direction, same bytes and dtype)");
    }
  }
  return true;
}

bool Reader::world(const Json &w, Manifest &m) {
  const std::vector<Json> *ranks = array(w, "world", "ranks");
  if (!ranks || !integer(w, "world", "micro_batches", m.world.microBatches,
                         /*required=*/false))
    return false;
  if (w.get("inputs") && !tensors(w, "world", "inputs", m.world.stepInputs))
    return false;
  if (w.get("optimizer") && !optimizer(*w.get("optimizer"), m.world.optimizer))
    return false;
  if (ranks->empty())
    return fail("world.ranks", "expected at least one rank");
  numRanks = int64_t(ranks->size());
  std::vector<int64_t> owner(m.devices.size(), -1);
  for (size_t r = 0; r < ranks->size(); ++r) {
    std::string rp = at("world.ranks", r);
    m.world.ranks.emplace_back();
    Rank &rank = m.world.ranks.back();
    if (!this->rank((*ranks)[r], rp, m, rank))
      return false;
    for (int64_t d : rank.devices) {
      if (owner[d] != -1)
        return fail(rp + ".devices", "device " + std::to_string(d) +
                                         " also belongs to rank " +
                                         std::to_string(owner[d]));
      owner[d] = int64_t(r);
    }
  }
  for (size_t d = 0; d < owner.size(); ++d)
    if (owner[d] == -1)
      return fail("world.ranks", "no rank drives device " + std::to_string(d));
  for (size_t e = 0; e < m.entries.size(); ++e)
    for (size_t p = 0; p < m.entries[e].programs.size(); ++p) {
      int64_t runners = 0;
      for (const Rank &r : m.world.ranks)
        runners += std::count(r.programs[e].begin(), r.programs[e].end(),
                              int64_t(p));
      if (runners != 1)
        return fail("world.ranks",
                    "program " + std::to_string(p) + " of entry " +
                        std::to_string(e) + " is run by " +
                        std::to_string(runners) + " ranks, not one");
    }
  if (!channels(m.world) || !results(w, m.world))
    return false;
  if (std::optional<std::string> why = checkWorldStep(m.world))
    return fail("world", *why);
  return true;
}

/// Each result is a value slot of its dtype and shape written on every
/// micro-batch by some rank's compute.
bool Reader::results(const Json &w, World &world) {
  if (w.get("results") && !tensors(w, "world", "results", world.results))
    return false;
  for (size_t p = 0; p < world.results.size(); ++p) {
    const TensorDesc &t = world.results[p];
    for (int64_t mb = 0; mb < world.microBatches; ++mb) {
      auto [r, s] = resultSlot(world, p, mb);
      if (r < 0)
        return fail(at("world.results", p),
                    "no rank computes slot '" + t.name + "' on micro-batch " +
                        std::to_string(mb));
      const Slot &slot = world.ranks[r].slots[s];
      if (slot.kind != SlotKind::Value || slot.dtype != t.dtype ||
          slot.shape != t.shape)
        return fail(at("world.results", p),
                    "slot '" + t.name + "' of rank " + std::to_string(r) +
                        " is not a value slot of the result's dtype and shape");
    }
  }
  return true;
}
