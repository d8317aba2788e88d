//===- WorldStep.cpp - Checking that the ranks' steps run together --------===//
//
// Part of Loom. See Schema.h (checkWorldStep) and docs/Artifact.md
// ("Checks"): the ranks' exchanges are run with sends that block until
// they are received, every exchange posting its messages at once; per pair
// of ranks the messages match in the order they were posted, as NCCL and
// MPI match them, and each matched pair must carry the same channel,
// micro-batch, bytes and dtype. An all-reduce completes once every rank of
// its group has reached one, and they must be the same: the same group,
// the same tensors in the same order. O(actions + messages + group sizes).
//
//===----------------------------------------------------------------------===//

#include "loom/Artifact/Schema.h"

#include <algorithm>
#include <deque>
#include <map>

using namespace loom;
using namespace loom::artifact;

namespace {

/// A posted message: its rank, action and position in the action.
struct Posted {
  int64_t rank = 0, action = 0, message = 0;
};

class StepRun {
public:
  explicit StepRun(const World &world)
      : world(world), pc(world.ranks.size(), 0),
        unmatched(world.ranks.size(), 0), posted(world.ranks.size(), false),
        done(world.ranks.size()) {}

  std::optional<std::string> run();
  bool deadlocked = false;
  /// Per rank, the action it stopped at (-1: it finished).
  std::vector<int64_t> stoppedAt() const {
    std::vector<int64_t> out;
    for (size_t r = 0; r < world.ranks.size(); ++r)
      out.push_back(exchangeAt(r) ? pc[r] : -1);
    return out;
  }

private:
  const ExchangeAction *exchangeAt(int64_t r) const {
    const std::vector<Action> &actions = world.ranks[r].actions;
    return pc[r] < int64_t(actions.size())
               ? std::get_if<ExchangeAction>(&actions[pc[r]].record)
               : nullptr;
  }
  const AllReduceAction *allReduceAt(int64_t r) const {
    const std::vector<Action> &actions = world.ranks[r].actions;
    return pc[r] < int64_t(actions.size())
               ? std::get_if<AllReduceAction>(&actions[pc[r]].record)
               : nullptr;
  }
  const ExchangeMessage &message(const Posted &p) const {
    return std::get<ExchangeAction>(
               world.ranks[p.rank].actions[p.action].record)
        .messages[p.message];
  }
  const Channel &channel(const Posted &p) const {
    return world.ranks[p.rank].channels[message(p).channel];
  }
  std::string describe(const Posted &p) const;
  void post(int64_t r);
  std::optional<std::string> match(int64_t from, int64_t to);
  std::optional<std::string> reduce(int64_t r, bool &completed);
  std::string describeReduce(int64_t r) const;
  std::string deadlock() const;

  const World &world;
  std::vector<int64_t> pc, unmatched;
  std::vector<bool> posted;
  std::vector<std::vector<bool>> done; // per rank, per message of its exchange
  /// Posted and not yet matched, per (sender, receiver).
  std::map<std::pair<int64_t, int64_t>, std::deque<Posted>> sends, recvs;
};

std::string StepRun::describe(const Posted &p) const {
  const Channel &c = channel(p);
  return "'" + c.name + "' micro-batch " +
         std::to_string(message(p).microBatch) + " (" +
         std::to_string(c.bytes) + " bytes " + c.dtype + ")";
}

void StepRun::post(int64_t r) {
  const ExchangeAction &x = *exchangeAt(r);
  posted[r] = true;
  unmatched[r] = int64_t(x.messages.size());
  done[r].assign(x.messages.size(), false);
  for (size_t i = 0; i < x.messages.size(); ++i) {
    Posted p{r, pc[r], int64_t(i)};
    const Channel &c = channel(p);
    if (c.direction == ChannelDirection::Send)
      sends[{r, c.peer}].push_back(p);
    else
      recvs[{c.peer, r}].push_back(p);
  }
}

/// Matches the posted sends of \p from to \p to with the receives, in order.
std::optional<std::string> StepRun::match(int64_t from, int64_t to) {
  std::deque<Posted> &s = sends[{from, to}], &q = recvs[{from, to}];
  while (!s.empty() && !q.empty()) {
    Posted send = s.front(), recv = q.front();
    s.pop_front();
    q.pop_front();
    const Channel &cs = channel(send), &cr = channel(recv);
    if (cs.name != cr.name || cs.bytes != cr.bytes || cs.dtype != cr.dtype ||
        message(send).microBatch != message(recv).microBatch)
      return "rank " + std::to_string(to) + ", action " +
             std::to_string(recv.action) + " (exchange): receives " +
             describe(recv) + " from rank " + std::to_string(from) +
             ", whose send in order (action " + std::to_string(send.action) +
             ") is " + describe(send) +
             ": per pair of ranks the sends must equal the receives in "
             "order, size and dtype";
    for (const Posted &p : {send, recv}) {
      done[p.rank][p.message] = true;
      --unmatched[p.rank];
    }
  }
  return std::nullopt;
}

std::string StepRun::describeReduce(int64_t r) const {
  const AllReduceAction &x = *allReduceAt(r);
  const Rank &rank = world.ranks[r];
  std::string out = "rank " + std::to_string(r) + ", action " +
                    std::to_string(pc[r]) + " (all_reduce) over ranks";
  for (int64_t g : x.ranks)
    out += " " + std::to_string(g);
  out += " of";
  for (int64_t s : x.slots)
    out += " '" + rank.slots[s].tensor + "' (" +
           std::to_string(rank.slots[s].bytes) + " bytes)";
  return out;
}

/// Rank \p r waits at an all-reduce: once every rank of its group waits at
/// one of the group, all of them move on (\p completed); those must reduce
/// the same tensors.
std::optional<std::string> StepRun::reduce(int64_t r, bool &completed) {
  const AllReduceAction &x = *allReduceAt(r);
  const Rank &rank = world.ranks[r];
  completed = false;
  // A rank of the group at another group's all-reduce may get past it.
  for (int64_t g : x.ranks)
    if (!allReduceAt(g) || allReduceAt(g)->ranks != x.ranks)
      return std::nullopt;
  for (int64_t g : x.ranks) {
    const AllReduceAction &y = *allReduceAt(g);
    const Rank &other = world.ranks[g];
    bool same = y.slots.size() == x.slots.size();
    for (size_t i = 0; same && i < x.slots.size(); ++i)
      same = other.slots[y.slots[i]].tensor == rank.slots[x.slots[i]].tensor &&
             other.slots[y.slots[i]].bytes == rank.slots[x.slots[i]].bytes;
    if (!same)
      return describeReduce(r) + ", while " + describeReduce(g) +
             ": the ranks of a group must reach the same all-reduces in the "
             "same order";
  }
  for (int64_t g : x.ranks)
    ++pc[g];
  completed = true;
  return std::nullopt;
}

std::string StepRun::deadlock() const {
  std::string out = "the exchanges deadlock when a send blocks until it is "
                    "received:";
  for (size_t r = 0; r < world.ranks.size(); ++r) {
    if (allReduceAt(r)) {
      out += " " + describeReduce(r) + " waits for rank(s)";
      for (int64_t g : allReduceAt(r)->ranks)
        if (!allReduceAt(g) || allReduceAt(g)->ranks != allReduceAt(r)->ranks)
          out += " " + std::to_string(g);
      out += ";";
      continue;
    }
    if (!exchangeAt(r))
      continue;
    for (size_t i = 0; i < done[r].size(); ++i) {
      if (done[r][i])
        continue;
      Posted p{int64_t(r), pc[r], int64_t(i)};
      const Channel &c = channel(p);
      out += " rank " + std::to_string(r) + ", action " +
             std::to_string(pc[r]) + " (exchange) waits to " +
             (c.direction == ChannelDirection::Send ? "send " : "receive ") +
             describe(p) +
             (c.direction == ChannelDirection::Send ? " to" : " from") +
             " rank " + std::to_string(c.peer) + ";";
      break;
    }
  }
  out.pop_back();
  return out;
}

std::optional<std::string> StepRun::run() {
  int64_t numRanks = world.ranks.size();
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t r = 0; r < numRanks; ++r) {
      const std::vector<Action> &actions = world.ranks[r].actions;
      while (pc[r] < int64_t(actions.size())) {
        if (allReduceAt(r)) {
          bool completed = false;
          if (auto err = reduce(r, completed))
            return err;
          if (!completed)
            break;
          progress = true;
          continue;
        }
        if (!exchangeAt(r)) {
          ++pc[r];
          progress = true;
          continue;
        }
        if (!posted[r]) {
          post(r);
          progress = true;
          for (const ExchangeMessage &m : exchangeAt(r)->messages) {
            const Channel &c = world.ranks[r].channels[m.channel];
            auto pair = c.direction == ChannelDirection::Send
                            ? std::make_pair(r, c.peer)
                            : std::make_pair(c.peer, r);
            if (auto err = match(pair.first, pair.second))
              return err;
          }
        }
        if (unmatched[r] > 0)
          break;
        posted[r] = false;
        ++pc[r];
      }
    }
  }
  for (int64_t r = 0; r < numRanks; ++r)
    if (pc[r] < int64_t(world.ranks[r].actions.size())) {
      deadlocked = true;
      return deadlock();
    }
  return std::nullopt;
}

} // namespace

bool artifact::replicaCopy(const World &world, int64_t rank, int64_t slot) {
  for (const Action &a : world.ranks[rank].actions)
    if (const auto *x = std::get_if<AllReduceAction>(&a.record))
      if (x->ranks.front() < rank &&
          std::find(x->slots.begin(), x->slots.end(), slot) != x->slots.end())
        return true;
  return false;
}

std::pair<int64_t, int64_t> artifact::resultSlot(const World &world,
                                                 size_t result, int64_t mb) {
  const std::string &name = world.results[result].name;
  for (size_t r = 0; r < world.ranks.size(); ++r)
    for (const Action &a : world.ranks[r].actions)
      if (const auto *c = std::get_if<ComputeAction>(&a.record))
        if (c->microBatch == mb)
          for (int64_t s : c->outputs)
            if (s >= 0 && world.ranks[r].slots[s].name == name)
              return {int64_t(r), s};
  return {-1, -1};
}

std::optional<std::string> artifact::checkWorldStep(const World &world,
                                                    std::vector<int64_t> *blocked) {
  StepRun run(world);
  std::optional<std::string> why = run.run();
  if (run.deadlocked && blocked)
    *blocked = run.stoppedAt();
  return why;
}
