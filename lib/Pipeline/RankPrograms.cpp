//===- RankPrograms.cpp - A pipe.schedule as the ranks' programs ----------===//
//
// Part of Loom. See include/loom/Pipeline/RankPrograms.h. Slot names: the
// step input k is "input<k>"; stage s's forward input i "s<s>.in<i>"
// (received), output j "s<s>.out<j>", the summed gradient of output j
// "s<s>.dout<j>", the gradient of input i "s<s>.din<i>" (and
// "s<s>.din<i>@s<t>" once received by its producer t), of parameter k
// "s<s>.dw<k>"; the parameters "weight:<name>" and their gradients
// "grad:<name>". A channel is named after the slots at its two ends.
//
// A stage on several devices (data-parallel replicas) runs micro-batch m on
// its replica m mod R, whole: the stage functions are compiled for the
// micro-batch's shapes, and a whole micro-batch computes what the reference
// executor computes (batch statistics included). Each replica sums its
// micro-batches' gradients, and an all-reduce over the replicas, at the end
// of the step, gives every replica the step's.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/RankPrograms.h"

#include "loom/Autodiff/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <set>

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;
namespace art = loom::artifact;

namespace {

art::TensorDesc describe(Type t, std::string name) {
  auto rt = cast<RankedTensorType>(t);
  art::TensorDesc d;
  d.name = std::move(name);
  llvm::raw_string_ostream os(d.dtype);
  rt.getElementType().print(os);
  d.shape.assign(rt.getShape().begin(), rt.getShape().end());
  d.bytes = art::dtypeBytes(d.dtype) * rt.getNumElements();
  return d;
}

bool isFloatTensor(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

FailureOr<StageSignature> readStage(ModuleOp module, const pipe::Stage &st,
                                    Location loc) {
  StageSignature sig;
  auto fwd = module.lookupSymbol<func::FuncOp>(st.forward);
  auto bwd = module.lookupSymbol<func::FuncOp>(st.backward);
  if (!fwd || !bwd)
    return emitError(loc) << "rank programs: stage @" << st.name
                          << " needs forward and backward functions "
                             "(written by --pipe-partition)";
  sig.forward = st.forward;
  sig.backward = st.backward;
  for (unsigned i = 0; i < fwd.getNumArguments(); ++i) {
    auto src = fwd.getArgAttrOfType<DenseI64ArrayAttr>(i, "loom.source");
    // A parameter of a step that updates them (weightsToArguments).
    if (auto param = fwd.getArgAttrOfType<StringAttr>(i, "tg.name");
        param && !src) {
      sig.forwardParams.push_back(
          describe(fwd.getArgumentTypes()[i], param.str()));
      continue;
    }
    if (!src || src.size() != 2)
      return fwd.emitError("rank programs: argument ")
             << i << " has no loom.source (written by --pipe-partition)";
    Type t = fwd.getArgumentTypes()[i];
    sig.inputs.push_back({describe(t, "in" + std::to_string(i)),
                          isFloatTensor(t), src[0], src[1], {}});
  }
  for (unsigned j = 0; j < fwd.getNumResults(); ++j) {
    Type t = fwd.getResultTypes()[j];
    StageValue v{describe(t, "out" + std::to_string(j)), isFloatTensor(t)};
    if (auto ret =
            fwd.getResultAttrOfType<DenseI64ArrayAttr>(j, "loom.returned"))
      v.returned.assign(ret.asArrayRef().begin(), ret.asArrayRef().end());
    sig.outputs.push_back(std::move(v));
  }
  unsigned floatOutputs = llvm::count_if(
      sig.outputs, [](const StageValue &v) { return v.isFloat; });
  unsigned floatInputs = llvm::count_if(
      sig.inputs, [](const StageValue &v) { return v.isFloat; });
  unsigned first = sig.inputs.size() + floatOutputs;
  for (unsigned i = first; i < bwd.getNumArguments(); ++i) {
    auto name = bwd.getArgAttrOfType<StringAttr>(i, "tg.name");
    if (!name)
      return bwd.emitError("rank programs: parameter argument ")
             << i << " has no tg.name";
    sig.params.push_back(describe(bwd.getArgumentTypes()[i], name.str()));
  }
  if (bwd.getNumResults() !=
      1 + floatInputs + floatOutputs + sig.params.size())
    return bwd.emitError("rank programs: expected the loss, the gradients "
                         "of the float inputs and outputs and of the "
                         "parameters as results (--pipe-partition's "
                         "backward function)");
  return sig;
}

/// The device of \p st that runs micro-batch \p mb.
int replicaOf(const pipe::Stage &st, int64_t mb) {
  return st.devices[mb % int64_t(st.devices.size())];
}

/// Device \p d's actions of the schedule that are its own: the schedule
/// lets every replica of a stage run every micro-batch (on its share of the
/// samples), and sends each to every replica of the stage at the other end;
/// here a micro-batch runs on one replica (replicaOf), which exchanges it
/// with the one replica of each peer stage that runs it.
std::vector<pipe::Action> ownActions(const pipe::Schedule &sched, int d) {
  std::vector<pipe::Action> out;
  for (const pipe::Action &a : sched.programs[d])
    if (replicaOf(sched.stages[a.stage], a.microBatch) == d &&
        (pipe::isCompute(a.kind) ||
         replicaOf(sched.stages[a.peerStage], a.microBatch) == a.peerDevice))
      out.push_back(a);
  return out;
}

/// Per stage, per replica (the stage's devices in order), the manifest
/// entries of its forward and backward functions.
using StageEntries = std::vector<std::vector<std::pair<int64_t, int64_t>>>;

/// Builds one rank's slots and channels by name, and its actions.
/// The name of stage \p s's slot \p what \p i ("s1.out0"), the same on
/// every rank.
std::string stageSlotName(int s, const char *what, int64_t i) {
  return "s" + std::to_string(s) + "." + what + std::to_string(i);
}

/// The partitioned function's results as world.results: each the value slot
/// of the stage output returned as it; none when one is no stage's output.
std::vector<art::TensorDesc> stepResults(const PartitionedStep &step) {
  std::vector<art::TensorDesc> out(step.cotangentInput.size());
  std::vector<bool> found(out.size(), false);
  for (size_t s = 0; s < step.stages.size(); ++s)
    for (size_t j = 0; j < step.stages[s].outputs.size(); ++j)
      for (int64_t p : step.stages[s].outputs[j].returned) {
        out[p] = step.stages[s].outputs[j].desc;
        out[p].name = stageSlotName(int(s), "out", int64_t(j));
        found[p] = true;
      }
  if (llvm::is_contained(found, false))
    return {};
  return out;
}

class RankBuilder {
public:
  RankBuilder(const PartitionedStep &step, const StageEntries &entries,
              art::Rank &rank, int64_t self)
      : step(step), entries(entries), rank(rank), self(self) {}

  int64_t slot(art::SlotKind kind, const std::string &name,
               const art::TensorDesc &desc, int64_t index = 0,
               const std::string &tensor = "") {
    auto [it, fresh] = slots.try_emplace(name, rank.slots.size());
    if (fresh) {
      art::Slot s;
      s.kind = kind;
      s.name = name;
      s.dtype = desc.dtype;
      s.shape = desc.shape;
      s.bytes = desc.bytes;
      s.index = index;
      s.tensor = tensor;
      rank.slots.push_back(std::move(s));
    }
    return it->second;
  }
  int64_t channel(const std::string &name, art::ChannelDirection dir,
                  int64_t peer, const art::TensorDesc &desc) {
    // A replicated stage's edge goes to several peers under one name.
    auto [it, fresh] =
        channels.try_emplace({name, peer}, rank.channels.size());
    if (fresh)
      rank.channels.push_back({name, dir, peer, desc.bytes, desc.dtype});
    return it->second;
  }
  void action(art::ActionRecord record) {
    flush();
    rank.actions.push_back({std::move(record)});
  }
  void accumulate(int64_t src, int64_t dst, int64_t mb) {
    action(art::AccumulateAction{src, dst, mb});
  }
  /// Ends the exchange being gathered, then the accumulations of what it
  /// received.
  void flush() {
    if (pending.messages.empty())
      return;
    rank.actions.push_back({std::move(pending)});
    pending = {};
    std::vector<art::AccumulateAction> sums = std::move(afterExchange);
    afterExchange.clear();
    for (const art::AccumulateAction &a : sums)
      rank.actions.push_back({a});
  }

  int64_t inputSlot(int s, unsigned i, int64_t mb);
  std::optional<std::string> allReduces();
  void updates();
  void forward(int s, int64_t mb);
  void backward(int s, int64_t mb, bool deferWeights);
  void weights(int s, int64_t mb);
  void comm(const pipe::Action &a);
  /// Adds schedule action \p a.
  void add(const pipe::Action &a) {
    using K = pipe::ActionKind;
    switch (a.kind) {
    case K::F:
      return forward(a.stage, a.microBatch);
    case K::B:
    case K::I:
      return backward(a.stage, a.microBatch, a.kind == K::I);
    case K::W:
      return weights(a.stage, a.microBatch);
    case K::SendF:
    case K::RecvF:
    case K::SendB:
    case K::RecvB:
      return comm(a);
    }
  }

private:
  std::string name(int s, const char *what, int64_t i) const {
    return stageSlotName(s, what, i);
  }
  int deviceOf(int s, int64_t mb) const {
    return replicaOf(step.schedule.stages[s], mb);
  }
  /// This rank's entries of stage \p s.
  const std::pair<int64_t, int64_t> &entriesOf(int s) const {
    const std::vector<int> &d = step.schedule.stages[s].devices;
    return entries[s][llvm::find(d, self) - d.begin()];
  }
  int64_t douts(int s, unsigned j) {
    return slot(art::SlotKind::Sum, name(s, "dout", j),
                step.stages[s].outputs[j].desc);
  }

  const PartitionedStep &step;
  const StageEntries &entries;
  art::Rank &rank;
  int64_t self;
  std::map<std::string, int64_t> slots;
  std::map<std::pair<std::string, int64_t>, int64_t> channels;
  art::ExchangeAction pending;
  std::vector<art::AccumulateAction> afterExchange;
};

int64_t RankBuilder::inputSlot(int s, unsigned i, int64_t mb) {
  const StageValue &v = step.stages[s].inputs[i];
  if (v.sourceStage < 0)
    return slot(art::SlotKind::Input, "input" + std::to_string(v.sourceIndex),
                step.stepInputs[v.sourceIndex], v.sourceIndex);
  if (deviceOf(v.sourceStage, mb) == self)
    return slot(art::SlotKind::Value, name(v.sourceStage, "out", v.sourceIndex),
                v.desc);
  return slot(art::SlotKind::Value, name(s, "in", i), v.desc);
}

void RankBuilder::forward(int s, int64_t mb) {
  const StageSignature &sig = step.stages[s];
  art::ComputeAction c;
  c.entry = entriesOf(s).first;
  c.microBatch = mb;
  for (unsigned i = 0; i < sig.inputs.size(); ++i)
    c.inputs.push_back(inputSlot(s, i, mb));
  for (const art::TensorDesc &p : sig.forwardParams)
    c.inputs.push_back(
        slot(art::SlotKind::Weight, "weight:" + p.name, p, 0, p.name));
  for (unsigned j = 0; j < sig.outputs.size(); ++j)
    c.outputs.push_back(
        slot(art::SlotKind::Value, name(s, "out", j), sig.outputs[j].desc));
  action(std::move(c));
  // The step's own cotangents of the outputs the function returns.
  for (unsigned j = 0; j < sig.outputs.size(); ++j)
    for (int64_t p : sig.outputs[j].returned) {
      int64_t k = step.cotangentInput[p];
      if (k < 0 || !sig.outputs[j].isFloat)
        continue;
      accumulate(slot(art::SlotKind::Input, "input" + std::to_string(k),
                      step.stepInputs[k], k),
                 douts(s, j), mb);
    }
}

void RankBuilder::backward(int s, int64_t mb, bool deferWeights) {
  const StageSignature &sig = step.stages[s];
  art::ComputeAction c;
  c.entry = entriesOf(s).second;
  c.microBatch = mb;
  for (unsigned i = 0; i < sig.inputs.size(); ++i)
    c.inputs.push_back(inputSlot(s, i, mb));
  for (unsigned j = 0; j < sig.outputs.size(); ++j)
    if (sig.outputs[j].isFloat)
      c.inputs.push_back(douts(s, j));
  for (const art::TensorDesc &p : sig.params)
    c.inputs.push_back(
        slot(art::SlotKind::Weight, "weight:" + p.name, p, 0, p.name));
  c.outputs.push_back(-1); // the loss
  std::vector<std::pair<int64_t, int64_t>> local; // din slot -> dout slot
  for (unsigned i = 0; i < sig.inputs.size(); ++i) {
    const StageValue &v = sig.inputs[i];
    if (!v.isFloat)
      continue;
    if (v.sourceStage < 0) {
      c.outputs.push_back(-1);
      continue;
    }
    int64_t din = slot(art::SlotKind::Value, name(s, "din", i), v.desc);
    c.outputs.push_back(din);
    if (deviceOf(v.sourceStage, mb) == self)
      local.push_back({din, douts(v.sourceStage, v.sourceIndex)});
  }
  for (const StageValue &v : sig.outputs)
    if (v.isFloat)
      c.outputs.push_back(-1);
  for (size_t k = 0; k < sig.params.size(); ++k)
    c.outputs.push_back(
        slot(art::SlotKind::Value, name(s, "dw", k), sig.params[k]));
  action(std::move(c));
  for (auto [din, dout] : local)
    accumulate(din, dout, mb);
  if (!deferWeights)
    weights(s, mb);
}

void RankBuilder::weights(int s, int64_t mb) {
  const StageSignature &sig = step.stages[s];
  for (size_t k = 0; k < sig.params.size(); ++k) {
    const art::TensorDesc &p = sig.params[k];
    accumulate(slot(art::SlotKind::Value, name(s, "dw", k), p),
               slot(art::SlotKind::Gradient, "grad:" + p.name, p, 0, p.name),
               mb);
  }
}

/// The all-reduces of the replicated stages' gradients, at the end of the
/// step, in stage order (one order on every rank, so the groups cannot
/// wait on each other in a cycle). A parameter of two stages on this rank
/// that are replicated over different groups has no one sum: its message.
std::optional<std::string> RankBuilder::allReduces() {
  flush();
  std::map<int64_t, std::vector<int64_t>> groupOf; // gradient slot -> ranks
  for (size_t s = 0; s < step.stages.size(); ++s) {
    const pipe::Stage &st = step.schedule.stages[s];
    if (st.devices.size() < 2 || !llvm::is_contained(st.devices, self))
      continue;
    art::AllReduceAction x;
    x.ranks.assign(st.devices.begin(), st.devices.end());
    llvm::sort(x.ranks);
    for (const art::TensorDesc &p : step.stages[s].params) {
      int64_t g = slot(art::SlotKind::Gradient, "grad:" + p.name, p, 0, p.name);
      auto [it, fresh] = groupOf.try_emplace(g, x.ranks);
      if (fresh)
        x.slots.push_back(g);
      else if (it->second != x.ranks)
        return "parameter '" + p.name + "' of stage @" + st.name +
               " on rank " + std::to_string(self) +
               " is also a parameter of a stage replicated on other ranks: "
               "its gradient has no one group to be summed over";
    }
    if (!x.slots.empty())
      rank.actions.push_back({std::move(x)});
  }
  return std::nullopt;
}

/// The optimizer step of the parameters of this rank's stages, after their
/// all-reduces (each parameter once; its state slots "state<k>:<name>").
void RankBuilder::updates() {
  const art::Optimizer &opt = step.optimizer;
  if (opt.kind == art::OptimizerKind::None)
    return;
  art::UpdateAction u;
  for (size_t s = 0; s < step.stages.size(); ++s) {
    if (!llvm::is_contained(step.schedule.stages[s].devices, self))
      continue;
    for (const art::TensorDesc &p : step.stages[s].params) {
      int64_t w = slot(art::SlotKind::Weight, "weight:" + p.name, p, 0, p.name);
      if (llvm::is_contained(u.params, w))
        continue;
      u.params.push_back(w);
      u.gradients.push_back(
          slot(art::SlotKind::Gradient, "grad:" + p.name, p, 0, p.name));
      for (int64_t k = 0; k < opt.stateTensors(); ++k)
        u.states.push_back(slot(art::SlotKind::State,
                                "state" + std::to_string(k) + ":" + p.name, p,
                                0, p.name));
    }
  }
  if (!u.params.empty())
    rank.actions.push_back({std::move(u)});
}

/// A send or receive: one message per tensor of the edge (every input of
/// the consumer that the producer's output feeds), gathered into the
/// exchange of the consecutive sends and receives.
void RankBuilder::comm(const pipe::Action &a) {
  using K = pipe::ActionKind;
  bool forwardDir = a.kind == K::SendF || a.kind == K::RecvF;
  bool sending = pipe::isSend(a.kind);
  // The producer and consumer stages of the edge.
  int producer = (a.kind == K::SendF || a.kind == K::RecvB) ? a.stage
                                                            : a.peerStage;
  int consumer = producer == a.stage ? a.peerStage : a.stage;
  const StageSignature &cs = step.stages[consumer];
  auto dir = sending ? art::ChannelDirection::Send : art::ChannelDirection::Recv;
  for (unsigned i = 0; i < cs.inputs.size(); ++i) {
    const StageValue &v = cs.inputs[i];
    if (v.sourceStage != producer || (!forwardDir && !v.isFloat))
      continue;
    std::string out = name(producer, "out", v.sourceIndex);
    std::string in = name(consumer, "in", i);
    std::string din = name(consumer, "din", i);
    std::string channelName = forwardDir ? out + "->" + in
                                         : din + "->" + name(producer, "dout",
                                                             v.sourceIndex);
    int64_t ch = channel(channelName, dir, a.peerDevice, v.desc);
    int64_t s;
    if (forwardDir)
      s = slot(art::SlotKind::Value, sending ? out : in, v.desc);
    else if (sending)
      s = slot(art::SlotKind::Value, din, v.desc);
    else {
      s = slot(art::SlotKind::Value, din + "@s" + std::to_string(producer),
               v.desc);
      afterExchange.push_back({s, douts(producer, v.sourceIndex),
                               a.microBatch});
    }
    pending.messages.push_back({ch, s, a.microBatch});
  }
}

/// Moves into rank \p rank's exchange at \p at the receives of its later
/// exchanges that \p take picks (asked in order), with the accumulations of
/// what they receive, which follow their exchange; an exchange left empty
/// goes. Data-safe: a received slot is written once per micro-batch and
/// read only after its receive.
void postReceivesAt(art::Rank &rank, size_t at,
                    llvm::function_ref<bool(const art::ExchangeMessage &)> take) {
  std::vector<art::Action> &actions = rank.actions;
  std::vector<art::ExchangeMessage> moved;
  std::vector<art::Action> sums;
  for (size_t next = at + 1; next < actions.size();) {
    auto *x = std::get_if<art::ExchangeAction>(&actions[next].record);
    if (!x) {
      ++next;
      continue;
    }
    size_t before = moved.size();
    llvm::erase_if(x->messages, [&](const art::ExchangeMessage &m) {
      bool pick = rank.channels[m.channel].direction ==
                      art::ChannelDirection::Recv &&
                  take(m);
      if (pick)
        moved.push_back(m);
      return pick;
    });
    auto received = [&](const art::Action &a) {
      const auto &sum = std::get<art::AccumulateAction>(a.record);
      return std::any_of(moved.begin() + before, moved.end(),
                         [&](const art::ExchangeMessage &m) {
                           return m.slot == sum.src &&
                                  m.microBatch == sum.microBatch;
                         });
    };
    size_t end = next + 1;
    while (end < actions.size() &&
           std::holds_alternative<art::AccumulateAction>(actions[end].record))
      ++end;
    std::copy_if(actions.begin() + next + 1, actions.begin() + end,
                 std::back_inserter(sums), received);
    actions.erase(std::remove_if(actions.begin() + next + 1,
                                 actions.begin() + end, received),
                  actions.begin() + end);
    if (x->messages.empty())
      actions.erase(actions.begin() + next);
    else
      ++next;
  }
  auto &into = std::get<art::ExchangeAction>(actions[at].record).messages;
  into.insert(into.end(), moved.begin(), moved.end());
  actions.insert(actions.begin() + at + 1, sums.begin(), sums.end());
}

/// Repairs a deadlock by posting receives earlier, where a rank of
/// \p blocked (waiting at an exchange) waits to send a message whose
/// receiver waits at an earlier exchange than the one that receives it: the
/// receiver posts its receives from that sender, up to the message, in the
/// exchange it waits at, which then sends and receives at once (as
/// Megatron's send_forward_recv_backward batches them; an NCCL group).
/// Each such pull matches messages the sender has already posted, so it
/// adds no wait; per pair of ranks the receives keep their order. A
/// deadlock in which no rank waits to send is left as it is (the schedule
/// itself cannot run). False when nothing was pulled.
bool pullReceives(art::World &world, const std::vector<int64_t> &blocked) {
  using Key = std::pair<std::string, int64_t>; // channel name, micro-batch
  int64_t numRanks = world.ranks.size();
  // Per receiver and sender: the messages the sender waits to send.
  std::map<std::pair<int64_t, int64_t>, std::set<Key>> waiting;
  for (int64_t r = 0; r < numRanks; ++r) {
    if (blocked[r] < 0)
      continue;
    const art::Rank &rank = world.ranks[r];
    for (const art::ExchangeMessage &m :
         std::get<art::ExchangeAction>(rank.actions[blocked[r]].record)
             .messages) {
      const art::Channel &c = rank.channels[m.channel];
      if (c.direction == art::ChannelDirection::Send && blocked[c.peer] >= 0)
        waiting[{c.peer, r}].insert({c.name, m.microBatch});
    }
  }
  bool pulled = false;
  for (const auto &[pair, keys] : waiting) {
    int64_t p = pair.first, r = pair.second;
    art::Rank &receiver = world.ranks[p];
    auto fromSender = [&](const art::ExchangeMessage &m) {
      const art::Channel &c = receiver.channels[m.channel];
      return c.direction == art::ChannelDirection::Recv && c.peer == r;
    };
    // How many of the receiver's later receives from r reach the last
    // message r waits to send.
    size_t count = 0, seen = 0;
    for (size_t a = blocked[p] + 1; a < receiver.actions.size(); ++a)
      if (const auto *x =
              std::get_if<art::ExchangeAction>(&receiver.actions[a].record))
        for (const art::ExchangeMessage &m : x->messages)
          if (fromSender(m) &&
              (++seen, keys.count({receiver.channels[m.channel].name,
                                   m.microBatch})))
            count = seen;
    if (count == 0)
      continue;
    size_t taken = 0;
    postReceivesAt(receiver, blocked[p], [&](const art::ExchangeMessage &m) {
      if (!fromSender(m) || taken == count)
        return false;
      ++taken;
      return true;
    });
    pulled = true;
  }
  return pulled;
}

/// Puts every rank's sends to each peer in the order the peer receives
/// them (NCCL matches per pair of ranks in order, without tags): a send
/// that comes before one the peer receives first is held back to the
/// exchange that posts that one. Data-safe: a sent slot is written once per
/// micro-batch, before its first send. A send the peer never receives is
/// left for checkWorldStep to name.
void sendInReceiveOrder(art::World &world) {
  using Key = std::pair<std::string, int64_t>; // channel name, micro-batch
  int64_t numRanks = world.ranks.size();
  for (int64_t r = 0; r < numRanks; ++r) {
    art::Rank &rank = world.ranks[r];
    // Per peer: the order it receives from r, and how far r has sent.
    std::vector<std::vector<Key>> order(numRanks);
    for (int64_t p = 0; p < numRanks; ++p)
      for (const art::Action &a : world.ranks[p].actions)
        if (const auto *x = std::get_if<art::ExchangeAction>(&a.record))
          for (const art::ExchangeMessage &m : x->messages) {
            const art::Channel &c = world.ranks[p].channels[m.channel];
            if (c.direction == art::ChannelDirection::Recv && c.peer == r)
              order[p].push_back({c.name, m.microBatch});
          }
    std::vector<size_t> next(numRanks, 0);
    std::vector<std::map<Key, art::ExchangeMessage>> held(numRanks);
    auto keyOf = [&](const art::ExchangeMessage &m) {
      return Key{rank.channels[m.channel].name, m.microBatch};
    };
    for (art::Action &a : rank.actions) {
      auto *x = std::get_if<art::ExchangeAction>(&a.record);
      if (!x)
        continue;
      std::vector<art::ExchangeMessage> posted;
      for (const art::ExchangeMessage &m : x->messages) {
        const art::Channel &c = rank.channels[m.channel];
        int64_t p = c.peer;
        const std::vector<Key> &want = order[p];
        if (c.direction == art::ChannelDirection::Recv ||
            llvm::find(want, keyOf(m)) == want.end()) {
          posted.push_back(m);
          continue;
        }
        if (want[next[p]] != keyOf(m)) {
          held[p].emplace(keyOf(m), m);
          continue;
        }
        posted.push_back(m);
        ++next[p];
        for (auto it = next[p] < want.size() ? held[p].find(want[next[p]])
                                             : held[p].end();
             it != held[p].end();
             it = next[p] < want.size() ? held[p].find(want[next[p]])
                                        : held[p].end()) {
          posted.push_back(it->second);
          held[p].erase(it);
          ++next[p];
        }
      }
      x->messages = std::move(posted);
    }
    llvm::erase_if(rank.actions, [](const art::Action &a) {
      const auto *x = std::get_if<art::ExchangeAction>(&a.record);
      return x && x->messages.empty();
    });
    // What no receive releases: posted last, for the check to name.
    art::ExchangeAction rest;
    for (const auto &byKey : held)
      for (const auto &[key, m] : byKey)
        rest.messages.push_back(m);
    if (!rest.messages.empty())
      rank.actions.push_back({std::move(rest)});
  }
}

/// The world of \p step with stage s's entries at \p entries[s] and entry
/// e on rank \p entryRank[e]: every rank's actions in its schedule order,
/// an exchange per run of consecutive sends and receives, each rank's sends
/// put in the order its peers receive them, then repaired where a send
/// would wait for a receive posted too late (pullReceives) until
/// artifact::checkWorldStep passes; or its failure, diagnosed.
FailureOr<art::World> rankWorld(const PartitionedStep &step,
                                const StageEntries &entries,
                                const std::vector<int64_t> &entryRank) {
  const pipe::Schedule &sched = step.schedule;
  int64_t numRanks = sched.devices.size();
  art::World world;
  world.microBatches = sched.microBatches;
  world.stepInputs = step.stepInputs;
  world.optimizer = step.optimizer;
  world.results = stepResults(step);
  world.ranks.resize(numRanks);
  for (int64_t r = 0; r < numRanks; ++r) {
    art::Rank &rank = world.ranks[r];
    rank.devices = {r};
    for (size_t e = 0; e < entryRank.size(); ++e)
      rank.programs.push_back(entryRank[e] == r ? std::vector<int64_t>{0}
                                                : std::vector<int64_t>{});
    RankBuilder builder(step, entries, rank, r);
    for (const pipe::Action &a : ownActions(sched, r))
      builder.add(a);
    if (std::optional<std::string> why = builder.allReduces())
      return emitError(step.loc)
             << "rank programs: @" << sched.name << ": " << *why;
    builder.updates();
  }
  sendInReceiveOrder(world);
  std::vector<int64_t> blocked;
  std::optional<std::string> why = art::checkWorldStep(world, &blocked);
  while (why && !blocked.empty() && pullReceives(world, blocked)) {
    blocked.clear();
    why = art::checkWorldStep(world, &blocked);
  }
  if (why)
    return emitError(step.loc)
           << "rank programs: @" << sched.name << ": " << *why;
  return world;
}

} // namespace

/// With an optimizer every rank updates its copy of its stages' parameters
/// from their gradients, so a parameter's gradient must be whole on each
/// rank that holds it: every stage that reads it on the same devices
/// (replicas all-reduce theirs), and f32.
LogicalResult checkUpdatable(const PartitionedStep &step) {
  std::map<std::string, int> firstStage;
  for (size_t s = 0; s < step.stages.size(); ++s)
    for (const art::TensorDesc &p : step.stages[s].params) {
      const pipe::Stage &st = step.schedule.stages[s];
      if (p.dtype != "f32")
        return emitError(step.loc)
               << "rank programs: parameter '" << p.name << "' of stage @"
               << st.name << " is " << p.dtype
               << ": the optimizer step updates f32 parameters";
      auto [it, fresh] = firstStage.try_emplace(p.name, int(s));
      const pipe::Stage &other = step.schedule.stages[it->second];
      if (!fresh && other.devices != st.devices)
        return emitError(step.loc)
               << "rank programs: parameter '" << p.name << "' is read by "
               << "stage @" << other.name << " and by stage @" << st.name
               << " on other devices: no rank holds its whole gradient to "
                  "update it with (partition with the two stages' "
                  "parameters apart, or without --optimizer)";
    }
  return success();
}

FailureOr<PartitionedStep>
pipeline::readPartitionedStep(ModuleOp module, pipe::ScheduleOp op,
                              const art::Optimizer &optimizer) {
  FailureOr<pipe::Schedule> sched = pipe::readSchedule(op);
  if (failed(sched))
    return failure();
  PartitionedStep step{std::move(*sched), {}, {}, {}, op.getLoc(), optimizer};
  // The forward functions read the parameters the optimizer updates as
  // arguments, not as the artifact's (load-time, possibly prepacked)
  // weights.
  if (optimizer.kind != art::OptimizerKind::None)
    for (const pipe::Stage &st : step.schedule.stages)
      if (auto fwd = module.lookupSymbol<func::FuncOp>(st.forward))
        tg::autodiff::weightsToArguments(fwd);
  StringRef name = step.schedule.name;
  if (!name.consume_back("_pipeline"))
    return op.emitError("rank programs: schedule @")
           << step.schedule.name
           << " does not name its function (<fn>_pipeline, as "
              "--pipe-partition writes it)";
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn)
    return op.emitError("rank programs: no function @") << name;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto n = fn.getArgAttrOfType<StringAttr>(i, "tg.name");
    step.stepInputs.push_back(describe(
        fn.getArgumentTypes()[i], n ? n.str() : "arg" + std::to_string(i)));
  }
  for (unsigned p = 0; p < fn.getNumResults(); ++p) {
    Type t = fn.getResultTypes()[p];
    step.cotangentInput.push_back(isFloatTensor(t) ? step.stepInputs.size()
                                                   : -1);
    if (isFloatTensor(t))
      step.stepInputs.push_back(
          describe(t, "result" + std::to_string(p) + ".cotangent"));
  }
  for (const pipe::Stage &st : step.schedule.stages) {
    FailureOr<StageSignature> sig = readStage(module, st, op.getLoc());
    if (failed(sig))
      return failure();
    step.stages.push_back(std::move(*sig));
  }
  if (optimizer.kind != art::OptimizerKind::None &&
      failed(checkUpdatable(step)))
    return failure();
  // Checked now, before any code is generated: the entries are the stage
  // functions of each replica in stage order.
  StageEntries entries;
  std::vector<int64_t> entryRank;
  for (const pipe::Stage &st : step.schedule.stages) {
    entries.emplace_back();
    for (int d : st.devices) {
      entries.back().push_back(
          {int64_t(entryRank.size()), int64_t(entryRank.size()) + 1});
      entryRank.insert(entryRank.end(), 2, d);
    }
  }
  if (failed(rankWorld(step, entries, entryRank)))
    return failure();
  return step;
}

LogicalResult pipeline::buildRankPrograms(const PartitionedStep &step,
                                          art::Manifest &m) {
  const pipe::Schedule &sched = step.schedule;
  auto fail = [&]() { return emitError(step.loc) << "rank programs: "; };
  auto entryOf = [&](const std::string &fn) -> int64_t {
    for (size_t e = 0; e < m.entries.size(); ++e)
      if (m.entries[e].name == fn)
        return int64_t(e);
    return -1;
  };
  // One device per rank (the compiled one, ordinal 0 of its process), each
  // stage's entries on its stage's device; a replica's are copies of the
  // first replica's, on its device (an entry runs one program).
  int64_t numRanks = sched.devices.size();
  art::Device device = m.devices.front();
  m.devices.assign(numRanks, device);
  StageEntries entries;
  std::vector<int64_t> entryRank(m.entries.size(), -1);
  for (size_t s = 0; s < sched.stages.size(); ++s) {
    int64_t f = entryOf(step.stages[s].forward);
    int64_t b = entryOf(step.stages[s].backward);
    if (f < 0 || b < 0)
      return fail() << "stage @" << sched.stages[s].name
                    << "'s functions were not compiled";
    const std::vector<int> &devices = sched.stages[s].devices;
    entries.push_back({{f, b}});
    entryRank[f] = entryRank[b] = devices.front();
    for (size_t k = 1; k < devices.size(); ++k) {
      entries.back().push_back({int64_t(m.entries.size()),
                                int64_t(m.entries.size()) + 1});
      for (int64_t e : {f, b}) {
        art::Entry entry = m.entries[e];
        entry.name += ".replica" + std::to_string(k);
        m.entries.push_back(std::move(entry));
        entryRank.push_back(devices[k]);
      }
    }
  }
  for (size_t e = 0; e < m.entries.size(); ++e) {
    if (entryRank[e] < 0)
      return fail() << "entry '" << m.entries[e].name
                    << "' is not a stage function of @" << sched.name;
    for (art::Program &p : m.entries[e].programs)
      p.device = entryRank[e];
    for (art::Buffer &b : m.entries[e].buffers)
      b.device = entryRank[e];
  }
  for (const StageSignature &sig : step.stages)
    for (const art::TensorDesc &p : sig.params)
      if (llvm::none_of(m.weights.tensors, [&](const art::WeightTensor &w) {
            return w.name == p.name;
          }))
        return fail() << "parameter '" << p.name
                      << "' is not among the artifact's weights";
  FailureOr<art::World> world = rankWorld(step, entries, entryRank);
  if (failed(world))
    return failure();
  m.world = std::move(*world);
  return success();
}
