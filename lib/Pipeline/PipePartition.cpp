//===- PipePartition.cpp - The pipe-partition pass ------------------------===//
//
// Part of Loom. See the description of PipePartition in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/Passes.h"
#include "loom/Pipeline/Partition.h"

#include "loom/Autodiff/Autodiff.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

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

struct Partition : public pipeline::impl::PipePartitionBase<Partition> {
  using PipePartitionBase::PipePartitionBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    tg::registerTGGradientInterfaceModels(registry);
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
    if (optimizer == "adam")
      o.stateFactor = 4;
    else if (optimizer == "sgd-momentum")
      o.stateFactor = 3;
    else if (optimizer == "sgd")
      o.stateFactor = 2;
    else
      return fail("unknown optimizer '" + optimizer +
                  "' (adam, sgd-momentum, sgd)");
    bool graph = schedule == "graph";
    if (!graph && schedule != "gpipe" && schedule != "1f1b" &&
        schedule != "interleaved" && schedule != "zb-h1")
      return fail("unknown schedule '" + schedule +
                  "' (graph, gpipe, 1f1b, interleaved, zb-h1)");
    auto costs = cost::createCostModel(target, "");
    if (!costs)
      return fail(llvm::toString(costs.takeError()));
    FailureOr<GraphModel> g = modelGraph(fn, *costs->model);
    if (failed(g))
      return signalPassFailure();
    FailureOr<Plan> plan = graph ? partitionGraph(*g, o, fn.getLoc())
                                 : partitionSequential(*g, o, fn.getLoc());
    if (failed(plan))
      return signalPassFailure();
    llvm::errs() << "pipe-partition: @" << fn.getSymName() << ", "
                 << g->nodes.size() << " ops, on " << devices << " x "
                 << target << " (" << llvm::format("%g", memoryGiB.getValue())
                 << " GiB), " << microBatches
                 << " micro-batches, " << plan->method << " partition\n";
    printPlan(llvm::errs(), *plan, microBatches);
    if (!report.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(report, ec, llvm::sys::fs::OF_Text);
      if (ec)
        return fail("cannot write '" + report + "': " + ec.message());
      os << llvm::formatv("{0:2}", planJSON(*plan, microBatches)) << "\n";
    }
  }
};

} // namespace
