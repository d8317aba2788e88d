//===- Step.cpp - The C API of a multi-rank artifact's step ---------------===//
//
// Part of Loom. See include/loom-c/Runtime.h ("The pipelined step") and
// docs/Runtime.md "Ranks": the step's inputs and gradients, and the step
// run with every rank a thread of this process (the threads communicator).
//
//===----------------------------------------------------------------------===//

#include "Comm/Peer.h"
#include "RankStep.h"

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

/// Rank \p r's part of loom_step_run_threads.
void runRank(const loom_model &model, int r, comm::Communicator &comm,
             const void *const *inputs, void *const *gradients,
             const loom_step_options &options, FirstError &first) {
  auto timeout = std::chrono::milliseconds(int64_t(
      (options.timeout_seconds > 0 ? options.timeout_seconds : 60) * 1e3));
  std::unique_ptr<RankStep> step;
  Error err = RankStep::create(model, r, step);
  if (!err)
    err = step->checkSameArtifact(comm, timeout);
  for (int64_t i = 0; !err && i < std::max<int64_t>(options.steps, 1); ++i)
    err = step->run(comm, inputs, timeout);
  if (!err && gradients)
    err = step->gather(comm, 0, gradients, timeout);
  if (err) {
    first.record(err);
    comm.abort();
  }
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

loom_status loom_step_run_threads(const loom_model *model,
                                  const void *const *inputs,
                                  void *const *gradients,
                                  const loom_step_options *options) {
  if (!model || !inputs)
    return badArgument("loom_step_run_threads needs a model and the inputs");
  if (loom_step_num_micro_batches(model) == 0)
    return badArgument("the artifact has no pipelined step (compile a "
                       "partitioned module, docs/Pipelines.md)");
  loom_step_options defaults{};
  const loom_step_options &opts = options ? *options : defaults;
  int size = int(loom_model_num_ranks(model));
  std::vector<std::unique_ptr<comm::Communicator>> comms;
  comm::createThreadWorld(size, comms);
  FirstError first;
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back(runRank, std::cref(*model), r, std::ref(*comms[r]),
                         inputs, gradients, std::cref(opts), std::ref(first));
  for (std::thread &t : threads)
    t.join();
  if (first.error)
    return reportError(first.error, "");
  return LOOM_OK;
}

} // extern "C"
