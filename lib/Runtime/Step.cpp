//===- Step.cpp - The C API of a multi-rank artifact's step ---------------===//
//
// Part of Loom. See include/loom-c/Runtime.h ("The pipelined step") and
// docs/Runtime.md "Ranks": the step's inputs and gradients, and the step
// run as this process's rank under a launcher, or with every rank a thread
// of this process (the threads communicator) without one.
//
//===----------------------------------------------------------------------===//

#include "CPU/Binding.h"
#include "Comm/Failure.h"
#include "Comm/Launch.h"
#include "Comm/Peer.h"
#include "Comm/World.h"
#include "RankStep.h"
#include "StepProfile.h"

#include <functional>
#include <mutex>
#include <thread>

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;

namespace {

loom_status badArgument(const std::string &why) {
  return reportError(makeError(LOOM_ERROR_INVALID_ARGUMENT, why), "");
}

/// \p v[index] of \p model's world (its step's inputs or results; \p what
/// names which) as the C API's descriptor, pointing into the manifest.
loom_status describeStepTensor(
    const loom_model *model,
    std::vector<art::TensorDesc> art::World::*v, int64_t index,
    loom_tensor_desc *desc, const char *what) {
  if (!model || !desc || index < 0 ||
      index >= int64_t((manifestOf(*model).world.*v).size()))
    return badArgument(std::string("no step ") + what + " " +
                       std::to_string(index));
  const art::TensorDesc &t = (manifestOf(*model).world.*v)[index];
  *desc = {t.name.c_str(), t.dtype.c_str(), int64_t(t.shape.size()),
           t.shape.data(), t.bytes};
  return LOOM_OK;
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

/// A session's ranks: under a launcher this process's rank over the
/// launcher's world (failures end the process through the monitor);
/// without one every rank, each a thread per call over the threads
/// communicator.
struct loom_step_session {
  const loom_model *model = nullptr;
  std::chrono::milliseconds timeout{0};
  std::unique_ptr<comm::FailureMonitor> monitor;
  std::vector<std::unique_ptr<comm::Communicator>> comms;
  std::vector<std::unique_ptr<RankStep>> steps;
  int64_t stepsRun = 0;
  /// A rank failed (threads): only freeing is left.
  bool failed = false;

  using RankWork = std::function<Error(RankStep &, comm::Communicator &)>;

  /// Runs \p work on every rank of this process: this rank under a
  /// launcher (a failure ends the process), or every rank as a thread
  /// (the first failure returned).
  loom_status onRanks(const RankWork &work) {
    if (failed)
      return badArgument("a rank of this session failed: free it");
    if (monitor) {
      monitor->check(work(*steps[0], *comms[0]));
      return LOOM_OK;
    }
    FirstError first;
    std::vector<std::thread> threads;
    for (size_t r = 0; r < steps.size(); ++r)
      threads.emplace_back([&, r] {
        if (Error err = work(*steps[r], *comms[r])) {
          err.message = "rank " + std::to_string(r) + ": " + err.message;
          first.record(err);
          comms[r]->abort();
        }
      });
    for (std::thread &t : threads)
      t.join();
    if (!first.error)
      return LOOM_OK;
    failed = true;
    return reportError(first.error, "");
  }
};

namespace {

/// Opens \p s's world under \p launch (step 0: opening it), this rank's
/// step in it.
void openLaunched(loom_step_session &s, const comm::LaunchInfo &launch) {
  s.monitor = std::make_unique<comm::FailureMonitor>(
      launch.rank, comm::FailureMonitor::Options{/*handleSignals=*/true,
                                                 /*watchLauncher=*/true});
  s.comms.emplace_back();
  s.monitor->check(comm::openWorld(launch, comm::Clock::now() + s.timeout,
                                   s.comms[0]));
  s.monitor->setCommunicator(s.comms[0].get());
  int64_t ranks = manifestOf(*s.model).world.ranks.size();
  if (s.comms[0]->size() != ranks)
    s.monitor->fail("the launcher started " +
                    std::to_string(s.comms[0]->size()) + " ranks (" +
                    launch.source + "); the artifact's step runs on " +
                    std::to_string(ranks));
  s.steps.emplace_back();
  s.monitor->check(RankStep::create(*s.model, s.comms[0]->rank(), s.steps[0]));
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
  return describeStepTensor(model, &art::World::stepInputs, index, desc,
                            "input");
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
  rt::cpu::CallerPin pin;
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

int64_t loom_step_num_results(const loom_model *model) {
  return model ? int64_t(manifestOf(*model).world.results.size()) : 0;
}

loom_status loom_step_result(const loom_model *model, int64_t index,
                             loom_tensor_desc *desc) {
  return describeStepTensor(model, &art::World::results, index, desc,
                            "result");
}

loom_status loom_step_session_open(const loom_model *model,
                                   const loom_step_options *options,
                                   loom_step_session **out,
                                   loom_step_info *info) {
  if (!model || !out)
    return badArgument("loom_step_session_open needs a model and a result");
  *out = nullptr;
  if (loom_step_num_micro_batches(model) == 0)
    return badArgument("the artifact has no pipelined step (compile a "
                       "partitioned module, docs/Pipelines.md)");
  loom_step_options defaults{};
  comm::LaunchInfo launch;
  if (Error err = comm::readLaunchInfo(comm::processEnvironment(), launch))
    return reportError(err, "");
  auto s = std::make_unique<loom_step_session>();
  s->model = model;
  s->timeout = timeoutOf(options ? *options : defaults);
  int64_t size = loom_model_num_ranks(model);
  loom_step_info local;
  loom_step_info &where = info ? *info : local;
  if (launch.size > 1) {
    openLaunched(*s, launch);
    where = {launch.rank, launch.size, s->comms[0]->transport()};
  } else {
    where = {-1, size, "threads"};
    comm::createThreadWorld(int(size), s->comms);
    for (int r = 0; r < int(size); ++r) {
      s->steps.emplace_back();
      if (Error err = RankStep::create(*model, r, s->steps.back()))
        return reportError(err, "");
    }
  }
  auto timeout = s->timeout;
  if (loom_status st = s->onRanks([&](RankStep &step, comm::Communicator &c) {
        return step.checkSameArtifact(c, timeout);
      }))
    return st;
  *out = s.release();
  return LOOM_OK;
}

loom_status loom_step_session_set_parameters(loom_step_session *session,
                                             const void *const *parameters) {
  if (!session || !parameters)
    return badArgument("loom_step_session_set_parameters needs a session and "
                       "the parameters");
  return session->onRanks([&](RankStep &step, comm::Communicator &) {
    return step.setParameters(parameters);
  });
}

loom_status loom_step_session_run(loom_step_session *session,
                                  const void *const *inputs,
                                  void *const *results) {
  if (!session || !inputs)
    return badArgument("loom_step_session_run needs a session and the inputs");
  rt::cpu::CallerPin pin;
  int64_t n = ++session->stepsRun;
  if (session->monitor)
    session->monitor->setStep(n);
  auto timeout = session->timeout;
  return session->onRanks([&](RankStep &step, comm::Communicator &c) {
    Error err = step.run(c, inputs, timeout);
    if (!err && results)
      err = step.gatherResults(c, 0, results, timeout);
    return err;
  });
}

loom_status loom_step_session_parameters(loom_step_session *session,
                                         void *const *parameters) {
  if (!session || !parameters)
    return badArgument("loom_step_session_parameters needs a session and "
                       "room for the parameters");
  auto timeout = session->timeout;
  return session->onRanks([&](RankStep &step, comm::Communicator &c) {
    return step.gather(c, 0, parameters, timeout, art::SlotKind::Weight);
  });
}

void loom_step_session_free(loom_step_session *session) {
  if (!session)
    return;
  if (session->monitor && !session->failed)
    session->monitor->check(
        session->comms[0]->barrier(comm::Clock::now() + session->timeout));
  // The steps before the communicators they used, the monitor last.
  session->steps.clear();
  session->comms.clear();
  delete session;
}

} // extern "C"
