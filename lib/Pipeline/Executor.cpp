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

  // The reference: the whole function's weight gradient.
  func::FuncOp probe = buildProbe(*copy, fn);
  tg::autodiff::Options ao;
  ao.optimizer = tg::autodiff::Optimizer::None;
  ao.batchnormTraining = false;
  ao.name = "__loom_reference";
  FailureOr<func::FuncOp> reference = tg::autodiff::buildTrainStep(probe, ao);
  if (failed(reference))
    return failure();
  std::vector<std::string> refParams;
  std::map<std::string, Type> weightTypes;
  for (unsigned i = probe.getNumArguments(); i < reference->getNumArguments();
       ++i) {
    auto n = reference->getArgAttrOfType<StringAttr>(i, "tg.name");
    refParams.push_back(n.str());
    weightTypes[n.str()] = reference->getArgumentTypes()[i];
  }

  std::vector<StageIO> stages;
  for (const pipe::Stage &st : sched->stages) {
    FailureOr<StageIO> io = stageIO(*copy, st, loc);
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
  interp::Interpreter<F64Domain> interpreter(*copy, iopts);
  auto weights = readWeights(*copy, interpreter, weightTypes, loc);
  if (failed(weights))
    return failure();

  int64_t m = sched->microBatches;
  std::vector<std::vector<Tensor>> inputs(m);
  std::vector<std::vector<std::optional<Tensor>>> cots(m);
  for (int64_t mb = 0; mb < m; ++mb) {
    for (BlockArgument a : fn.getArguments())
      inputs[mb].push_back(interp::randomArgument<F64Domain>(
          a, options.seed * 1000003 + uint64_t(mb)));
    cots[mb] = cotangents(fn, options.seed * 7919 + uint64_t(mb));
  }

  std::map<std::string, Tensor> expected, got;
  for (int64_t mb = 0; mb < m; ++mb) {
    std::vector<Tensor> args = inputs[mb];
    for (auto &c : cots[mb])
      if (c)
        args.push_back(*c);
    for (const std::string &p : refParams)
      args.push_back(weights->at(p));
    auto out = interpreter.run(*reference, args);
    if (failed(out))
      return failure();
    for (auto [i, p] : llvm::enumerate(refParams)) {
      auto [it, fresh] = expected.try_emplace(p, (*out)[1 + i]);
      if (!fresh)
        addInto(it->second, (*out)[1 + i]);
    }
  }

  // The pipeline, device by device in each one's action order.
  size_t numStages = stages.size();
  std::vector<std::vector<std::vector<Tensor>>> fwdIn(
      numStages, std::vector<std::vector<Tensor>>(m)),
      fwdOut = fwdIn;
  std::vector<std::vector<bool>> fDone(numStages, std::vector<bool>(m)),
      bDone = fDone;
  // Gradient contributions to (stage, mb) outputs: index -> tensor.
  std::vector<std::vector<std::map<int64_t, Tensor>>> outGrad(
      numStages, std::vector<std::map<int64_t, Tensor>>(m));
  // Parameter gradients of an I awaiting its W.
  std::map<std::pair<int, int64_t>, std::vector<Tensor>> pendingW;
  std::set<std::tuple<int, int, int64_t>> sentF, sentB, recvB;
  std::vector<std::vector<int>> consumers(numStages);
  for (const pipe::Edge &e : sched->edges)
    consumers[e.from].push_back(e.to);

  auto computes = [&](const pipe::Action &a, int device) {
    return sched->stages[a.stage].devices.front() == device;
  };
  auto forward = [&](int s, int64_t mb) -> LogicalResult {
    StageIO &io = stages[s];
    std::vector<Tensor> args;
    for (auto [src, idx] : io.sources) {
      if (src < 0) {
        args.push_back(inputs[mb][idx]);
        continue;
      }
      if (!fDone[src][mb])
        return emitError(loc) << "pipe executor: F of stage @"
                              << sched->stages[s].name << " on micro-batch "
                              << mb << " runs before its input from @"
                              << sched->stages[src].name << " exists";
      args.push_back(fwdOut[src][mb][idx]);
    }
    auto out = interpreter.run(io.forward, args);
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
  };
  // B (or I): the stage's VJP; its input gradients go to the producers.
  auto backward = [&](int s, int64_t mb, bool deferWeights) -> LogicalResult {
    StageIO &io = stages[s];
    if (!fDone[s][mb])
      return emitError(loc) << "pipe executor: backward of stage @"
                            << sched->stages[s].name << " on micro-batch "
                            << mb << " before its forward";
    for (int t : consumers[s]) {
      bool local = sched->stages[t].devices.front() ==
                   sched->stages[s].devices.front();
      if (!bDone[t][mb] || (!local && !recvB.count({t, s, mb})))
        return emitError(loc)
               << "pipe executor: backward of stage @" << sched->stages[s].name
               << " on micro-batch " << mb << " before the gradient from @"
               << sched->stages[t].name << " arrived";
    }
    std::vector<Tensor> args = fwdIn[s][mb];
    for (int i : io.floatOutputs) {
      auto it = outGrad[s][mb].find(i);
      if (it != outGrad[s][mb].end()) {
        args.push_back(it->second);
      } else {
        Tensor zero(shapeOf(io.forward.getResultTypes()[i]));
        args.push_back(std::move(zero));
      }
    }
    for (const std::string &p : io.params)
      args.push_back(weights->at(p));
    auto out = interpreter.run(io.backward, args);
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
    std::vector<Tensor> paramGrads((*out).begin() + k, (*out).end());
    if (deferWeights) {
      pendingW[{s, mb}] = std::move(paramGrads);
    } else {
      for (auto [i, p] : llvm::enumerate(io.params)) {
        auto [it, fresh] = got.try_emplace(p, paramGrads[i]);
        if (!fresh)
          addInto(it->second, paramGrads[i]);
      }
    }
    bDone[s][mb] = true;
    return success();
  };

  ExecutionResult result;
  result.function = fnName;
  result.microBatches = m;
  size_t devices = sched->programs.size();
  std::vector<size_t> pc(devices, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t d = 0; d < devices; ++d) {
      const std::vector<pipe::Action> &program = sched->programs[d];
      while (pc[d] < program.size()) {
        const pipe::Action &a = program[pc[d]];
        using K = pipe::ActionKind;
        bool ok = true;
        switch (a.kind) {
        case K::F:
          if (computes(a, d) && failed(forward(a.stage, a.microBatch)))
            return failure();
          break;
        case K::B:
        case K::I:
          if (computes(a, d) &&
              failed(backward(a.stage, a.microBatch, a.kind == K::I)))
            return failure();
          break;
        case K::W:
          if (computes(a, d)) {
            auto it = pendingW.find({a.stage, a.microBatch});
            if (it == pendingW.end())
              return emitError(loc) << "pipe executor: W of stage @"
                                    << sched->stages[a.stage].name
                                    << " on micro-batch " << a.microBatch
                                    << " without its I";
            for (auto [i, p] : llvm::enumerate(stages[a.stage].params)) {
              auto [g, fresh] = got.try_emplace(p, it->second[i]);
              if (!fresh)
                addInto(g->second, it->second[i]);
            }
            pendingW.erase(it);
          }
          break;
        case K::SendF:
          sentF.insert({a.stage, a.peerStage, a.microBatch});
          break;
        case K::SendB:
          sentB.insert({a.stage, a.peerStage, a.microBatch});
          break;
        case K::RecvF:
          ok = sentF.count({a.peerStage, a.stage, a.microBatch});
          break;
        case K::RecvB:
          ok = sentB.count({a.peerStage, a.stage, a.microBatch});
          if (ok)
            recvB.insert({a.peerStage, a.stage, a.microBatch});
          break;
        }
        if (!ok)
          break; // this device waits for a message
        ++pc[d];
        ++result.actions;
        progress = true;
      }
    }
  }
  for (size_t d = 0; d < devices; ++d)
    if (pc[d] < sched->programs[d].size())
      return emitError(loc) << "pipe executor: deadlock: device @"
                            << sched->devices[d].name << " waits at "
                            << sched->describe(sched->programs[d][pc[d]]);
  for (auto &[p, want] : expected) {
    auto it = got.find(p);
    double err = 0;
    if (it == got.end()) {
      for (double v : want.data)
        err = std::max(err, std::abs(v) / std::max(1.0, std::abs(v)));
    } else {
      for (size_t i = 0; i < want.data.size(); ++i)
        err = std::max(err, std::abs(it->second.data[i] - want.data[i]) /
                                std::max(1.0, std::abs(want.data[i])));
    }
    result.errors.push_back({p, err});
    result.worst = std::max(result.worst, err);
  }
  return result;
}
