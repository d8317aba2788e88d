//===- Executor.cpp - Running a pipe.schedule on the interpreter ----------===//
//
// Part of Loom. See include/loom/Pipeline/Executor.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/Executor.h"

#include "loom/Autodiff/Autodiff.h"
#include "loom/Autodiff/GradBuilder.h"
#include "loom/Dialect/Pipe/Schedule/Schedule.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include <map>
#include <memory>
#include <random>
#include <set>

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;
using interp::F64Domain;
using Tensor = interp::Tensor<F64Domain>;

namespace {

bool isFloat(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && isa<FloatType>(rt.getElementType());
}

std::vector<int64_t> shapeOf(Type t) {
  auto rt = cast<RankedTensorType>(t);
  return std::vector<int64_t>(rt.getShape().begin(), rt.getShape().end());
}

/// The cotangent of every result of the partitioned function for one
/// micro-batch: 1 for a scalar float loss, fixed random values in [-1, 1)
/// for other float results, nothing for integer ones.
std::vector<std::optional<Tensor>> cotangents(func::FuncOp fn, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<std::optional<Tensor>> out;
  bool scalarLoss = fn.getNumResults() == 1 &&
                    cast<RankedTensorType>(fn.getResultTypes()[0]).getRank() ==
                        0 &&
                    isFloat(fn.getResultTypes()[0]);
  for (Type t : fn.getResultTypes()) {
    if (!isFloat(t)) {
      out.push_back(std::nullopt);
      continue;
    }
    Tensor c(shapeOf(t));
    for (double &v : c.data)
      v = scalarLoss ? 1.0 : uniform(rng);
    out.push_back(std::move(c));
  }
  return out;
}

void addInto(Tensor &acc, const Tensor &x) {
  for (size_t i = 0; i < acc.data.size(); ++i)
    acc.data[i] += x.data[i];
}

/// In `copy`: @__loom_probe(args..., c_i for float results...) returning
/// sum_i sum(result_i * c_i), the scalar whose weight gradient the
/// pipeline must reproduce.
func::FuncOp buildProbe(ModuleOp copy, func::FuncOp fn) {
  OpBuilder b(copy.getContext());
  b.setInsertionPointToEnd(copy.getBody());
  SmallVector<Type> types(fn.getArgumentTypes());
  for (Type t : fn.getResultTypes())
    if (isFloat(t))
      types.push_back(t);
  auto f64 = RankedTensorType::get({}, b.getF64Type());
  auto probe = func::FuncOp::create(b, fn.getLoc(), "__loom_probe",
                                    b.getFunctionType(types, {f64}));
  SymbolTable(copy).insert(probe);
  Block *block = probe.addEntryBlock();
  b.setInsertionPointToStart(block);
  IRMapping map;
  for (auto [i, a] : llvm::enumerate(fn.getArguments()))
    map.map(a, block->getArgument(i));
  for (Operation &op : fn.getBody().front().without_terminator())
    b.clone(op, map);
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  SmallVector<Value> values;
  for (Value r : ret.getOperands())
    if (isFloat(r.getType()))
      values.push_back(map.lookup(r));
  Value total = tg::autodiff::GradBuilder(b, fn.getLoc())
                    .weightedSum(values,
                                 block->getArguments().drop_front(
                                     fn.getNumArguments()),
                                 f64);
  func::ReturnOp::create(b, fn.getLoc(), total);
  return probe;
}

/// The module's value of every named weight (types from `types`).
FailureOr<std::map<std::string, Tensor>>
readWeights(ModuleOp copy, interp::Interpreter<F64Domain> &interpreter,
            const std::map<std::string, Type> &types, Location loc) {
  std::map<std::string, Tensor> out;
  if (types.empty())
    return out;
  OpBuilder b(copy.getContext());
  b.setInsertionPointToEnd(copy.getBody());
  SmallVector<Type> resultTypes;
  for (auto &[name, t] : types)
    resultTypes.push_back(t);
  auto fn = func::FuncOp::create(b, loc, "__loom_weights",
                                 b.getFunctionType({}, resultTypes));
  SymbolTable(copy).insert(fn);
  b.setInsertionPointToStart(fn.addEntryBlock());
  SmallVector<Value> values;
  for (auto &[name, t] : types)
    values.push_back(tg::WeightOp::create(b, loc, t, b.getStringAttr(name)));
  func::ReturnOp::create(b, loc, values);
  auto result = interpreter.run(fn, {});
  if (failed(result))
    return failure();
  size_t i = 0;
  for (auto &[name, t] : types)
    out.emplace(name, std::move((*result)[i++]));
  return out;
}

/// A stage's functions and how its values flow.
struct StageIO {
  func::FuncOp forward, backward;
  std::vector<std::pair<int64_t, int64_t>> sources; // per forward input
  std::vector<std::vector<int64_t>> returned;       // per forward output
  std::vector<int> floatOutputs;                    // output indices
  std::vector<std::string> params;                  // backward's parameters
};

FailureOr<StageIO> stageIO(ModuleOp copy, const pipe::Stage &stage,
                           Location loc) {
  StageIO io;
  io.forward = copy.lookupSymbol<func::FuncOp>(stage.forward);
  io.backward = copy.lookupSymbol<func::FuncOp>(stage.backward);
  if (!io.forward || !io.backward)
    return emitError(loc) << "pipe executor: stage @" << stage.name
                          << " needs forward and backward functions "
                             "(written by --pipe-partition)";
  for (unsigned i = 0; i < io.forward.getNumArguments(); ++i) {
    auto src = io.forward.getArgAttrOfType<DenseI64ArrayAttr>(i, "loom.source");
    if (!src || src.size() != 2)
      return io.forward.emitError("pipe executor: argument ")
             << i << " has no loom.source (written by --pipe-partition)";
    io.sources.push_back({src[0], src[1]});
  }
  for (unsigned i = 0; i < io.forward.getNumResults(); ++i) {
    auto ret =
        io.forward.getResultAttrOfType<DenseI64ArrayAttr>(i, "loom.returned");
    io.returned.emplace_back();
    if (ret)
      io.returned.back().assign(ret.asArrayRef().begin(),
                                ret.asArrayRef().end());
    if (isFloat(io.forward.getResultTypes()[i]))
      io.floatOutputs.push_back(i);
  }
  unsigned firstParam = io.forward.getNumArguments() + io.floatOutputs.size();
  for (unsigned i = firstParam; i < io.backward.getNumArguments(); ++i) {
    auto name = io.backward.getArgAttrOfType<StringAttr>(i, "tg.name");
    if (!name)
      return io.backward.emitError("pipe executor: parameter argument ")
             << i << " has no tg.name";
    io.params.push_back(name.str());
  }
  return io;
}

/// One execution: the state of every stage and micro-batch, and the steps
/// (reference gradients, F, B/I, W, the device walk) as methods.
class Execution {
public:
  Execution(ModuleOp copy, pipe::Schedule sched, func::FuncOp fn,
            Location loc, const ExecutorOptions &options)
      : copy(copy), sched(std::move(sched)), fn(fn), loc(loc),
        options(options), m(this->sched.microBatches) {}

  FailureOr<ExecutionResult> run();

private:
  LogicalResult prepare();
  LogicalResult referenceGradients();
  LogicalResult forward(int s, int64_t mb);
  LogicalResult backward(int s, int64_t mb, bool deferWeights);
  LogicalResult weights(int s, int64_t mb);
  LogicalResult walkDevices(ExecutionResult &result);
  void compare(ExecutionResult &result) const;

  static void accumulate(std::map<std::string, Tensor> &into,
                         const std::string &name, const Tensor &g) {
    auto [it, fresh] = into.try_emplace(name, g);
    if (!fresh)
      addInto(it->second, g);
  }
  InFlightDiagnostic stageError(int s, int64_t mb, StringRef what) {
    return emitError(loc) << "pipe executor: " << what << " of stage @"
                          << sched.stages[s].name << " on micro-batch " << mb;
  }

  ModuleOp copy;
  pipe::Schedule sched;
  func::FuncOp fn, reference;
  Location loc;
  const ExecutorOptions &options;
  int64_t m;
  std::unique_ptr<interp::Interpreter<F64Domain>> interpreter;
  std::vector<StageIO> stages;
  std::vector<std::string> refParams;
  std::map<std::string, Tensor> weightValues, expected, got;
  std::vector<std::vector<Tensor>> inputs;
  std::vector<std::vector<std::optional<Tensor>>> cots;
  // Per stage and micro-batch: the forward's inputs and outputs, whether F
  // and B ran, the summed gradients of its outputs (by output index).
  std::vector<std::vector<std::vector<Tensor>>> fwdIn, fwdOut;
  std::vector<std::vector<bool>> fDone, bDone;
  std::vector<std::vector<std::map<int64_t, Tensor>>> outGrad;
  // Parameter gradients of an I awaiting its W.
  std::map<std::pair<int, int64_t>, std::vector<Tensor>> pendingW;
  std::set<std::tuple<int, int, int64_t>> sentF, sentB, recvB;
  std::vector<std::vector<int>> consumers;
};

/// The reference function, the stage functions, the weights and every
/// micro-batch's inputs and cotangents.
LogicalResult Execution::prepare() {
  func::FuncOp probe = buildProbe(copy, fn);
  tg::autodiff::Options ao;
  ao.optimizer = tg::autodiff::Optimizer::None;
  ao.batchnormTraining = false;
  ao.name = "__loom_reference";
  FailureOr<func::FuncOp> ref = tg::autodiff::buildTrainStep(probe, ao);
  if (failed(ref))
    return failure();
  reference = *ref;
  std::map<std::string, Type> weightTypes;
  for (unsigned i = probe.getNumArguments(); i < reference.getNumArguments();
       ++i) {
    auto n = reference.getArgAttrOfType<StringAttr>(i, "tg.name");
    refParams.push_back(n.str());
    weightTypes[n.str()] = reference.getArgumentTypes()[i];
  }
  for (const pipe::Stage &st : sched.stages) {
    FailureOr<StageIO> io = stageIO(copy, st, loc);
    if (failed(io))
      return failure();
    for (unsigned i = 0; i < io->params.size(); ++i)
      weightTypes[io->params[i]] =
          io->backward.getArgumentTypes()[io->forward.getNumArguments() +
                                          io->floatOutputs.size() + i];
    stages.push_back(std::move(*io));
  }
  interp::InterpreterOptions iopts;
  iopts.weightsFile = options.weightsFile;
  interpreter =
      std::make_unique<interp::Interpreter<F64Domain>>(copy, iopts);
  auto w = readWeights(copy, *interpreter, weightTypes, loc);
  if (failed(w))
    return failure();
  weightValues = std::move(*w);
  inputs.resize(m);
  cots.resize(m);
  for (int64_t mb = 0; mb < m; ++mb) {
    for (BlockArgument a : fn.getArguments())
      inputs[mb].push_back(interp::randomArgument<F64Domain>(
          a, options.seed * 1000003 + uint64_t(mb)));
    cots[mb] = cotangents(fn, options.seed * 7919 + uint64_t(mb));
  }
  size_t n = stages.size();
  fwdIn.assign(n, std::vector<std::vector<Tensor>>(m));
  fwdOut = fwdIn;
  fDone.assign(n, std::vector<bool>(m));
  bDone = fDone;
  outGrad.assign(n, std::vector<std::map<int64_t, Tensor>>(m));
  consumers.assign(n, {});
  for (const pipe::Edge &e : sched.edges)
    consumers[e.from].push_back(e.to);
  return success();
}

/// The whole function's weight gradient, summed over the micro-batches.
LogicalResult Execution::referenceGradients() {
  for (int64_t mb = 0; mb < m; ++mb) {
    std::vector<Tensor> args = inputs[mb];
    for (auto &c : cots[mb])
      if (c)
        args.push_back(*c);
    for (const std::string &p : refParams)
      args.push_back(weightValues.at(p));
    auto out = interpreter->run(reference, args);
    if (failed(out))
      return failure();
    for (auto [i, p] : llvm::enumerate(refParams))
      accumulate(expected, p, (*out)[1 + i]);
  }
  return success();
}

LogicalResult Execution::forward(int s, int64_t mb) {
  StageIO &io = stages[s];
  std::vector<Tensor> args;
  for (auto [src, idx] : io.sources) {
    if (src < 0) {
      args.push_back(inputs[mb][idx]);
      continue;
    }
    if (!fDone[src][mb])
      return stageError(s, mb, "F")
             << " runs before its input from @" << sched.stages[src].name
             << " exists";
    args.push_back(fwdOut[src][mb][idx]);
  }
  auto out = interpreter->run(io.forward, args);
  if (failed(out))
    return failure();
  fwdIn[s][mb] = std::move(args);
  fwdOut[s][mb] = std::move(*out);
  fDone[s][mb] = true;
  // The function's own cotangents of the outputs it returns.
  for (auto [i, positions] : llvm::enumerate(io.returned))
    for (int64_t p : positions)
      if (cots[mb][p]) {
        auto [it, fresh] = outGrad[s][mb].try_emplace(i, *cots[mb][p]);
        if (!fresh)
          addInto(it->second, *cots[mb][p]);
      }
  return success();
}

/// B (or I): the stage's VJP; its input gradients go to the producers, its
/// parameter gradients to the step (or, for I, to the W that follows).
LogicalResult Execution::backward(int s, int64_t mb, bool deferWeights) {
  StageIO &io = stages[s];
  if (!fDone[s][mb])
    return stageError(s, mb, "backward") << " before its forward";
  for (int t : consumers[s]) {
    bool local =
        sched.stages[t].devices.front() == sched.stages[s].devices.front();
    if (!bDone[t][mb] || (!local && !recvB.count({t, s, mb})))
      return stageError(s, mb, "backward")
             << " before the gradient from @" << sched.stages[t].name
             << " arrived";
  }
  std::vector<Tensor> args = fwdIn[s][mb];
  for (int i : io.floatOutputs) {
    auto it = outGrad[s][mb].find(i);
    args.push_back(it != outGrad[s][mb].end()
                       ? it->second
                       : Tensor(shapeOf(io.forward.getResultTypes()[i])));
  }
  for (const std::string &p : io.params)
    args.push_back(weightValues.at(p));
  auto out = interpreter->run(io.backward, args);
  if (failed(out))
    return failure();
  // Results: probe, float inputs' gradients, the output gradients'
  // gradients (skipped), parameters' gradients.
  size_t k = 1;
  for (auto [i, src] : llvm::enumerate(io.sources)) {
    if (!isFloat(io.forward.getArgumentTypes()[i]))
      continue;
    const Tensor &g = (*out)[k++];
    if (src.first >= 0) {
      auto [it, fresh] = outGrad[src.first][mb].try_emplace(src.second, g);
      if (!fresh)
        addInto(it->second, g);
    }
  }
  k += io.floatOutputs.size();
  std::vector<Tensor> paramGrads(out->begin() + k, out->end());
  if (deferWeights)
    pendingW[{s, mb}] = std::move(paramGrads);
  else
    for (auto [i, p] : llvm::enumerate(io.params))
      accumulate(got, p, paramGrads[i]);
  bDone[s][mb] = true;
  return success();
}

LogicalResult Execution::weights(int s, int64_t mb) {
  auto it = pendingW.find({s, mb});
  if (it == pendingW.end())
    return stageError(s, mb, "W") << " without its I";
  for (auto [i, p] : llvm::enumerate(stages[s].params))
    accumulate(got, p, it->second[i]);
  pendingW.erase(it);
  return success();
}

/// Every device walks its program in order; a RECV whose message was not
/// sent yet makes it wait while the others move on. Replicas exchange the
/// same messages and the first one computes.
LogicalResult Execution::walkDevices(ExecutionResult &result) {
  size_t devices = sched.programs.size();
  std::vector<size_t> pc(devices, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t d = 0; d < devices; ++d) {
      const std::vector<pipe::Action> &program = sched.programs[d];
      for (; pc[d] < program.size(); ++pc[d], ++result.actions) {
        const pipe::Action &a = program[pc[d]];
        bool computes = sched.stages[a.stage].devices.front() == int(d);
        using K = pipe::ActionKind;
        LogicalResult done = success();
        if (a.kind == K::F && computes)
          done = forward(a.stage, a.microBatch);
        else if ((a.kind == K::B || a.kind == K::I) && computes)
          done = backward(a.stage, a.microBatch, a.kind == K::I);
        else if (a.kind == K::W && computes)
          done = weights(a.stage, a.microBatch);
        else if (a.kind == K::SendF)
          sentF.insert({a.stage, a.peerStage, a.microBatch});
        else if (a.kind == K::SendB)
          sentB.insert({a.stage, a.peerStage, a.microBatch});
        else if (a.kind == K::RecvF &&
                 !sentF.count({a.peerStage, a.stage, a.microBatch}))
          break; // waits for the message
        else if (a.kind == K::RecvB) {
          if (!sentB.count({a.peerStage, a.stage, a.microBatch}))
            break;
          recvB.insert({a.peerStage, a.stage, a.microBatch});
        }
        if (failed(done))
          return failure();
        progress = true;
      }
    }
  }
  for (size_t d = 0; d < devices; ++d)
    if (pc[d] < sched.programs[d].size())
      return emitError(loc) << "pipe executor: deadlock: device @"
                            << sched.devices[d].name << " waits at "
                            << sched.describe(sched.programs[d][pc[d]]);
  return success();
}

void Execution::compare(ExecutionResult &result) const {
  for (auto &[p, want] : expected) {
    auto it = got.find(p);
    double err = 0;
    for (size_t i = 0; i < want.data.size(); ++i) {
      double have = it == got.end() ? 0.0 : it->second.data[i];
      err = std::max(err, std::abs(have - want.data[i]) /
                              std::max(1.0, std::abs(want.data[i])));
    }
    result.errors.push_back({p, err});
    result.worst = std::max(result.worst, err);
  }
}

FailureOr<ExecutionResult> Execution::run() {
  if (failed(prepare()) || failed(referenceGradients()))
    return failure();
  ExecutionResult result;
  result.function = fn.getSymName().str();
  result.microBatches = m;
  if (failed(walkDevices(result)))
    return failure();
  compare(result);
  if (options.keepTensors) {
    for (int64_t mb = 0; mb < m; ++mb) {
      result.inputs.emplace_back();
      for (const Tensor &t : inputs[mb])
        result.inputs.back().push_back(t.data);
      for (const std::optional<Tensor> &c : cots[mb])
        if (c)
          result.inputs.back().push_back(c->data);
    }
    for (auto &[name, t] : expected)
      result.reference[name] = t.data;
  }
  return result;
}

} // namespace

FailureOr<ExecutionResult>
pipeline::executeSchedule(ModuleOp module, pipe::ScheduleOp op,
                          const ExecutorOptions &options) {
  FailureOr<pipe::Schedule> sched = pipe::readSchedule(op);
  if (failed(sched))
    return failure();
  Location loc = op.getLoc();
  StringRef name = sched->name;
  if (!name.ends_with("_pipeline"))
    return emitError(loc) << "pipe executor: schedule @" << name
                          << " does not name its function (<fn>_pipeline, "
                             "as --pipe-partition writes it)";
  std::string fnName = name.drop_back(strlen("_pipeline")).str();
  OwningOpRef<ModuleOp> copy = module.clone();
  auto fn = copy->lookupSymbol<func::FuncOp>(fnName);
  if (!fn)
    return emitError(loc) << "pipe executor: no function @" << fnName;
  return Execution(*copy, std::move(*sched), fn, loc, options).run();
}
