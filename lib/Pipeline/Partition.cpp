//===- Partition.cpp - Sequential and graph stage partitioning ------------===//
//
// Part of Loom. See include/loom/Pipeline/Partition.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/Partition.h"
#include "loom/Support/StableSort.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <optional>

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Seconds per step of a ring all-reduce of `bytes` over `replicas`.
double allReduceSeconds(int64_t bytes, int replicas,
                        const PartitionOptions &o) {
  if (replicas <= 1 || bytes == 0)
    return 0;
  const Link &link = replicas <= o.devicesPerNode ? o.intraNode : o.interNode;
  return 2.0 * (replicas - 1) / replicas * double(bytes) / link.bandwidth +
         2.0 * (replicas - 1) * link.latency;
}

/// Sums, memory and time of a stage holding `nodes`, replicated `replicas`
/// times, with `inFlight` micro-batches' activations alive. False when it
/// does not fit the device memory even with recomputation.
bool finishStage(const GraphModel &g, Stage &s, int replicas, int inFlight,
                 const PartitionOptions &o) {
  s.forward = s.backward = 0;
  s.weightBytes = s.activationBytes = s.inputBytes = 0;
  llvm::BitVector in(g.nodes.size());
  for (int n : s.nodes)
    in.set(n);
  for (int n : s.nodes) {
    const Node &node = g.nodes[n];
    s.forward += node.forward;
    s.backward += node.backward;
    s.weightBytes += node.weightBytes;
    s.activationBytes += node.activationBytes;
    for (int p : node.preds)
      if (!in.test(p))
        for (auto [k, succ] : llvm::enumerate(g.nodes[p].succs))
          if (succ == n)
            s.inputBytes += g.nodes[p].succBytes[k];
  }
  int64_t fixed = int64_t(o.stateFactor * double(s.weightBytes));
  int64_t keep = fixed + int64_t(inFlight) * s.activationBytes;
  // Recomputing keeps only each micro-batch's stage input, plus one
  // micro-batch's activations while its backward runs.
  int64_t redo = fixed + int64_t(inFlight) * s.inputBytes + s.activationBytes;
  s.recompute = false;
  s.peakBytes = keep;
  if (o.memoryPerDevice && keep > o.memoryPerDevice) {
    if (!o.allowRecompute || redo > o.memoryPerDevice)
      return false;
    s.recompute = true;
    s.peakBytes = redo;
  }
  double work = s.forward + s.backward + (s.recompute ? s.forward : 0);
  s.timePerMicroBatch =
      work / replicas +
      allReduceSeconds(s.weightBytes, replicas, o) / o.microBatches;
  return true;
}

/// The stage DAG's edges, the in-flight count of every stage under a
/// 1F1B-like schedule (its longest path to a sink, plus one, at most the
/// micro-batch count), device numbers, and the bottleneck.
LogicalResult finishPlan(const GraphModel &g, Plan &plan,
                         const std::vector<int> &replicas,
                         const PartitionOptions &o, Location loc) {
  std::vector<int> stageOf(g.nodes.size(), -1);
  for (auto [i, s] : llvm::enumerate(plan.stages))
    for (int n : s.nodes)
      stageOf[n] = i;
  std::map<std::pair<int, int>, int64_t> bytes;
  for (auto [i, node] : llvm::enumerate(g.nodes))
    for (auto [k, succ] : llvm::enumerate(node.succs))
      if (stageOf[i] != stageOf[succ])
        bytes[{stageOf[i], stageOf[succ]}] += node.succBytes[k];
  plan.edges.clear();
  for (auto [key, b] : bytes)
    plan.edges.push_back({key.first, key.second, b});
  // Stages are listed in a topological order (every edge goes forward).
  size_t n = plan.stages.size();
  std::vector<int> depth(n, 0);
  for (int i = int(n) - 1; i >= 0; --i)
    for (const StageEdge &e : plan.edges)
      if (e.from == i)
        depth[i] = std::max(depth[i], depth[e.to] + 1);
  int device = 0;
  plan.bottleneck = 0;
  for (auto [i, s] : llvm::enumerate(plan.stages)) {
    int inFlight = std::min(o.microBatches, depth[i] + 1);
    if (!finishStage(g, s, replicas[i], inFlight, o))
      return emitError(loc) << "pipe-partition: stage " << i << " ("
                            << s.nodes.size() << " ops, "
                            << s.weightBytes << " parameter bytes) does not "
                            << "fit " << o.memoryPerDevice
                            << " bytes per device even with recomputation";
    s.devices.clear();
    for (int r = 0; r < replicas[i]; ++r)
      s.devices.push_back(device++);
    plan.bottleneck = std::max(plan.bottleneck, s.timePerMicroBatch);
  }
  return success();
}

/// Gives devices left over to the slowest stages as data-parallel
/// replicas while that lowers the bottleneck.
void replicate(const GraphModel &g, Plan &plan, std::vector<int> &replicas,
               int spare, const PartitionOptions &o) {
  while (spare > 0) {
    int worst = 0;
    for (size_t i = 1; i < plan.stages.size(); ++i)
      if (plan.stages[i].timePerMicroBatch >
          plan.stages[worst].timePerMicroBatch)
        worst = i;
    Stage trial = plan.stages[worst];
    if (!finishStage(g, trial, replicas[worst] + 1, 1, o) ||
        trial.timePerMicroBatch >= plan.stages[worst].timePerMicroBatch)
      return;
    plan.stages[worst].timePerMicroBatch = trial.timePerMicroBatch;
    ++replicas[worst];
    --spare;
  }
}

double nodeTime(const Node &n) { return n.forward + n.backward; }

} // namespace

double pipeline::criticalPath(const Plan &plan) {
  std::vector<double> longest(plan.stages.size(), 0);
  for (int i = int(plan.stages.size()) - 1; i >= 0; --i) {
    double next = 0;
    for (const StageEdge &e : plan.edges)
      if (e.from == i)
        next = std::max(next, longest[e.to]);
    longest[i] = plan.stages[i].timePerMicroBatch + next;
  }
  return plan.stages.empty()
             ? 0
             : *std::max_element(longest.begin(), longest.end());
}

double pipeline::stepEstimate(const Plan &plan, int microBatches) {
  return (microBatches - 1) * plan.bottleneck + criticalPath(plan);
}

namespace {
/// The candidates by step estimate, best first, at most kMaxCandidates.
std::vector<Plan>
bestCandidates(std::vector<std::pair<double, Plan>> found,
               std::chrono::steady_clock::time_point start) {
  constexpr size_t kMaxCandidates = 8;
  loom::stableSort(found, [](auto &a, auto &b) {
    return a.first < b.first;
  });
  std::vector<Plan> plans;
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  for (auto &[step, plan] : found) {
    if (plans.size() == kMaxCandidates)
      break;
    plan.searchSeconds = seconds;
    plans.push_back(std::move(plan));
  }
  return plans;
}
} // namespace

namespace {

} // namespace

//===----------------------------------------------------------------------===//
// Sequential: PipeDream's dynamic programme
//===----------------------------------------------------------------------===//

FailureOr<std::vector<Plan>> pipeline::partitionSequential(const GraphModel &g,
                                              const PartitionOptions &o,
                                              Location loc) {
  auto start = std::chrono::steady_clock::now();
  // Layers: consecutive nodes merged so that there are at most 128.
  const int maxLayers = 128;
  double total = g.totalForward + g.totalBackward;
  std::vector<std::pair<int, int>> layers; // [begin, end) of nodes
  double acc = 0;
  int begin = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    acc += nodeTime(g.nodes[i]);
    if (acc >= total / maxLayers || i + 1 == g.nodes.size()) {
      layers.push_back({begin, int(i) + 1});
      begin = i + 1;
      acc = 0;
    }
  }
  int L = layers.size(), P = o.devices;
  std::vector<int> layerOf(g.nodes.size());
  for (int l = 0; l < L; ++l)
    for (int n = layers[l].first; n < layers[l].second; ++n)
      layerOf[n] = l;
  // Bytes crossing the cut after layer l.
  std::vector<int64_t> cut(L, 0);
  for (auto [i, node] : llvm::enumerate(g.nodes))
    for (auto [k, succ] : llvm::enumerate(node.succs))
      for (int l = layerOf[i]; l < layerOf[succ]; ++l)
        cut[l] += node.succBytes[k];
  std::vector<double> time(L + 1, 0), fwd(L + 1, 0);
  std::vector<int64_t> weights(L + 1, 0), acts(L + 1, 0);
  for (int l = 0; l < L; ++l) {
    double t = 0, f = 0;
    int64_t w = 0, a = 0;
    for (int n = layers[l].first; n < layers[l].second; ++n) {
      t += nodeTime(g.nodes[n]);
      f += g.nodes[n].forward;
      w += g.nodes[n].weightBytes;
      a += g.nodes[n].activationBytes;
    }
    time[l + 1] = time[l] + t;
    fwd[l + 1] = fwd[l] + f;
    weights[l + 1] = weights[l] + w;
    acts[l + 1] = acts[l] + a;
  }
  // Replica counts tried: all up to 16, then powers of two.
  std::vector<int> counts;
  for (int r = 1; r <= (o.oneStagePerDevice ? 1 : P); r = r < 16 ? r + 1 : r * 2)
    counts.push_back(r);
  auto stageTime = [&](int i, int j, int r, int inFlight) {
    int64_t w = weights[j] - weights[i], a = acts[j] - acts[i];
    int64_t in = i ? cut[i - 1] : 0;
    int64_t fixed = int64_t(o.stateFactor * double(w));
    double work = time[j] - time[i];
    if (o.memoryPerDevice &&
        fixed + int64_t(inFlight) * a > o.memoryPerDevice) {
      if (!o.allowRecompute ||
          fixed + int64_t(inFlight) * in + a > o.memoryPerDevice)
        return kInf;
      work += fwd[j] - fwd[i];
    }
    return work / r + allReduceSeconds(w, r, o) / o.microBatches;
  };
  // best[i][d]: the bottleneck of layers i.. on exactly d devices.
  std::vector<std::vector<double>> best(L + 1,
                                        std::vector<double>(P + 1, kInf));
  std::vector<std::vector<std::pair<int, int>>> choice(
      L + 1, std::vector<std::pair<int, int>>(P + 1, {-1, -1}));
  best[L][0] = 0;
  for (int i = L - 1; i >= 0; --i)
    for (int d = 1; d <= P; ++d)
      for (int j = i + 1; j <= L; ++j) {
        double comm = j < L ? o.intraNode.seconds(cut[j - 1]) : 0;
        for (int r : counts) {
          if (r > d || (j == L) != (r == d))
            continue;
          double rest = best[j][d - r];
          if (rest == kInf)
            continue;
          int inFlight = std::min(o.microBatches, d - r + 1);
          double t = std::max({stageTime(i, j, r, inFlight), comm, rest});
          if (t < best[i][d]) {
            best[i][d] = t;
            choice[i][d] = {j, r};
          }
        }
      }
  // A plan for every number of pipeline devices d (the table holds them
  // all), the other devices replicating its slowest stages; the smallest
  // step estimate wins.
  std::vector<std::pair<double, Plan>> found;
  for (int d = o.oneStagePerDevice ? P : 1; d <= P; ++d) {
    if (best[0][d] == kInf)
      continue;
    Plan plan;
    plan.method = "sequential";
    std::vector<int> replicas;
    for (int i = 0, left = d; i < L;) {
      auto [j, r] = choice[i][left];
      Stage s;
      for (int n = layers[i].first; n < layers[j - 1].second; ++n)
        s.nodes.push_back(n);
      plan.stages.push_back(std::move(s));
      replicas.push_back(r);
      i = j;
      left -= r;
    }
    ScopedDiagnosticHandler quiet(loc.getContext(),
                                  [](Diagnostic &) { return success(); });
    if (failed(finishPlan(g, plan, replicas, o, loc)))
      continue;
    if (!o.oneStagePerDevice) {
      replicate(g, plan, replicas, P - d, o);
      if (failed(finishPlan(g, plan, replicas, o, loc)))
        continue;
    }
    found.push_back({stepEstimate(plan, o.microBatches), std::move(plan)});
  }
  if (found.empty())
    return emitError(loc) << "pipe-partition: no partition into contiguous "
                          << "stages fits on " << P << " device(s) with "
                          << o.memoryPerDevice << " bytes each";
  return bestCandidates(std::move(found), start);
}

//===----------------------------------------------------------------------===//
// Graph: parallel branches on different devices
//===----------------------------------------------------------------------===//

namespace {

struct Branches {
  std::vector<std::vector<int>> nodes; // per group, in block order
  std::vector<int> level;              // longest path from a source group
  std::vector<double> time;
};

/// Groups nodes by the set of model inputs they depend on; a node that
/// depends on none (parameters only) joins its first consumer's group.
Branches findBranches(const GraphModel &g) {
  std::map<std::vector<int>, int> groupOf;
  std::vector<int> group(g.nodes.size(), -1);
  std::vector<std::vector<int>> keys(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    keys[i] = g.inputs[i];
  for (int i = int(g.nodes.size()) - 1; i >= 0; --i)
    if (keys[i].empty() && !g.nodes[i].succs.empty())
      keys[i] = keys[g.nodes[i].succs.front()];
  Branches b;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    auto [it, inserted] = groupOf.try_emplace(keys[i], b.nodes.size());
    if (inserted)
      b.nodes.emplace_back();
    group[i] = it->second;
    b.nodes[it->second].push_back(i);
  }
  // Edges between groups go from a smaller input set to a larger one, so
  // the group graph is acyclic; levels by longest path, in block order of
  // first nodes (a topological order: producers come first).
  b.level.assign(b.nodes.size(), 0);
  b.time.assign(b.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    b.time[group[i]] += nodeTime(g.nodes[i]);
    for (int s : g.nodes[i].succs)
      if (group[s] != group[i])
        b.level[group[s]] = std::max(b.level[group[s]], b.level[group[i]] + 1);
  }
  // A second pass settles levels raised by later nodes.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int s : g.nodes[i].succs)
        if (group[s] != group[i] &&
            b.level[group[s]] < b.level[group[i]] + 1) {
          b.level[group[s]] = b.level[group[i]] + 1;
          changed = true;
        }
  }
  return b;
}

/// `stages` in a topological order of the stage graph (Kahn's algorithm,
/// ties by first node in block order).
std::vector<std::vector<int>>
topologicalOrder(const GraphModel &g, std::vector<std::vector<int>> stages) {
  llvm::sort(stages, [](auto &x, auto &y) { return x.front() < y.front(); });
  std::vector<int> stageOf(g.nodes.size(), -1);
  for (auto [i, s] : llvm::enumerate(stages))
    for (int n : s)
      stageOf[n] = i;
  size_t count = stages.size();
  std::vector<std::vector<int>> out(count);
  std::vector<int> indegree(count, 0);
  for (auto [i, node] : llvm::enumerate(g.nodes))
    for (int succ : node.succs)
      if (stageOf[i] != stageOf[succ]) {
        out[stageOf[i]].push_back(stageOf[succ]);
        ++indegree[stageOf[succ]];
      }
  std::vector<int> ready, order;
  for (size_t i = 0; i < count; ++i)
    if (!indegree[i])
      ready.push_back(i);
  while (!ready.empty()) {
    auto first = std::min_element(ready.begin(), ready.end());
    int s = *first;
    ready.erase(first);
    order.push_back(s);
    for (int t : out[s])
      if (--indegree[t] == 0)
        ready.push_back(t);
  }
  assert(order.size() == count && "the stage graph has a cycle");
  std::vector<std::vector<int>> sorted;
  for (int s : order)
    sorted.push_back(std::move(stages[s]));
  return sorted;
}

/// Merges stages pairwise, smallest first, while the merged stage stays
/// within `limit` and the stage graph stays acyclic (no path between the two
/// through a third stage).
std::vector<std::vector<int>> mergeSmallStages(const GraphModel &g,
                                               std::vector<std::vector<int>> st,
                                               double limit) {
  for (bool merged = true; merged && st.size() > 1;) {
    merged = false;
    size_t n = st.size();
    std::vector<int> stageOf(g.nodes.size());
    std::vector<double> time(n, 0);
    for (size_t i = 0; i < n; ++i)
      for (int v : st[i]) {
        stageOf[v] = i;
        time[i] += nodeTime(g.nodes[v]);
      }
    std::vector<llvm::BitVector> next(n, llvm::BitVector(n));
    for (auto [v, node] : llvm::enumerate(g.nodes))
      for (int s : node.succs)
        if (stageOf[v] != stageOf[s])
          next[stageOf[v]].set(stageOf[s]);
    // reach[i]: stages reachable from i (topological order: edges forward).
    std::vector<llvm::BitVector> reach(n, llvm::BitVector(n));
    for (int i = int(n) - 1; i >= 0; --i)
      for (int j : next[i].set_bits()) {
        reach[i].set(j);
        reach[i] |= reach[j];
      }
    auto throughThird = [&](size_t a, size_t b) {
      for (int k : next[a].set_bits())
        if (size_t(k) != b && reach[k].test(b))
          return true;
      return false;
    };
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i)
      order[i] = i;
    llvm::sort(order, [&](size_t a, size_t b) { return time[a] < time[b]; });
    for (size_t a : order) {
      size_t best = n;
      for (size_t b = 0; b < n; ++b) {
        if (b == a || time[a] + time[b] > limit)
          continue;
        size_t lo = std::min(a, b), hi = std::max(a, b);
        if (throughThird(lo, hi))
          continue;
        // Prefer a neighbour in the graph, then the smallest partner.
        bool adjacent = next[lo].test(hi);
        if (best == n || (adjacent && !next[std::min(a, best)].test(
                                          std::max(a, best))) ||
            (adjacent == next[std::min(a, best)].test(std::max(a, best)) &&
             time[b] < time[best]))
          best = b;
      }
      if (best == n)
        continue;
      size_t keep = std::min(a, best), drop = std::max(a, best);
      st[keep].insert(st[keep].end(), st[drop].begin(), st[drop].end());
      llvm::sort(st[keep]);
      st.erase(st.begin() + drop);
      st = topologicalOrder(g, std::move(st));
      merged = true;
      break;
    }
  }
  return st;
}

/// Stages for bottleneck `limit`: branches longer than it split into runs,
/// shorter ones of one level packed together (first fit decreasing).
std::vector<std::vector<int>> cover(const GraphModel &g, const Branches &b,
                                    double limit) {
  std::vector<std::vector<int>> stages;
  std::map<int, std::vector<int>> smallByLevel;
  for (size_t k = 0; k < b.nodes.size(); ++k) {
    if (b.time[k] <= limit) {
      smallByLevel[b.level[k]].push_back(k);
      continue;
    }
    std::vector<int> run;
    double t = 0;
    for (int n : b.nodes[k]) {
      double nt = nodeTime(g.nodes[n]);
      if (!run.empty() && t + nt > limit) {
        stages.push_back(run);
        run.clear();
        t = 0;
      }
      run.push_back(n);
      t += nt;
    }
    stages.push_back(run);
  }
  for (auto &[level, groups] : smallByLevel) {
    llvm::sort(groups, [&](int x, int y) { return b.time[x] > b.time[y]; });
    std::vector<std::pair<double, std::vector<int>>> bins;
    for (int k : groups) {
      auto bin = llvm::find_if(bins, [&](auto &bn) {
        return bn.first + b.time[k] <= limit;
      });
      if (bin == bins.end()) {
        bins.push_back({0, {}});
        bin = std::prev(bins.end());
      }
      bin->first += b.time[k];
      bin->second.insert(bin->second.end(), b.nodes[k].begin(),
                         b.nodes[k].end());
    }
    for (auto &bn : bins) {
      llvm::sort(bn.second);
      stages.push_back(std::move(bn.second));
    }
  }
  return mergeSmallStages(g, topologicalOrder(g, std::move(stages)), limit);
}

} // namespace

FailureOr<std::vector<Plan>> pipeline::partitionGraph(const GraphModel &g,
                                         const PartitionOptions &o,
                                         Location loc) {
  auto start = std::chrono::steady_clock::now();
  Branches b = findBranches(g);
  double lo = 0, hi = 0;
  for (const Node &n : g.nodes) {
    lo = std::max(lo, nodeTime(n));
    hi += nodeTime(n);
  }
  // For every number k of distinct stages: the smallest bottleneck whose
  // cover needs at most k devices, then the other devices as replicas of
  // the slowest stages; the plan with the smallest step estimate wins.
  double lowest = lo, highest = hi;
  std::vector<std::pair<double, Plan>> found;
  int lastCount = -1;
  for (int k = std::min<int>(o.devices, g.nodes.size()); k >= 1; --k) {
    lo = lowest;
    hi = highest;
    for (int iter = 0; iter < 50 && hi - lo > 1e-4 * hi; ++iter) {
      double mid = 0.5 * (lo + hi);
      if (int(cover(g, b, mid).size()) <= k)
        hi = mid;
      else
        lo = mid;
    }
    std::vector<std::vector<int>> stages = cover(g, b, hi);
    if (int(stages.size()) == lastCount)
      continue; // the same cover as with one more device
    lastCount = stages.size();
    Plan plan;
    plan.method = "graph";
    for (auto &nodes : stages) {
      Stage s;
      s.nodes = std::move(nodes);
      plan.stages.push_back(std::move(s));
    }
    std::vector<int> replicas(plan.stages.size(), 1);
    {
      // A cover that does not fit the memory is not a candidate.
      ScopedDiagnosticHandler quiet(loc.getContext(),
                                    [](Diagnostic &) { return success(); });
      if (failed(finishPlan(g, plan, replicas, o, loc)))
        continue;
      replicate(g, plan, replicas, o.devices - int(plan.stages.size()), o);
      if (failed(finishPlan(g, plan, replicas, o, loc)))
        continue;
    }
    found.push_back({stepEstimate(plan, o.microBatches), std::move(plan)});
  }
  if (found.empty())
    return emitError(loc) << "pipe-partition: no partition of the graph fits "
                          << "on " << o.devices << " device(s) with "
                          << o.memoryPerDevice << " bytes each";
  return bestCandidates(std::move(found), start);
}
