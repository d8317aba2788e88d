//===- Compiler.cpp - The CPU compiler's driver ---------------------------===//
//
// Part of Loom. See Compiler.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Compiler.h"

#include "loom/Codegen/CPU/KernelCodegen.h"
#include "loom/Compiler/KernelOutlining.h"
#include "loom/Compiler/Passes.h"
#include "loom/Dialect/TG/IR/TGTypes.h"
#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Runtime/Checksum.h"
#include "loom/Support/Files.h"

#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <future>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
namespace art = loom::artifact;

namespace {

/// Loom's version, written into every manifest.
constexpr const char *kLoomVersion = "0.5.0";

/// Prints the time of each stage when asked.
class StageTimer {
public:
  explicit StageTimer(llvm::raw_ostream *os) : os(os) {}
  void done(StringRef stage) {
    auto now = std::chrono::steady_clock::now();
    if (os)
      *os << llvm::format("  %-12s %8.3f s\n", stage.str().c_str(),
                          std::chrono::duration<double>(now - last).count());
    last = now;
  }

private:
  llvm::raw_ostream *os;
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};

/// A stream that keeps only the loom_checksum64 of what is written to it.
class ChecksumOstream : public llvm::raw_ostream {
public:
  ChecksumOstream() { SetUnbuffered(); }
  ~ChecksumOstream() override { flush(); }
  uint64_t value() {
    flush();
    return sum.value();
  }

private:
  void write_impl(const char *data, size_t size) override {
    sum.add(data, size);
    written += size;
  }
  uint64_t current_pos() const override { return written; }
  ChecksumStream sum;
  uint64_t written = 0;
};

/// The weights the entries read, as one safetensors file, and their
/// description for the manifest. The writer refers to the tensors' bytes
/// where the compile holds them (the mapped weights file, the constants'
/// attributes): the file is only ever written out, never held in memory.
struct WeightsBlob {
  safetensors::Writer writer;
  std::vector<art::WeightTensor> tensors;
  /// The tensors only the embedded source reads (the given graph's weights
  /// that no entry reads after the compile-time passes).
  std::vector<std::string> sourceOnly;
  /// loom_checksum64 of the bytes, computed before they are handed on.
  uint64_t checksum = 0;
  int64_t size = 0;
};

/// The blob of \p entries' weights and constants, the \p parameters and
/// the \p sourceWeights (the weights the embedded source reads) that are
/// not among them, all from \p weights but the constants.
FailureOr<WeightsBlob> buildWeights(ModuleOp module,
                                    ArrayRef<EntrySchedule> entries,
                                    const safetensors::File *weights,
                                    ArrayRef<std::string> parameters,
                                    ArrayRef<std::string> sourceWeights) {
  WeightsBlob blob;
  safetensors::Writer &writer = blob.writer;
  llvm::StringSet<> added;
  llvm::StringMap<tg::WeightOp> weightOps;
  module.walk(
      [&](tg::WeightOp op) { weightOps.try_emplace(op.getName(), op); });
  // Bytes that outlive the compile are referred to; others (an attribute's
  // bytes converted to little-endian) copied.
  auto add = [&](StringRef name, safetensors::DType dtype,
                 ArrayRef<int64_t> shape, ArrayRef<uint8_t> data,
                 bool outlivesCompile = true) -> LogicalResult {
    if (auto err = outlivesCompile ? writer.addView(name, dtype, shape, data)
                                   : writer.addRaw(name, dtype, shape, data))
      return module.emitError("cannot store weight '")
             << name << "': " << llvm::toString(std::move(err));
    return success();
  };
  for (const EntrySchedule &entry : entries) {
    for (const ConstantWeight &c : entry.constants) {
      if (!added.insert(c.name).second)
        continue; // shared with an earlier entry (shareConstants)
      tg::ConstantOp op = c.op;
      auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
      if (!dense)
        return op.emitOpError("holds a constant that is not dense");
      // The attribute's own bytes where they are the little-endian ones
      // (a folded 16 MB weight was copied once more before).
      std::string data;
      std::optional<ArrayRef<char>> view = tg::littleEndianView(dense);
      ArrayRef<char> bytes =
          view ? *view : ArrayRef<char>(data = tg::littleEndianBytes(dense));
      auto kind = tg::elemKindOf(op.getType());
      if (failed(add(
              c.name, elementTypeInfo(*kind).dtype, op.getType().getShape(),
              ArrayRef<uint8_t>((const uint8_t *)bytes.data(), bytes.size()),
              /*outlivesCompile=*/view.has_value())))
        return failure();
    }
    for (const std::string &name : entry.weights) {
      if (!added.insert(name).second)
        continue;
      tg::WeightOp op = weightOps.lookup(name);
      if (!weights)
        return op.emitError("the module uses weights but none were given "
                            "(no tg.weights attribute or --weights-file)");
      if (failed(tg::checkWeight(op, *weights)))
        return failure();
      const safetensors::TensorInfo *info = weights->lookup(name);
      if (failed(add(name, info->dtype, info->shape, weights->rawBytes(*info))))
        return failure();
    }
  }
  // A tensor of the weights file that no entry reads: added once, or
  // diagnosed as \p what when the file lacks it.
  auto addFromFile = [&](const std::string &name,
                         StringRef what) -> FailureOr<bool> {
    if (!added.insert(name).second)
      return false;
    const safetensors::TensorInfo *info =
        weights ? weights->lookup(name) : nullptr;
    if (!info) {
      module.emitError(what)
          << " '" << name << "' is not among the module's weights";
      return failure();
    }
    if (failed(add(name, info->dtype, info->shape, weights->rawBytes(*info))))
      return failure();
    return true;
  };
  for (const std::string &name : parameters)
    if (failed(addFromFile(name, "parameter")))
      return failure();
  for (const std::string &name : sourceWeights) {
    FailureOr<bool> fresh =
        addFromFile(name, "the graph as given (the embedded source) reads "
                          "weight");
    if (failed(fresh))
      return failure();
    if (*fresh)
      blob.sourceOnly.push_back(name);
  }
  blob.size = int64_t(writer.serializedSize());
  // The whole file's checksum, streamed, on a thread of its own while the
  // tensors' are computed here (two serial passes over the bytes; the
  // runtime's check at load does the same, lib/Runtime/Manifest.cpp).
  std::future<uint64_t> whole = std::async(
      uint64_t(blob.size) >= kChecksumThreadBytes ? std::launch::async
                                                  : std::launch::deferred,
      [&writer] {
        ChecksumOstream os;
        writer.writeTo(os);
        return os.value();
      });
  writer.forEachTensor([&](StringRef name, safetensors::DType dtype,
                           ArrayRef<int64_t> shape, ArrayRef<uint8_t> data) {
    blob.tensors.push_back({name.str(), safetensors::dtypeName(dtype).str(),
                            std::vector<int64_t>(shape.begin(), shape.end()),
                            loom_checksum64(data.data(), data.size())});
  });
  blob.checksum = whole.get();
  return blob;
}

/// The manifest (docs/Artifact.md): the one device the code was compiled
/// for (with its image section when it has one), one program per entry on
/// it holding every buffer, a world of one rank (which options.world may
/// replace with the ranks of a partitioned step).
art::Manifest manifest(ArrayRef<EntrySchedule> entries,
                         const WeightsBlob &weights, StringRef storage,
                         StringRef weightsFile,
                         const target::DeviceRequirements &device,
                         StringRef imageSection,
                         ArrayRef<std::string> imageFeatures) {
  art::Manifest m;
  m.loomVersion = kLoomVersion;
  art::Device d;
  // The target registry's kinds are the schema's (checked at compile start).
  d.kind = *art::parseDeviceKind(device.kind);
  d.triple = device.triple;
  d.chip = device.processor;
  d.features = device.features;
  for (const std::string &f : imageFeatures)
    if (!llvm::is_contained(d.features, f))
      d.features.push_back(f);
  d.image = imageSection.str();
  m.devices.push_back(std::move(d));
  for (const EntrySchedule &entry : entries)
    m.entries.push_back(toArtifact(entry, /*device=*/0));
  if (!weights.tensors.empty()) {
    m.weights.storage = storage == "external" ? art::WeightStorage::External
                                              : art::WeightStorage::Embedded;
    if (storage == "external")
      m.weights.file = weightsFile.str();
    m.weights.size = weights.size;
    m.weights.checksum = weights.checksum;
    m.weights.tensors = weights.tensors;
  }
  m.world = art::singleProcessWorld(m.devices.size(), m.entries);
  return m;
}

/// The module as compiled, for `loom-compile --source=compiled`: after
/// folding and fragment formation, with each constant the artifact stores
/// among its weights turned into a tg.weight of that name, so that
/// interpreting it with the artifact's own weights computes what the
/// artifact should. (The module is not used after this.)
std::string compiledSourceText(ModuleOp module,
                               ArrayRef<EntrySchedule> entries) {
  for (const EntrySchedule &entry : entries)
    for (const ConstantWeight &c : entry.constants) {
      tg::ConstantOp op = c.op;
      OpBuilder b(op);
      auto weight = tg::WeightOp::create(b, op.getLoc(), op.getType(),
                                         b.getStringAttr(c.name));
      op.getResult().replaceAllUsesWith(weight.getResult());
      op.erase();
    }
  module->removeAttr("tg.weights");
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

/// Prints \p module as loom-opt prints its output.
void printAsLoomOpt(llvm::raw_ostream &os, ModuleOp module) {
  module->print(os);
  os << "\n";
}

/// Writes \p text to \p dir/\p name for --dump-kernels.
LogicalResult dumpKernels(Location loc, StringRef dir, StringRef name,
                          llvm::function_ref<void(llvm::raw_ostream &)> print) {
  SmallString<128> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code ec = llvm::sys::fs::create_directories(dir);
  if (!ec) {
    llvm::raw_fd_ostream os(path, ec);
    if (!ec) {
      print(os);
      os.close();
      ec = os.error();
    }
  }
  if (ec)
    return emitError(loc, "cannot write ") << path << ": " << ec.message();
  return success();
}

/// Outlines the codegen steps of \p entries as kernels, runs \p target's
/// kernel pipeline on them, and emits them into \p contents (the kernel
/// table in step order); sets each kernel step's range.
LogicalResult generateKernels(Location loc,
                              MutableArrayRef<EntrySchedule> entries,
                              const target::Target &target,
                              const CompileOptions &options,
                              llvm::LLVMContext &llvmContext,
                              ArtifactContents &contents,
                              mlir::TimingScope &timing) {
  MLIRContext *context = loc.getContext();
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(loc);
  for (const EntrySchedule &entry : entries) {
    OwningOpRef<ModuleOp> part = outlineKernels(entry, context);
    for (Operation &op : llvm::make_early_inc_range(*part->getBody()))
      op.moveBefore(kernels->getBody(), kernels->getBody()->end());
  }
  for (EntrySchedule &entry : entries) {
    for (const Step &s : entry.steps)
      if (const artifact::KernelStep *k = s.kernel())
        contents.kernelNames.push_back(k->name);
  }
  if (contents.kernelNames.empty())
    return success();
  StringRef dump = options.dumpKernelsDir;
  auto write = [&](StringRef name, auto print) {
    return dump.empty() ? success() : dumpKernels(loc, dump, name, print);
  };
  auto printKernels = [&](llvm::raw_ostream &os) {
    printAsLoomOpt(os, *kernels);
  };
  auto printPipeline = [&](llvm::raw_ostream &os) {
    os << target.kernelPipelineSpelling() << "\n";
  };
  if (failed(write("kernels.mlir", printKernels)) ||
      failed(write("pipeline.txt", printPipeline)))
    return failure();
  PassManager lower(context);
  target.buildKernelPipeline(lower);
  // (The kernel pipeline's 50-odd passes are timed as one.)
  mlir::TimingScope phase = timing.nest("kernel-pipeline");
  if (failed(lower.run(*kernels)) ||
      failed(write("kernels.lowered.mlir", printKernels)))
    return failure();
  phase = timing.nest("emit-kernels");
  auto emitted =
      target.emitKernels(*kernels, contents.kernelNames, llvmContext);
  if (failed(emitted))
    return failure();
  for (const auto &[name, text] : emitted->listings)
    if (failed(write(name,
                     [&, &text = text](llvm::raw_ostream &os) { os << text; })))
      return failure();
  if (!emitted->image.empty()) {
    // A GPU target: no host kernels, each kernel step its dispatches.
    contents.kernelNames.clear();
    contents.image = std::move(emitted->image);
    contents.imageFeatures = std::move(emitted->imageFeatures);
    contents.imageSection = ".loom_image_0";
    for (EntrySchedule &entry : entries)
      if (failed(expandDispatches(entry, emitted->deviceKernels)))
        return failure();
    return success();
  }
  for (EntrySchedule &entry : entries)
    for (Step &step : entry.steps)
      if (artifact::KernelStep *k = step.kernel()) {
        k->range = emitted->ranges.lookup(k->name);
        k->team = emitted->teams.contains(k->name);
        k->grain = k->team ? 1 : kernelGrain(step.fragment, k->range);
      }
  contents.kernels = std::move(emitted->module);
  return success();
}

/// A GPU kernel sees splat constants only (its code has no constant
/// arrays): every other tg.constant inside a fragment becomes an input of
/// the fragment, defined before it, that the schedule stores with the
/// weights.
void storeFragmentConstants(ModuleOp module) {
  SmallVector<tg::ConstantOp> constants;
  module.walk([&](tg::ConstantOp op) {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (op->getParentOfType<tg::FragmentOp>() && !(dense && dense.isSplat()))
      constants.push_back(op);
  });
  for (tg::ConstantOp op : constants) {
    auto fragment = op->getParentOfType<tg::FragmentOp>();
    OpBuilder b(fragment);
    Operation *outside = b.clone(*op);
    fragment.getInputsMutable().append(outside->getResult(0));
    Block &body = fragment.getBody().front();
    Value arg = body.addArgument(op.getType(), op.getLoc());
    op.getResult().replaceAllUsesWith(arg);
    op.erase();
  }
}

/// The backend \p name of a registry for another kind of device than
/// \p kind (a CPU library named for a GPU target, cublas for vulkan), or
/// null.
const Backend *foreignBackend(StringRef name, StringRef kind) {
  static const char *const kinds[] = {
#define LOOM_DEVICE_KIND(Kind, Spelling) Spelling,
#include "loom/Artifact/DeviceKinds.def"
  };
  for (const char *other : kinds)
    if (const BackendRegistry *r = BackendRegistry::forDevice(other))
      if (const Backend *b = r->lookup(name);
          b && !b->generatesCode() && b->device() != kind)
        return b;
  return nullptr;
}

/// Every backend \p options lists runs on \p target's kind of device: a
/// library of another device's registry is an error naming it, the target
/// and the backends the target has.
LogicalResult checkBackends(ModuleOp module, const CompileOptions &options,
                            const target::Target &target) {
  std::string kind = target.requirements().kind;
  if (!art::parseDeviceKind(kind))
    return emitError(module.getLoc(), "target '")
           << target.spelling() << "' names a device kind the artifact "
           << "schema does not have: '" << kind << "'";
  if (options.formFragments)
    return success();
  const BackendRegistry &registry = options.backendRegistry();
  SmallVector<StringRef> entries;
  StringRef(options.backends).split(entries, ',');
  for (StringRef entry : entries) {
    StringRef name = (entry.contains(':') ? entry.split(':').second : entry)
                         .trim();
    const Backend *other =
        registry.lookup(name) ? nullptr : foreignBackend(name, kind);
    if (!other)
      continue;
    std::string own;
    for (const auto &b : registry.all())
      own += (own.empty() ? "" : ", ") + b->name().str();
    return emitError(module.getLoc(), "backend '")
           << other->name() << "' runs on a " << other->device()
           << " device, not on the " << kind << " device of target '"
           << target.spelling() << "' (its backends: " << own << ")";
  }
  auto choices = registry.parseChoices(options.backends);
  if (!choices)
    return emitError(module.getLoc(), llvm::toString(choices.takeError()));
  return success();
}

} // namespace

std::shared_ptr<const GivenGraph>
compiler::captureGivenGraph(ModuleOp module) {
  auto given = std::make_shared<GivenGraph>();
  OwningOpRef<ModuleOp> copy = module.clone();
  (*copy)->removeAttr("tg.weights");
  llvm::StringSet<> seen;
  copy->walk([&](tg::WeightOp op) {
    if (seen.insert(op.getName()).second)
      given->weights.push_back(op.getName().str());
  });
  llvm::raw_string_ostream os(given->text);
  copy->print(os);
  return given;
}

/// Whether a library backend that compiling with \p options forms
/// fragments with may run an op: --tg-conv3d-as-2d leaves the 3-D
/// convolutions it takes 3-D (oneDNN's 3-D convolution over NCDHW,
/// cuDNN's), and --tg-fold-weights folds a weight's TF32 rounding that only
/// such ops read. With --backends=auto (formFragments) every library of the
/// registry may take it; an unparsable list gives none (the fragment pass
/// reports it).
static std::function<bool(Operation *)>
takenByLibrary(const CompileOptions &options) {
  const BackendRegistry *registry = &options.backendRegistry();
  std::vector<BackendChoice> choices;
  if (options.formFragments) {
    for (const auto &backend : registry->all())
      choices.push_back({backend.get(), OpClass::Any});
  } else {
    auto parsed = registry->parseChoices(
        options.backends.empty() ? registry->defaultList()
                                 : StringRef(options.backends));
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      return nullptr;
    }
    choices = std::move(*parsed);
  }
  return [registry, choices](Operation *op) {
    return llvm::any_of(choices, [&](const BackendChoice &c) {
      return !c.backend->generatesCode() && c.covers(op) &&
             registry->match(op, *c.backend);
    });
  };
}

void compiler::buildFragmentPipeline(OpPassManager &pm,
                                     const safetensors::File *weights,
                                     const CompileOptions &options) {
  // The one place the bounds leave the IR: what the artifact needs of them
  // is in the function results' attributes (tg.bounded_dim,
  // tg.length_result), and the schedule, the memory plan and the lowering
  // see plain static tensors, with no copy for an identity.
  pm.addNestedPass<func::FuncOp>(tg::createTGEraseBounds());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(tg::createTGSinkSplits());
  pm.addNestedPass<func::FuncOp>(tg::createTGFoldBatchNorm());
  // After the canonicalisation that folds pads into convolutions; before
  // the rewrites that look for 1x1 convolutions, which trimmed ones may be.
  pm.addNestedPass<func::FuncOp>(tg::createTGTrimConvTaps());
  pm.addNestedPass<func::FuncOp>(tg::createTGPoolBeforeConv1x1());
  // No target: the host CPU (targetOf).
  if (options.convOverConcat &&
      (!options.target || options.target->requirements().kind == "cpu"))
    pm.addNestedPass<func::FuncOp>(tg::createTGConvOverConcat());
  if (options.conv3dAs2d)
    pm.addNestedPass<func::FuncOp>(
        tg::createTGConv3dAs2d(takenByLibrary(options)));
  pm.addPass(tg::createTGFoldWeightsPass(weights, int64_t(1) << 26,
                                         takenByLibrary(options)));
  pm.addPass(createCanonicalizerPass());
  // After the folding: an attention's scale is often sqrt(d) of constants.
  pm.addNestedPass<func::FuncOp>(tg::createTGScaleAfterMatmul());
  if (options.formFragments)
    return options.formFragments(pm, options.backendRegistry());
  TGFormFragmentsOptions fragments;
  fragments.backends = options.backends;
  pm.addNestedPass<func::FuncOp>(
      createTGFormFragments(options.backendRegistry(), fragments));
}

/// The prefix of the kernels of function \p name: the name with `_k`, every
/// character an identifier of PTX or SPIR-V cannot hold (a tensor-parallel
/// rank's `prefill.rank0`, a replica's `.replica1`) written `_xHH_`.
static std::string kernelPrefix(StringRef name) {
  std::string out;
  for (char c : name) {
    if (llvm::isAlnum(c) || c == '_')
      out += c;
    else
      out += llvm::formatv("_x{0:x-2}_", unsigned((unsigned char)c)).str();
  }
  return out + "_k";
}

/// The target of a compile with \p options: theirs, else the host CPU.
static llvm::Expected<std::shared_ptr<const target::Target>>
targetOf(const CompileOptions &options) {
  if (options.target)
    return options.target;
  auto host = target::TargetRegistry::builtin().create("cpu");
  if (!host)
    return host.takeError();
  return std::shared_ptr<const target::Target>(std::move(*host));
}

void compiler::registerCompileDependencies(DialectRegistry &registry,
                                           const CompileOptions &options,
                                           const target::Target &target) {
  // The pipelines as compileToArtifact builds them (the weights are only
  // read when the passes run).
  OpPassManager fragments(ModuleOp::getOperationName());
  buildFragmentPipeline(fragments, nullptr, options);
  fragments.getDependentDialects(registry);
  OpPassManager kernels(ModuleOp::getOperationName());
  target.buildKernelPipeline(kernels);
  kernels.getDependentDialects(registry);
}

void compiler::prepareConcurrentCompiles(MLIRContext &context,
                                         const CompileOptions &options) {
  auto target = targetOf(options);
  if (!target) {
    // The compiles fail the same way, each with its diagnostic.
    llvm::consumeError(target.takeError());
    return;
  }
  DialectRegistry registry;
  registerCompileDependencies(registry, options, **target);
  context.appendDialectRegistry(registry);
  for (StringRef name : registry.getDialectNames())
    context.getOrLoadDialect(name);
  codegen::cpu::registerKernelTranslations(context);
}

LogicalResult compiler::compileToArtifact(ModuleOp module,
                                          const safetensors::File *weights,
                                          const CompileOptions &options,
                                          StringRef outputPath) {
  MLIRContext *context = module.getContext();
  StageTimer timer(options.timingOut);
  mlir::TimingScope timing(options.timing);
  auto ownTarget = targetOf(options);
  if (!ownTarget)
    return module.emitError(llvm::toString(ownTarget.takeError()));
  std::shared_ptr<const target::Target> target = std::move(*ownTarget);
  if (failed(checkBackends(module, options, *target)))
    return failure();
  if (options.weightsStorage == "external" && weights) {
    // Writing the artifact's weights over the file they are read from
    // (mapped) would destroy it.
    SmallString<128> sidecar(outputPath);
    llvm::sys::path::replace_extension(sidecar, "safetensors");
    if (llvm::sys::fs::equivalent(sidecar, weights->path()))
      return mlir::emitError(module.getLoc(),
                             "--weights=external would write the "
                             "artifact's weights to ")
             << sidecar
             << ", the weights file the model is compiled from: name the "
                "artifact differently (its weights go beside it, with its "
                "name and the extension .safetensors)";
  }
  // The graph as given, before any pass changes it.
  std::shared_ptr<const GivenGraph> given = options.given;
  if (options.source == EmbeddedSource::Given && !given)
    given = captureGivenGraph(module);

  // Fragments, then one schedule per public function.
  PassManager pm(context);
  buildFragmentPipeline(pm, weights, options);
  mlir::TimingScope phase = timing.nest("fragments");
  if (phase)
    pm.enableTiming(phase);
  if (failed(pm.run(module)) ||
      (options.afterPasses && failed(options.afterPasses(module))))
    return failure();
  if (target->requirements().kind != "cpu")
    storeFragmentConstants(module);
  timer.done("fragments");
  phase = timing.nest("schedule");
  std::vector<EntrySchedule> entries;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isPrivate() || fn.isExternal())
      continue;
    ScheduleOptions scheduling;
    scheduling.concatInPlace =
        options.concatInPlace && target->requirements().kind == "cpu";
    scheduling.stateInPlace = options.stateInPlace;
    auto entry = buildSchedule(fn, kernelPrefix(fn.getName()),
                               options.backendRegistry(), scheduling);
    if (failed(entry))
      return failure();
    entries.push_back(std::move(*entry));
  }
  if (entries.empty())
    return module.emitError("nothing to compile: the module has no public "
                            "function");
  shareConstants(entries);
  timer.done("schedule");

  // Kernels: outline, lower, emit.
  phase = timing.nest("codegen");
  auto llvmContext = std::make_unique<llvm::LLVMContext>();
  ArtifactContents contents;
  if (failed(generateKernels(module.getLoc(), entries, *target, options,
                             *llvmContext, contents, phase)))
    return failure();
  timer.done("codegen");
  phase = timing.nest("weights+manifest");

  // Weights and manifest, then the shared object.
  auto blob = buildWeights(
      module, entries, weights, options.parameters,
      given ? ArrayRef<std::string>(given->weights) : ArrayRef<std::string>());
  if (failed(blob))
    return failure();
  std::string weightsFile;
  if (options.weightsStorage == "external" && !blob->tensors.empty()) {
    SmallString<128> path(outputPath);
    llvm::sys::path::replace_extension(path, "safetensors");
    weightsFile = llvm::sys::path::filename(path).str();
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (!ec) {
      blob->writer.writeTo(os);
      ec = closeChecked(os);
    }
    if (ec)
      return module.emitError("cannot write ") << path << ": " << ec.message();
  } else if (options.weightsStorage != "embedded" &&
             options.weightsStorage != "external") {
    return module.emitError("weights storage must be embedded or external, "
                            "got '")
           << options.weightsStorage << "'";
  } else {
    contents.embeddedWeights = &blob->writer;
  }
  art::Manifest m =
      manifest(entries, *blob, options.weightsStorage, weightsFile,
               target->requirements(), contents.imageSection,
               contents.imageFeatures);
  switch (options.source) {
  case EmbeddedSource::Given:
    m.source = art::Source{art::SourceGraph::Given, blob->sourceOnly};
    contents.source = given->text;
    break;
  case EmbeddedSource::Compiled:
    m.source = art::Source{art::SourceGraph::Compiled, {}};
    break;
  case EmbeddedSource::None:
    break;
  }
  if (options.world && failed(options.world(m)))
    return failure();
  contents.manifest = art::writeManifest(m);
  if (options.scheduleOut)
    for (const EntrySchedule &entry : entries)
      printSchedule(entry, *options.scheduleOut);
  if (options.stepSourcesOut)
    *options.stepSourcesOut << stepSourcesJSON(entries);
  if (options.source == EmbeddedSource::Compiled)
    contents.source = compiledSourceText(module, entries);
  phase.stop();
  if (auto err = writeArtifact(contents, *llvmContext, target->hostMachine(),
                               outputPath, options.timing.nest("artifact")))
    return module.emitError(llvm::toString(std::move(err)));
  timer.done("object+link");
  return success();
}
