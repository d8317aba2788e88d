//===- RankStep.cpp - One rank's pipelined step ---------------------------===//
//
// Part of Loom. See RankStep.h.
//
//===----------------------------------------------------------------------===//

#include "RankStep.h"

#include "loom/Runtime/Checksum.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;

std::vector<const art::Slot *> rt::worldGradients(const art::World &w) {
  std::vector<const art::Slot *> out;
  for (const art::Rank &r : w.ranks)
    for (const art::Slot &s : r.slots)
      if (s.kind == art::SlotKind::Gradient &&
          std::none_of(out.begin(), out.end(), [&](const art::Slot *o) {
            return o->tensor == s.tensor;
          }))
        out.push_back(&s);
  return out;
}

RankStep::RankStep(const loom_model &model, int rank)
    : manifest(manifestOf(model)),
      rank(manifest.world.ranks[rank]), self(rank) {}

RankStep::~RankStep() {
  if (context)
    loom_context_free(context);
}

Error RankStep::create(const loom_model &model, int rank,
                       std::unique_ptr<RankStep> &out) {
  const art::World &w = manifestOf(model).world;
  if (rank < 0 || rank >= int(w.ranks.size()) || w.microBatches == 0)
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "rank " + std::to_string(rank) +
                         ": the artifact's world has " +
                         std::to_string(w.ranks.size()) + " ranks" +
                         (w.microBatches ? "" : " and no pipelined step"));
  std::unique_ptr<RankStep> step(new RankStep(model, rank));
  const std::map<std::string, WeightView> &views = weightsOf(model);
  for (const art::Slot &s : step->rank.slots) {
    step->memory.emplace_back();
    step->weights.push_back(nullptr);
    switch (s.kind) {
    case art::SlotKind::Input:
      break;
    case art::SlotKind::Weight: {
      auto it = views.find(s.tensor);
      if (it == views.end() || it->second.bytes != s.bytes)
        return makeError(LOOM_ERROR_FORMAT,
                         "slot '" + s.name + "': no weight '" + s.tensor +
                             "' of " + std::to_string(s.bytes) + " bytes");
      step->weights.back() = it->second.data;
      // A step that updates its parameters does so in a copy of its own.
      if (w.optimizer.kind != art::OptimizerKind::None) {
        if (s.dtype != "f32")
          return makeError(LOOM_ERROR_FORMAT,
                           "slot '" + s.name + "': the optimizer updates f32 "
                           "parameters, not " + s.dtype);
        step->memory.back().assign(1, std::vector<float>(s.bytes / 4));
        std::memcpy(step->memory.back()[0].data(), it->second.data, s.bytes);
      }
      break;
    }
    case art::SlotKind::Value:
    case art::SlotKind::Sum:
    case art::SlotKind::Gradient:
    case art::SlotKind::State: {
      int64_t copies = art::slotPerMicroBatch(s.kind) ? w.microBatches : 1;
      step->memory.back().assign(copies,
                                 std::vector<float>((s.bytes + 3) / 4));
      break;
    }
    }
  }
  if (loom_status st = loom_context_create(&model, &step->context))
    return makeError(st, loom_last_error());
  out = std::move(step);
  return Error::ok();
}

void *RankStep::slot(int64_t s, int64_t mb, const void *const *inputs) {
  const art::Slot &slot = rank.slots[s];
  switch (slot.kind) {
  case art::SlotKind::Input:
    return const_cast<void *>(
        inputs[mb * manifest.world.stepInputs.size() + slot.index]);
  case art::SlotKind::Weight:
    return memory[s].empty() ? const_cast<void *>(weights[s])
                             : memory[s][0].data();
  case art::SlotKind::Value:
  case art::SlotKind::Sum:
    return memory[s][mb].data();
  case art::SlotKind::Gradient:
  case art::SlotKind::State:
    return memory[s][0].data();
  }
  return nullptr;
}

Error RankStep::fail(int64_t action, const Error &cause) const {
  return makeError(cause.status,
                   "action " + std::to_string(action) + " (" +
                       std::string(art::actionKindName(
                           rank.actions[action].kind())) +
                       "): " + cause.message);
}

Error RankStep::compute(const art::ComputeAction &a,
                        const void *const *inputs) {
  const art::Entry &e = manifest.entries[a.entry];
  std::vector<const void *> in;
  std::vector<void *> out;
  for (int64_t s : a.inputs)
    in.push_back(slot(s, a.microBatch, inputs));
  scratch.resize(std::max(scratch.size(), a.outputs.size()));
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    if (a.outputs[i] >= 0) {
      out.push_back(slot(a.outputs[i], a.microBatch, inputs));
      continue;
    }
    size_t floats = (e.outputs[i].bytes + 3) / 4;
    if (scratch[i].size() < floats)
      scratch[i].resize(floats);
    out.push_back(scratch[i].data());
  }
  if (loom_status st = loom_run(context, a.entry, in.data(), out.data()))
    return makeError(st, "entry '" + e.name +
                                             "' on micro-batch " +
                                             std::to_string(a.microBatch) +
                                             ": " + loom_last_error());
  return Error::ok();
}

Error RankStep::exchange(comm::Communicator &comm,
                         const art::ExchangeAction &a, int64_t index,
                         const void *const *inputs, comm::Deadline deadline) {
  std::vector<comm::Message> messages;
  for (const art::ExchangeMessage &m : a.messages) {
    const art::Channel &c = rank.channels[m.channel];
    comm::Message msg;
    msg.direction = c.direction == art::ChannelDirection::Send
                        ? comm::Message::Direction::Send
                        : comm::Message::Direction::Recv;
    msg.peer = int(c.peer);
    msg.data = slot(m.slot, m.microBatch, inputs);
    msg.bytes = c.bytes;
    messages.push_back(msg);
  }
  if (Error err = comm.exchange(messages, deadline))
    return fail(index, err);
  return Error::ok();
}

/// The groups of the world's all-reduces, each once, in one order on every
/// rank.
static std::vector<std::vector<int64_t>> reduceGroups(const art::World &w) {
  std::vector<std::vector<int64_t>> groups;
  for (const art::Rank &r : w.ranks)
    for (const art::Action &a : r.actions)
      if (const auto *x = std::get_if<art::AllReduceAction>(&a.record))
        groups.push_back(x->ranks);
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  return groups;
}

Error RankStep::allReduce(comm::Communicator &comm,
                          const art::AllReduceAction &a,
                          comm::Deadline deadline) {
  comm::Communicator &group = *groups.at(a.ranks);
  // One collective for the tensors together.
  std::vector<float> &packed = reduced;
  packed.clear();
  for (int64_t s : a.slots)
    packed.insert(packed.end(), memory[s][0].begin(),
                  memory[s][0].begin() + rank.slots[s].bytes / 4);
  if (Error err = group.allReduceSum(packed.data(), int64_t(packed.size()),
                                     deadline))
    return err;
  size_t at = 0;
  for (int64_t s : a.slots) {
    size_t n = rank.slots[s].bytes / 4;
    std::copy(packed.begin() + at, packed.begin() + at + n,
              memory[s][0].begin());
    at += n;
  }
  return Error::ok();
}

/// PyTorch's SGD and Adam (docs/Training.md), step stepsRun, in f32.
void RankStep::update(const art::UpdateAction &a) {
  const art::Optimizer &o = manifest.world.optimizer;
  int64_t perParam = o.stateTensors();
  auto lr = float(o.lr), wd = float(o.weightDecay);
  for (size_t i = 0; i < a.params.size(); ++i) {
    float *p = memory[a.params[i]][0].data();
    const float *g = memory[a.gradients[i]][0].data();
    float *s0 = perParam > 0 ? memory[a.states[i * perParam]][0].data()
                             : nullptr;
    float *s1 = perParam > 1 ? memory[a.states[i * perParam + 1]][0].data()
                             : nullptr;
    int64_t n = rank.slots[a.params[i]].bytes / 4;
    switch (o.kind) {
    case art::OptimizerKind::None:
      break;
    case art::OptimizerKind::Sgd:
      for (int64_t k = 0; k < n; ++k) {
        float d = g[k] + wd * p[k];
        if (s0)
          d = s0[k] = float(o.momentum) * s0[k] + d;
        p[k] -= lr * d;
      }
      break;
    case art::OptimizerKind::Adam: {
      auto b1 = float(o.beta1), b2 = float(o.beta2);
      float c1 = 1 - std::pow(b1, float(stepsRun));
      float c2 = 1 - std::pow(b2, float(stepsRun));
      for (int64_t k = 0; k < n; ++k) {
        float d = g[k] + wd * p[k];
        s0[k] = b1 * s0[k] + (1 - b1) * d;
        s1[k] = b2 * s1[k] + (1 - b2) * d * d;
        p[k] -= lr / c1 * s0[k] / (std::sqrt(s1[k] / c2) + float(o.eps));
      }
      break;
    }
    }
  }
}

Error RankStep::run(comm::Communicator &comm, const void *const *inputs,
                    std::chrono::milliseconds timeout) {
  ++stepsRun;
  // The first step splits a communicator off \p comm for each all-reduce
  // group: every rank takes part in every split, a member or not.
  if (!groupsMade) {
    for (const std::vector<int64_t> &g : reduceGroups(manifest.world)) {
      bool member = std::binary_search(g.begin(), g.end(), int64_t(self));
      if (Error err = comm.split(member ? 0 : -1, self,
                                 comm::Clock::now() + timeout, groups[g]))
        return err;
    }
    groupsMade = true;
  }
  for (size_t s = 0; s < rank.slots.size(); ++s)
    if (art::slotSummed(rank.slots[s].kind))
      for (std::vector<float> &t : memory[s])
        std::fill(t.begin(), t.end(), 0.0f);
  auto now = [] {
    return int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                       comm::Clock::now().time_since_epoch())
                       .count());
  };
  for (size_t i = 0; i < rank.actions.size(); ++i) {
    const art::Action &action = rank.actions[i];
    if (times)
      times->push_back(now());
    switch (action.kind()) {
    case art::ActionKind::Compute:
      if (Error err = compute(std::get<art::ComputeAction>(action.record),
                              inputs))
        return fail(i, err);
      break;
    case art::ActionKind::Exchange:
      if (Error err = exchange(comm,
                               std::get<art::ExchangeAction>(action.record),
                               i, inputs, comm::Clock::now() + timeout))
        return err;
      break;
    case art::ActionKind::Accumulate: {
      const auto &a = std::get<art::AccumulateAction>(action.record);
      const float *src =
          static_cast<const float *>(slot(a.src, a.microBatch, inputs));
      float *dst = static_cast<float *>(slot(a.dst, a.microBatch, inputs));
      for (int64_t k = 0, n = rank.slots[a.dst].bytes / 4; k < n; ++k)
        dst[k] += src[k];
      break;
    }    case art::ActionKind::AllReduce:
      if (Error err = allReduce(comm,
                                std::get<art::AllReduceAction>(action.record),
                                comm::Clock::now() + timeout))
        return fail(i, err);
      break;
    case art::ActionKind::Update:
      update(std::get<art::UpdateAction>(action.record));
      break;
    }
    if (times)
      times->push_back(now());
  }
  return Error::ok();
}

Error RankStep::checkSameArtifact(comm::Communicator &comm,
                                  std::chrono::milliseconds timeout) {
  std::string text = art::writeManifest(manifest);
  uint64_t mine = loom_checksum64(text.data(), text.size());
  uint64_t root = mine;
  if (Error err = comm.broadcast(&root, sizeof(root), 0,
                                 comm::Clock::now() + timeout))
    return err;
  float differ = root != mine ? 1.0f : 0.0f;
  if (Error err = comm.allReduceSum(&differ, 1, comm::Clock::now() + timeout))
    return err;
  if (differ == 0)
    return Error::ok();
  return makeError(LOOM_ERROR_FORMAT,
                   std::to_string(int(differ)) +
                       " rank(s) loaded an artifact other than rank 0's " +
                       (root != mine ? "(this one did)" : "(not this one)"));
}

/// Whether slot \p s of rank \p r is gathered as a \p kind result: a
/// gradient but a replica's copy of an all-reduced one, which the sum
/// would count twice; a parameter from the first rank that holds it.
static bool gathered(const art::World &w, int r, size_t s,
                     art::SlotKind kind) {
  const art::Slot &slot = w.ranks[r].slots[s];
  if (slot.kind != kind)
    return false;
  if (kind == art::SlotKind::Gradient)
    return !art::replicaCopy(w, r, s);
  for (int q = 0; q < r; ++q)
    for (const art::Slot &other : w.ranks[q].slots)
      if (other.kind == kind && other.tensor == slot.tensor)
        return false;
  return true;
}

Error RankStep::gather(comm::Communicator &comm, int root, void *const *out,
                       std::chrono::milliseconds timeout,
                       art::SlotKind kind) {
  const art::World &w = manifest.world;
  std::vector<comm::Message> messages;
  if (self != root) {
    for (size_t s = 0; s < rank.slots.size(); ++s)
      if (gathered(w, self, s, kind))
        messages.push_back({comm::Message::Direction::Send, root,
                            slot(s, 0, nullptr), rank.slots[s].bytes});
  } else {
    // Every rank's slots, in rank and slot order.
    std::vector<std::pair<int, const art::Slot *>> from;
    for (int r = 0; r < int(w.ranks.size()); ++r)
      for (size_t s = 0; s < w.ranks[r].slots.size(); ++s)
        if (gathered(w, r, s, kind))
          from.push_back({r, &w.ranks[r].slots[s]});
    std::vector<std::vector<float>> received(from.size());
    for (size_t k = 0; k < from.size(); ++k) {
      auto [r, s] = from[k];
      received[k].resize((s->bytes + 3) / 4);
      if (r == self)
        std::memcpy(received[k].data(),
                    slot(s - rank.slots.data(), 0, nullptr), s->bytes);
      else
        messages.push_back({comm::Message::Direction::Recv, r,
                            received[k].data(), s->bytes});
    }
    if (!messages.empty())
      if (Error err = comm.exchange(messages, comm::Clock::now() + timeout))
        return err;
    std::vector<const art::Slot *> grads = worldGradients(w);
    for (size_t g = 0; g < grads.size(); ++g)
      std::memset(out[g], 0, grads[g]->bytes);
    for (size_t k = 0; k < from.size(); ++k) {
      size_t g = std::find_if(grads.begin(), grads.end(),
                              [&](const art::Slot *x) {
                                return x->tensor == from[k].second->tensor;
                              }) -
                 grads.begin();
      float *dst = static_cast<float *>(out[g]);
      for (size_t i = 0; i < received[k].size(); ++i)
        dst[i] += received[k][i];
    }
    return Error::ok();
  }
  if (messages.empty())
    return Error::ok();
  return comm.exchange(messages, comm::Clock::now() + timeout);
}

Error RankStep::gatherResults(comm::Communicator &comm, int root,
                              void *const *out,
                              std::chrono::milliseconds timeout) {
  const art::World &w = manifest.world;
  std::vector<comm::Message> messages;
  for (size_t k = 0; k < w.results.size(); ++k)
    for (int64_t mb = 0; mb < w.microBatches; ++mb) {
      auto [r, s] = art::resultSlot(w, k, mb);
      int64_t bytes = w.results[k].bytes;
      void *dst = self == root ? out[mb * w.results.size() + k] : nullptr;
      if (r == self && self == root)
        std::memcpy(dst, memory[s][mb].data(), bytes);
      else if (r == self)
        messages.push_back({comm::Message::Direction::Send, root,
                            memory[s][mb].data(), bytes});
      else if (self == root)
        messages.push_back(
            {comm::Message::Direction::Recv, int(r), dst, bytes});
    }
  if (messages.empty())
    return Error::ok();
  return comm.exchange(messages, comm::Clock::now() + timeout);
}

Error RankStep::setParameters(const void *const *params) {
  const art::World &w = manifest.world;
  if (w.optimizer.kind == art::OptimizerKind::None)
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "the step has no optimizer (loom-compile --optimizer): "
                     "its parameters are the artifact's weights");
  std::vector<const art::Slot *> grads = worldGradients(w);
  for (size_t s = 0; s < rank.slots.size(); ++s) {
    const art::Slot &slot = rank.slots[s];
    if (slot.kind == art::SlotKind::State)
      std::fill(memory[s][0].begin(), memory[s][0].end(), 0.0f);
    if (slot.kind != art::SlotKind::Weight)
      continue;
    auto g = std::find_if(grads.begin(), grads.end(), [&](const art::Slot *x) {
      return x->tensor == slot.tensor;
    });
    if (g != grads.end())
      std::memcpy(memory[s][0].data(), params[g - grads.begin()], slot.bytes);
  }
  stepsRun = 0;
  return Error::ok();
}
