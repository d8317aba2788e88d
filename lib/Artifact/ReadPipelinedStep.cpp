//===- ReadPipelinedStep.cpp - Slots and actions of the pipelined step ----===//
//
// Part of Loom. See Reader.h and docs/Artifact.md "The pipelined step":
// a rank's slots, and its actions (compute, exchange, accumulate,
// all-reduce, update) with the slots each reads and writes, their dtypes
// and sizes checked; the world's optimizer.
//
//===----------------------------------------------------------------------===//

#include "Reader.h"

#include <algorithm>
#include <set>

using namespace loom;
using namespace loom::artifact;
using namespace loom::artifact::detail;

bool Reader::slot(const Json &j, const std::string &path, const Manifest &m,
                  Slot &out) {
  if (!enumeration(j, path, "kind", "slot kind", parseSlotKind, out.kind) ||
      !string(j, path, "name", out.name))
    return false;
  TensorDesc t;
  if (!tensor(j, path, t))
    return false;
  out.dtype = t.dtype;
  out.shape = t.shape;
  out.bytes = t.bytes;
  if ((slotSummed(out.kind) || out.kind == SlotKind::State) &&
      out.dtype != "f32")
    return fail(path + ".dtype", "a summed or state slot is f32");
  switch (out.kind) {
  case SlotKind::Input: {
    if (!integer(j, path, "index", out.index))
      return false;
    const std::vector<TensorDesc> &in = m.world.stepInputs;
    if (out.index >= int64_t(in.size()))
      return fail(path + ".index", "the step has " +
                                       std::to_string(in.size()) + " inputs");
    if (in[out.index].dtype != out.dtype || in[out.index].shape != out.shape)
      return fail(path, "is not the dtype and shape of step input " +
                            std::to_string(out.index));
    return true;
  }
  case SlotKind::Weight:
  case SlotKind::Gradient:
  case SlotKind::State: {
    if (!string(j, path, "tensor", out.tensor))
      return false;
    const std::vector<WeightTensor> &ws = m.weights.tensors;
    auto it = std::find_if(ws.begin(), ws.end(), [&](const WeightTensor &w) {
      return w.name == out.tensor;
    });
    if (it == ws.end())
      return fail(path + ".tensor", "no weight '" + out.tensor + "'");
    if (it->shape != out.shape)
      return fail(path + ".shape", "is not the shape of weight '" +
                                       out.tensor + "'");
    return true;
  }
  case SlotKind::Value:
  case SlotKind::Sum:
    return true;
  }
  return fail(path + ".kind", "unknown slot kind");
}

bool Reader::slotRef(const Json &obj, const std::string &path,
                     const std::string &key, const Rank &rank, int64_t &out) {
  if (!integer(obj, path, key, out))
    return false;
  if (out >= int64_t(rank.slots.size()))
    return fail(path + "." + key, "slot " + std::to_string(out) +
                                      " is out of range (the rank has " +
                                      std::to_string(rank.slots.size()) + ")");
  return true;
}

bool Reader::microBatch(const Json &obj, const std::string &path,
                        const World &w, int64_t &out) {
  if (!integer(obj, path, "micro_batch", out))
    return false;
  if (out >= w.microBatches)
    return fail(path + ".micro_batch",
                "out of range (the step has " +
                    std::to_string(w.microBatches) + " micro-batches)");
  return true;
}

bool Reader::fits(const std::string &path, const Slot &slot,
                  const std::string &dtype, int64_t bytes) {
  if (slot.dtype == dtype && slot.bytes == bytes)
    return true;
  return fail(path, "slot '" + slot.name + "' (" +
                        std::to_string(slot.bytes) + " bytes " + slot.dtype +
                        ") does not hold " + std::to_string(bytes) +
                        " bytes " + dtype);
}

bool Reader::compute(const Json &j, const std::string &path,
                     const Manifest &m, const Rank &rank, ComputeAction &out) {
  if (!integer(j, path, "entry", out.entry) ||
      !microBatch(j, path, m.world, out.microBatch))
    return false;
  if (out.entry >= int64_t(m.entries.size()) ||
      rank.programs[out.entry].empty())
    return fail(path + ".entry", "entry " + std::to_string(out.entry) +
                                     " has no program on this rank");
  const Entry &e = m.entries[out.entry];
  const std::vector<Json> *ins = array(j, path, "inputs");
  const std::vector<Json> *outs = ins ? array(j, path, "outputs") : nullptr;
  if (!outs)
    return false;
  if (ins->size() != e.inputs.size() || outs->size() != e.outputs.size())
    return fail(path, "binds " + std::to_string(ins->size()) + " inputs and " +
                          std::to_string(outs->size()) + " outputs; entry '" +
                          e.name + "' has " + std::to_string(e.inputs.size()) +
                          " and " + std::to_string(e.outputs.size()));
  auto bind = [&](const std::vector<Json> &list, const std::string &key,
                  const std::vector<TensorDesc> &tensors, bool output,
                  std::vector<int64_t> &slots) {
    for (size_t i = 0; i < list.size(); ++i) {
      std::string ip = at(path + "." + key, i);
      int64_t min = output ? -1 : 0;
      if (!list[i].isInteger() || list[i].integer() < min ||
          list[i].integer() >= int64_t(rank.slots.size()))
        return fail(ip, output ? "expected a slot of the rank or -1"
                               : "expected a slot of the rank");
      slots.push_back(list[i].integer());
      if (slots.back() < 0)
        continue;
      const Slot &s = rank.slots[slots.back()];
      if (output && s.kind != SlotKind::Value)
        return fail(ip, "an output is written to a value slot");
      if (!fits(ip, s, tensors[i].dtype, tensors[i].bytes))
        return false;
    }
    return true;
  };
  return bind(*ins, "inputs", e.inputs, false, out.inputs) &&
         bind(*outs, "outputs", e.outputs, true, out.outputs);
}

bool Reader::exchange(const Json &j, const std::string &path, const World &w,
                      const Rank &rank, ExchangeAction &out) {
  const std::vector<Json> *messages = array(j, path, "messages");
  if (!messages)
    return false;
  if (messages->empty())
    return fail(path + ".messages", "expected at least one message");
  for (size_t i = 0; i < messages->size(); ++i) {
    std::string mp = at(path + ".messages", i);
    ExchangeMessage msg;
    if (!integer((*messages)[i], mp, "channel", msg.channel) ||
        !slotRef((*messages)[i], mp, "slot", rank, msg.slot) ||
        !microBatch((*messages)[i], mp, w, msg.microBatch))
      return false;
    if (msg.channel >= int64_t(rank.channels.size()))
      return fail(mp + ".channel", "out of range (the rank has " +
                                       std::to_string(rank.channels.size()) +
                                       " channels)");
    const Channel &c = rank.channels[msg.channel];
    const Slot &s = rank.slots[msg.slot];
    if (c.direction == ChannelDirection::Recv && s.kind != SlotKind::Value)
      return fail(mp + ".slot", "a receive writes a value slot");
    if (!fits(mp + ".slot", s, c.dtype, c.bytes))
      return false;
    out.messages.push_back(msg);
  }
  return true;
}

bool Reader::accumulate(const Json &j, const std::string &path,
                        const World &w, const Rank &rank,
                        AccumulateAction &out) {
  if (!slotRef(j, path, "src", rank, out.src) ||
      !slotRef(j, path, "dst", rank, out.dst) ||
      !microBatch(j, path, w, out.microBatch))
    return false;
  const Slot &src = rank.slots[out.src], &dst = rank.slots[out.dst];
  if (!slotSummed(dst.kind))
    return fail(path + ".dst", "accumulates into a sum or gradient slot");
  return fits(path + ".src", src, dst.dtype, dst.bytes);
}

/// A group of at least two ranks, ascending, this one among them; its
/// slots distinct gradient slots.
bool Reader::allReduce(const Json &j, const std::string &path, int64_t self,
                       const Rank &rank, AllReduceAction &out) {
  if (!ints(j, path, "ranks", out.ranks) || !ints(j, path, "slots", out.slots))
    return false;
  if (out.ranks.size() < 2 ||
      !std::is_sorted(out.ranks.begin(), out.ranks.end()) ||
      std::adjacent_find(out.ranks.begin(), out.ranks.end()) !=
          out.ranks.end() ||
      out.ranks.front() < 0 || out.ranks.back() >= numRanks ||
      !std::binary_search(out.ranks.begin(), out.ranks.end(), self))
    return fail(path + ".ranks",
                "expected at least two ranks of the " +
                    std::to_string(numRanks) +
                    ", ascending, this rank (" + std::to_string(self) +
                    ") among them");
  if (out.slots.empty())
    return fail(path + ".slots", "expected at least one slot");
  for (size_t i = 0; i < out.slots.size(); ++i) {
    std::string sp = at(path + ".slots", i);
    if (out.slots[i] < 0 || out.slots[i] >= int64_t(rank.slots.size()))
      return fail(sp, "expected a slot of the rank");
    if (rank.slots[out.slots[i]].kind != SlotKind::Gradient)
      return fail(sp, "an all-reduce sums gradient slots");
    if (std::count(out.slots.begin(), out.slots.end(), out.slots[i]) > 1)
      return fail(sp, "slot " + std::to_string(out.slots[i]) +
                          " appears twice");
  }
  return true;
}

/// The world's optimizer: its kind and finite hyper-parameters.
bool Reader::optimizer(const Json &o, Optimizer &out) {
  const std::string path = "world.optimizer";
  std::string kind;
  if (!string(o, path, "kind", kind) || !number(o, path, "lr", out.lr) ||
      !number(o, path, "momentum", out.momentum) ||
      !number(o, path, "beta1", out.beta1) ||
      !number(o, path, "beta2", out.beta2) ||
      !number(o, path, "eps", out.eps) ||
      !number(o, path, "weight_decay", out.weightDecay))
    return false;
  if (kind == "sgd")
    out.kind = OptimizerKind::Sgd;
  else if (kind == "adam")
    out.kind = OptimizerKind::Adam;
  else
    return fail(path + ".kind", "expected sgd or adam, not '" + kind + "'");
  return true;
}

/// Weight slots, the gradient slots of their tensors, and the optimizer's
/// state slots of each, parameter-major.
bool Reader::update(const Json &j, const std::string &path, const World &w,
                    const Rank &rank, UpdateAction &out) {
  if (w.optimizer.kind == OptimizerKind::None)
    return fail(path, "an update needs the world's optimizer");
  if (!ints(j, path, "params", out.params) ||
      !ints(j, path, "gradients", out.gradients) ||
      !ints(j, path, "states", out.states))
    return false;
  int64_t perParam = w.optimizer.stateTensors();
  if (out.params.empty() || out.gradients.size() != out.params.size() ||
      int64_t(out.states.size()) != perParam * int64_t(out.params.size()))
    return fail(path, "expected parameters, a gradient each and " +
                          std::to_string(perParam) + " state slot(s) each (" +
                          std::string(w.optimizer.name()) + ")");
  auto check = [&](const char *key, int64_t s, SlotKind kind,
                   const std::string &tensor) {
    if (s < 0 || s >= int64_t(rank.slots.size()) ||
        rank.slots[s].kind != kind ||
        (!tensor.empty() && rank.slots[s].tensor != tensor))
      return fail(path + "." + key,
                  "slot " + std::to_string(s) + " is not a " +
                      std::string(slotKindName(kind)) + " slot" +
                      (tensor.empty() ? "" : " of '" + tensor + "'"));
    return true;
  };
  for (size_t i = 0; i < out.params.size(); ++i) {
    if (!check("params", out.params[i], SlotKind::Weight, ""))
      return false;
    const std::string &t = rank.slots[out.params[i]].tensor;
    if (!check("gradients", out.gradients[i], SlotKind::Gradient, t))
      return false;
    for (int64_t k = 0; k < perParam; ++k)
      if (!check("states", out.states[i * perParam + k], SlotKind::State, t))
        return false;
  }
  return true;
}

bool Reader::action(const Json &j, const std::string &path, const Manifest &m,
                    const Rank &rank, Action &out) {
  ActionKind kind = ActionKind::Compute;
  if (!enumeration(j, path, "kind", "action kind", parseActionKind, kind))
    return false;
  switch (kind) {
  case ActionKind::Compute: {
    ComputeAction a;
    if (!compute(j, path, m, rank, a))
      return false;
    out.record = std::move(a);
    return true;
  }
  case ActionKind::Exchange: {
    ExchangeAction a;
    if (!exchange(j, path, m.world, rank, a))
      return false;
    out.record = std::move(a);
    return true;
  }
  case ActionKind::Accumulate: {
    AccumulateAction a;
    if (!accumulate(j, path, m.world, rank, a))
      return false;
    out.record = a;
    return true;
  }
  case ActionKind::AllReduce: {
    AllReduceAction a;
    if (!allReduce(j, path, int64_t(m.world.ranks.size()) - 1, rank, a))
      return false;
    out.record = std::move(a);
    return true;
  }
  case ActionKind::Update: {
    UpdateAction a;
    if (!update(j, path, m.world, rank, a))
      return false;
    out.record = std::move(a);
    return true;
  }
  }
  return fail(path + ".kind", "unknown action kind");
}

/// A rank's slots and actions (both absent: no pipelined step).
bool Reader::step(const Json &r, const std::string &path, const Manifest &m,
                  Rank &out) {
  if (!r.get("slots") && !r.get("actions"))
    return true;
  const std::vector<Json> *slots = array(r, path, "slots");
  const std::vector<Json> *actions = slots ? array(r, path, "actions")
                                           : nullptr;
  if (!actions)
    return false;
  std::set<std::string> names;
  for (size_t i = 0; i < slots->size(); ++i) {
    std::string sp = at(path + ".slots", i);
    out.slots.emplace_back();
    if (!slot((*slots)[i], sp, m, out.slots.back()))
      return false;
    if (!names.insert(out.slots.back().name).second)
      return fail(sp + ".name", "another slot of the rank is named '" +
                                    out.slots.back().name + "'");
  }
  for (size_t i = 0; i < actions->size(); ++i) {
    out.actions.emplace_back();
    if (!action((*actions)[i], at(path + ".actions", i), m, out,
                out.actions.back()))
      return false;
  }
  return true;
}
