//===- Probe.cpp - A fragment as a function of its own --------------------===//
//
// Part of Loom. See Probe.h.
//
//===----------------------------------------------------------------------===//

#include "Probe.h"

#include "loom/Compiler/Fragments.h"
#include "loom/Placement/Placement.h"
#include "loom/Dialect/TG/IR/TGTypes.h"
#include "loom/Support/ElementTypes.h"

#include "loom/Compiler/Compiler.h"
#include "loom/Dialect/TG/IR/TGDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"

#include <chrono>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

namespace {

/// Constants up to this many elements are copied into a probe (as fragment
/// formation copies them into kernels); larger ones become weights.
constexpr int64_t kInlineConstantElements = 1024;

void addRandomWeight(safetensors::Writer &weights, StringRef name,
                     RankedTensorType type, std::mt19937 &rng) {
  auto kind = tg::elemKindOf(type.getElementType());
  const ElementTypeInfo &info = elementTypeInfo(kind ? *kind : ElemKind::F32);
  std::vector<double> values(type.getNumElements(), 0.0);
  if (info.isFloat) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (double &v : values)
      v = dist(rng);
  }
  // Integer weights (indices) stay zero: valid for every gather.
  llvm::cantFail(weights.add(name, info.dtype, type.getShape(), values));
}

} // namespace

func::FuncOp placement::buildProbe(const LibraryCall &call, ModuleOp module,
                                   StringRef name, ProbeWeights *weights,
                                   bool formFragment,
                                   const BackendRegistry &registry) {
  llvm::SmallPtrSet<Operation *, 8> inside(call.ops.begin(), call.ops.end());
  llvm::SetVector<Value> externals;
  for (Operation *op : call.ops)
    for (Value v : op->getOperands())
      if (!inside.count(v.getDefiningOp()))
        externals.insert(v);
  auto isParameter = [](Value v) {
    return isa_and_nonnull<tg::WeightOp, tg::ConstantOp>(v.getDefiningOp());
  };
  SmallVector<Type> argTypes;
  for (Value v : externals)
    if (!isParameter(v))
      argTypes.push_back(v.getType());
  Operation *last = call.ops.back();
  Location loc = UnknownLoc::get(module.getContext());
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(
      b, loc, name, b.getFunctionType(argTypes, last->getResultTypes()));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  unsigned arg = 0, weight = 0;
  for (Value v : externals) {
    if (!isParameter(v)) {
      mapping.map(v, body->getArgument(arg++));
      continue;
    }
    auto type = cast<RankedTensorType>(v.getType());
    auto constant = v.getDefiningOp<tg::ConstantOp>();
    if (constant && type.getNumElements() <= kInlineConstantElements) {
      mapping.map(v, b.clone(*constant)->getResult(0));
      continue;
    }
    std::string weightName = "w" + std::to_string(weight++);
    if (weights) {
      weightName = "w_";
      llvm::raw_string_ostream os(weightName);
      type.print(os);
      if (weights->added.insert(weightName).second)
        addRandomWeight(weights->writer, weightName, type, weights->rng);
    }
    mapping.map(v, tg::WeightOp::create(b, loc, type,
                                        b.getStringAttr(weightName))
                       .getResult());
  }
  SmallVector<Operation *> cloned;
  for (Operation *op : call.ops) {
    Operation *copy = b.clone(*op, mapping);
    copy->setLoc(loc);
    cloned.push_back(copy);
  }
  SmallVector<Value> results;
  for (Value r : last->getResults())
    results.push_back(mapping.lookup(r));
  func::ReturnOp::create(b, loc, results);
  if (!formFragment)
    return fn;
  // The one fragment the call places: its backend's candidate of the same
  // length at the copied anchor.
  auto choose = [&](Operation *op,
                    Available available) -> std::optional<LibraryCall> {
    if (op != cloned.front())
      return std::nullopt;
    SmallVector<LibraryCall> candidates;
    call.backend->candidates(op, available, candidates);
    for (LibraryCall &candidate : candidates)
      if (candidate.ops.size() == call.ops.size())
        return candidate;
    return std::nullopt;
  };
  if (failed(formFragments(fn, choose, registry)))
    return nullptr;
  return fn;
}

std::string placement::fragmentKey(const LibraryCall &call) {
  Operation *anchor = call.anchor;
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(anchor->getLoc());
  func::FuncOp fn =
      buildProbe(call, *scratch, "fragment", /*weights=*/nullptr,
                 /*formFragment=*/false, BackendRegistry::builtin());
  std::string text;
  llvm::raw_string_ostream os(text);
  fn.print(os);
  return text;
}

placement::ProbeArtifact::~ProbeArtifact() {
  if (context)
    loom_context_free(context);
  if (model)
    loom_model_free(model);
}

std::unique_ptr<placement::ProbeArtifact>
placement::compileProbes(ArrayRef<const LibraryCall *> calls, ModuleOp module,
                         const BackendRegistry &registry, int threads,
                         std::string &error) {
  OwningOpRef<ModuleOp> probes = ModuleOp::create(module.getLoc());
  ProbeWeights weights;
  for (auto [n, call] : llvm::enumerate(calls))
    buildProbe(*call, *probes, ("p" + Twine(n)).str(), &weights,
               /*formFragment=*/true, registry);
  std::string text;
  llvm::raw_string_ostream os(text);
  probes->print(os);
  return compileModuleText(text, weights.writer.serialize(), registry,
                           threads, nullptr, error);
}

std::unique_ptr<placement::ProbeArtifact> placement::compileModuleText(
    StringRef text, std::string weightsBytes, const BackendRegistry &registry,
    int threads, llvm::function_ref<LogicalResult(ModuleOp)> prepare,
    std::string &error) {
  auto probe = std::make_unique<ProbeArtifact>();
  probe->text = text.str();
  probe->weights = std::move(weightsBytes);
  DialectRegistry dialects;
  registerAllDialects(dialects);
  registerAllExtensions(dialects);
  dialects.insert<tg::TGDialect>();
  MLIRContext context(dialects);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && diagnostics.empty())
      diagnostics = d.str();
    return success();
  });
  OwningOpRef<ModuleOp> parsed =
      parseSourceString<ModuleOp>(probe->text, &context);
  auto weights = safetensors::File::parse(
      llvm::MemoryBuffer::getMemBuffer(probe->weights, "probe weights",
                                       /*RequiresNullTerminator=*/false));
  if (!parsed || !weights) {
    if (!weights)
      llvm::consumeError(weights.takeError());
    error = "internal error: the probes do not parse back";
    return nullptr;
  }
  if (prepare && failed(prepare(*parsed))) {
    error = diagnostics.empty() ? "cannot place the module" : diagnostics;
    return nullptr;
  }
  SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("loom-probe", "so", path)) {
    error = "cannot create a temporary file";
    return nullptr;
  }
  CompileOptions compile;
  compile.source = compiler::EmbeddedSource::None;
  compile.registry = &registry;
  if (failed(compileToArtifact(*parsed, &*weights, compile, path))) {
    llvm::sys::fs::remove(path);
    error = diagnostics.empty() ? "compilation failed" : diagnostics;
    return nullptr;
  }
  bool loaded = loadInto(*probe, path, threads, error);
  llvm::sys::fs::remove(path);
  if (!loaded)
    return nullptr;
  return probe;
}

bool placement::loadInto(ProbeArtifact &artifact, StringRef path, int threads,
                         std::string &error) {
  loom_model_options load{threads, nullptr, nullptr};
  std::string p = path.str();
  if (loom_model_load(p.c_str(), &load, &artifact.model) == LOOM_OK &&
      loom_context_create(artifact.model, &artifact.context) == LOOM_OK)
    return true;
  error = "the artifact '" + p + "' does not load: " + loom_last_error();
  return false;
}

std::optional<placement::ProbeBuffers>
placement::makeBuffers(const loom_model *model, int64_t entry,
                       std::mt19937 &rng) {
  ProbeBuffers b;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0, e = loom_entry_num_inputs(model, entry); i < e; ++i) {
    loom_tensor_desc desc;
    if (loom_entry_input(model, entry, i, &desc) != LOOM_OK)
      return std::nullopt;
    b.inputs.emplace_back(std::max<int64_t>(desc.bytes, 1), 0);
    if (StringRef(desc.dtype) == "f32") {
      auto *f = reinterpret_cast<float *>(b.inputs.back().data());
      for (int64_t k = 0; k < desc.bytes / 4; ++k)
        f[k] = dist(rng);
    }
  }
  for (int64_t i = 0, e = loom_entry_num_outputs(model, entry); i < e; ++i) {
    loom_tensor_desc desc;
    if (loom_entry_output(model, entry, i, &desc) != LOOM_OK)
      return std::nullopt;
    b.outputs.emplace_back(std::max<int64_t>(desc.bytes, 1), 0);
  }
  for (auto &v : b.inputs)
    b.in.push_back(v.data());
  for (auto &v : b.outputs)
    b.out.push_back(v.data());
  return b;
}

std::optional<double> placement::medianSeconds(ProbeArtifact &probe,
                                               int64_t entry,
                                               std::mt19937 &rng,
                                               const TimingPolicy &policy) {
  using Clock = std::chrono::steady_clock;
  auto buffers = makeBuffers(probe.model, entry, rng);
  if (!buffers)
    return std::nullopt;
  auto run = [&]() -> std::optional<double> {
    auto start = Clock::now();
    if (loom_run(probe.context, entry, buffers->in.data(),
                 buffers->out.data()) != LOOM_OK)
      return std::nullopt;
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  auto warm = run();
  if (!warm)
    return std::nullopt;
  std::vector<double> times;
  double spent = 0;
  while (times.size() < policy.maxRuns &&
         (times.size() < policy.minRuns || spent < policy.minSeconds) &&
         !(times.size() >= 1 && *warm > policy.slowRun)) {
    auto t = run();
    if (!t)
      return std::nullopt;
    times.push_back(*t);
    spent += *t;
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  return times[times.size() / 2];
}

std::string placement::randomWeights(ModuleOp module) {
  safetensors::Writer writer;
  std::mt19937 rng(777);
  llvm::StringSet<> added;
  module.walk([&](tg::WeightOp op) {
    if (added.insert(op.getName()).second)
      addRandomWeight(writer, op.getName(), op.getType(), rng);
  });
  return writer.serialize();
}

/// One run of every entry of \p whole, in seconds.
static std::optional<double> runWhole(placement::ProbeArtifact &whole,
                                      std::vector<placement::ProbeBuffers> &buffers) {
  auto start = std::chrono::steady_clock::now();
  for (auto [e, b] : llvm::enumerate(buffers))
    if (loom_run(whole.context, e, b.in.data(), b.out.data()) != LOOM_OK)
      return std::nullopt;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

/// \p from's inputs with outputs of \p model's entry \p entry: the same
/// values, when the entry takes inputs of the same sizes.
static std::optional<placement::ProbeBuffers>
sameInputs(const placement::ProbeBuffers &from, const loom_model *model,
           int64_t entry) {
  std::mt19937 unused;
  auto b = placement::makeBuffers(model, entry, unused);
  if (!b || b->inputs.size() != from.inputs.size())
    return std::nullopt;
  for (auto [to, value] : llvm::zip(b->inputs, from.inputs)) {
    if (to.size() != value.size())
      return std::nullopt;
    to = value;
  }
  for (auto [ptr, v] : llvm::zip(b->in, b->inputs))
    ptr = v.data();
  return b;
}

std::vector<placement::TimedArtifact>
placement::timeInTurn(ArrayRef<ProbeArtifact *> artifacts, bool shareInputs,
                      const TurnPolicy &policy) {
  std::mt19937 rng(99);
  size_t n = artifacts.size();
  std::vector<std::vector<ProbeBuffers>> inputs(n);
  std::vector<std::vector<double>> times(n);
  std::vector<bool> ok(n, true);
  std::optional<mlir::TimingScope> phase(policy.timing.nest("first runs"));
  for (size_t i = 0; i < n; ++i) {
    for (int64_t e = 0, m = loom_model_num_entries(artifacts[i]->model); e < m;
         ++e) {
      auto buffers =
          shareInputs && i > 0
              ? (size_t(e) < inputs[0].size()
                     ? sameInputs(inputs[0][e], artifacts[i]->model, e)
                     : std::nullopt)
              : makeBuffers(artifacts[i]->model, e, rng);
      if (!buffers) {
        ok[i] = false;
        break;
      }
      inputs[i].push_back(std::move(*buffers));
    }
    if (shareInputs && i > 0 && inputs[i].size() != inputs[0].size())
      ok[i] = false;
    ok[i] = ok[i] && runWhole(*artifacts[i], inputs[i]).has_value(); // warm-up
  }
  phase.emplace(policy.timing.nest("rounds"));
  double spent = 0;
  bool decided = false;
  for (size_t round = 0;
       !decided && round < policy.maxRounds &&
       (round < policy.minRounds || spent < policy.minSeconds);
       ++round) {
    for (size_t i = 0; i < n; ++i) {
      if (!ok[i])
        continue;
      auto t = runWhole(*artifacts[i], inputs[i]);
      ok[i] = t.has_value();
      if (t) {
        times[i].push_back(*t);
        spent += *t;
      }
    }
    decided = policy.decided && round + 1 >= policy.minRounds &&
              policy.decided(times);
  }
  std::vector<TimedArtifact> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (!ok[i] || times[i].empty())
      continue;
    llvm::sort(times[i]);
    out[i].median = times[i][times[i].size() / 2];
    out[i].runs = times[i].size();
    out[i].decided = decided;
    for (const ProbeBuffers &b : inputs[i]) {
      out[i].outputs.push_back(b.outputs);
      out[i].inputs.push_back(b.inputs);
    }
  }
  return out;
}
