//===- RankStep.h - One rank's pipelined step -------------------*- C++ -*-===//
//
// Part of Loom. Runs rank r's program of a multi-rank artifact (manifest
// v2's world.ranks[r].actions, docs/Artifact.md "The pipelined step") over
// a Communicator: computes run the rank's compiled entries, exchanges post
// their sends and receives at once with a deadline, accumulations sum the
// output gradients and the parameters' gradients over the micro-batches,
// all-reduces sum a replicated stage's gradients over its replicas.
// With the world's optimizer, update actions step the rank's own copies of
// its parameters; without, the optimizer step is the caller's: the step's
// results are the summed parameter gradients (docs/Runtime.md "Ranks").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_RANKSTEP_H
#define LOOM_LIB_RUNTIME_RANKSTEP_H

#include "Comm/Communicator.h"
#include "Model.h"

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loom::rt {

/// The parameters whose gradients a world's step computes, over every rank
/// in rank order, once per name.
std::vector<const artifact::Slot *> worldGradients(const artifact::World &w);

class RankStep {
public:
  ~RankStep();

  /// Prepares rank \p rank of \p model (its slots' memory, a context).
  static Error create(const loom_model &model, int rank,
                      std::unique_ptr<RankStep> &out);

  /// Checks with every rank of \p comm that they loaded the same artifact
  /// (the manifest's checksum, which covers the weights').
  Error checkSameArtifact(comm::Communicator &comm,
                          std::chrono::milliseconds timeout);

  /// Runs one step: \p inputs[mb * numInputs + k] is the step input k of
  /// micro-batch mb (world.inputs; this rank reads those it uses). Every
  /// wait has the deadline now + \p timeout.
  Error run(comm::Communicator &comm, const void *const *inputs,
            std::chrono::milliseconds timeout);

  /// After run: every gradient of worldGradients on rank \p root, summed
  /// over the ranks that compute it, into \p out[g]; the other ranks send
  /// theirs (\p out unused there). With \p kind Weight: the parameters
  /// (as the step's updates left them), each from the first rank that
  /// holds it.
  Error gather(comm::Communicator &comm, int root, void *const *out,
               std::chrono::milliseconds timeout,
               artifact::SlotKind kind = artifact::SlotKind::Gradient);

  /// After run: every result of the world (world.results) of every
  /// micro-batch on rank \p root, into \p out[mb * results + k]; the rank
  /// that computed one sends it.
  Error gatherResults(comm::Communicator &comm, int root, void *const *out,
                      std::chrono::milliseconds timeout);

  /// Takes this rank's parameters from \p params (worldGradients' order)
  /// into its own copies and zeroes its optimizer state; needs the world's
  /// optimizer (its copies).
  Error setParameters(const void *const *params);

  /// From now on, each run appends to \p ns every action's start and end
  /// (nanoseconds of comm::Clock), in order (StepProfile.h), room made for
  /// \p steps runs; null: stop.
  void recordTimes(std::vector<int64_t> *ns, int64_t steps) {
    times = ns;
    if (ns)
      ns->reserve(ns->size() + 2 * rank.actions.size() * steps);
  }

private:
  RankStep(const loom_model &model, int rank);
  void *slot(int64_t s, int64_t mb, const void *const *inputs);
  Error compute(const artifact::ComputeAction &a, const void *const *inputs);
  Error exchange(comm::Communicator &comm, const artifact::ExchangeAction &a,
                 int64_t index, const void *const *inputs,
                 comm::Deadline deadline);
  Error allReduce(comm::Communicator &comm,
                  const artifact::AllReduceAction &a, comm::Deadline deadline);
  void update(const artifact::UpdateAction &a);
  Error fail(int64_t action, const Error &cause) const;

  const artifact::Manifest &manifest;
  const artifact::Rank &rank;
  int self;
  loom_context *context = nullptr;
  /// Per slot: its tensors (one per micro-batch, or one), as floats for
  /// alignment; weight and input slots have none.
  std::vector<std::vector<std::vector<float>>> memory;
  std::vector<const void *> weights;
  std::vector<std::vector<float>> scratch;
  std::vector<int64_t> *times = nullptr;
  /// An all-reduce's tensors, packed.
  std::vector<float> reduced;
  /// Per all-reduce group of the world (its ranks), this rank's
  /// communicator of the group (null where it is not a member).
  std::map<std::vector<int64_t>, std::unique_ptr<comm::Communicator>> groups;
  bool groupsMade = false;
  /// Steps run, the current one included (Adam's bias correction).
  int64_t stepsRun = 0;
};

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_RANKSTEP_H
