//===- Schedule.cpp - The host program of a compiled entry ----------------===//
//
// Part of Loom. See Schedule.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Schedule.h"

#include "loom/Compiler/Backend.h"
#include "loom/Dialect/TG/IR/TGTypes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using llvm::json::Array;
using llvm::json::Object;

namespace {

std::string dtypeName(Type type) {
  auto kind = tg::elemKindOf(type);
  return kind ? elementTypeInfo(*kind).mlirName.str() : std::string("?");
}

/// Bytes of a dense tensor (i1 is one byte per element).
int64_t bytesOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  int64_t bits = tensor.getElementTypeBitWidth();
  return tensor.getNumElements() * std::max<int64_t>(1, bits / 8);
}

Array shapeJSON(ArrayRef<int64_t> shape) {
  Array a;
  for (int64_t d : shape)
    a.push_back(d);
  return a;
}

int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/// The name of argument or result \p i from its `tg.name` attribute.
std::string nameFromAttr(DictionaryAttr attrs, StringRef fallback, unsigned i) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("tg.name"))
      return name.getValue().str();
  return (fallback + Twine(i)).str();
}

class ScheduleBuilder {
public:
  ScheduleBuilder(func::FuncOp fn, StringRef prefix,
                  const BackendRegistry &backends)
      : fn(fn), prefix(prefix), backends(backends) {}

  FailureOr<EntrySchedule> run();

private:
  func::FuncOp fn;
  StringRef prefix;
  const BackendRegistry &backends;
  EntrySchedule entry;
  llvm::DenseMap<Value, int64_t> bufferOf;
  /// Fragment results that write straight into an output buffer.
  llvm::DenseMap<Value, int64_t> outputStorage;
  llvm::StringMap<int64_t> weightBuffer;
  unsigned kernels = 0;

  int64_t addBuffer(Buffer b) {
    entry.buffers.push_back(std::move(b));
    return entry.buffers.size() - 1;
  }
  void describeSignature();
  void chooseOutputStorage(func::ReturnOp ret);
  LogicalResult scheduleOp(Operation &op);
  LogicalResult scheduleFragment(tg::FragmentOp fragment);
  LogicalResult scheduleIf(tg::IfOp op);
  LogicalResult scheduleLibrary(tg::FragmentOp fragment,
                                const Backend &backend, Step &step);
  void scheduleReturn(func::ReturnOp ret);
  void computeLiveness();
  void aliasSums();
  void planMemory();
};

void ScheduleBuilder::describeSignature() {
  entry.name = fn.getName().str();
  FunctionType type = fn.getFunctionType();
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto tensor = cast<RankedTensorType>(t);
    entry.inputs.push_back({nameFromAttr(fn.getArgAttrDict(i), "arg", i),
                            dtypeName(tensor),
                            SmallVector<int64_t>(tensor.getShape())});
    Buffer b;
    b.kind = Buffer::Kind::Input;
    b.index = i;
    bufferOf[fn.getArgument(i)] = addBuffer(b);
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    auto tensor = cast<RankedTensorType>(t);
    entry.outputs.push_back({nameFromAttr(fn.getResultAttrDict(i), "result", i),
                             dtypeName(tensor),
                             SmallVector<int64_t>(tensor.getShape())});
  }
}

/// A returned value that a fragment computes (through reshapes) is written
/// straight into its output buffer; the others are copied at the end.
void ScheduleBuilder::chooseOutputStorage(func::ReturnOp ret) {
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value root = v;
    while (auto reshape = root.getDefiningOp<tg::ReshapeOp>())
      root = reshape.getInput();
    if (!root.getDefiningOp<tg::FragmentOp>() || outputStorage.count(root))
      continue;
    outputStorage[root] = i;
  }
}

LogicalResult ScheduleBuilder::scheduleOp(Operation &op) {
  if (auto weight = dyn_cast<tg::WeightOp>(op)) {
    auto [it, inserted] = weightBuffer.try_emplace(weight.getName(), 0);
    if (inserted) {
      Buffer b;
      b.kind = Buffer::Kind::Weight;
      b.weight = weight.getName().str();
      it->second = addBuffer(b);
      entry.weights.push_back(b.weight);
    }
    bufferOf[weight.getResult()] = it->second;
    return success();
  }
  if (auto constant = dyn_cast<tg::ConstantOp>(op)) {
    Buffer b;
    b.kind = Buffer::Kind::Weight;
    b.weight = ("__loom_" + fn.getName() + "_constant_" +
                Twine(entry.constants.size()))
                   .str();
    entry.constants.push_back({b.weight, constant});
    bufferOf[constant.getResult()] = addBuffer(b);
    return success();
  }
  if (auto reshape = dyn_cast<tg::ReshapeOp>(op)) {
    bufferOf[reshape.getResult()] = bufferOf.lookup(reshape.getInput());
    return success();
  }
  if (auto fragment = dyn_cast<tg::FragmentOp>(op))
    return scheduleFragment(fragment);
  if (auto ifOp = dyn_cast<tg::IfOp>(op))
    return scheduleIf(ifOp);
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    scheduleReturn(ret);
    return success();
  }
  return op.emitOpError("cannot be scheduled: the CPU compiler schedules "
                        "tg.fragment, tg.if, tg.weight, tg.constant and "
                        "tg.reshape (run --tg-form-fragments first)");
}

/// tg.if: a branch step that jumps to the else steps when the condition is
/// false, the then steps, a jump past the else steps, the else steps. Each
/// region ends by copying what it yields into the op's result buffers.
/// Jumps only go forward, so the steps that run are a subsequence of the
/// list, and liveness computed over the list holds for every path.
LogicalResult ScheduleBuilder::scheduleIf(tg::IfOp op) {
  int64_t branchIndex = entry.steps.size();
  SmallVector<int64_t> results;
  for (Value r : op.getResults()) {
    Buffer b;
    b.kind = Buffer::Kind::Arena;
    b.bytes = bytesOf(r.getType());
    b.firstStep = b.lastStep = branchIndex;
    results.push_back(addBuffer(b));
    bufferOf[r] = results.back();
  }
  Step branch;
  branch.op = "branch";
  branch.namedArgs["cond"] = bufferOf.lookup(op.getCondition());
  entry.steps.push_back(std::move(branch));
  int64_t jumpIndex = -1;
  for (bool taken : {true, false}) {
    if (!taken) {
      jumpIndex = entry.steps.size();
      Step jump;
      jump.op = "jump";
      entry.steps.push_back(std::move(jump));
      entry.steps[branchIndex].attrs["else"] = int64_t(entry.steps.size());
    }
    Block &block = op.getBlock(taken);
    for (Operation &inner : block.without_terminator())
      if (failed(scheduleOp(inner)))
        return failure();
    for (auto [v, dst] :
         llvm::zip(block.getTerminator()->getOperands(), results)) {
      Step copy;
      copy.op = "copy";
      copy.namedArgs["src"] = bufferOf.lookup(v);
      copy.namedArgs["dst"] = dst;
      entry.steps.push_back(std::move(copy));
    }
  }
  entry.steps[jumpIndex].attrs["to"] = int64_t(entry.steps.size());
  return success();
}

LogicalResult ScheduleBuilder::scheduleFragment(tg::FragmentOp fragment) {
  int64_t stepIndex = entry.steps.size();
  for (Value result : fragment.getResults()) {
    Buffer b;
    auto out = outputStorage.find(result);
    if (out != outputStorage.end()) {
      b.kind = Buffer::Kind::Output;
      b.index = out->second;
    } else {
      b.kind = Buffer::Kind::Arena;
      b.bytes = bytesOf(result.getType());
      b.firstStep = b.lastStep = stepIndex;
    }
    bufferOf[result] = addBuffer(b);
  }
  // Results without elements (an ONNX slice may be empty) need no step.
  if (llvm::all_of(fragment.getResultTypes(), [](Type t) {
        return cast<ShapedType>(t).getNumElements() == 0;
      }))
    return success();
  const Backend *backend = backends.lookup(fragment.getBackend());
  if (!backend)
    return fragment.emitOpError("is placed on '")
           << fragment.getBackend() << "', which is not a registered backend";
  Step step;
  step.fragment = fragment;
  if (!backend->generatesCode()) {
    if (failed(scheduleLibrary(fragment, *backend, step)))
      return failure();
  } else {
    step.op = "kernel";
    step.kernel = (prefix + Twine(kernels++)).str();
    for (Value v : fragment.getInputs())
      step.args.push_back(bufferOf.lookup(v));
    for (Value v : fragment.getResults())
      step.args.push_back(bufferOf.lookup(v));
  }
  entry.steps.push_back(std::move(step));
  return success();
}

LogicalResult ScheduleBuilder::scheduleLibrary(tg::FragmentOp fragment,
                                               const Backend &backend,
                                               Step &step) {
  auto call = backends.matchFragment(fragment);
  if (!call)
    return fragment.emitOpError("is placed on ")
           << backend.name()
           << " but its body is not one fragment that backend computes";
  // Body values are block arguments (the fragment's inputs) or the result.
  auto buffer = [&](Value v) -> int64_t {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return bufferOf.lookup(fragment.getInputs()[arg.getArgNumber()]);
    assert(v == call->ops.back()->getResult(0) && "not a fragment operand");
    return bufferOf.lookup(fragment.getResult(0));
  };
  auto isWeight = [&](Value v) {
    return entry.buffers[buffer(v)].kind == Buffer::Kind::Weight;
  };
  LibraryStep lowered;
  if (failed(backend.lower(*call, StepOperands{buffer, isWeight}, lowered)))
    return failure();
  step.op = std::move(lowered.op);
  step.namedArgs = std::move(lowered.args);
  step.attrs = std::move(lowered.attrs);
  return success();
}

void ScheduleBuilder::scheduleReturn(func::ReturnOp ret) {
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    int64_t src = bufferOf.lookup(v);
    const Buffer &b = entry.buffers[src];
    if (b.kind == Buffer::Kind::Output && b.index == int64_t(i))
      continue;
    Buffer out;
    out.kind = Buffer::Kind::Output;
    out.index = i;
    int64_t dst = addBuffer(out);
    Step copy;
    copy.op = "copy";
    copy.namedArgs["src"] = src;
    copy.namedArgs["dst"] = dst;
    entry.steps.push_back(std::move(copy));
  }
}

/// The last step that reads each arena buffer.
void ScheduleBuilder::computeLiveness() {
  auto use = [&](int64_t id, int64_t stepIndex) {
    Buffer &b = entry.buffers[id];
    if (b.kind == Buffer::Kind::Arena)
      b.lastStep = std::max(b.lastStep, stepIndex);
  };
  for (auto [i, step] : llvm::enumerate(entry.steps)) {
    for (int64_t id : step.args)
      use(id, i);
    for (auto &kv : step.namedArgs) {
      if (auto id = kv.second.getAsInteger())
        use(*id, i);
      // A list of buffers (onednn.concat's srcs).
      if (const llvm::json::Array *ids = kv.second.getAsArray())
        for (const llvm::json::Value &v : *ids)
          if (auto id = v.getAsInteger())
            use(*id, i);
    }
  }
}

/// A library step whose residual sum (oneDNN's sum post-op accumulates
/// into the destination) is the last read of an arena buffer of the
/// result's size writes its result over that buffer, so the addend needs no
/// copy into the destination first (ResNet-50: 16 copies of up to 3.2 MB
/// per inference). Not where the step also reads the addend as another
/// operand (conv(x) + x), which it would overwrite while reading.
void ScheduleBuilder::aliasSums() {
  auto arena = [&](std::optional<int64_t> id) {
    return id && *id >= 0 && *id < int64_t(entry.buffers.size()) &&
           entry.buffers[*id].kind == Buffer::Kind::Arena;
  };
  for (auto [i, step] : llvm::enumerate(entry.steps)) {
    std::optional<int64_t> sum = step.namedArgs.getInteger("sum"),
                           dst = step.namedArgs.getInteger("dst");
    if (!arena(sum) || !arena(dst) || *sum == *dst)
      continue;
    Buffer &s = entry.buffers[*sum], &d = entry.buffers[*dst];
    bool readElsewhere = llvm::any_of(step.namedArgs, [&](const auto &kv) {
      return kv.first != "sum" && kv.first != "dst" &&
             kv.second.getAsInteger() == sum;
    });
    if (readElsewhere || s.bytes != d.bytes || s.lastStep != int64_t(i) ||
        d.firstStep != int64_t(i) || d.aliasOf != -1)
      continue;
    int64_t root = *sum;
    while (entry.buffers[root].aliasOf != -1)
      root = entry.buffers[root].aliasOf;
    d.aliasOf = root;
    Buffer &r = entry.buffers[root];
    r.lastStep = std::max(r.lastStep, d.lastStep);
  }
}

/// Places the arena buffers: largest first, each at the lowest aligned
/// offset that no buffer alive at the same time covers; a buffer written
/// in place of another (aliasSums) takes that one's slice.
void ScheduleBuilder::planMemory() {
  SmallVector<int64_t> order;
  for (auto [id, b] : llvm::enumerate(entry.buffers))
    if (b.kind == Buffer::Kind::Arena) {
      entry.unplannedBytes += alignTo(b.bytes, kArenaAlignment);
      if (b.aliasOf == -1)
        order.push_back(id);
    }
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    return entry.buffers[a].bytes > entry.buffers[b].bytes;
  });
  SmallVector<int64_t> placed;
  for (int64_t id : order) {
    Buffer &b = entry.buffers[id];
    SmallVector<std::pair<int64_t, int64_t>> busy; // [begin, end)
    for (int64_t other : placed) {
      const Buffer &o = entry.buffers[other];
      if (o.firstStep <= b.lastStep && b.firstStep <= o.lastStep)
        busy.push_back({o.offset, o.offset + o.bytes});
    }
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + b.bytes <= begin)
        break;
      offset = std::max(offset, alignTo(end, kArenaAlignment));
    }
    b.offset = offset;
    entry.arenaBytes = std::max(entry.arenaBytes, offset + b.bytes);
    placed.push_back(id);
  }
  for (Buffer &b : entry.buffers)
    if (b.aliasOf != -1)
      b.offset = entry.buffers[b.aliasOf].offset;
  entry.arenaBytes = alignTo(entry.arenaBytes, kArenaAlignment);
}

FailureOr<EntrySchedule> ScheduleBuilder::run() {
  if (!fn.getBody().hasOneBlock())
    return fn.emitOpError("must have one block to be compiled");
  for (Type t :
       llvm::concat<const Type>(fn.getArgumentTypes(), fn.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape() || !tg::elemKindOf(tensor))
      return fn.emitOpError("has a ")
             << t << " argument or result; compiled entries take and return "
             << "statically shaped tensors";
  }
  describeSignature();
  chooseOutputStorage(cast<func::ReturnOp>(fn.getBody().front().back()));
  for (Operation &op : fn.getBody().front())
    if (failed(scheduleOp(op)))
      return failure();
  computeLiveness();
  aliasSums();
  planMemory();
  return std::move(entry);
}

Object tensorJSON(const TensorDesc &t) {
  return Object{
      {"name", t.name}, {"dtype", t.dtype}, {"shape", shapeJSON(t.shape)}};
}

Object bufferJSON(const Buffer &b) {
  switch (b.kind) {
  case Buffer::Kind::Input:
    return Object{{"kind", "input"}, {"index", b.index}};
  case Buffer::Kind::Output:
    return Object{{"kind", "output"}, {"index", b.index}};
  case Buffer::Kind::Weight:
    return Object{{"kind", "weight"}, {"name", b.weight}};
  case Buffer::Kind::Arena:
    return Object{{"kind", "arena"}, {"offset", b.offset}, {"bytes", b.bytes}};
  }
  llvm_unreachable("unknown buffer kind");
}

Object stepJSON(const Step &s) {
  Object o{{"op", s.op}};
  if (s.op == "kernel") {
    o["name"] = s.kernel;
    Array args;
    for (int64_t id : s.args)
      args.push_back(id);
    o["args"] = std::move(args);
    o["range"] = s.range;
    return o;
  }
  o["args"] = Object(s.namedArgs);
  if (!s.attrs.empty())
    o["attrs"] = Object(s.attrs);
  return o;
}

} // namespace

FailureOr<EntrySchedule>
compiler::buildSchedule(func::FuncOp fn, StringRef kernelPrefix,
                        const BackendRegistry &backends) {
  return ScheduleBuilder(fn, kernelPrefix, backends).run();
}

llvm::json::Value compiler::toJSON(const EntrySchedule &entry) {
  Array inputs, outputs, buffers, steps;
  for (const TensorDesc &t : entry.inputs)
    inputs.push_back(tensorJSON(t));
  for (const TensorDesc &t : entry.outputs)
    outputs.push_back(tensorJSON(t));
  for (const Buffer &b : entry.buffers)
    buffers.push_back(bufferJSON(b));
  for (const Step &s : entry.steps)
    steps.push_back(stepJSON(s));
  return Object{{"name", entry.name},
                {"inputs", std::move(inputs)},
                {"outputs", std::move(outputs)},
                {"arena_bytes", entry.arenaBytes},
                {"buffers", std::move(buffers)},
                {"steps", std::move(steps)}};
}

void compiler::printSchedule(const EntrySchedule &entry,
                             llvm::raw_ostream &os) {
  os << "entry @" << entry.name << ": " << entry.steps.size() << " steps, "
     << entry.buffers.size() << " buffers\n";
  for (auto [i, s] : llvm::enumerate(entry.steps)) {
    os << llvm::format("  %3d ", int(i)) << s.op;
    if (s.op == "kernel") {
      os << " " << s.kernel << " range " << s.range << " args";
      for (int64_t id : s.args)
        os << " " << id;
    } else {
      for (auto &kv : s.namedArgs)
        os << " " << kv.first << "=" << kv.second;
      for (auto &kv : s.attrs)
        if (kv.first == "else" || kv.first == "to")
          os << " " << kv.first << "=" << kv.second;
    }
    os << "\n";
  }
  for (auto [id, b] : llvm::enumerate(entry.buffers))
    if (b.aliasOf != -1)
      os << "    buffer " << id << " written in place of buffer " << b.aliasOf
         << "\n";
  os << llvm::format("memory plan: arena %.2f MiB (without reuse %.2f MiB)\n",
                     entry.arenaBytes / 1048576.0,
                     entry.unplannedBytes / 1048576.0);
}
