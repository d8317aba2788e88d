//===- Passes.cpp - pipe passes -------------------------------------------===//
//
// Part of Loom. Thin wrappers over include/loom/Dialect/Pipe/Schedule.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/Transforms/Passes.h"
#include "loom/Dialect/Pipe/Schedule/Builders.h"
#include "loom/Dialect/Pipe/Schedule/Profile.h"
#include "loom/Dialect/Pipe/Schedule/Render.h"
#include "loom/Dialect/Pipe/Schedule/Schedule.h"
#include "loom/Dialect/Pipe/Schedule/Simulator.h"
#include "loom/Dialect/Pipe/Schedule/Verifier.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

namespace loom::pipe {
#define GEN_PASS_DEF_PIPEBUILDSCHEDULE
#define GEN_PASS_DEF_PIPESIMULATE
#define GEN_PASS_DEF_PIPESYNTHESIZE
#define GEN_PASS_DEF_PIPEVERIFYSCHEDULE
#include "loom/Dialect/Pipe/Transforms/Passes.h.inc"
} // namespace loom::pipe

using namespace mlir;
using namespace loom::pipe;

/// Writes `write`'s output to `path` ("-": stdout).
template <typename Fn>
static LogicalResult writeFile(Operation *op, StringRef path, Fn write) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file)
    return op->emitError("cannot write ") << path << ": " << error;
  write(file->os());
  file->keep();
  return success();
}

/// `path` for the first schedule, `stem.<name>.ext` for the others.
static std::string pathFor(StringRef path, StringRef name, bool first) {
  if (first || path == "-")
    return path.str();
  StringRef ext = llvm::sys::path::extension(path);
  return (path.drop_back(ext.size()) + "." + name + ext).str();
}

namespace {
struct PipeVerifySchedulePass
    : loom::pipe::impl::PipeVerifyScheduleBase<PipeVerifySchedulePass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](ScheduleOp op) {
      FailureOr<Schedule> schedule = readSchedule(op);
      ok &= succeeded(schedule) && succeeded(verifySchedule(op, *schedule));
    });
    if (!ok)
      signalPassFailure();
  }
};

struct PipeSimulatePass : loom::pipe::impl::PipeSimulateBase<PipeSimulatePass> {
  using Base::Base;
  void runOnOperation() override {
    bool ok = true, first = true;
    std::optional<StepProfile> profile;
    if (!profiles.empty()) {
      auto read = readStepProfiles(profiles);
      if (!read) {
        emitError(getOperation().getLoc(), "pipe-simulate: ")
            << llvm::toString(read.takeError());
        return signalPassFailure();
      }
      profile = std::move(*read);
    }
    getOperation().walk([&](ScheduleOp op) {
      using Clock = std::chrono::steady_clock;
      auto since = [](Clock::time_point t) {
        return std::chrono::duration<double>(Clock::now() - t).count();
      };
      auto began = Clock::now();
      FailureOr<Schedule> schedule = readSchedule(op);
      double readSeconds = since(began);
      auto verifyBegan = Clock::now();
      if (failed(schedule) || failed(verifySchedule(op, *schedule))) {
        ok = false;
        return;
      }
      double verifySeconds = since(verifyBegan);
      SimulateOptions options;
      options.recordTimes = !svg.empty();
      if (profile) {
        if (llvm::Error err = feedStageTimes(*schedule, *profile)) {
          op.emitError("pipe-simulate: ") << llvm::toString(std::move(err));
          ok = false;
          return;
        }
        options.messages = &profile->messages;
        options.tail = &*profile;
        if (print)
          printFed(llvm::errs(), *schedule, *profile);
      }
      auto simulateBegan = Clock::now();
      Simulation sim = simulate(*schedule, options);
      double simulateSeconds = since(simulateBegan);
      double seconds = since(began);
      if (print) {
        printSimulation(llvm::errs(), *schedule, sim);
        llvm::errs() << llvm::format(
            "%lld actions: read from the IR in %.3f s, verified in %.3f s, "
            "simulated in %.3f s\n",
            static_cast<long long>(schedule->numActions()), readSeconds,
            verifySeconds, simulateSeconds);
      }
      if (maxSeconds > 0 && seconds > maxSeconds) {
        op.emitError("verifying and simulating took ")
            << seconds << " s, more than max-seconds=" << maxSeconds;
        ok = false;
      }
      std::string name = schedule->name;
      if (!report.empty())
        ok &= succeeded(writeFile(op, pathFor(report, name, first),
                                  [&](llvm::raw_ostream &os) {
                                    writeSimulationJSON(
                                        os, *schedule, sim,
                                        profile ? &*profile : nullptr);
                                  }));
      if (!svg.empty())
        ok &= succeeded(writeFile(op, pathFor(svg, name, first),
                                  [&](llvm::raw_ostream &os) {
                                    writeTimelineSVG(os, *schedule, sim);
                                  }));
      if (!dot.empty())
        ok &= succeeded(
            writeFile(op, pathFor(dot, name, first),
                      [&](llvm::raw_ostream &os) { writeStageDot(os, *schedule); }));
      first = false;
    });
    if (!ok)
      signalPassFailure();
  }
};

struct PipeBuildSchedulePass
    : loom::pipe::impl::PipeBuildScheduleBase<PipeBuildSchedulePass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<ScheduleKind> k = parseScheduleKind(kind);
    if (!k) {
      getOperation().emitError("pipe-build-schedule: unknown kind '")
          << kind << "' (gpipe, 1f1b, interleaved, zb-h1)";
      return signalPassFailure();
    }
    bool ok = true;
    getOperation().walk([&](ScheduleOp op) {
      FailureOr<Schedule> schedule = readSchedule(op);
      if (failed(schedule)) {
        ok = false;
        return;
      }
      if (llvm::Error err = buildPrograms(*schedule, *k)) {
        op.emitError("pipe-build-schedule: ") << llvm::toString(std::move(err));
        ok = false;
        return;
      }
      writePrograms(op, *schedule);
    });
    if (!ok)
      signalPassFailure();
  }
};

struct PipeSynthesizePass : loom::pipe::impl::PipeSynthesizeBase<PipeSynthesizePass> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<PipeDialect, func::FuncDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<ScheduleKind> k = parseScheduleKind(kind);
    if (!k || devices < 1 || chunks < 1 || microBatches < 1) {
      module.emitError("pipe-synthesize: needs a kind (gpipe, 1f1b, "
                       "interleaved, zb-h1) and positive devices, chunks and "
                       "micro-batches");
      return signalPassFailure();
    }
    ChainSpec spec;
    spec.devices = devices;
    spec.chunks = chunks;
    spec.microBatches = microBatches;
    spec.forwardTime = forwardTime;
    spec.backwardTime = backwardTime;
    spec.activationBytes = activationBytes;
    spec.edgeBytes = edgeBytes;
    spec.memory = memory;
    spec.links.intraLatency = spec.links.interLatency = latency;
    spec.splitBackward = *k == ScheduleKind::ZBH1;
    Schedule schedule = makeChain(spec);
    if (llvm::Error err = buildPrograms(schedule, *k)) {
      module.emitError("pipe-synthesize: ") << llvm::toString(std::move(err));
      return signalPassFailure();
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    auto declare = [&](const std::string &name) {
      if (name.empty())
        return;
      auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType({}, {}));
      fn.setPrivate();
    };
    for (const Stage &st : schedule.stages)
      for (const std::string &fn :
           {st.forward, st.backward, st.inputGrad, st.weightGrad})
        declare(fn);
    writeSchedule(b, loc, schedule);
  }
};
} // namespace
