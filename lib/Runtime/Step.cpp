//===- Step.cpp - The C API of a multi-rank artifact's step ---------------===//
//
// Part of Loom. See include/loom-c/Runtime.h ("The pipelined step") and
// docs/Runtime.md "Ranks": the step's inputs and gradients, and the step
// run as this process's rank under a launcher, or with every rank a thread
// of this process (the threads communicator) without one.
//
//===----------------------------------------------------------------------===//

#include "Comm/Failure.h"
#include "Comm/Launch.h"
#include "Comm/Peer.h"
#include "Comm/World.h"
#include "RankStep.h"
#include "StepProfile.h"

#include <mutex>
#include <thread>

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;

namespace {

loom_status badArgument(const std::string &why) {
  return reportError(makeError(LOOM_ERROR_INVALID_ARGUMENT, why), "");
}

/// The first failure of the ranks of a world (the others' usually follow
/// from it: a peer gone).
struct FirstError {
  std::mutex mutex;
  Error error;
  void record(const Error &e) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!error)
      error = e;
  }
};

std::chrono::milliseconds timeoutOf(const loom_step_options &options) {
  return std::chrono::milliseconds(int64_t(
      (options.timeout_seconds > 0 ? options.timeout_seconds : 60) * 1e3));
}

int64_t stepsOf(const loom_step_options &options) {
  return std::max<int64_t>(options.steps, 1);
}

/// Rank \p r's part of the step with every rank a thread; its action times
/// into \p times when profiling.
void runThread(const loom_model &model, int r, comm::Communicator &comm,
               const void *const *inputs, void *const *gradients,
               const loom_step_options &options, FirstError &first,
               RankTimes *times) {
  auto timeout = timeoutOf(options);
  std::unique_ptr<RankStep> step;
  Error err = RankStep::create(model, r, step);
  if (!err)
    err = step->checkSameArtifact(comm, timeout);
  if (!err && times)
    step->recordTimes(&times->ns, stepsOf(options));
  for (int64_t i = 0; !err && i < stepsOf(options); ++i)
    err = step->run(comm, inputs, timeout);
  if (!err && gradients)
    err = step->gather(comm, 0, gradients, timeout);
  if (!err && options.parameters)
    err = step->gather(comm, 0, options.parameters, timeout,
                       art::SlotKind::Weight);
  if (err) {
    err.message = "rank " + std::to_string(r) + ": " + err.message;
    first.record(err);
    comm.abort();
  }
}

/// This process's rank of the step under its launcher. A failure ends the
/// process with one line naming the rank, the step and the cause (Comm's
/// FailureMonitor: the launcher then ends the job), as does the launcher's
/// end or loss; step 0 is opening the world and checking the artifact.
loom_status runLaunched(const loom_model &model, const comm::LaunchInfo &launch,
                        const void *const *inputs, void *const *gradients,
                        const loom_step_options &options, loom_step_info &out) {
  auto timeout = timeoutOf(options);
  comm::FailureMonitor monitor(launch.rank, {/*handleSignals=*/true,
                                             /*watchLauncher=*/true});
  std::unique_ptr<comm::Communicator> world;
  monitor.check(comm::openWorld(launch, comm::Clock::now() + timeout, world));
  monitor.setCommunicator(world.get());
  out.transport = world->transport();
  int64_t ranks = manifestOf(model).world.ranks.size();
  if (world->size() != ranks)
    monitor.fail("the launcher started " + std::to_string(world->size()) +
                 " ranks (" + launch.source + "); the artifact's step runs on " +
                 std::to_string(ranks));
  std::unique_ptr<RankStep> step;
  monitor.check(RankStep::create(model, world->rank(), step));
  monitor.check(step->checkSameArtifact(*world, timeout));
  RankTimes mine{world->rank(), hostName(), {}};
  if (options.profile_path)
    step->recordTimes(&mine.ns, stepsOf(options));
  for (int64_t i = 0; i < stepsOf(options); ++i) {
    monitor.setStep(i + 1);
    monitor.check(step->run(*world, inputs, timeout));
  }
  if (gradients)
    monitor.check(step->gather(*world, 0, gradients, timeout));
  if (options.profile_path) {
    std::vector<RankTimes> all;
    monitor.check(gatherStepProfile(*world, manifestOf(model).world,
                                    stepsOf(options), mine, all,
                                    comm::Clock::now() + timeout));
    if (world->rank() == 0)
      monitor.check(writeStepProfile(options.profile_path, manifestOf(model),
                                     stepsOf(options), all));
  }
  if (options.parameters)
    monitor.check(step->gather(*world, 0, options.parameters, timeout,
                               art::SlotKind::Weight));
  monitor.check(world->barrier(comm::Clock::now() + timeout));
  return LOOM_OK;
}

} // namespace

extern "C" {

int64_t loom_model_num_ranks(const loom_model *model) {
  return model ? int64_t(manifestOf(*model).world.ranks.size()) : 0;
}

int64_t loom_step_num_micro_batches(const loom_model *model) {
  return model ? manifestOf(*model).world.microBatches : 0;
}

int64_t loom_step_num_inputs(const loom_model *model) {
  return model ? int64_t(manifestOf(*model).world.stepInputs.size()) : 0;
}

loom_status loom_step_input(const loom_model *model, int64_t index,
                            loom_tensor_desc *desc) {
  if (!model || !desc || index < 0 || index >= loom_step_num_inputs(model))
    return badArgument("no step input " + std::to_string(index));
  const art::TensorDesc &t = manifestOf(*model).world.stepInputs[index];
  *desc = {t.name.c_str(), t.dtype.c_str(), int64_t(t.shape.size()),
           t.shape.data(), t.bytes};
  return LOOM_OK;
}

int64_t loom_step_num_gradients(const loom_model *model) {
  return model ? int64_t(worldGradients(manifestOf(*model).world).size()) : 0;
}

loom_status loom_step_gradient(const loom_model *model, int64_t index,
                               loom_tensor_desc *desc) {
  if (!model || !desc || index < 0 || index >= loom_step_num_gradients(model))
    return badArgument("no step gradient " + std::to_string(index));
  const art::Slot &s = *worldGradients(manifestOf(*model).world)[index];
  *desc = {s.tensor.c_str(), s.dtype.c_str(), int64_t(s.shape.size()),
           s.shape.data(), s.bytes};
  return LOOM_OK;
}

loom_status loom_step_optimizer(const loom_model *model,
                                loom_step_optimizer_desc *desc) {
  if (!model || !desc)
    return badArgument("loom_step_optimizer needs a model and a descriptor");
  const art::Optimizer &o = manifestOf(*model).world.optimizer;
  *desc = {o.name().data(), o.lr,  o.momentum,   o.beta1,
           o.beta2,         o.eps, o.weightDecay};
  return LOOM_OK;
}

loom_status loom_step_run(const loom_model *model, const void *const *inputs,
                          void *const *gradients,
                          const loom_step_options *options,
                          loom_step_info *info) {
  if (!model || !inputs)
    return badArgument("loom_step_run needs a model and the inputs");
  if (loom_step_num_micro_batches(model) == 0)
    return badArgument("the artifact has no pipelined step (compile a "
                       "partitioned module, docs/Pipelines.md)");
  loom_step_options defaults{};
  const loom_step_options &opts = options ? *options : defaults;
  comm::LaunchInfo launch;
  if (Error err = comm::readLaunchInfo(comm::processEnvironment(), launch))
    return reportError(err, "");
  int64_t size = loom_model_num_ranks(model);
  loom_step_info local;
  loom_step_info &out = info ? *info : local;
  if (launch.size > 1) {
    out = {launch.rank, launch.size, ""};
    return runLaunched(*model, launch, inputs, gradients, opts, out);
  }
  out = {-1, size, "threads"};
  std::vector<std::unique_ptr<comm::Communicator>> comms;
  comm::createThreadWorld(int(size), comms);
  FirstError first;
  std::vector<RankTimes> times(size);
  for (int r = 0; r < int(size); ++r)
    times[r] = {r, hostName(), {}};
  std::vector<std::thread> threads;
  for (int r = 0; r < int(size); ++r)
    threads.emplace_back(runThread, std::cref(*model), r, std::ref(*comms[r]),
                         inputs, gradients, std::cref(opts), std::ref(first),
                         opts.profile_path ? &times[r] : nullptr);
  for (std::thread &t : threads)
    t.join();
  if (first.error)
    return reportError(first.error, "");
  if (opts.profile_path)
    if (Error err = writeStepProfile(opts.profile_path, manifestOf(*model),
                                     stepsOf(opts), times))
      return reportError(err, "");
  return LOOM_OK;
}

} // extern "C"
