//===- TrainStep.h - Run a compiled training step through libloomrt -*- C++ -*-===//
//
// Part of Loom. Binds an artifact that holds a training step written by
// --tg-autodiff (docs/Training.md) and an evaluation function, through the C
// API of libloomrt (include/loom-c/Runtime.h), checking that the entries
// follow the contract:
//
//   train entry  inputs:  images f32 [B, ...], labels i64 or i32 [B], then
//                         every parameter, every optimizer state tensor and
//                         every hyper-parameter (a scalar f32)
//                outputs: loss (a scalar f32), then for every parameter and
//                         state input one output of the same name, shape and
//                         dtype (its new value)
//   eval entry   inputs:  images f32 [B', ...] (same image shape), then
//                         parameters, each named as a train-step input
//                outputs: logits f32 [B', classes]
//
// The parameters are the eval entry's trailing inputs; a train-step input
// after the labels with no output of its name is a hyper-parameter (set by
// setHyperParameter; --tg-autodiff's hyper-parameter-arguments=true); every
// other one is optimizer state and starts at zero.
//
// A pipelined step across ranks (an artifact loom-compile wrote from a
// partitioned step with --optimizer, docs/Training.md "Training across
// ranks"): its step inputs per micro-batch are images, labels and the loss's
// cotangent, its one result the loss; each step runs its micro-batches over
// the ranks (libloomrt's step session, which keeps every rank's parameters
// and optimizer state), and the evaluation function is a one-process
// artifact's (open's `evalArtifact`), fed the parameters gathered on rank 0.
//
// N trials fused by --tg-fuse-trials (open's `trials` = N): the images and
// labels are shared, and every parameter, state tensor and hyper-parameter,
// the loss and the logits gain a leading [N]; the entries are the fused
// step and the fused evaluation function.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_EXAMPLES_TRAINSTEP_H
#define LOOM_EXAMPLES_TRAINSTEP_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct loom_model;
struct loom_context;
struct loom_step_session;

namespace loom::train {

struct TensorInfo {
  std::string name, dtype;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
  int64_t elements() const;
};

class TrainStep {
public:
  TrainStep() = default;
  TrainStep(const TrainStep &) = delete;
  TrainStep &operator=(const TrainStep &) = delete;
  ~TrainStep();

  /// Loads `artifact` with `numThreads` threads (0: the hardware's) and binds
  /// its entries. A missing entry or one that breaks the contract above is an
  /// error naming the entry and the input or output.
  /// `trials`: 0 for a step of one trial, N for N trials fused.
  /// An artifact with a pipelined step runs across ranks and takes its
  /// evaluation entry from `evalArtifact` (required then).
  bool open(const std::string &artifact, const std::string &trainEntry,
            const std::string &evalEntry, int numThreads, std::string &error,
            int64_t trials = 0, const std::string &evalArtifact = "");

  /// Whether the step runs across ranks (a pipelined step).
  bool acrossRanks() const { return session_ != nullptr; }
  /// Across ranks: this process's rank under a launcher (-1: every rank a
  /// thread of this process), the world's size and transport, the
  /// micro-batches of a step, the optimizer the ranks apply.
  int64_t rank() const { return rank_; }
  int64_t worldSize() const { return worldSize_; }
  const std::string &transport() const { return transport_; }
  int64_t microBatches() const { return microBatches_; }
  const std::string &optimizer() const { return optimizer_; }
  /// Whether this process prints and writes the results (rank 0, or every
  /// rank a thread of it).
  bool isRoot() const { return rank_ <= 0; }

  /// The trials one step trains (1 unless fused).
  int64_t trials() const { return trials_ > 0 ? trials_ : 1; }
  /// The hyper-parameter inputs, f32 [] (or [N] fused), initially 0.
  const std::vector<TensorInfo> &hyperParameters() const { return hyper_; }
  /// Sets hyper-parameter `name` to `values[t]` for trial t (one value per
  /// trial); an unknown name or a wrong count is an error.
  bool setHyperParameter(const std::string &name,
                         const std::vector<float> &values, std::string &error);

  int64_t batch() const { return batch_; }
  int64_t evalBatch() const { return evalBatch_; }
  int64_t imageElements() const { return imageElements_; }
  int64_t classes() const { return classes_; }
  /// The parameters (in the eval entry's order) and the optimizer state.
  const std::vector<TensorInfo> &parameters() const { return params_; }
  const std::vector<TensorInfo> &state() const { return stateInfo_; }

  /// PyTorch's default initialisation, from a fixed seed (see
  /// parameterFanIn), each trial's as a single trial's; optimizer state is
  /// set to zero.
  bool initialize(uint64_t seed, std::string &error);

  /// One training step on `batch()` images (row-major, imageElements() floats
  /// each) and labels; the parameters and state are updated in place, and
  /// `loss` receives trials() losses.
  bool step(const float *images, const int64_t *labels, float *loss,
            std::string &error);

  /// Logits [trials(), evalBatch(), classes()] of `evalBatch()` images with
  /// the current parameters.
  bool logits(const float *images, float *out, std::string &error);

  /// The current value of a parameter or state tensor, or null.
  const float *value(const std::string &name) const;
  /// Sets a parameter or state tensor; an unknown name is an error.
  bool setValue(const std::string &name, const float *data, std::string &error);

private:
  bool bindTrainEntry(const std::string &where,
                      std::map<std::string, int64_t> &carriedIndex,
                      std::string &error);
  bool bindEvalEntry(const std::string &where, const std::string &trainEntry,
                     const std::string &evalEntry,
                     const std::map<std::string, int64_t> &carriedIndex,
                     std::string &error);

  bool openRanks(const std::string &artifact, const std::string &trainEntry,
                 const std::string &evalEntry, int numThreads,
                 const std::string &evalArtifact, std::string &error);
  bool bindRankInputs(const std::string &artifact, std::string &error);
  bool initializeRanks(uint64_t seed, std::string &error);
  bool stepRanks(const float *images, const int64_t *labels, float *loss,
                 std::string &error);
  bool logitsRanks(const float *images, float *out, std::string &error);

  loom_model *model_ = nullptr;
  // Across ranks: the session, the evaluation artifact's step (which holds
  // the parameters rank 0 gathers), the step's shape.
  loom_step_session *session_ = nullptr;
  std::unique_ptr<TrainStep> eval_;
  int64_t rank_ = -1, worldSize_ = 1, microBatches_ = 0, microBatch_ = 0;
  std::string transport_, optimizer_;
  bool evalStale_ = true;
  loom_context *context_ = nullptr;
  int64_t trainEntry_ = -1, evalEntry_ = -1;
  int64_t batch_ = 0, evalBatch_ = 0, imageElements_ = 0, classes_ = 0;
  int64_t trials_ = 0;
  // The hyper-parameter inputs: their train-entry input index and values.
  std::vector<TensorInfo> hyper_;
  std::vector<int64_t> hyperInput_;
  std::vector<std::vector<float>> hyperValue_;
  bool labelsI32_ = false;
  std::vector<TensorInfo> params_, stateInfo_;
  // The train entry's parameter and state inputs: current and next values,
  // and for each of them its input index and the output index that
  // returns it.
  std::vector<TensorInfo> carried_;
  std::vector<std::vector<float>> current_, next_;
  std::vector<int64_t> carriedInput_, outputOf_;
  // For each eval-entry input after the images: the index into carried_.
  std::vector<int64_t> evalSource_;
  std::vector<int32_t> labels32_;
};

/// The fan-in PyTorch's default initialisation uses for parameter `name` of
/// `shape` (U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases):
///   rank >= 3 (OIHW filters):         shape[1] * shape[2] * ...
///   rank 2 ([in, out], tg.matmul's right operand; nn.Linear's is [out, in]):
///                                     shape[0]
///   a name ending in "bias":          the fan-in of the parameter named the
///                                     same with "weight" in place of "bias"
///   any other rank-0/1 tensor:        0, meaning "set to 1" (a norm's scale)
/// Returns -1 (with `error`) for a bias without its weight.
int64_t parameterFanIn(const std::string &name, const std::vector<int64_t> &shape,
                       const std::vector<TensorInfo> &all, std::string &error);

} // namespace loom::train

#endif
