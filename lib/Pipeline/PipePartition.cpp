//===- PipePartition.cpp - The pipe-partition pass ------------------------===//
//
// Part of Loom. See the description of PipePartition in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/Passes.h"
#include "loom/Pipeline/Partition.h"
#include "loom/Pipeline/FillJob.h"

#include "loom/Autodiff/Autodiff.h"
#include "loom/Dialect/Pipe/IR/PipeDialect.h"
#include "loom/Dialect/Pipe/Schedule/Builders.h"
#include "loom/Dialect/Pipe/Schedule/Fill.h"
#include "loom/Dialect/Pipe/Schedule/Profile.h"
#include "loom/Dialect/Pipe/Schedule/Simulator.h"
#include "loom/Dialect/Pipe/Schedule/Verifier.h"
#include "loom/Pipeline/StageFunctions.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <limits>
#include <numeric>
#include <optional>

namespace loom::pipeline {
#define GEN_PASS_DEF_PIPEPARTITION
#include "loom/Pipeline/Passes.h.inc"
} // namespace loom::pipeline

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;

namespace {

void printPlan(raw_ostream &os, const Plan &plan, int microBatches) {
  const double ms = 1e3, mib = 1.0 / (1 << 20), gib = 1.0 / (1 << 30);
  os << llvm::format("  %5s %8s %6s %9s %9s %11s %11s %9s %5s %10s\n", "stage",
                     "devices", "ops", "fwd ms", "bwd ms", "params MiB",
                     "act MiB/mb", "peak GiB", "recomp", "ms/mb");
  for (auto [i, s] : llvm::enumerate(plan.stages))
    os << llvm::format("  %5zu %3d-%-4d %6zu %9.3f %9.3f %11.1f %11.2f %9.2f "
                       "%5s %10.3f\n",
                       i, s.devices.front(), s.devices.back(), s.nodes.size(),
                       s.forward * ms, s.backward * ms, s.weightBytes * mib,
                       s.activationBytes * mib, s.peakBytes * gib,
                       s.recompute ? "yes" : "no", s.timePerMicroBatch * ms);
  double path = criticalPath(plan);
  os << llvm::format("  %zu stages, %zu edges; bottleneck %.3f ms per "
                     "micro-batch; step estimate (m - 1) x bottleneck + "
                     "critical path = %.3f ms; search %.3f s\n",
                     plan.stages.size(), plan.edges.size(),
                     plan.bottleneck * ms,
                     ((microBatches - 1) * plan.bottleneck + path) * ms,
                     plan.searchSeconds);
}

llvm::json::Value planJSON(const Plan &plan, int microBatches) {
  llvm::json::Array stages, edges;
  for (const Stage &s : plan.stages) {
    llvm::json::Array devices;
    for (int d : s.devices)
      devices.push_back(d);
    stages.push_back(llvm::json::Object{
        {"ops", int64_t(s.nodes.size())},
        {"devices", std::move(devices)},
        {"forward_s", s.forward},
        {"backward_s", s.backward},
        {"parameter_bytes", s.weightBytes},
        {"activation_bytes", s.activationBytes},
        {"input_bytes", s.inputBytes},
        {"peak_bytes", s.peakBytes},
        {"recompute", s.recompute},
        {"seconds_per_micro_batch", s.timePerMicroBatch}});
  }
  for (const StageEdge &e : plan.edges)
    edges.push_back(
        llvm::json::Object{{"from", e.from}, {"to", e.to}, {"bytes", e.bytes}});
  return llvm::json::Object{
      {"method", plan.method},
      {"stages", std::move(stages)},
      {"edges", std::move(edges)},
      {"bottleneck_s", plan.bottleneck},
      {"step_estimate_s",
       (microBatches - 1) * plan.bottleneck + criticalPath(plan)},
      {"search_s", plan.searchSeconds}};
}

/// The plan as a pipe::Schedule (stage functions named in `functions`):
/// per-replica costs, parameter + gradient and optimizer bytes, the
/// activations a micro-batch keeps (its stage inputs when recomputing).
pipe::Schedule toSchedule(const Plan &plan, const PartitionOptions &o,
                          ArrayRef<StageFunctions> functions, StringRef name,
                          int chunks) {
  pipe::Schedule s;
  s.name = name.str();
  s.microBatches = o.microBatches;
  s.links.intraBandwidth = o.intraNode.bandwidth;
  s.links.intraLatency = o.intraNode.latency;
  s.links.interBandwidth = o.interNode.bandwidth;
  s.links.interLatency = o.interNode.latency;
  s.links.devicesPerNode = o.devicesPerNode;
  int devices = o.devices / std::max(1, chunks);
  for (int d = 0; d < devices; ++d)
    s.devices.push_back({"d" + std::to_string(d), -1, o.memoryPerDevice});
  for (auto [k, stage] : llvm::enumerate(plan.stages)) {
    pipe::Stage st;
    st.name = "s" + std::to_string(k);
    for (int d : stage.devices)
      st.devices.push_back(d % devices);
    st.forward = functions[k].forward;
    st.backward = functions[k].backward;
    double r = stage.devices.size();
    st.forwardTime = stage.forward / r;
    st.backwardTime = (stage.backward + (stage.recompute ? stage.forward : 0)) / r;
    st.weightBytes = 2 * stage.weightBytes;
    st.optimizerBytes =
        int64_t(std::max(0.0, o.stateFactor - 2) * double(stage.weightBytes));
    st.activationBytes =
        stage.recompute ? stage.inputBytes : stage.activationBytes;
    s.stages.push_back(std::move(st));
  }
  for (const StageEdge &e : plan.edges)
    s.edges.push_back({e.from, e.to, e.bytes, e.bytes});
  return s;
}

/// Writes where every stage input comes from and which stage outputs the
/// partitioned function returns, as attributes the reference executor
/// reads: `loom.source = array<i64: stage, index>` on a forward function's
/// argument (stage -1: the function's argument `index`), `loom.returned =
/// array<i64: positions...>` on a result the function returns.
void recordDataflow(func::FuncOp fn, ArrayRef<StageFunctions> functions) {
  auto module = fn->getParentOfType<ModuleOp>();
  MLIRContext *ctx = fn.getContext();
  DenseMap<Value, std::pair<int64_t, int64_t>> producer;
  for (auto [k, f] : llvm::enumerate(functions))
    for (auto [i, v] : llvm::enumerate(f.outputs))
      producer[v] = {int64_t(k), int64_t(i)};
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  for (const StageFunctions &f : functions) {
    auto forward = module.lookupSymbol<func::FuncOp>(f.forward);
    for (auto [i, v] : llvm::enumerate(f.inputs)) {
      std::pair<int64_t, int64_t> source = {-1, -1};
      if (auto arg = dyn_cast<BlockArgument>(v))
        source.second = arg.getArgNumber();
      else
        source = producer.lookup(v);
      forward.setArgAttr(i, "loom.source",
                         DenseI64ArrayAttr::get(
                             ctx, {source.first, source.second}));
    }
    for (auto [i, v] : llvm::enumerate(f.outputs)) {
      SmallVector<int64_t> positions;
      for (OpOperand &use : ret->getOpOperands())
        if (use.get() == v)
          positions.push_back(use.getOperandNumber());
      if (!positions.empty())
        forward.setResultAttr(i, "loom.returned",
                              DenseI64ArrayAttr::get(ctx, positions));
    }
  }
}

/// The compute of one micro-batch that \p profile measured on a partition
/// of the function \p fn: the mean of each of its stage functions' computes
/// (`<fn>_s<k>_forward`, `_backward`; a replica's copies left out), and of
/// their deferred parameter-gradient sums, summed. 0 when it ran none.
double measuredCompute(const pipe::StepProfile &profile, StringRef fn) {
  std::string prefix = (fn + "_s").str();
  double sum = 0;
  for (const auto *times : {&profile.compute, &profile.deferred})
    for (const auto &[entry, samples] : *times)
      if (StringRef(entry).starts_with(prefix) &&
          !StringRef(entry).contains(".replica") && !samples.empty())
        sum += std::accumulate(samples.begin(), samples.end(), 0.0) /
               double(samples.size());
  return sum;
}

/// Feeds the model of \p fn with \p profile, a run of a partition of it:
/// every op's forward and backward seconds scaled by the measured compute
/// over the modeled one, and (when the run sent messages) the links'
/// latency and bandwidth the measured flight's. The message's own costs
/// (a send's and a receive's busy time) go to the simulator as they are.
/// An error when the profile ran no stage function of \p fn.
LogicalResult feedModel(GraphModel &g, PartitionOptions &o,
                        const pipe::StepProfile &profile, func::FuncOp fn) {
  double measured = measuredCompute(profile, fn.getSymName());
  double modeled = g.totalForward + g.totalBackward;
  if (measured <= 0 || modeled <= 0)
    return fn.emitError("pipe-partition: the step profiles ran no stage "
                        "function of @")
           << fn.getSymName() << " (@" << fn.getSymName()
           << "_s<k>_forward or _backward): they measured another function";
  double scale = measured / modeled;
  for (Node &n : g.nodes) {
    n.forward *= scale;
    n.backward *= scale;
  }
  g.totalForward *= scale;
  g.totalBackward *= scale;
  const pipe::MessageCost &m = profile.messages;
  if (m.flightSamples > 0) {
    Link link{m.bandwidth > 0 ? m.bandwidth : 1e15, m.latency};
    o.intraNode = o.interNode = link;
  }
  llvm::errs() << llvm::format(
      "pipe-partition: fed with %lld step profile(s): compute %.3f ms per "
      "micro-batch measured, %.3f ms modeled (ops scaled x%.3g); messages: "
      "send %.4f ms, receive %.4f ms, latency %.4f ms\n",
      (long long)profile.files, measured * 1e3, modeled * 1e3, scale,
      m.sendSeconds * 1e3, m.recvSeconds * 1e3, m.latency * 1e3);
  return success();
}

struct Partition : public pipeline::impl::PipePartitionBase<Partition> {
  using PipePartitionBase::PipePartitionBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    tg::registerTGGradientInterfaceModels(registry);
    registry.insert<pipe::PipeDialect>();
  }

  /// The candidate plans: the graph partition's and the sequential one's
  /// for schedule=graph (a chain of stages is a DAG too, so the graph search
  /// is never worse and finds a plan whenever one of the two does), the
  /// sequential one's otherwise.
  FailureOr<std::vector<Plan>> candidatePlans(const GraphModel &g,
                                              const PartitionOptions &po,
                                              bool graph, func::FuncOp fn) {
    if (!graph)
      return partitionSequential(g, po, fn.getLoc());
    std::string firstError;
    FailureOr<std::vector<Plan>> dag = failure(), chain = failure();
    {
      ScopedDiagnosticHandler keep(&getContext(), [&](Diagnostic &d) {
        if (firstError.empty())
          firstError = d.str();
        return success();
      });
      dag = partitionGraph(g, po, fn.getLoc());
      chain = partitionSequential(g, po, fn.getLoc());
    }
    if (failed(dag) && failed(chain)) {
      fn.emitError(firstError);
      return failure();
    }
    std::vector<Plan> all;
    for (auto *found : {&dag, &chain})
      if (succeeded(*found))
        for (Plan &p : **found)
          all.push_back(std::move(p));
    return all;
  }

  /// Every candidate (within simulation-budget seconds; the first always)
  /// built under each of `kinds` and simulated; the fastest that fits the
  /// devices' memory (the schedule decides how many micro-batches are in
  /// flight: GPipe keeps all of them) wins, and `kind` becomes its kind.
  std::optional<Plan> fastestBySimulation(ArrayRef<Plan> candidates,
                                          ArrayRef<pipe::ScheduleKind> kinds,
                                          const PartitionOptions &po, int v,
                                          const pipe::SimulateOptions &fed,
                                          pipe::ScheduleKind &kind,
                                          size_t &tried, std::string &why) {
    auto start = std::chrono::steady_clock::now();
    std::optional<Plan> best;
    double bestMakespan = std::numeric_limits<double>::infinity();
    for (const Plan &candidate : candidates) {
      if (tried && std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                           .count() > simulationBudget)
        break;
      ++tried;
      SmallVector<StageFunctions> names(candidate.stages.size());
      for (auto [k, n] : llvm::enumerate(names))
        n.forward = n.backward = "s" + std::to_string(k);
      for (pipe::ScheduleKind k : kinds) {
        pipe::Schedule trial = toSchedule(candidate, po, names, "trial", v);
        if (llvm::Error err = pipe::buildPrograms(trial, k)) {
          why = llvm::toString(std::move(err));
          continue;
        }
        pipe::Simulation sim = pipe::simulate(trial, fed);
        bool fits = llvm::all_of(sim.devices, [&](const pipe::DeviceStats &d) {
          return !po.memoryPerDevice || d.peakBytes <= po.memoryPerDevice;
        });
        if (!fits)
          why = "every schedule exceeds the memory of a device";
        if (fits && !sim.deadlocked() && sim.makespan < bestMakespan) {
          bestMakespan = sim.makespan;
          best = candidate;
          kind = k;
        }
      }
    }
    return best;
  }

  /// The plan with its simulation as JSON in `report`; an error message or "".
  std::string writeReport(const Plan &plan, const pipe::Schedule &sched,
                          const pipe::Simulation &sim) {
    std::error_code ec;
    llvm::raw_fd_ostream os(report, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return "cannot write '" + report + "': " + ec.message();
    llvm::json::Value j = planJSON(plan, microBatches);
    std::string simText;
    llvm::raw_string_ostream simOs(simText);
    pipe::writeSimulationJSON(simOs, sched, sim);
    if (auto parsed = llvm::json::parse(simText))
      j.getAsObject()->insert({"simulation", std::move(*parsed)});
    else
      llvm::consumeError(parsed.takeError());
    os << llvm::formatv("{0:2}", j) << "\n";
    return "";
  }

  /// fill-bubbles: the schedule's bubbles filled with the function's trial
  /// steps, checked again with them.
  LogicalResult fill(ModuleOp module, pipe::Schedule &sched, func::FuncOp fn) {
    FillJobSpec spec;
    spec.function = fillBubbles;
    spec.modulePath = fillModule;
    spec.target = target;
    spec.optimizer = optimizer;
    spec.microBatches = fillMicroBatches;
    FailureOr<pipe::FillJob> job = priceFillJob(module, spec);
    if (failed(job))
      return failure();
    if (llvm::Error err = pipe::fillBubbles(sched, *job))
      return fn.emitError("pipe-partition: fill-bubbles: ")
             << llvm::toString(std::move(err));
    std::vector<pipe::ScheduleProblem> problems = pipe::checkSchedule(sched);
    for (const pipe::ScheduleProblem &p : problems)
      fn.emitError("pipe-partition: the filled schedule is wrong: ")
          << p.message;
    return success(problems.empty());
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &message) {
      module.emitError("pipe-partition: ") << message;
      signalPassFailure();
    };
    func::FuncOp fn;
    if (!function.empty()) {
      fn = module.lookupSymbol<func::FuncOp>(function);
      if (!fn)
        return fail("no function named '" + function + "'");
    } else if (!(fn = module.lookupSymbol<func::FuncOp>("main"))) {
      auto fns = llvm::to_vector(module.getOps<func::FuncOp>());
      if (fns.size() != 1)
        return fail("the module has " + Twine(fns.size()) +
                    " functions and no @main; name one with function=NAME");
      fn = fns.front();
    }
    if (devices < 1 || devices > 65536)
      return fail("devices must be in [1, 65536], not " + Twine(devices));
    if (microBatches < 1)
      return fail("micro-batches must be at least 1");
    if (memoryGiB < 0)
      return fail("memory must not be negative");
    PartitionOptions o;
    o.devices = devices;
    o.microBatches = microBatches;
    o.memoryPerDevice = int64_t(memoryGiB * double(int64_t(1) << 30));
    if (std::optional<double> factor = stateFactorOf(optimizer))
      o.stateFactor = *factor;
    else
      return fail("unknown optimizer '" + optimizer +
                  "' (adam, sgd-momentum, sgd)");
    bool graph = schedule == "graph";
    std::optional<pipe::ScheduleKind> kind =
        graph ? pipe::ScheduleKind::OneFOneB
              : pipe::parseScheduleKind(schedule).value_or(
                    pipe::ScheduleKind::GPipe);
    if (!graph && !pipe::parseScheduleKind(schedule))
      return fail("unknown schedule '" + schedule +
                  "' (graph, gpipe, 1f1b, interleaved, zb-h1)");
    int v = *kind == pipe::ScheduleKind::Interleaved ? chunks : 1;
    if (v < 1)
      return fail("chunks must be at least 1");
    auto costs = cost::createCostModel(target, "");
    if (!costs)
      return fail(llvm::toString(costs.takeError()));
    FailureOr<GraphModel> g = modelGraph(fn, *costs->model);
    if (failed(g))
      return signalPassFailure();
    // A measured run's message costs for every candidate's simulation.
    std::optional<pipe::StepProfile> profile;
    pipe::SimulateOptions fed;
    if (!profiles.empty()) {
      auto read = pipe::readStepProfiles(profiles);
      if (!read)
        return fail(llvm::toString(read.takeError()));
      profile = std::move(*read);
      if (failed(feedModel(*g, o, *profile, fn)))
        return signalPassFailure();
      if (profile->messages.flightSamples > 0)
        fed.messages = &profile->messages;
    }
    // Interleaved: devices x chunks contiguous stages, one replica each,
    // stage k on device k mod devices.
    PartitionOptions po = o;
    if (v > 1) {
      po.devices = devices * v;
      po.oneStagePerDevice = true;
    }
    FailureOr<std::vector<Plan>> candidates = candidatePlans(*g, po, graph, fn);
    if (failed(candidates))
      return signalPassFailure();
    auto clock = std::chrono::steady_clock::now();
    auto lap = [&] {
      auto now = std::chrono::steady_clock::now();
      double s = std::chrono::duration<double>(now - clock).count();
      clock = now;
      return s;
    };
    SmallVector<pipe::ScheduleKind> kinds = {*kind};
    if (graph)
      kinds.append({pipe::ScheduleKind::ZBH1, pipe::ScheduleKind::GPipe});
    std::string why;
    size_t tried = 0;
    std::optional<Plan> plan =
        fastestBySimulation(*candidates, kinds, po, v, fed, *kind, tried, why);
    if (!plan)
      return fail("no candidate plan could be scheduled as " + schedule +
                  (why.empty() ? "" : ": " + why));
    double simulateSeconds = lap();
    llvm::errs() << "pipe-partition: @" << fn.getSymName() << ", "
                 << g->nodes.size() << " ops, on " << devices << " x "
                 << target << " (" << llvm::format("%g", memoryGiB.getValue())
                 << " GiB), " << microBatches
                 << " micro-batches, " << plan->method << " partition\n";
    printPlan(llvm::errs(), *plan, microBatches);

    // The stages as functions and the schedule as a pipe.schedule op.
    SmallVector<StageFunctions> functions;
    for (auto [k, stage] : llvm::enumerate(plan->stages)) {
      FailureOr<StageFunctions> f = outlineStage(
          fn, *g, stage, (fn.getSymName() + "_s" + Twine(k)).str());
      if (failed(f))
        return signalPassFailure();
      functions.push_back(std::move(*f));
    }
    recordDataflow(fn, functions);
    double outlineSeconds = lap();
    pipe::Schedule sched = toSchedule(*plan, po, functions,
                                      (fn.getSymName() + "_pipeline").str(), v);
    if (llvm::Error err = pipe::buildPrograms(sched, *kind))
      return fail(llvm::toString(std::move(err)));
    std::vector<pipe::ScheduleProblem> problems = pipe::checkSchedule(sched);
    for (const pipe::ScheduleProblem &p : problems)
      fn.emitError("pipe-partition: the emitted schedule is wrong: ")
          << p.message;
    if (!problems.empty())
      return signalPassFailure();
    if (!fillBubbles.empty() && failed(fill(module, sched, fn)))
      return signalPassFailure();
    pipe::Simulation sim = pipe::simulate(sched, fed);
    llvm::errs() << "schedule " << schedule << " ("
                 << pipe::scheduleKindName(*kind) << " over "
                 << (graph ? "the stage DAG" : "the stages") << ", best of "
                 << tried << " candidate plans simulated):\n";
    pipe::printSimulation(llvm::errs(), sched, sim);
    llvm::errs() << llvm::format("pipe-partition: %zu of %zu candidate plans "
                                 "simulated in %.2f s, %zu stage functions "
                                 "written in %.2f s\n",
                                 tried, candidates->size(), simulateSeconds,
                                 functions.size(), outlineSeconds);
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    pipe::writeSchedule(b, fn.getLoc(), sched);
    if (!report.empty())
      if (std::string err = writeReport(*plan, sched, sim); !err.empty())
        return fail(err);
  }
};

} // namespace
