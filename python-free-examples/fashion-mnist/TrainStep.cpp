//===- TrainStep.cpp - Run a compiled training step through libloomrt -----===//
#include "TrainStep.h"

#include "loom-c/Runtime.h"

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
  if (context_)
    loom_context_free(context_);
  if (model_)
    loom_model_free(model_);
}

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The training step's signature: images, labels, then the carried
/// parameters and state, each returned under its own name after the loss.
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
  if (outs.empty() || outs[0].dtype != "f32" || outs[0].elements() != 1) {
    error = where + " output 0 " +
            (outs.empty() ? std::string("is missing")
                          : "'" + outs[0].name + "' is " + shapeString(outs[0])) +
            ", expected the loss: a scalar f32";
    return false;
  }
  carried_.assign(ins.begin() + 2, ins.end());
  for (size_t i = 0; i < carried_.size(); ++i) {
    const TensorInfo &t = carried_[i];
    if (t.dtype != "f32") {
      error = where + " input " + std::to_string(i + 2) + " '" + t.name + "' is " +
              shapeString(t) + "; parameters and optimizer state are f32";
      return false;
    }
    if (t.name.empty() || !carriedIndex.emplace(t.name, i).second) {
      error = where + " input " + std::to_string(i + 2) + " has " +
              (t.name.empty() ? "no name" : "the name '" + t.name + "' twice") +
              "; parameters and state are matched to results by name (tg.name)";
      return false;
    }
  }
  outputOf_.assign(carried_.size(), -1);
  for (size_t o = 1; o < outs.size(); ++o) {
    auto it = carriedIndex.find(outs[o].name);
    if (it == carriedIndex.end()) {
      error = where + " output " + std::to_string(o) + " '" + outs[o].name +
              "' is not the new value of any input (no input of that name)";
      return false;
    }
    const TensorInfo &in = carried_[it->second];
    if (in.shape != outs[o].shape || in.dtype != outs[o].dtype) {
      error = where + " output " + std::to_string(o) + " '" + outs[o].name + "' is " +
              shapeString(outs[o]) + " but input '" + in.name + "' is " + shapeString(in);
      return false;
    }
    if (outputOf_[it->second] >= 0) {
      error = where + " returns '" + outs[o].name + "' twice";
      return false;
    }
    outputOf_[it->second] = int64_t(o);
  }
  for (size_t i = 0; i < carried_.size(); ++i)
    if (outputOf_[i] < 0) {
      error = where + " input " + std::to_string(i + 2) + " '" + carried_[i].name +
              "' has no result of the same name (its updated value)";
      return false;
    }
  return true;
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
  if (eouts.size() != 1 || eouts[0].dtype != "f32" || eouts[0].shape.size() != 2 ||
      eouts[0].shape[0] != evalBatch_) {
    error = where + " must return one result, the logits: f32 [" +
            std::to_string(evalBatch_) + ", classes]";
    return false;
  }
  classes_ = eouts[0].shape[1];
  for (int64_t src : evalSource_)
    params_.push_back(carried_[src]);
  for (size_t i = 0; i < carried_.size(); ++i)
    if (!isParam[i])
      stateInfo_.push_back(carried_[i]);
  return true;
}

bool TrainStep::open(const std::string &artifact, const std::string &trainEntry,
                     const std::string &evalEntry, int numThreads,
                     std::string &error) {
  loom_model_options options = {numThreads, nullptr, nullptr};
  if (loom_model_load(artifact.c_str(), &options, &model_) != LOOM_OK) {
    error = loom_last_error();
    model_ = nullptr;
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
  std::mt19937_64 rng(seed);
  // Uniform in [0, 1) from the top 53 bits, the same on every library.
  auto uniform = [&] { return double(rng() >> 11) * 0x1.0p-53; };
  for (size_t i = 0; i < carried_.size(); ++i)
    std::fill(current_[i].begin(), current_[i].end(), 0.0f);
  for (int64_t src : evalSource_) {
    const TensorInfo &p = carried_[src];
    int64_t fanIn = parameterFanIn(p.name, p.shape, params_, error);
    if (fanIn < 0)
      return false;
    std::vector<float> &v = current_[src];
    if (fanIn == 0) {
      std::fill(v.begin(), v.end(), 1.0f);
      continue;
    }
    double bound = 1.0 / std::sqrt(double(fanIn));
    for (float &x : v)
      x = float(bound * (2.0 * uniform() - 1.0));
  }
  return true;
}

bool TrainStep::step(const float *images, const int64_t *labels, float &loss,
                     std::string &error) {
  std::vector<const void *> ins(carried_.size() + 2);
  std::vector<void *> outs(carried_.size() + 1);
  ins[0] = images;
  if (labelsI32_) {
    for (int64_t i = 0; i < batch_; ++i)
      labels32_[size_t(i)] = int32_t(labels[i]);
    ins[1] = labels32_.data();
  } else {
    ins[1] = labels;
  }
  outs[0] = &loss;
  for (size_t i = 0; i < carried_.size(); ++i) {
    ins[i + 2] = current_[i].data();
    outs[size_t(outputOf_[i])] = next_[i].data();
  }
  if (loom_run(context_, trainEntry_, ins.data(), outs.data()) != LOOM_OK) {
    error = loom_last_error();
    return false;
  }
  current_.swap(next_);
  return true;
}

bool TrainStep::logits(const float *images, float *out, std::string &error) {
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
  for (size_t i = 0; i < carried_.size(); ++i)
    if (carried_[i].name == name)
      return current_[i].data();
  return nullptr;
}

} // namespace loom::train
