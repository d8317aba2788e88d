//===- Builders.cpp - Emitting pipeline schedules -------------------------===//
//
// Part of Loom. A list scheduler over the compute actions of every replica of
// every stage and micro-batch, with a rule per schedule kind for which ready
// action a free device takes next; then sends and receives around them.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/Schedule/Builders.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <queue>

using namespace loom::pipe;

std::optional<ScheduleKind> loom::pipe::parseScheduleKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ScheduleKind>>(name)
      .Case("gpipe", ScheduleKind::GPipe)
      .Case("1f1b", ScheduleKind::OneFOneB)
      .Case("interleaved", ScheduleKind::Interleaved)
      .Case("zb-h1", ScheduleKind::ZBH1)
      .Default(std::nullopt);
}

llvm::StringRef loom::pipe::scheduleKindName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::GPipe:
    return "gpipe";
  case ScheduleKind::OneFOneB:
    return "1f1b";
  case ScheduleKind::Interleaved:
    return "interleaved";
  case ScheduleKind::ZBH1:
    return "zb-h1";
  }
  return "?";
}

namespace {
/// Phases of a replica's work on one micro-batch.
enum Phase { kF = 0, kG = 1 /* B or I */, kW = 2 };

class ListScheduler {
public:
  ListScheduler(const Schedule &s, ScheduleKind kind)
      : s(s), kind(kind), split(kind == ScheduleKind::ZBH1),
        phases(split ? 3 : 2), m(s.microBatches), in(s.inEdges()),
        out(s.outEdges()) {}

  llvm::Error run(std::vector<std::vector<Action>> &programs);

private:
  using Key = std::pair<int64_t, int64_t>;
  struct Unit {
    int stage, device;
  };
  struct Entry {
    Key key;
    int64_t task;
    bool operator>(const Entry &o) const {
      return std::tie(key, task) > std::tie(o.key, o.task);
    }
  };
  using Heap = std::priority_queue<Entry, std::vector<Entry>, std::greater<>>;
  struct Event {
    double time;
    int64_t seq;
    bool done; // else: becomes ready
    int64_t task;
    bool operator>(const Event &o) const {
      return std::tie(time, seq) > std::tie(o.time, o.seq);
    }
  };

  int64_t task(int unit, int64_t mb, int phase) const {
    return (static_cast<int64_t>(unit) * m + mb) * phases + phase;
  }
  int unitOf(int64_t t) const { return t / phases / m; }
  int64_t mbOf(int64_t t) const { return (t / phases) % m; }
  int phaseOf(int64_t t) const { return t % phases; }
  ActionKind actionOf(int phase) const {
    return phase == kF ? ActionKind::F
           : phase == kW ? ActionKind::W
           : split       ? ActionKind::I
                         : ActionKind::B;
  }

  llvm::Error prepare();
  bool chainLayout();
  bool chainZBH1();
  bool chainInterleaved();
  llvm::Error emit(std::vector<std::vector<Action>> &programs);
  Key keyOf(int64_t t) const;
  void release(int64_t t, double end);
  /// Calls fn(peer stage, peer unit, edge) for every replica of every
  /// successor (downstream) or predecessor stage of `stage`.
  template <typename Fn>
  void forEachPeer(int stage, bool downstream, Fn fn) const {
    for (int e : downstream ? out[stage] : in[stage]) {
      const Edge &edge = s.edges[e];
      int peer = downstream ? edge.to : edge.from;
      for (int v : unitsOfStage[peer])
        fn(peer, v, edge);
    }
  }
  void arrive(int64_t t, double at);
  bool tryStart(int d, double now);

  const Schedule &s;
  ScheduleKind kind;
  bool split;
  int phases;
  int64_t m;
  std::vector<std::vector<int>> in, out;
  std::vector<Unit> units;
  std::vector<std::vector<int>> unitsOfStage;
  std::vector<int> topo, chunk; // per stage: topological index, chunk on its device
  int interleaveP = 1, interleaveV = 1;
  std::vector<int> rank; // per device (interleaved)
  std::vector<int> chainUnit, rankDevice; // chains: unit by position, device by rank
  std::vector<int> limit, inFlight, forwardsLeft;
  int heldLimit = 0;
  std::vector<int> held; // zb-h1: forwards whose W has not run
  std::vector<int> waiting;    // per task: predecessors not done
  std::vector<double> readyAt; // per task
  std::vector<std::array<Heap, 3>> ready; // per device, per phase
  std::vector<bool> busy;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  int64_t seq = 0;
  std::vector<std::vector<int64_t>> order; // per device: tasks in start order
};
} // namespace

llvm::Error ListScheduler::prepare() {
  size_t numStages = s.stages.size(), numDevices = s.devices.size();
  unitsOfStage.resize(numStages);
  for (size_t st = 0; st < numStages; ++st)
    for (int d : s.stages[st].devices) {
      unitsOfStage[st].push_back(units.size());
      units.push_back({static_cast<int>(st), d});
    }
  // Topological order of the stages (Kahn, lowest index first).
  topo.assign(numStages, -1);
  {
    std::vector<int> indegree(numStages, 0);
    for (const Edge &e : s.edges)
      ++indegree[e.to];
    std::priority_queue<int, std::vector<int>, std::greater<>> q;
    for (size_t i = 0; i < numStages; ++i)
      if (!indegree[i])
        q.push(i);
    int next = 0;
    while (!q.empty()) {
      int n = q.top();
      q.pop();
      topo[n] = next++;
      for (int e : out[n])
        if (!--indegree[s.edges[e].to])
          q.push(s.edges[e].to);
    }
    if (next != static_cast<int>(numStages))
      return llvm::createStringError("the stage graph has a cycle");
  }
  // Depth: stages on the longest path to a sink, the stage included.
  std::vector<int> byTopo(numStages), depth(numStages, 1);
  for (size_t i = 0; i < numStages; ++i)
    byTopo[topo[i]] = i;
  for (size_t k = numStages; k-- > 0;) {
    int n = byTopo[k];
    for (int e : out[n])
      depth[n] = std::max(depth[n], depth[s.edges[e].to] + 1);
  }
  // Per device: its stages in topological order (chunks), the in-flight limit.
  std::vector<std::vector<int>> stagesOn(numDevices);
  for (int n : byTopo)
    for (int d : s.stages[n].devices)
      stagesOn[d].push_back(n);
  chunk.assign(numStages, 0);
  for (auto &list : stagesOn)
    for (size_t c = 0; c < list.size(); ++c)
      chunk[list[c]] = c;
  limit.assign(numDevices, 0);
  if (kind == ScheduleKind::Interleaved) {
    std::vector<int> used;
    for (size_t d = 0; d < numDevices; ++d)
      if (!stagesOn[d].empty())
        used.push_back(d);
    interleaveP = used.size();
    interleaveV = used.empty() ? 1 : stagesOn[used[0]].size();
    for (int d : used)
      if (static_cast<int>(stagesOn[d].size()) != interleaveV)
        return llvm::createStringError(
            "interleaved: every device must hold the same number of stages "
            "(@%s holds %zu, @%s %d)",
            s.devices[d].name.c_str(), stagesOn[d].size(),
            s.devices[used[0]].name.c_str(), interleaveV);
    if (interleaveP && m % interleaveP)
      return llvm::createStringError(
          "interleaved: %lld micro-batches is not a multiple of the %d devices",
          static_cast<long long>(m), interleaveP);
    // Ranks: devices in the order of their first stage.
    std::sort(used.begin(), used.end(), [&](int a, int b) {
      return topo[stagesOn[a][0]] < topo[stagesOn[b][0]];
    });
    rank.assign(numDevices, 0);
    for (size_t r = 0; r < used.size(); ++r) {
      int p = interleaveP, v = interleaveV;
      int64_t warmup = 2LL * (p - static_cast<int>(r) - 1) + (v - 1LL) * p;
      limit[used[r]] = static_cast<int>(std::min<int64_t>(m * v, warmup + 1));
      rank[used[r]] = r;
    }
  } else {
    for (size_t d = 0; d < numDevices; ++d)
      for (int n : stagesOn[d])
        limit[d] += depth[n];
  }
  // zb-h1: besides 1F1B's bound on the forwards whose I has not run, at
  // most as many activations held (until W) as 1F1B's first device holds.
  heldLimit = limit.empty() ? 0 : *std::max_element(limit.begin(), limit.end());
  held.assign(numDevices, 0);
  inFlight.assign(numDevices, 0);
  forwardsLeft.assign(numDevices, 0);
  for (const Unit &u : units)
    forwardsLeft[u.device] += m;

  int64_t numTasks = static_cast<int64_t>(units.size()) * m * phases;
  waiting.assign(numTasks, 0);
  readyAt.assign(numTasks, 0.0);
  for (size_t u = 0; u < units.size(); ++u) {
    int st = units[u].stage;
    int fPreds = 0, gPreds = 1;
    for (int e : in[st])
      fPreds += s.stages[s.edges[e].from].devices.size();
    for (int e : out[st])
      gPreds += s.stages[s.edges[e].to].devices.size();
    for (int64_t mb = 0; mb < m; ++mb) {
      waiting[task(u, mb, kF)] = fPreds;
      waiting[task(u, mb, kG)] = gPreds;
      if (split)
        waiting[task(u, mb, kW)] = 1;
    }
  }
  ready.resize(numDevices);
  busy.assign(numDevices, false);
  order.assign(numDevices, {});
  return llvm::Error::success();
}

ListScheduler::Key ListScheduler::keyOf(int64_t t) const {
  int st = units[unitOf(t)].stage;
  int64_t mb = mbOf(t);
  int phase = phaseOf(t);
  if (kind == ScheduleKind::Interleaved && phase != kW) {
    int64_t p = interleaveP, v = interleaveV;
    int64_t c = phase == kF ? chunk[st] : v - 1 - chunk[st];
    return {(mb / p) * p * v + c * p + mb % p, 0};
  }
  // Micro-batches in order; on a device with several stages, forwards
  // upstream first and backwards downstream first.
  return {mb, phase == kG ? -topo[st] : topo[st]};
}

void ListScheduler::arrive(int64_t t, double at) {
  readyAt[t] = std::max(readyAt[t], at);
  if (--waiting[t] == 0)
    events.push({readyAt[t], seq++, false, t});
}

/// Task `t` ended at `end`: its successors may become ready.
void ListScheduler::release(int64_t t, double end) {
  int u = unitOf(t);
  int64_t mb = mbOf(t);
  int phase = phaseOf(t);
  const Unit &unit = units[u];
  const Stage &stage = s.stages[unit.stage];
  auto send = [&](bool downstream, int phase) {
    forEachPeer(unit.stage, downstream, [&](int peer, int v, const Edge &edge) {
      int64_t pairs = stage.devices.size() * s.stages[peer].devices.size();
      int64_t bytes = (downstream ? edge.bytes : edge.gradBytes) /
                      std::max<int64_t>(1, pairs);
      arrive(task(v, mb, phase),
             end + s.transferSeconds(unit.device, units[v].device, bytes));
    });
  };
  if (phase == kF) {
    arrive(task(u, mb, kG), end);
    send(/*downstream=*/true, kF);
  } else if (phase == kG) {
    if (split)
      arrive(task(u, mb, kW), end);
    send(/*downstream=*/false, kG);
  }
}

bool ListScheduler::tryStart(int d, double now) {
  if (busy[d])
    return false;
  auto &heaps = ready[d];
  int choice = -1;
  switch (kind) {
  case ScheduleKind::GPipe:
    if (!heaps[kF].empty())
      choice = kF;
    else if (!heaps[kG].empty() && forwardsLeft[d] == 0)
      choice = kG;
    break;
  case ScheduleKind::OneFOneB:
  case ScheduleKind::Interleaved:
  case ScheduleKind::ZBH1:
    if (!heaps[kG].empty())
      choice = kG;
    else if (!heaps[kF].empty() && inFlight[d] < limit[d] &&
             (!split || held[d] < heldLimit))
      choice = kF;
    else if (split && !heaps[kW].empty())
      choice = kW;
    break;
  }
  if (choice < 0)
    return false;
  int64_t t = heaps[choice].top().task;
  heaps[choice].pop();
  int phase = phaseOf(t);
  if (phase == kF) {
    ++inFlight[d];
    ++held[d];
    --forwardsLeft[d];
  } else if (phase == kG) {
    --inFlight[d];
  } else {
    --held[d];
  }
  busy[d] = true;
  order[d].push_back(t);
  double seconds = s.stages[units[unitOf(t)].stage].seconds(actionOf(phase));
  events.push({now + seconds, seq++, true, t});
  return true;
}

llvm::Error ListScheduler::run(std::vector<std::vector<Action>> &programs) {
  if (llvm::Error err = prepare())
    return err;
  if ((kind == ScheduleKind::ZBH1 && chainZBH1()) ||
      (kind == ScheduleKind::Interleaved && chainInterleaved()))
    return emit(programs);
  for (size_t u = 0; u < units.size(); ++u)
    for (int64_t mb = 0; mb < m; ++mb)
      if (waiting[task(u, mb, kF)] == 0)
        events.push({0.0, seq++, false, task(u, mb, kF)});
  std::vector<int> touched;
  int64_t started = 0;
  while (!events.empty()) {
    double now = events.top().time;
    touched.clear();
    while (!events.empty() && events.top().time == now) {
      Event ev = events.top();
      events.pop();
      int d = units[unitOf(ev.task)].device;
      if (ev.done) {
        busy[d] = false;
        release(ev.task, now);
      } else {
        ready[d][phaseOf(ev.task)].push({keyOf(ev.task), ev.task});
      }
      touched.push_back(d);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (int d : touched)
      started += tryStart(d, now);
  }
  int64_t total = static_cast<int64_t>(units.size()) * m * phases;
  if (started != total)
    return llvm::createStringError(
        "%s: the list scheduler stalled after %lld of %lld actions",
        scheduleKindName(kind).str().c_str(), static_cast<long long>(started),
        static_cast<long long>(total));
  return emit(programs);
}

/// Zero Bubble's handcrafted H1 on a chain with one unreplicated stage per
/// device: rank r runs 1F1B's order with B replaced by I, and W of
/// micro-batch i right after I of micro-batch i + r (the last device defers
/// its W most); the rest of the W's at the end. Every device then holds at
/// most p activations until their W, the first device's 1F1B peak.
/// Whether the stages form a chain, unreplicated, stage k on the device of
/// rank k mod p (p devices, each holding the same number of stages);
/// fills chainUnit (by position in the chain) and rankDevice.
bool ListScheduler::chainLayout() {
  int n = s.stages.size();
  if (static_cast<int>(units.size()) != n || n == 0)
    return false;
  chainUnit.assign(n, -1);
  for (size_t u = 0; u < units.size(); ++u)
    chainUnit[topo[units[u].stage]] = u;
  rankDevice.clear();
  for (int k = 0; k < n; ++k) {
    int st = units[chainUnit[k]].stage;
    if ((k > 0 && (in[st].size() != 1 ||
                   topo[s.edges[in[st][0]].from] != k - 1)) ||
        out[st].size() > 1)
      return false;
    int d = units[chainUnit[k]].device;
    if (llvm::is_contained(rankDevice, d))
      break;
    rankDevice.push_back(d);
  }
  int p = rankDevice.size();
  if (n % p)
    return false;
  for (int k = 0; k < n; ++k)
    if (units[chainUnit[k]].device != rankDevice[k % p])
      return false;
  return true;
}

/// Zero Bubble's handcrafted H1 on a chain with one stage per device: rank r
/// runs 1F1B's order with B replaced by I, and W of micro-batch i right
/// after I of micro-batch i + r (the last device defers its W most); the
/// rest of the W's at the end. Every device then holds at most p activations
/// until their W, the first device's 1F1B peak, and the bubble is
/// (p - 1)(F + I - W) instead of 1F1B's (p - 1)(F + I + W).
bool ListScheduler::chainZBH1() {
  if (!chainLayout() || rankDevice.size() != s.stages.size())
    return false;
  int p = rankDevice.size();
  for (int r = 0; r < p; ++r) {
    int u = chainUnit[r];
    std::vector<int64_t> &list = order[rankDevice[r]];
    int64_t warmup = std::min<int64_t>(m, p - r - 1), w = 0;
    for (int64_t i = 0; i < warmup; ++i)
      list.push_back(task(u, i, kF));
    for (int64_t i = 0; i < m; ++i) {
      if (warmup + i < m)
        list.push_back(task(u, warmup + i, kF));
      list.push_back(task(u, i, kG));
      if (i - w >= r)
        list.push_back(task(u, w++, kW));
    }
    while (w < m)
      list.push_back(task(u, w++, kW));
  }
  return true;
}

/// Megatron-LM's interleaved 1F1B on a chain of p * v stages (stage k on
/// rank k mod p): virtual micro-batches in groups of p per chunk, warmup of
/// 2 (p - r - 1) + (v - 1) p forwards, then one forward one backward.
bool ListScheduler::chainInterleaved() {
  if (!chainLayout())
    return false;
  int64_t p = rankDevice.size(), v = s.stages.size() / p, total = m * v;
  auto at = [&](int64_t r, int64_t k, bool forward) {
    int64_t c = (k % (p * v)) / p;
    if (!forward)
      c = v - 1 - c;
    int64_t mb = (k / (p * v)) * p + k % p;
    return task(chainUnit[c * p + r], mb, forward ? kF : kG);
  };
  for (int64_t r = 0; r < p; ++r) {
    std::vector<int64_t> &list = order[rankDevice[r]];
    int64_t warmup = std::min(total, 2 * (p - r - 1) + (v - 1) * p);
    for (int64_t k = 0; k < warmup; ++k)
      list.push_back(at(r, k, true));
    for (int64_t i = 0; i < total - warmup; ++i) {
      list.push_back(at(r, warmup + i, true));
      list.push_back(at(r, i, false));
    }
    for (int64_t i = total - warmup; i < total; ++i)
      list.push_back(at(r, i, false));
  }
  return true;
}

llvm::Error ListScheduler::emit(std::vector<std::vector<Action>> &programs) {
  // Sends right after what they send, receives right before what needs them.
  programs.assign(s.devices.size(), {});
  for (size_t d = 0; d < s.devices.size(); ++d) {
    std::vector<Action> &program = programs[d];
    for (int64_t t : order[d]) {
      const Unit &unit = units[unitOf(t)];
      int st = unit.stage, mb = mbOf(t), phase = phaseOf(t);
      auto comm = [&](bool downstream, ActionKind kind) {
        forEachPeer(st, downstream, [&](int peer, int v, const Edge &) {
          if (units[v].device != static_cast<int>(d))
            program.push_back(
                Action::comm(kind, st, mb, peer, units[v].device));
        });
      };
      if (phase == kF)
        comm(/*downstream=*/false, ActionKind::RecvF);
      if (phase == kG)
        comm(/*downstream=*/true, ActionKind::RecvB);
      program.push_back(Action::compute(actionOf(phase), st, mb));
      if (phase == kF)
        comm(/*downstream=*/true, ActionKind::SendF);
      if (phase == kG)
        comm(/*downstream=*/false, ActionKind::SendB);
    }
  }
  return llvm::Error::success();
}

llvm::Error loom::pipe::buildPrograms(Schedule &schedule, ScheduleKind kind) {
  std::vector<std::vector<Action>> programs;
  if (llvm::Error err = ListScheduler(schedule, kind).run(programs))
    return err;
  schedule.programs = std::move(programs);
  schedule.fills.clear(); // placed in the old programs' bubbles
  return llvm::Error::success();
}

Schedule loom::pipe::makeChain(const ChainSpec &spec) {
  Schedule s;
  s.name = "chain";
  s.microBatches = spec.microBatches;
  s.microBatchSize = spec.microBatchSize;
  s.links = spec.links;
  for (int d = 0; d < spec.devices; ++d)
    s.devices.push_back({"d" + std::to_string(d), -1, spec.memory});
  int numStages = spec.devices * spec.chunks;
  for (int k = 0; k < numStages; ++k) {
    Stage st;
    std::string base = "stage" + std::to_string(k);
    st.name = "s" + std::to_string(k);
    st.devices = {k % spec.devices};
    st.forward = base + "_forward";
    if (spec.splitBackward) {
      st.inputGrad = base + "_input";
      st.weightGrad = base + "_weight";
    } else {
      st.backward = base + "_backward";
    }
    st.forwardTime = spec.forwardTime;
    st.backwardTime = spec.backwardTime;
    st.inputTime = spec.inputTime;
    st.weightTime = spec.weightTime;
    st.weightBytes = spec.weightBytes;
    st.optimizerBytes = spec.optimizerBytes;
    st.activationBytes = spec.activationBytes;
    s.stages.push_back(std::move(st));
    if (k > 0)
      s.edges.push_back({k - 1, k, spec.edgeBytes, spec.edgeBytes});
  }
  s.programs.assign(s.devices.size(), {});
  return s;
}
