//===- Schedule.cpp - pipe.schedule <-> plain C++ data --------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/Pipe/Schedule/Schedule.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace loom::pipe;

static constexpr llvm::StringLiteral kActionNames[] = {
    "F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B"};

llvm::StringRef loom::pipe::actionKindName(ActionKind kind) {
  auto i = static_cast<size_t>(kind);
  return i < std::size(kActionNames) ? kActionNames[i] : "<bad action>";
}

std::optional<ActionKind> loom::pipe::parseActionKind(llvm::StringRef name) {
  for (size_t i = 0; i < std::size(kActionNames); ++i)
    if (name == kActionNames[i])
      return static_cast<ActionKind>(i);
  return std::nullopt;
}

double Stage::seconds(ActionKind kind) const {
  bool split = inputTime != 0 || weightTime != 0;
  switch (kind) {
  case ActionKind::F:
    return forwardTime;
  case ActionKind::B:
    return backwardTime != 0 ? backwardTime : inputTime + weightTime;
  case ActionKind::I:
    return split ? inputTime : backwardTime / 2;
  case ActionKind::W:
    return split ? weightTime : backwardTime / 2;
  default:
    return 0;
  }
}

int Schedule::nodeOf(int device) const {
  int node = devices[device].node;
  if (node >= 0)
    return node;
  return links.devicesPerNode > 0 ? device / links.devicesPerNode : 0;
}

double Schedule::transferSeconds(int from, int to, int64_t bytes) const {
  if (from == to)
    return 0;
  if (nodeOf(from) == nodeOf(to))
    return links.intraLatency +
           (links.intraBandwidth > 0 ? bytes / links.intraBandwidth : 0);
  return links.interLatency +
         (links.interBandwidth > 0 ? bytes / links.interBandwidth : 0);
}

int Schedule::findEdge(int from, int to) const {
  for (size_t e = 0; e < edges.size(); ++e)
    if (edges[e].from == from && edges[e].to == to)
      return e;
  return -1;
}

int64_t Schedule::sendBytes(const Action &send) const {
  bool forward = send.kind == ActionKind::SendF;
  int from = forward ? send.stage : send.peerStage;
  int to = forward ? send.peerStage : send.stage;
  int e = findEdge(from, to);
  if (e < 0)
    return -1;
  int64_t pairs = static_cast<int64_t>(stages[from].devices.size()) *
                  static_cast<int64_t>(stages[to].devices.size());
  int64_t bytes = forward ? edges[e].bytes : edges[e].gradBytes;
  return pairs > 0 ? bytes / pairs : bytes;
}

std::vector<std::vector<int>> Schedule::inEdges() const {
  std::vector<std::vector<int>> in(stages.size());
  for (size_t e = 0; e < edges.size(); ++e)
    in[edges[e].to].push_back(e);
  return in;
}

std::vector<std::vector<int>> Schedule::outEdges() const {
  std::vector<std::vector<int>> out(stages.size());
  for (size_t e = 0; e < edges.size(); ++e)
    out[edges[e].from].push_back(e);
  return out;
}

std::string Schedule::describe(const Action &a) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto stageName = [&](int s) -> std::string {
    return s >= 0 && s < (int)stages.size() ? "@" + stages[s].name : "@?";
  };
  os << actionKindName(a.kind) << " " << stageName(a.stage) << " "
     << a.microBatch;
  if (!isCompute(a.kind)) {
    os << (isSend(a.kind) ? " to " : " from ") << stageName(a.peerStage)
       << " on "
       << (a.peerDevice >= 0 && a.peerDevice < (int)devices.size()
               ? "@" + devices[a.peerDevice].name
               : std::string("@?"));
  }
  return text;
}

std::string Schedule::describe(const FillAction &a) const {
  return (llvm::Twine(a.backward ? "B " : "F ") + llvm::Twine(a.step) + " " +
          llvm::Twine(a.microBatch) + " at " + llvm::Twine(a.at))
      .str();
}

int64_t Schedule::numFillActions() const {
  int64_t n = 0;
  for (const auto &f : fills)
    n += f.size();
  return n;
}

int64_t Schedule::activationDelta(const Action &a) const {
  switch (a.kind) {
  case ActionKind::F:
    return stages[a.stage].activationBytes;
  case ActionKind::B:
  case ActionKind::W:
    return -stages[a.stage].activationBytes;
  case ActionKind::I:
  case ActionKind::SendF:
  case ActionKind::RecvF:
  case ActionKind::SendB:
  case ActionKind::RecvB:
    return 0;
  }
  return 0;
}

int64_t Schedule::numActions() const {
  int64_t n = 0;
  for (const auto &p : programs)
    n += p.size();
  return n;
}

//===----------------------------------------------------------------------===//
// Reading (and checking the structure)
//===----------------------------------------------------------------------===//

namespace {

/// The steps of readSchedule: each reads one kind of op of the schedule's
/// body into the Schedule and checks it, with a diagnostic at the op.
class ScheduleReader {
public:
  explicit ScheduleReader(ScheduleOp op) : op(op), body(op.getBody().front()) {}

  FailureOr<Schedule> run() {
    if (failed(readHeader()) || failed(readDevicesAndStages()) ||
        failed(readEdges()) || failed(checkAcyclic()))
      return failure();
    s.programs.assign(s.devices.size(), {});
    hasProgram.assign(s.devices.size(), false);
    for (auto program : body.getOps<ProgramOp>())
      if (failed(readProgram(program)))
        return failure();
    if (failed(readFiller()))
      return failure();
    return std::move(s);
  }

private:
  ScheduleOp op;
  Block &body;
  Schedule s;
  llvm::StringMap<int> deviceIndex, stageIndex;
  llvm::DenseSet<std::pair<int, int>> seenEdges;
  std::vector<bool> hasProgram;

  /// The schedule's own attributes: micro-batches and links.
  LogicalResult readHeader() {
    s.name = op.getSymName().str();
    s.microBatches = op.getMicroBatches();
    s.microBatchSize = op.getMicroBatchSize();
    s.links.intraBandwidth = op.getIntraBandwidth().convertToDouble();
    s.links.intraLatency = op.getIntraLatency().convertToDouble();
    s.links.interBandwidth = op.getInterBandwidth().convertToDouble();
    s.links.interLatency = op.getInterLatency().convertToDouble();
    s.links.devicesPerNode = op.getDevicesPerNode();
    if (s.microBatchSize < 1)
      return op.emitOpError("micro_batch_size must be positive");
    if (s.links.devicesPerNode < 1)
      return op.emitOpError("devices_per_node must be positive");
    if (s.links.intraBandwidth <= 0 || s.links.interBandwidth <= 0 ||
        s.links.intraLatency < 0 || s.links.interLatency < 0)
      return op.emitOpError("link bandwidths must be positive and latencies "
                            "non-negative");
    return success();
  }

  /// pipe.device and pipe.stage ops (stages name their devices).
  LogicalResult readDevicesAndStages() {
    for (auto device : body.getOps<DeviceOp>()) {
      deviceIndex[device.getSymName()] = s.devices.size();
      Device d;
      d.name = device.getSymName().str();
      d.node = device.getNode() ? static_cast<int>(*device.getNode()) : -1;
      d.memory = device.getMemory();
      s.devices.push_back(std::move(d));
    }
    for (auto stage : body.getOps<StageOp>())
      stageIndex[stage.getSymName()] = s.stages.size(), s.stages.emplace_back();

    for (auto stage : body.getOps<StageOp>()) {
      Stage &st = s.stages[stageIndex[stage.getSymName()]];
      st.name = stage.getSymName().str();
      if (stage.getDevices().empty())
        return stage.emitOpError("is placed on no device");
      for (Attribute ref : stage.getDevices()) {
        StringRef name = cast<FlatSymbolRefAttr>(ref).getValue();
        auto it = deviceIndex.find(name);
        if (it == deviceIndex.end())
          return stage.emitOpError("is placed on @")
                 << name << ", which is not a pipe.device of the schedule";
        if (llvm::is_contained(st.devices, it->second))
          return stage.emitOpError("is placed twice on @") << name;
        st.devices.push_back(it->second);
      }
      st.forward = stage.getForward().str();
      st.backward = stage.getBackward().value_or("").str();
      st.inputGrad = stage.getInputGrad().value_or("").str();
      st.weightGrad = stage.getWeightGrad().value_or("").str();
      st.forwardTime = stage.getForwardTime().convertToDouble();
      st.backwardTime = stage.getBackwardTime().convertToDouble();
      st.inputTime = stage.getInputTime().convertToDouble();
      st.weightTime = stage.getWeightTime().convertToDouble();
      st.weightBytes = stage.getWeightBytes();
      st.optimizerBytes = stage.getOptimizerBytes();
      st.activationBytes = stage.getActivationBytes();
      if (st.forwardTime < 0 || st.backwardTime < 0 || st.inputTime < 0 ||
          st.weightTime < 0 || st.weightBytes < 0 || st.optimizerBytes < 0 ||
          st.activationBytes < 0)
        return stage.emitOpError("has a negative cost");
      if (st.inputGrad.empty() != st.weightGrad.empty())
        return stage.emitOpError("names one of input_grad and weight_grad "
                                 "without the other");
    }
    return success();
  }

  /// pipe.edge ops between known stages, each once.
  LogicalResult readEdges() {
    for (auto edge : body.getOps<EdgeOp>()) {
      auto from = stageIndex.find(edge.getFrom());
      auto to = stageIndex.find(edge.getTo());
      if (from == stageIndex.end() || to == stageIndex.end())
        return edge.emitOpError("names @")
               << (from == stageIndex.end() ? edge.getFrom() : edge.getTo())
               << ", which is not a pipe.stage of the schedule";
      if (from->second == to->second)
        return edge.emitOpError("connects stage @")
               << edge.getFrom() << " to itself";
      if (!seenEdges.insert({from->second, to->second}).second)
        return edge.emitOpError("repeats the edge @")
               << edge.getFrom() << " -> @" << edge.getTo();
      int64_t bytes = edge.getBytes();
      s.edges.push_back(
          {from->second, to->second, bytes,
           static_cast<int64_t>(edge.getGradBytes().value_or(bytes))});
    }
    return success();
  }

  /// The stage graph must be a DAG (Kahn).
  LogicalResult checkAcyclic() {
    std::vector<int> indegree(s.stages.size(), 0), ready;
    for (const Edge &e : s.edges)
      ++indegree[e.to];
    for (size_t i = 0; i < s.stages.size(); ++i)
      if (!indegree[i])
        ready.push_back(i);
    auto out = s.outEdges();
    size_t seen = 0;
    while (!ready.empty()) {
      int n = ready.back();
      ready.pop_back();
      ++seen;
      for (int e : out[n])
        if (!--indegree[s.edges[e].to])
          ready.push_back(s.edges[e].to);
    }
    if (seen != s.stages.size())
      for (size_t i = 0; i < s.stages.size(); ++i)
        if (indegree[i])
          return op.emitOpError("stage graph has a cycle through @")
                 << s.stages[i].name;
    return success();
  }

  /// The pipe.filler job (at most one) and the pipe.fill ops placing it:
  /// each names a device once, steps and micro-batches in range, positions
  /// within the device's program and not decreasing.
  LogicalResult readFiller() {
    for (auto filler : body.getOps<FillerOp>()) {
      if (s.filler)
        return filler.emitOpError("is the second pipe.filler of the schedule");
      FillJob job;
      job.name = filler.getSymName().str();
      job.function = filler.getFunction().value_or("").str();
      job.microBatches = filler.getMicroBatches();
      job.forwardTime = filler.getForwardTime().convertToDouble();
      job.backwardTime = filler.getBackwardTime().convertToDouble();
      job.staticBytes = filler.getStaticBytes();
      job.activationBytes = filler.getActivationBytes();
      if (job.forwardTime < 0 || job.backwardTime < 0 || job.staticBytes < 0 ||
          job.activationBytes < 0)
        return filler.emitOpError("has a negative cost");
      s.filler = job;
    }
    for (auto fill : body.getOps<FillOp>()) {
      if (!s.filler)
        return fill.emitOpError("places filler actions, but the schedule has "
                                "no pipe.filler");
      auto dev = deviceIndex.find(fill.getDevice());
      if (dev == deviceIndex.end())
        return fill.emitOpError("names @")
               << fill.getDevice()
               << ", which is not a pipe.device of the schedule";
      int d = dev->second;
      if (s.fills.empty())
        s.fills.assign(s.devices.size(), {});
      if (!s.fills[d].empty())
        return fill.emitOpError("is the second pipe.fill of device @")
               << fill.getDevice();
      ArrayRef<int32_t> values = fill.getActions();
      if (values.size() % 4)
        return fill.emitOpError("actions must hold four integers per action");
      int program = s.programs[d].size();
      for (size_t i = 0; i < values.size(); i += 4) {
        FillAction a{values[i] == 1, values[i + 1], values[i + 2],
                     values[i + 3]};
        auto bad = [&]() {
          return fill.emitOpError("device @")
                 << fill.getDevice() << ", filler action " << i / 4 << " ("
                 << s.describe(a) << ")";
        };
        if (values[i] != 0 && values[i] != 1)
          return bad() << ": unknown kind " << values[i] << " (0: F, 1: B)";
        if (a.step < 0)
          return bad() << ": negative trial step";
        if (a.microBatch < 0 || a.microBatch >= s.filler->microBatches)
          return bad() << ": micro-batch out of range [0, "
                       << s.filler->microBatches << ")";
        if (a.at < 0 || a.at > program)
          return bad() << ": position out of range [0, " << program << "]";
        if (!s.fills[d].empty() && a.at < s.fills[d].back().at)
          return bad() << ": position before the previous action's "
                       << s.fills[d].back().at;
        s.fills[d].push_back(a);
      }
    }
    return success();
  }

  /// One device's pipe.program: its actions, each naming a stage placed on
  /// the device and, for transfers, a peer across an edge.
  LogicalResult readProgram(ProgramOp program) {
    auto dev = deviceIndex.find(program.getDevice());
    if (dev == deviceIndex.end())
      return program.emitOpError("names @")
             << program.getDevice()
             << ", which is not a pipe.device of the schedule";
    int d = dev->second;
    if (hasProgram[d])
      return program.emitOpError("is the second program of device @")
             << program.getDevice();
    hasProgram[d] = true;
    // Resolve the local name table once.
    ArrayAttr refs = program.getRefs();
    std::vector<int> refStage(refs.size(), -1), refDevice(refs.size(), -1);
    for (size_t i = 0; i < refs.size(); ++i) {
      StringRef name = cast<FlatSymbolRefAttr>(refs[i]).getValue();
      if (auto it = stageIndex.find(name); it != stageIndex.end())
        refStage[i] = it->second;
      if (auto it = deviceIndex.find(name); it != deviceIndex.end())
        refDevice[i] = it->second;
    }
    ArrayRef<int32_t> values = program.getActions();
    if (values.size() % 5)
      return program.emitOpError("actions must hold five integers per action");
    auto &actions = s.programs[d];
    actions.reserve(values.size() / 5);
    for (size_t i = 0; i < values.size(); i += 5) {
      size_t index = i / 5;
      auto bad = [&]() {
        return program.emitOpError("device @")
               << program.getDevice() << ", action " << index;
      };
      auto ref = [&](int32_t r, const std::vector<int> &table) {
        return r >= 0 && r < (int32_t)table.size() ? table[r] : -1;
      };
      if (values[i] < 0 || values[i] >= kNumActionKinds)
        return bad() << ": unknown action kind " << values[i];
      Action a;
      a.kind = static_cast<ActionKind>(values[i]);
      a.stage = ref(values[i + 1], refStage);
      a.microBatch = values[i + 2];
      if (a.stage < 0)
        return bad() << ": " << actionKindName(a.kind)
                     << " names no pipe.stage of the schedule";
      if (!llvm::is_contained(s.stages[a.stage].devices, d))
        return bad() << " (" << actionKindName(a.kind) << " @"
                     << s.stages[a.stage].name << " " << a.microBatch
                     << "): stage @" << s.stages[a.stage].name
                     << " is not placed on @" << s.devices[d].name;
      if (a.microBatch < 0 || a.microBatch >= s.microBatches)
        return bad() << " (" << s.describe(a) << "): micro-batch "
                     << a.microBatch << " is out of range [0, "
                     << s.microBatches << ")";
      if (!isCompute(a.kind)) {
        a.peerStage = ref(values[i + 3], refStage);
        a.peerDevice = ref(values[i + 4], refDevice);
        if (a.peerStage < 0 || a.peerDevice < 0)
          return bad() << ": " << actionKindName(a.kind)
                       << " names no peer pipe.stage or no peer pipe.device";
        if (a.peerDevice == d)
          return bad() << " (" << s.describe(a)
                       << "): a device does not send to itself";
        if (!llvm::is_contained(s.stages[a.peerStage].devices, a.peerDevice))
          return bad() << " (" << s.describe(a) << "): stage @"
                       << s.stages[a.peerStage].name << " is not placed on @"
                       << s.devices[a.peerDevice].name;
        bool downstream =
            a.kind == ActionKind::SendF || a.kind == ActionKind::RecvB;
        int from = downstream ? a.stage : a.peerStage;
        int to = downstream ? a.peerStage : a.stage;
        if (!seenEdges.contains({from, to}))
          return bad() << " (" << s.describe(a) << "): there is no edge @"
                       << s.stages[from].name << " -> @" << s.stages[to].name;
      } else if (values[i + 3] != -1 || values[i + 4] != -1) {
        return bad() << ": " << actionKindName(a.kind) << " takes no peer";
      }
      actions.push_back(a);
    }
    return success();
  }
};

} // namespace

FailureOr<Schedule> loom::pipe::readSchedule(ScheduleOp op) {
  return ScheduleReader(op).run();
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

static void buildProgram(OpBuilder &b, Location loc, const Schedule &s,
                         int device) {
  llvm::StringMap<int32_t> index;
  SmallVector<Attribute> refs;
  auto ref = [&](const std::string &name) {
    auto [it, inserted] = index.try_emplace(name, refs.size());
    if (inserted)
      refs.push_back(FlatSymbolRefAttr::get(b.getContext(), name));
    return it->second;
  };
  SmallVector<int32_t> values;
  values.reserve(s.programs[device].size() * 5);
  for (const Action &a : s.programs[device]) {
    bool comm = !isCompute(a.kind);
    values.append({static_cast<int32_t>(a.kind), ref(s.stages[a.stage].name),
                   a.microBatch, comm ? ref(s.stages[a.peerStage].name) : -1,
                   comm ? ref(s.devices[a.peerDevice].name) : -1});
  }
  ProgramOp::create(
      b, loc, FlatSymbolRefAttr::get(b.getContext(), s.devices[device].name),
      b.getArrayAttr(refs), b.getDenseI32ArrayAttr(values));
}

/// The pipe.filler op and a pipe.fill op per device that runs filler work.
static void buildFiller(OpBuilder &b, Location loc, const Schedule &s) {
  if (!s.filler)
    return;
  const FillJob &job = *s.filler;
  FillerOp::create(
      b, loc, job.name,
      job.function.empty() ? StringAttr() : b.getStringAttr(job.function),
      job.microBatches, llvm::APFloat(job.forwardTime),
      llvm::APFloat(job.backwardTime), job.staticBytes, job.activationBytes);
  for (size_t d = 0; d < s.fills.size(); ++d) {
    if (s.fills[d].empty())
      continue;
    SmallVector<int32_t> values;
    for (const FillAction &a : s.fills[d])
      values.append({a.backward ? 1 : 0, a.step, a.microBatch, a.at});
    FillOp::create(b, loc,
                   FlatSymbolRefAttr::get(b.getContext(), s.devices[d].name),
                   b.getDenseI32ArrayAttr(values));
  }
}

ScheduleOp loom::pipe::writeSchedule(OpBuilder &builder, Location loc,
                                     const Schedule &s) {
  auto op = ScheduleOp::create(builder, loc, s.name, s.microBatches);
  MLIRContext *ctx = builder.getContext();
  if (s.microBatchSize != 1)
    op.setMicroBatchSize(s.microBatchSize);
  Links defaults;
  if (s.links.intraBandwidth != defaults.intraBandwidth)
    op.setIntraBandwidth(llvm::APFloat(s.links.intraBandwidth));
  if (s.links.intraLatency != defaults.intraLatency)
    op.setIntraLatency(llvm::APFloat(s.links.intraLatency));
  if (s.links.interBandwidth != defaults.interBandwidth)
    op.setInterBandwidth(llvm::APFloat(s.links.interBandwidth));
  if (s.links.interLatency != defaults.interLatency)
    op.setInterLatency(llvm::APFloat(s.links.interLatency));
  if (s.links.devicesPerNode != defaults.devicesPerNode)
    op.setDevicesPerNode(s.links.devicesPerNode);

  OpBuilder b = OpBuilder::atBlockEnd(&op.getBody().front());
  for (const Device &d : s.devices) {
    auto device =
        DeviceOp::create(b, loc, b.getStringAttr(d.name), IntegerAttr(),
                         b.getI64IntegerAttr(d.memory));
    if (d.node >= 0)
      device.setNode(d.node);
  }
  auto sym = [&](const std::string &name) -> FlatSymbolRefAttr {
    return name.empty() ? FlatSymbolRefAttr()
                        : FlatSymbolRefAttr::get(ctx, name);
  };
  for (const Stage &st : s.stages) {
    SmallVector<Attribute> devices;
    for (int d : st.devices)
      devices.push_back(sym(s.devices[d].name));
    StageOp::create(b, loc, st.name, b.getArrayAttr(devices), st.forward,
                    sym(st.backward), sym(st.inputGrad), sym(st.weightGrad),
                    llvm::APFloat(st.forwardTime),
                    llvm::APFloat(st.backwardTime), llvm::APFloat(st.inputTime),
                    llvm::APFloat(st.weightTime), st.weightBytes,
                    st.optimizerBytes, st.activationBytes);
  }
  for (const Edge &e : s.edges) {
    auto edge = EdgeOp::create(b, loc, sym(s.stages[e.from].name),
                               sym(s.stages[e.to].name),
                               b.getI64IntegerAttr(e.bytes), IntegerAttr());
    if (e.gradBytes != e.bytes)
      edge.setGradBytes(e.gradBytes);
  }
  for (size_t d = 0; d < s.devices.size(); ++d)
    buildProgram(b, loc, s, d);
  buildFiller(b, loc, s);
  return op;
}

void loom::pipe::writePrograms(ScheduleOp op, const Schedule &s) {
  Block &body = op.getBody().front();
  for (Operation &child : llvm::make_early_inc_range(body))
    if (isa<ProgramOp, FillerOp, FillOp>(child))
      child.erase();
  OpBuilder b = OpBuilder::atBlockEnd(&body);
  for (size_t d = 0; d < s.devices.size(); ++d)
    buildProgram(b, op.getLoc(), s, d);
  buildFiller(b, op.getLoc(), s);
}
