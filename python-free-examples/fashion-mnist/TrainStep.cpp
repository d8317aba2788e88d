//===- TrainStep.cpp - Run a compiled training step through libloomrt -----===//
#include "TrainStep.h"

#include "loom-c/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

namespace loom::train {

int64_t TensorInfo::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

static std::string shapeString(const TensorInfo &t) {
  std::string s = t.dtype + "[";
  for (size_t i = 0; i < t.shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(t.shape[i]);
  return s + "]";
}

static TensorInfo describe(const loom_tensor_desc &d) {
  TensorInfo t;
  t.name = d.name ? d.name : "";
  t.dtype = d.dtype;
  t.shape.assign(d.shape, d.shape + d.rank);
  t.bytes = d.bytes;
  return t;
}

/// The inputs (or, with `outputs`, the outputs) of entry `e`.
static std::vector<TensorInfo> signature(loom_model *m, int64_t e, bool outputs) {
  std::vector<TensorInfo> v;
  int64_t n = outputs ? loom_entry_num_outputs(m, e) : loom_entry_num_inputs(m, e);
  for (int64_t i = 0; i < n; ++i) {
    loom_tensor_desc d;
    (outputs ? loom_entry_output : loom_entry_input)(m, e, i, &d);
    v.push_back(describe(d));
  }
  return v;
}

TrainStep::~TrainStep() {
  if (session_)
    loom_step_session_free(session_);
  if (context_)
    loom_context_free(context_);
  if (model_)
    loom_model_free(model_);
}

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Whether `t` has the trial dimension `trials` leads (always, unfused).
static bool hasTrials(const TensorInfo &t, int64_t trials) {
  return trials == 0 || (!t.shape.empty() && t.shape[0] == trials);
}

/// The training step's signature: images, labels, then the carried
/// parameters and state, each returned under its own name after the loss,
/// and the hyper-parameters, returned by none.
bool TrainStep::bindTrainEntry(const std::string &where,
                               std::map<std::string, int64_t> &carriedIndex,
                               std::string &error) {
  auto ins = signature(model_, trainEntry_, false);
  auto outs = signature(model_, trainEntry_, true);
  if (ins.size() < 3) {
    error = where + " has " + std::to_string(ins.size()) +
            " inputs; a training step takes images, labels, then parameters";
    return false;
  }
  const TensorInfo &images = ins[0], &labels = ins[1];
  if (images.dtype != "f32" || images.shape.size() < 2) {
    error = where + " input 0 '" + images.name + "' is " + shapeString(images) +
            ", expected the images: f32 [batch, ...]";
    return false;
  }
  batch_ = images.shape[0];
  imageElements_ = images.elements() / std::max<int64_t>(batch_, 1);
  if ((labels.dtype != "i64" && labels.dtype != "i32") || labels.shape.size() != 1 ||
      labels.shape[0] != batch_) {
    error = where + " input 1 '" + labels.name + "' is " + shapeString(labels) +
            ", expected the labels: i64 or i32 [" + std::to_string(batch_) + "]";
    return false;
  }
  labelsI32_ = labels.dtype == "i32";
  std::vector<int64_t> lossShape;
  if (trials_ > 0)
    lossShape.push_back(trials_);
  if (outs.empty() || outs[0].dtype != "f32" || outs[0].shape != lossShape) {
    error = where + " output 0 " +
            (outs.empty() ? std::string("is missing")
                          : "'" + outs[0].name + "' is " + shapeString(outs[0])) +
            (trials_ > 0 ? ", expected the loss of each trial: f32 [" +
                               std::to_string(trials_) +
                               "] (a step fused by loom-opt --tg-fuse-trials)"
                         : std::string(", expected the loss: a scalar f32"));
    return false;
  }
  std::map<std::string, int64_t> outputIndex;
  for (size_t o = 1; o < outs.size(); ++o)
    if (!outputIndex.emplace(outs[o].name, int64_t(o)).second) {
      error = where + " returns '" + outs[o].name + "' twice";
      return false;
    }
  std::map<std::string, int64_t> inputIndex;
  for (size_t i = 2; i < ins.size(); ++i) {
    const TensorInfo &t = ins[i];
    std::string at = where + " input " + std::to_string(i) + " '" + t.name + "'";
    if (t.name.empty() || !inputIndex.emplace(t.name, int64_t(i)).second) {
      error = where + " input " + std::to_string(i) + " has " +
              (t.name.empty() ? "no name" : "the name '" + t.name + "' twice") +
              "; parameters and state are matched to results by name (tg.name)";
      return false;
    }
    if (t.dtype != "f32" || !hasTrials(t, trials_)) {
      error = at + " is " + shapeString(t) +
              "; parameters, optimizer state and hyper-parameters are f32" +
              (trials_ > 0 ? " [" + std::to_string(trials_) + ", ...]" : "");
      return false;
    }
    auto out = outputIndex.find(t.name);
    if (out == outputIndex.end()) {
      // A hyper-parameter: a scalar (per trial).
      if (t.elements() != std::max<int64_t>(trials_, 1) ||
          t.shape.size() != (trials_ > 0 ? 1u : 0u)) {
        error = at + " is " + shapeString(t) +
                " and has no result of the same name: a hyper-parameter is a "
                "scalar f32" +
                (trials_ > 0 ? " per trial" : "") +
                " (a parameter or state tensor returns its updated value)";
        return false;
      }
      hyper_.push_back(t);
      hyperInput_.push_back(int64_t(i));
      continue;
    }
    const TensorInfo &o = outs[size_t(out->second)];
    if (o.shape != t.shape || o.dtype != t.dtype) {
      error = where + " output " + std::to_string(out->second) + " '" + o.name +
              "' is " + shapeString(o) + " but input '" + t.name + "' is " +
              shapeString(t);
      return false;
    }
    carriedIndex.emplace(t.name, int64_t(carried_.size()));
    carried_.push_back(t);
    carriedInput_.push_back(int64_t(i));
    outputOf_.push_back(out->second);
  }
  for (size_t o = 1; o < outs.size(); ++o)
    if (!inputIndex.count(outs[o].name)) {
      error = where + " output " + std::to_string(o) + " '" + outs[o].name +
              "' is not the new value of any input (no input of that name)";
      return false;
    }
  hyperValue_.assign(hyper_.size(),
                     std::vector<float>(size_t(trials()), 0.0f));
  return true;
}

bool TrainStep::setHyperParameter(const std::string &name,
                                  const std::vector<float> &values,
                                  std::string &error) {
  for (size_t h = 0; h < hyper_.size(); ++h) {
    if (hyper_[h].name != name)
      continue;
    if (int64_t(values.size()) != trials()) {
      error = "hyper-parameter '" + name + "': " +
              std::to_string(values.size()) + " values for " +
              std::to_string(trials()) + " trial(s)";
      return false;
    }
    hyperValue_[h] = values;
    return true;
  }
  std::string names;
  for (const TensorInfo &t : hyper_)
    names += (names.empty() ? "" : ", ") + t.name;
  error = "the training step has no hyper-parameter '" + name + "' (" +
          (names.empty() ? "it has none: build it with --tg-autodiff's "
                           "hyper-parameter-arguments=true"
                         : "it has: " + names) +
          ")";
  return false;
}

/// The eval entry's signature: images, then parameters named as the
/// training step's inputs; one result, the logits.
bool TrainStep::bindEvalEntry(const std::string &where,
                              const std::string &trainEntry,
                              const std::string &evalEntry,
                              const std::map<std::string, int64_t> &carriedIndex,
                              std::string &error) {
  auto eins = signature(model_, evalEntry_, false);
  auto eouts = signature(model_, evalEntry_, true);
  if (eins.empty() || eins[0].dtype != "f32" || eins[0].shape.empty() ||
      eins[0].elements() / std::max<int64_t>(eins[0].shape[0], 1) != imageElements_) {
    error = where + " input 0 " +
            (eins.empty() ? std::string("is missing")
                          : "'" + eins[0].name + "' is " + shapeString(eins[0])) +
            ", expected images of " + std::to_string(imageElements_) +
            " f32 elements each, as the training step's";
    return false;
  }
  evalBatch_ = eins[0].shape[0];
  if (eins.size() < 2) {
    error = where + " takes no parameters; turn its weights into arguments with "
                    "loom-opt --tg-weights-to-arguments=function=" + evalEntry;
    return false;
  }
  std::vector<bool> isParam(carried_.size(), false);
  for (size_t i = 1; i < eins.size(); ++i) {
    auto it = carriedIndex.find(eins[i].name);
    if (it == carriedIndex.end()) {
      error = where + " input " + std::to_string(i) + " '" + eins[i].name +
              "' is not an input of '" + trainEntry + "' (the two must use the same weight names)";
      return false;
    }
    const TensorInfo &p = carried_[it->second];
    if (p.shape != eins[i].shape || p.dtype != eins[i].dtype) {
      error = where + " input " + std::to_string(i) + " '" + eins[i].name + "' is " +
              shapeString(eins[i]) + " but the training step's is " + shapeString(p);
      return false;
    }
    evalSource_.push_back(it->second);
    isParam[it->second] = true;
  }
  size_t rank = trials_ > 0 ? 3 : 2;
  if (eouts.size() != 1 || eouts[0].dtype != "f32" ||
      eouts[0].shape.size() != rank || !hasTrials(eouts[0], trials_) ||
      eouts[0].shape[rank - 2] != evalBatch_) {
    error = where + " must return one result, the logits: f32 [" +
            (trials_ > 0 ? std::to_string(trials_) + ", " : "") +
            std::to_string(evalBatch_) + ", classes]";
    return false;
  }
  classes_ = eouts[0].shape[rank - 1];
  for (int64_t src : evalSource_)
    params_.push_back(carried_[src]);
  for (size_t i = 0; i < carried_.size(); ++i)
    if (!isParam[i])
      stateInfo_.push_back(carried_[i]);
  return true;
}

bool TrainStep::open(const std::string &artifact, const std::string &trainEntry,
                     const std::string &evalEntry, int numThreads,
                     std::string &error, int64_t trials,
                     const std::string &evalArtifact) {
  trials_ = trials;
  loom_model_options options = {numThreads, nullptr, nullptr};
  if (loom_model_load(artifact.c_str(), &options, &model_) != LOOM_OK) {
    error = loom_last_error();
    model_ = nullptr;
    return false;
  }
  if (loom_step_num_micro_batches(model_) > 0) {
    if (trials > 0) {
      error = artifact + ": a pipelined step trains one trial (--trials needs a "
                         "step fused by --tg-fuse-trials)";
      return false;
    }
    return openRanks(artifact, trainEntry, evalEntry, numThreads, evalArtifact,
                     error);
  }
  if (!evalArtifact.empty()) {
    error = artifact + ": --eval-artifact belongs to a pipelined step (this "
                       "artifact has its own evaluation entry)";
    return false;
  }
  auto entryList = [&] {
    std::string s;
    for (int64_t i = 0, n = loom_model_num_entries(model_); i < n; ++i)
      s += (i ? ", " : "") + std::string(loom_model_entry_name(model_, i));
    return s;
  };
  trainEntry_ = loom_model_find_entry(model_, trainEntry.c_str());
  if (trainEntry_ < 0) {
    error = artifact + ": no entry '" + trainEntry + "' (entries: " + entryList() +
            "); build the training step with loom-opt --tg-autodiff";
    return false;
  }
  evalEntry_ = loom_model_find_entry(model_, evalEntry.c_str());
  if (evalEntry_ < 0) {
    error = artifact + ": no entry '" + evalEntry + "' (entries: " + entryList() +
            "); its weights must be arguments: loom-opt --tg-weights-to-arguments=function=" +
            evalEntry;
    return false;
  }
  std::map<std::string, int64_t> carriedIndex;
  if (!bindTrainEntry(artifact + ": entry '" + trainEntry + "'", carriedIndex,
                      error) ||
      !bindEvalEntry(artifact + ": entry '" + evalEntry + "'", trainEntry,
                     evalEntry, carriedIndex, error))
    return false;
  current_.resize(carried_.size());
  next_.resize(carried_.size());
  for (size_t i = 0; i < carried_.size(); ++i) {
    current_[i].assign(size_t(carried_[i].elements()), 0.0f);
    next_[i].assign(size_t(carried_[i].elements()), 0.0f);
  }
  labels32_.resize(size_t(batch_));
  if (loom_context_create(model_, &context_) != LOOM_OK) {
    error = loom_last_error();
    context_ = nullptr;
    return false;
  }
  return true;
}

int64_t parameterFanIn(const std::string &name, const std::vector<int64_t> &shape,
                       const std::vector<TensorInfo> &all, std::string &error) {
  if (endsWith(name, "bias")) {
    std::string weight = name.substr(0, name.size() - 4) + "weight";
    for (const TensorInfo &t : all)
      if (t.name == weight)
        return parameterFanIn(weight, t.shape, all, error);
    error = "parameter '" + name + "': no parameter '" + weight +
            "' to take the fan-in from (a bias is initialised as its layer's weight)";
    return -1;
  }
  if (shape.size() >= 3) {
    int64_t f = 1;
    for (size_t i = 1; i < shape.size(); ++i)
      f *= shape[i];
    return f;
  }
  if (shape.size() == 2)
    return shape[0];
  return 0;
}

bool TrainStep::initialize(uint64_t seed, std::string &error) {
  if (session_)
    return initializeRanks(seed, error);
  std::mt19937_64 rng(seed);
  // Uniform in [0, 1) from the top 53 bits, the same on every library.
  auto uniform = [&] { return double(rng() >> 11) * 0x1.0p-53; };
  for (size_t i = 0; i < carried_.size(); ++i)
    std::fill(current_[i].begin(), current_[i].end(), 0.0f);
  // Each trial as a single trial: the same draws, the shapes without the
  // trial dimension.
  std::vector<TensorInfo> single = params_;
  if (trials_ > 0)
    for (TensorInfo &p : single)
      p.shape.erase(p.shape.begin());
  for (int64_t t = 0; t < trials(); ++t) {
    rng.seed(seed);
    for (size_t i = 0; i < evalSource_.size(); ++i) {
      const TensorInfo &p = single[i];
      int64_t fanIn = parameterFanIn(p.name, p.shape, single, error);
      if (fanIn < 0)
        return false;
      float *v = current_[size_t(evalSource_[i])].data() + t * p.elements();
      if (fanIn == 0) {
        std::fill(v, v + p.elements(), 1.0f);
        continue;
      }
      double bound = 1.0 / std::sqrt(double(fanIn));
      for (int64_t k = 0; k < p.elements(); ++k)
        v[k] = float(bound * (2.0 * uniform() - 1.0));
    }
  }
  return true;
}

bool TrainStep::step(const float *images, const int64_t *labels, float *loss,
                     std::string &error) {
  if (session_)
    return stepRanks(images, labels, loss, error);
  std::vector<const void *> ins(carried_.size() + hyper_.size() + 2);
  std::vector<void *> outs(carried_.size() + 1);
  ins[0] = images;
  if (labelsI32_) {
    for (int64_t i = 0; i < batch_; ++i)
      labels32_[size_t(i)] = int32_t(labels[i]);
    ins[1] = labels32_.data();
  } else {
    ins[1] = labels;
  }
  outs[0] = loss;
  for (size_t i = 0; i < carried_.size(); ++i) {
    ins[size_t(carriedInput_[i])] = current_[i].data();
    outs[size_t(outputOf_[i])] = next_[i].data();
  }
  for (size_t h = 0; h < hyper_.size(); ++h)
    ins[size_t(hyperInput_[h])] = hyperValue_[h].data();
  if (loom_run(context_, trainEntry_, ins.data(), outs.data()) != LOOM_OK) {
    error = loom_last_error();
    return false;
  }
  current_.swap(next_);
  return true;
}

bool TrainStep::logits(const float *images, float *out, std::string &error) {
  if (session_)
    return logitsRanks(images, out, error);
  std::vector<const void *> ins(evalSource_.size() + 1);
  ins[0] = images;
  for (size_t i = 0; i < evalSource_.size(); ++i)
    ins[i + 1] = current_[size_t(evalSource_[i])].data();
  void *outs[] = {out};
  if (loom_run(context_, evalEntry_, ins.data(), outs) != LOOM_OK) {
    error = loom_last_error();
    return false;
  }
  return true;
}

const float *TrainStep::value(const std::string &name) const {
  if (eval_)
    return eval_->value(name);
  for (size_t i = 0; i < carried_.size(); ++i)
    if (carried_[i].name == name)
      return current_[i].data();
  return nullptr;
}

bool TrainStep::setValue(const std::string &name, const float *data,
                         std::string &error) {
  for (size_t i = 0; i < carried_.size(); ++i)
    if (carried_[i].name == name) {
      std::copy_n(data, current_[i].size(), current_[i].data());
      return true;
    }
  error = "no parameter or state tensor '" + name + "'";
  return false;
}

//===----------------------------------------------------------------------===//
// Across ranks: a pipelined step (docs/Training.md "Training across ranks")
//===----------------------------------------------------------------------===//

/// The step's inputs per micro-batch: images f32 [b, ...], labels i64 or
/// i32 [b], the loss's cotangent f32 []; its one result the loss f32 [].
bool TrainStep::bindRankInputs(const std::string &artifact, std::string &error) {
  std::vector<TensorInfo> in;
  for (int64_t i = 0, n = loom_step_num_inputs(model_); i < n; ++i) {
    loom_tensor_desc d;
    loom_step_input(model_, i, &d);
    in.push_back(describe(d));
  }
  std::string where = artifact + ": the pipelined step's ";
  if (in.size() != 3 || in[0].dtype != "f32" || in[0].shape.size() < 2 ||
      (in[1].dtype != "i64" && in[1].dtype != "i32") || in[1].shape.size() != 1 ||
      in[1].shape[0] != in[0].shape[0] || in[2].dtype != "f32" || !in[2].shape.empty()) {
    error = where + "inputs per micro-batch are";
    for (size_t i = 0; i < in.size(); ++i)
      error += (i ? ", " : " ") + in[i].name + " " + shapeString(in[i]);
    error += "; loom-train needs images f32 [b, ...], labels i64 or i32 [b] and "
             "the loss's cotangent f32 [] (a partitioned @loss)";
    return false;
  }
  loom_tensor_desc r;
  if (loom_step_num_results(model_) != 1 || loom_step_result(model_, 0, &r) != LOOM_OK ||
      std::string(r.dtype) != "f32" || r.rank != 0) {
    error = where + "results are not one loss f32 []: partition a function that "
                    "returns its loss";
    return false;
  }
  microBatches_ = loom_step_num_micro_batches(model_);
  microBatch_ = in[0].shape[0];
  batch_ = microBatches_ * microBatch_;
  imageElements_ = in[0].elements() / microBatch_;
  labelsI32_ = in[1].dtype == "i32";
  labels32_.resize(size_t(batch_));
  return true;
}

bool TrainStep::openRanks(const std::string &artifact, const std::string &trainEntry,
                          const std::string &evalEntry, int numThreads,
                          const std::string &evalArtifact, std::string &error) {
  loom_step_optimizer_desc opt;
  loom_step_optimizer(model_, &opt);
  optimizer_ = opt.kind;
  if (optimizer_ == "none") {
    error = artifact + ": the pipelined step has no optimizer step: compile it "
                       "with loom-compile --optimizer=sgd|adam";
    return false;
  }
  if (evalArtifact.empty()) {
    error = artifact + ": a pipelined step has no evaluation entry: give "
                       "--eval-artifact=MODEL.so, the model compiled for one "
                       "process (its '" + evalEntry + "' entry)";
    return false;
  }
  if (!bindRankInputs(artifact, error))
    return false;
  eval_ = std::make_unique<TrainStep>();
  if (!eval_->open(evalArtifact, trainEntry, evalEntry, numThreads, error))
    return false;
  if (eval_->imageElements() != imageElements_) {
    error = evalArtifact + ": entry '" + evalEntry + "' takes images of " +
            std::to_string(eval_->imageElements()) + " elements, the pipelined step's have " +
            std::to_string(imageElements_);
    return false;
  }
  evalBatch_ = eval_->evalBatch();
  classes_ = eval_->classes();
  for (int64_t g = 0, n = loom_step_num_gradients(model_); g < n; ++g) {
    loom_tensor_desc d;
    loom_step_gradient(model_, g, &d);
    params_.push_back(describe(d));
    const float *v = eval_->value(params_.back().name);
    auto same = std::find_if(eval_->parameters().begin(), eval_->parameters().end(),
                             [&](const TensorInfo &p) { return p.name == d.name; });
    if (!v || same == eval_->parameters().end() || same->shape != params_.back().shape) {
      error = evalArtifact + ": entry '" + evalEntry + "' has no parameter '" + d.name +
              "' " + shapeString(params_.back()) + " of the pipelined step";
      return false;
    }
  }
  if (params_.size() != eval_->parameters().size()) {
    error = evalArtifact + ": entry '" + evalEntry + "' has " +
            std::to_string(eval_->parameters().size()) +
            " parameters, the pipelined step trains " + std::to_string(params_.size());
    return false;
  }
  loom_step_info info;
  if (loom_step_session_open(model_, nullptr, &session_, &info) != LOOM_OK) {
    error = loom_last_error();
    return false;
  }
  rank_ = info.rank;
  worldSize_ = info.world_size;
  transport_ = info.transport;
  return true;
}

/// The evaluation step's initialisation (PyTorch's, in its parameters'
/// order, as one process's run), given to every rank.
bool TrainStep::initializeRanks(uint64_t seed, std::string &error) {
  if (!eval_->initialize(seed, error))
    return false;
  std::vector<const void *> values;
  for (const TensorInfo &p : params_)
    values.push_back(eval_->value(p.name));
  if (loom_step_session_set_parameters(session_, values.data()) != LOOM_OK) {
    error = loom_last_error();
    return false;
  }
  evalStale_ = false;
  return true;
}

/// One step over the ranks: micro-batch k is images [k*b, (k+1)*b), with
/// the cotangent 1/m, so that the summed gradient is the batch mean's and
/// the loss (rank 0's) is the micro-batches' mean, as one process's step.
bool TrainStep::stepRanks(const float *images, const int64_t *labels, float *loss,
                          std::string &error) {
  const void *labelData = labels;
  if (labelsI32_) {
    for (int64_t i = 0; i < batch_; ++i)
      labels32_[size_t(i)] = int32_t(labels[i]);
    labelData = labels32_.data();
  }
  size_t labelBytes = labelsI32_ ? 4 : 8;
  float cotangent = 1.0f / float(microBatches_);
  std::vector<const void *> ins;
  for (int64_t k = 0; k < microBatches_; ++k) {
    ins.push_back(images + k * microBatch_ * imageElements_);
    ins.push_back(static_cast<const char *>(labelData) + k * microBatch_ * labelBytes);
    ins.push_back(&cotangent);
  }
  std::vector<float> losses(size_t(microBatches_), 0.0f);
  std::vector<void *> outs;
  for (float &l : losses)
    outs.push_back(&l);
  if (loom_step_session_run(session_, ins.data(), outs.data()) != LOOM_OK) {
    error = loom_last_error();
    return false;
  }
  double sum = 0;
  for (float l : losses)
    sum += l;
  loss[0] = float(sum / double(microBatches_));
  evalStale_ = true;
  return true;
}

/// The first evaluation after a step gathers the parameters on rank 0 (a
/// collective call of every rank); rank 0 evaluates, the others return
/// zeros.
bool TrainStep::logitsRanks(const float *images, float *out, std::string &error) {
  if (evalStale_) {
    std::vector<std::vector<float>> values;
    std::vector<void *> outs;
    for (const TensorInfo &p : params_)
      values.emplace_back(size_t(p.elements()));
    for (std::vector<float> &v : values)
      outs.push_back(v.data());
    if (loom_step_session_parameters(session_, outs.data()) != LOOM_OK) {
      error = loom_last_error();
      return false;
    }
    if (isRoot())
      for (size_t g = 0; g < params_.size(); ++g)
        if (!eval_->setValue(params_[g].name, values[g].data(), error))
          return false;
    evalStale_ = false;
  }
  if (!isRoot()) {
    std::fill_n(out, evalBatch_ * classes_, 0.0f);
    return true;
  }
  return eval_->logits(images, out, error);
}

} // namespace loom::train
