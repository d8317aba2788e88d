//===- PipeFillBubbles.cpp - The pipe-fill-bubbles pass -------------------===//
//
// Part of Loom. See the description of PipeFillBubbles in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/FillJob.h"
#include "loom/Pipeline/Passes.h"

#include "loom/Dialect/Pipe/IR/PipeDialect.h"
#include "loom/Dialect/Pipe/Schedule/Fill.h"
#include "loom/Dialect/Pipe/Schedule/Simulator.h"
#include "loom/Dialect/Pipe/Schedule/Verifier.h"

namespace loom::pipeline {
#define GEN_PASS_DEF_PIPEFILLBUBBLES
#include "loom/Pipeline/Passes.h.inc"
} // namespace loom::pipeline

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;

namespace {
struct PipeFillBubblesPass
    : loom::pipeline::impl::PipeFillBubblesBase<PipeFillBubblesPass> {
  using Base::Base;

  /// The job: priced from the function, or the costs given.
  FailureOr<pipe::FillJob> job(ModuleOp module) {
    if (!function.empty()) {
      FillJobSpec spec;
      spec.function = function;
      spec.modulePath = this->module;
      spec.target = target;
      spec.optimizer = optimizer;
      spec.microBatches = microBatches;
      return priceFillJob(module, spec);
    }
    if (!this->module.empty())
      return module.emitError("pipe-fill-bubbles: module= needs function=");
    if (forwardTime + backwardTime <= 0)
      return module.emitError("pipe-fill-bubbles: give function=NAME, or the "
                              "seconds per micro-batch as forward-time and "
                              "backward-time");
    pipe::FillJob job;
    job.microBatches = microBatches;
    job.forwardTime = forwardTime;
    job.backwardTime = backwardTime;
    job.staticBytes = staticBytes;
    job.activationBytes = activationBytes;
    return job;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<pipe::FillJob> filler = job(module);
    if (failed(filler))
      return signalPassFailure();
    pipe::FillOptions options;
    options.maxActions = maxActions;
    bool ok = true;
    module.walk([&](pipe::ScheduleOp op) {
      FailureOr<pipe::Schedule> schedule = pipe::readSchedule(op);
      if (failed(schedule)) {
        ok = false;
        return;
      }
      if (llvm::Error err = pipe::fillBubbles(*schedule, *filler, options)) {
        op.emitError("pipe-fill-bubbles: ") << llvm::toString(std::move(err));
        ok = false;
        return;
      }
      if (failed(pipe::verifySchedule(op, *schedule))) {
        ok = false;
        return;
      }
      pipe::writePrograms(op, *schedule);
      llvm::errs() << "pipe.schedule @" << schedule->name << ": ";
      pipe::printFillSummary(llvm::errs(), *schedule,
                             pipe::simulate(*schedule));
    });
    if (!ok)
      signalPassFailure();
  }
};
} // namespace
