//===- Profile.cpp - A schedule's costs measured by a run -----------------===//
//
// Part of Loom. See Profile.h; the file format is docs/Runtime.md's
// "Step profile".
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/Schedule/Profile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

using namespace loom::pipe;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// The file
//===----------------------------------------------------------------------===//

namespace {

struct ProfileMessage {
  std::string channel;
  bool send = false;
  int64_t peer = 0, bytes = 0, microBatch = 0;
};

enum class ProfileKind { Compute, Exchange, Accumulate, AllReduce, Update };

struct ProfileAction {
  ProfileKind kind = ProfileKind::Compute;
  std::string entry;       // compute
  bool intoGradient = false; // accumulate: into a parameter's gradient
  int64_t microBatch = 0;  // compute, accumulate
  std::vector<ProfileMessage> messages; // exchange
  std::vector<int64_t> group;           // all_reduce: its ranks
  int64_t bytes = 0;                    // all_reduce
};

struct ProfileRank {
  int64_t rank = 0;
  std::string host;
  std::vector<ProfileAction> actions;
  /// times[step]: per action its start and end (ns).
  std::vector<std::vector<int64_t>> times;
  /// The first step whose times are samples: the second when there are
  /// several (the first is a warm-up: first calls, first messages).
  size_t firstSample() const { return times.size() > 1 ? 1 : 0; }
  double seconds(size_t step, size_t action) const {
    return (times[step][2 * action + 1] - times[step][2 * action]) * 1e-9;
  }
};

struct ProfileFile {
  std::string format;
  int64_t version = 0, steps = 0, cores = 0, microBatches = 0;
  std::vector<ProfileRank> ranks;
};

bool fromJSON(const json::Value &v, ProfileMessage &m, json::Path p) {
  json::ObjectMapper o(v, p);
  return o && o.map("channel", m.channel) && o.map("send", m.send) &&
         o.map("peer", m.peer) && o.map("bytes", m.bytes) &&
         o.map("micro_batch", m.microBatch);
}

bool fromJSON(const json::Value &v, ProfileAction &a, json::Path p) {
  json::ObjectMapper o(v, p);
  std::string kind;
  if (!o || !o.map("kind", kind))
    return false;
  if (kind == "compute") {
    a.kind = ProfileKind::Compute;
    return o.map("entry", a.entry) && o.map("micro_batch", a.microBatch);
  }
  if (kind == "exchange") {
    a.kind = ProfileKind::Exchange;
    return o.map("messages", a.messages);
  }
  if (kind == "accumulate") {
    a.kind = ProfileKind::Accumulate;
    std::string into;
    if (!o.map("into", into) || !o.map("micro_batch", a.microBatch))
      return false;
    a.intoGradient = into == "gradient";
    return true;
  }
  if (kind == "all_reduce") {
    a.kind = ProfileKind::AllReduce;
    return o.map("ranks", a.group) && o.map("bytes", a.bytes);
  }
  if (kind == "update") {
    a.kind = ProfileKind::Update;
    return true;
  }
  p.field("kind").report(
      "expected compute, exchange, accumulate, all_reduce or update");
  return false;
}

bool fromJSON(const json::Value &v, ProfileRank &r, json::Path p) {
  json::ObjectMapper o(v, p);
  return o && o.map("rank", r.rank) && o.map("host", r.host) &&
         o.map("actions", r.actions) && o.map("times", r.times);
}

bool fromJSON(const json::Value &v, ProfileFile &f, json::Path p) {
  json::ObjectMapper o(v, p);
  if (!o || !o.map("format", f.format) || !o.map("version", f.version))
    return false;
  if (f.format != "loom-step-profile") {
    p.field("format").report("expected \"loom-step-profile\"");
    return false;
  }
  if (f.version != 1) {
    p.field("version").report("this loom-opt reads version 1");
    return false;
  }
  return o.map("steps", f.steps) && o.map("cores", f.cores) &&
         o.map("micro_batches", f.microBatches) && o.map("ranks", f.ranks);
}

/// What fromJSON cannot say: the shape of the times, the ranks' order,
/// the peers. An empty string: none.
std::string checkFile(const ProfileFile &f) {
  if (f.ranks.empty() || f.steps < 1)
    return "no ranks or no steps";
  for (size_t r = 0; r < f.ranks.size(); ++r) {
    const ProfileRank &rank = f.ranks[r];
    std::string at = llvm::formatv("ranks[{0}]", r).str();
    if (rank.rank != int64_t(r))
      return at + ".rank: expected " + std::to_string(r);
    if (int64_t(rank.times.size()) != f.steps)
      return at + ".times: " + std::to_string(rank.times.size()) +
             " steps, the profile says " + std::to_string(f.steps);
    for (size_t s = 0; s < rank.times.size(); ++s) {
      const std::vector<int64_t> &t = rank.times[s];
      if (t.size() != 2 * rank.actions.size())
        return llvm::formatv("{0}.times[{1}]: {2} times for {3} actions "
                             "(a start and an end each)",
                             at, s, t.size(), rank.actions.size());
      for (size_t i = 0; i < t.size(); i += 2)
        if (t[i + 1] < t[i] || (i > 0 && t[i] < t[i - 1]))
          return llvm::formatv("{0}.times[{1}]: action {2} ends before it "
                               "starts, or starts before the one before",
                               at, s, i / 2);
    }
    for (size_t a = 0; a < rank.actions.size(); ++a)
      for (const ProfileMessage &m : rank.actions[a].messages)
        if (m.peer < 0 || m.peer >= int64_t(f.ranks.size()) ||
            m.peer == int64_t(r))
          return llvm::formatv("{0}.actions[{1}]: peer {2} of {3} ranks", at,
                               a, m.peer, f.ranks.size());
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Compute times
//===----------------------------------------------------------------------===//

/// Adds one rank's computes to \p out. An accumulation into a parameter's
/// gradient belongs to the rank's latest compute of its micro-batch: to
/// that compute's time when it directly follows it (no exchange or other
/// compute between: a B's sums), else deferred (a W). Another accumulation
/// that directly follows a compute is that compute's; one after an
/// exchange (a received gradient's sum) is no compute's.
void poolComputes(const ProfileRank &rank, StepProfile &out) {
  for (size_t s = rank.firstSample(); s < rank.times.size(); ++s) {
    struct Compute {
      std::string entry;
      int64_t microBatch = -1;
      double seconds = 0;
    };
    std::optional<Compute> direct; // what accumulations attach to
    std::map<int64_t, std::string> latest; // micro-batch -> entry
    std::map<std::pair<std::string, int64_t>, double> deferred;
    auto flush = [&] {
      if (direct)
        out.compute[direct->entry].push_back(direct->seconds);
      direct.reset();
    };
    for (size_t i = 0; i < rank.actions.size(); ++i) {
      const ProfileAction &a = rank.actions[i];
      double seconds = rank.seconds(s, i);
      switch (a.kind) {
      case ProfileKind::Compute:
        flush();
        direct = Compute{a.entry, a.microBatch, seconds};
        latest[a.microBatch] = a.entry;
        break;
      case ProfileKind::Exchange:
      case ProfileKind::AllReduce:
      case ProfileKind::Update:
        flush();
        break;
      case ProfileKind::Accumulate:
        if (a.intoGradient && (!direct || direct->microBatch != a.microBatch)) {
          if (latest.count(a.microBatch))
            deferred[{latest[a.microBatch], a.microBatch}] += seconds;
        } else if (direct) {
          direct->seconds += seconds;
        }
        break;
      }
    }
    flush();
    for (const auto &[key, seconds] : deferred)
      out.deferred[key.first].push_back(seconds);
  }
}

//===----------------------------------------------------------------------===//
// Message costs
//===----------------------------------------------------------------------===//

/// The mean of \p v (0 when empty): a step's time is a sum of its actions,
/// so the mean predicts the mean step, where the median of a duration that
/// a loaded machine stretches now and then would not.
double meanOf(const std::vector<double> &v) {
  double sum = 0;
  for (double x : v)
    sum += x;
  return v.empty() ? 0 : sum / v.size();
}

/// One receiving exchange's view of a message it received: when the
/// exchange began and ended, when the message's send began on its peer.
struct Receipt {
  int64_t begin = 0, end = 0, sent = 0, bytes = 0;
  int sends = 0, recvs = 0; ///< SEND / RECV actions in the exchange.
};

/// The raw observations of message costs, before fitting.
struct MessageSamples {
  std::vector<double> send; ///< Seconds per send of the send-only exchanges.
  std::vector<Receipt> receipts;
};

/// One exchange's messages grouped as the schedule's SEND/RECV actions:
/// per peer, direction and micro-batch, the bytes and the channels.
struct Group {
  int64_t bytes = 0;
  std::vector<std::string> channels;
};
using GroupKey = std::tuple<int64_t, bool, int64_t>; // peer, send, mb

/// Observes the message costs of one file (its ranks share a clock).
void observeMessages(const ProfileFile &f, MessageSamples &out) {
  // When every message's send began: (channel, step, micro-batch) -> the
  // start of the exchange that sent it.
  std::map<std::tuple<std::string, size_t, int64_t>, int64_t> sentAt;
  for (const ProfileRank &rank : f.ranks)
    for (size_t s = 0; s < rank.times.size(); ++s)
      for (size_t i = 0; i < rank.actions.size(); ++i)
        for (const ProfileMessage &m : rank.actions[i].messages)
          if (m.send)
            sentAt[{m.channel, s, m.microBatch}] = rank.times[s][2 * i];
  for (const ProfileRank &rank : f.ranks)
    for (size_t i = 0; i < rank.actions.size(); ++i) {
      const ProfileAction &a = rank.actions[i];
      if (a.kind != ProfileKind::Exchange || a.messages.empty())
        continue;
      std::map<GroupKey, Group> groups;
      for (const ProfileMessage &m : a.messages) {
        Group &g = groups[{m.peer, m.send, m.microBatch}];
        g.bytes += m.bytes;
        g.channels.push_back(m.channel);
      }
      int sends = llvm::count_if(groups, [](const auto &g) {
        return std::get<1>(g.first);
      });
      int recvs = int(groups.size()) - sends;
      for (size_t s = rank.firstSample(); s < rank.times.size(); ++s) {
        int64_t begin = rank.times[s][2 * i], end = rank.times[s][2 * i + 1];
        if (recvs == 0) {
          out.send.push_back((end - begin) * 1e-9 / sends);
          continue;
        }
        for (const auto &[key, g] : groups) {
          if (std::get<1>(key))
            continue;
          Receipt r{begin, end, 0, g.bytes, sends, recvs};
          bool matched = true;
          for (const std::string &c : g.channels) {
            auto it = sentAt.find({c, s, std::get<2>(key)});
            matched &= it != sentAt.end();
            if (matched)
              r.sent = std::max(r.sent, it->second);
          }
          if (matched) // else no rank sent it: not an observation
            out.receipts.push_back(r);
        }
      }
    }
}


/// latency + bytes / bandwidth: the least-squares line through the mean
/// seconds of each size of \p bySize; with one size, or a line that does not
/// rise with the bytes, the mean of \p all alone (bandwidth 0).
void fitLine(const std::map<int64_t, std::vector<double>> &bySize,
             const std::vector<double> &all, double &latency,
             double &bandwidth) {
  latency = meanOf(all);
  bandwidth = 0;
  if (bySize.size() < 2)
    return;
  double n = bySize.size(), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto &[bytes, seconds] : bySize) {
    double x = bytes, y = meanOf(seconds);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  double intercept = (sy - slope * sx) / n;
  if (slope > 0 && intercept >= 0) {
    latency = intercept;
    bandwidth = 1 / slope;
  }
}

/// The fit, in the simulator's terms (MessageCost): the send time is the
/// median of the send-only exchanges' per send; latency + bytes /
/// bandwidth the line through the per-size medians of the receipts whose
/// exchange began before the send (it waited the whole flight), least
/// squares (one size, or a line that does not rise with the bytes: their
/// median alone); the receive time the median, over the receipts whose
/// message had arrived by that model before the exchange's own sends were
/// posted, of the rest of the exchange per receive.
MessageCost fit(const MessageSamples &s) {
  MessageCost c;
  c.sendSeconds = meanOf(s.send);
  c.sendSamples = s.send.size();
  std::map<int64_t, std::vector<double>> bySize;
  std::vector<double> all;
  for (const Receipt &r : s.receipts)
    if (r.recvs == 1 && r.sent >= r.begin) {
      bySize[r.bytes].push_back((r.end - r.sent) * 1e-9);
      all.push_back((r.end - r.sent) * 1e-9);
    }
  c.flightSamples = all.size();
  c.flightSizes = bySize.size();
  fitLine(bySize, all, c.latency, c.bandwidth);
  std::vector<double> recv;
  for (const Receipt &r : s.receipts) {
    double posted = r.begin * 1e-9 + r.sends * c.sendSeconds;
    double flight = c.latency + (c.bandwidth > 0 ? r.bytes / c.bandwidth : 0);
    if (r.sent * 1e-9 + flight <= posted)
      recv.push_back(std::max(0.0, r.end * 1e-9 - posted) / r.recvs);
  }
  c.recvSeconds = meanOf(recv);
  c.recvSamples = recv.size();
  return c;
}

/// The step's tail of one file: per all-reduce (the k-th of its group on
/// each member, every sampled step) the shortest of its members' times, the
/// one that reached it last; per rank its updates' seconds.
void observeTail(const ProfileFile &f,
                 std::map<int64_t, std::vector<double>> &allReduces,
                 std::vector<std::vector<double>> &updates) {
  // (group, k-th of the group on its rank, step) -> shortest seconds.
  std::map<std::tuple<std::vector<int64_t>, int, size_t>, double> shortest;
  std::map<std::tuple<std::vector<int64_t>, int, size_t>, int64_t> bytesOf;
  updates.resize(std::max(updates.size(), f.ranks.size()));
  for (size_t r = 0; r < f.ranks.size(); ++r) {
    const ProfileRank &rank = f.ranks[r];
    for (size_t s = rank.firstSample(); s < rank.times.size(); ++s) {
      std::map<std::vector<int64_t>, int> seen;
      for (size_t i = 0; i < rank.actions.size(); ++i) {
        const ProfileAction &a = rank.actions[i];
        if (a.kind == ProfileKind::Update)
          updates[r].push_back(rank.seconds(s, i));
        if (a.kind != ProfileKind::AllReduce)
          continue;
        auto key = std::make_tuple(a.group, seen[a.group]++, s);
        auto [it, fresh] = shortest.try_emplace(key, rank.seconds(s, i));
        it->second = std::min(it->second, rank.seconds(s, i));
        bytesOf[key] = a.bytes;
      }
    }
  }
  for (const auto &[key, seconds] : shortest)
    allReduces[bytesOf[key]].push_back(seconds);
}

llvm::Error fileError(llvm::StringRef path, const llvm::Twine &why) {
  return llvm::createStringError("step profile " + path + ": " + why);
}

} // namespace

double loom::pipe::medianOf(std::vector<double> v) {
  if (v.empty())
    return 0;
  llvm::sort(v);
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

llvm::Expected<StepProfile>
loom::pipe::readStepProfiles(llvm::ArrayRef<std::string> paths) {
  StepProfile out;
  MessageSamples samples;
  std::map<int64_t, std::vector<double>> allReduces;
  std::vector<std::vector<double>> updates;
  for (const std::string &path : paths) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return fileError(path, buffer.getError().message());
    auto file = json::parse<ProfileFile>((*buffer)->getBuffer(), "profile");
    if (!file)
      return fileError(path, llvm::toString(file.takeError()));
    if (std::string why = checkFile(*file); !why.empty())
      return fileError(path, why);
    if (out.files && int64_t(file->ranks.size()) != out.ranks)
      return fileError(path, llvm::formatv("{0} ranks; {1} has {2}",
                                           file->ranks.size(), paths[0],
                                           out.ranks));
    for (const ProfileRank &r : file->ranks) {
      bool sends = llvm::any_of(r.actions, [](const ProfileAction &a) {
        return !a.messages.empty();
      });
      if (sends && r.host != file->ranks[0].host)
        return fileError(path, "ranks 0 and " + std::to_string(r.rank) +
                                   " ran on hosts '" + file->ranks[0].host +
                                   "' and '" + r.host +
                                   "': the message costs need one host's "
                                   "clock");
      poolComputes(r, out);
    }
    observeMessages(*file, samples);
    observeTail(*file, allReduces, updates);
    std::vector<int64_t> ends;
    for (int64_t s = 0; s < file->steps; ++s) {
      int64_t first = INT64_MAX, last = INT64_MIN;
      for (const ProfileRank &r : file->ranks)
        if (!r.times[s].empty()) {
          first = std::min(first, r.times[s].front());
          last = std::max(last, r.times[s].back());
        }
      ends.push_back(last);
      if (last >= first && (s > 0 || file->steps == 1))
        out.stepSeconds.push_back((last - first) * 1e-9);
    }
    if (ends.size() > 1 && ends.front() != INT64_MIN)
      out.periodSeconds.push_back((ends.back() - ends.front()) * 1e-9 /
                                  (ends.size() - 1));
    ++out.files;
    out.steps += file->steps;
    out.ranks = file->ranks.size();
    out.cores = file->cores;
  }
  out.messages = fit(samples);
  std::vector<double> all;
  for (const auto &[bytes, seconds] : allReduces)
    all.insert(all.end(), seconds.begin(), seconds.end());
  out.allReduce.samples = all.size();
  out.allReduce.sizes = allReduces.size();
  fitLine(allReduces, all, out.allReduce.latency, out.allReduce.bandwidth);
  if (llvm::any_of(updates, [](const auto &u) { return !u.empty(); }))
    for (const std::vector<double> &u : updates)
      out.updateSeconds.push_back(meanOf(u));
  return out;
}

llvm::Error loom::pipe::feedStageTimes(Schedule &schedule,
                                       const StepProfile &profile) {
  auto timeOf = [&](const std::string &fn, const Stage &st,
                    const char *what) -> llvm::Expected<double> {
    auto it = profile.compute.find(fn);
    if (it == profile.compute.end() || it->second.empty())
      return llvm::createStringError(
          "the step profile has no compute of @" + fn + " (stage @" +
          st.name + "'s " + what + "): it measured another artifact");
    return meanOf(it->second);
  };
  for (Stage &st : schedule.stages) {
    auto f = timeOf(st.forward, st, "forward");
    if (!f)
      return f.takeError();
    auto b = timeOf(st.backward, st, "backward");
    if (!b)
      return b.takeError();
    auto w = profile.deferred.find(st.backward);
    // A replica ran whole micro-batches, its share of them; the schedule's
    // replicas run every micro-batch on their share of its samples.
    double r = st.devices.size();
    st.forwardTime = *f / r;
    st.inputTime = *b / r;
    st.weightTime = w == profile.deferred.end() ? 0 : meanOf(w->second) / r;
    st.backwardTime = st.inputTime + st.weightTime;
  }
  bool sends = llvm::any_of(schedule.programs, [](const auto &program) {
    return llvm::any_of(program,
                        [](const Action &a) { return isSend(a.kind); });
  });
  if (sends && profile.messages.flightSamples == 0)
    return llvm::createStringError(
        "the step profile has no receive that waited for its message: no "
        "message cost to simulate @" +
        schedule.name + "'s sends with");
  for (const Stage &st : schedule.stages)
    if (st.devices.size() > 1 && profile.allReduce.samples == 0)
      return llvm::createStringError(
          "the step profile has no all-reduce: no cost to simulate stage @" +
          st.name + "'s replicas' all-reduce with (it measured another "
          "artifact)");
  if (!profile.updateSeconds.empty() &&
      profile.updateSeconds.size() != schedule.devices.size())
    return llvm::createStringError(llvm::formatv(
        "the step profile's updates are of {0} ranks, @{1} has {2} devices",
        profile.updateSeconds.size(), schedule.name,
        schedule.devices.size()));
  return llvm::Error::success();
}

void loom::pipe::printFed(llvm::raw_ostream &os, const Schedule &schedule,
                          const StepProfile &p) {
  os << llvm::formatv("fed with {0} step profile(s): {1} steps of {2} ranks "
                      "on {3} cores; measured: median step {4:f3} ms",
                      p.files, p.steps, p.ranks, p.cores,
                      medianOf(p.stepSeconds) * 1e3);
  if (!p.periodSeconds.empty())
    os << llvm::formatv(", period {0:f3} ms", medianOf(p.periodSeconds) * 1e3);
  os << "\n";
  os << llvm::format("%-12s %10s %10s %10s %10s\n", "stage", "F (ms)",
                     "B (ms)", "I (ms)", "W (ms)");
  for (const Stage &st : schedule.stages) {
    std::string name = "@" + st.name;
    os << llvm::format("%-12s %10.4f %10.4f %10.4f %10.4f\n", name.c_str(),
                       st.forwardTime * 1e3, st.backwardTime * 1e3,
                       st.inputTime * 1e3, st.weightTime * 1e3);
  }
  const MessageCost &m = p.messages;
  os << llvm::formatv("messages: send {0:f4} ms ({1} samples), receive "
                      "{2:f4} ms ({3}), latency {4:f4} ms",
                      m.sendSeconds * 1e3, m.sendSamples, m.recvSeconds * 1e3,
                      m.recvSamples, m.latency * 1e3);
  if (m.bandwidth > 0)
    os << llvm::formatv(" + bytes / {0:f3} MB/s", m.bandwidth * 1e-6);
  os << llvm::formatv(" ({0} samples, {1} sizes)\n", m.flightSamples,
                      m.flightSizes);
  const AllReduceCost &r = p.allReduce;
  if (r.samples) {
    os << llvm::formatv("all-reduce: {0:f4} ms", r.latency * 1e3);
    if (r.bandwidth > 0)
      os << llvm::formatv(" + bytes / {0:f3} MB/s", r.bandwidth * 1e-6);
    os << llvm::formatv(" ({0} samples, {1} sizes)\n", r.samples, r.sizes);
  }
  if (!p.updateSeconds.empty()) {
    os << "update (ms per rank):";
    for (double u : p.updateSeconds)
      os << llvm::formatv(" {0:f4}", u * 1e3);
    os << "\n";
  }
}
