//===- RunArtifact.cpp - loom-run on a compiled artifact ------------------===//
//
// Part of Loom. `loom-run model.so`: loads an artifact through libloomrt's C
// API (include/loom-c/Runtime.h), runs an entry on inputs from a file or
// drawn as the interpreter draws them (from the embedded source's function,
// so that both paths see the same numbers), and with --check interprets the
// embedded source (the graph as given to loom-compile) on the same inputs
// with the artifact's own weights and compares.
//
//===----------------------------------------------------------------------===//

#include "RunArtifact.h"
#include "ArtifactSource.h"
#include "HostTensor.h"
#include "RunSupport.h"

#include "loom-c/Runtime.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Support/Bounded.h"
#include "loom/Support/ElementTypes.h"
#include "loom/Support/SafeTensors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <thread>
#include <cstring>

using namespace mlir;
using namespace loom;
using namespace loom::run;
using namespace loom::tools;

namespace {

/// The artifact's embedded source, parsed, and the entry's function in it.
struct Source {
  std::unique_ptr<ArtifactSource> parsed;
  func::FuncOp fn;
};

std::unique_ptr<Source> parseSource(const loom_model *model,
                                    llvm::StringRef entry) {
  auto src = std::make_unique<Source>();
  src->parsed = parseArtifactSource(model);
  if (!src->parsed)
    return nullptr;
  src->fn = src->parsed->function(entry);
  if (!src->fn)
    return nullptr;
  return src;
}

/// The entry's inputs: from --inputs, or random as the interpreter draws
/// them for the source's function.
int makeInputs(const ArtifactRunOptions &o, const loom_model *model,
               int64_t entry, Source *source, std::vector<HostTensor> &inputs) {
  std::optional<safetensors::File> file;
  if (!o.inputsFile.empty()) {
    auto f = safetensors::File::open(o.inputsFile);
    if (!f)
      return fail(llvm::toString(f.takeError()));
    file.emplace(std::move(*f));
  } else if (!source) {
    return fail("the artifact has no embedded source (compiled with "
                "--no-source): give the inputs with --inputs");
  }
  llvm::outs() << "inputs:\n";
  for (int64_t i = 0; i < loom_entry_num_inputs(model, entry); ++i) {
    HostTensor t;
    loom_entry_input(model, entry, i, &t.desc);
    std::vector<double> values;
    if (file) {
      auto read = file->readAsDouble(t.desc.name);
      if (!read)
        return fail(llvm::toString(read.takeError()));
      const safetensors::TensorInfo *info = file->lookup(t.desc.name);
      if (info->shape != t.shape())
        return fail("--inputs: tensor '" + std::string(t.desc.name) +
                    "' has shape " + safetensors::formatShape(info->shape) +
                    ", the entry wants " + safetensors::formatShape(t.shape()));
      values = std::move(*read);
      llvm::outs() << "  " << t.desc.name << ": " << typeText(t.desc)
                   << " from " << o.inputsFile << "\n";
    } else {
      values = interp::randomArgument<interp::F32Domain>(
                   source->fn.getArgument(i), o.seed)
                   .toDoubles();
      llvm::outs() << "  " << t.desc.name << ": " << typeText(t.desc)
                   << " random, seed " << o.seed << "\n";
    }
    if (!fromDoubles(t, values))
      return fail("input '" + std::string(t.desc.name) + "' (" +
                  typeText(t.desc) + ") cannot be filled");
    inputs.push_back(std::move(t));
  }
  return 0;
}

/// Interprets the source on \p inputs with the artifact's weights;
/// returns the seconds it took.
int interpret(const loom_model *model, Source &source,
              const std::vector<HostTensor> &inputs,
              std::vector<std::vector<double>> &results, double &seconds) {
  auto interpreter = SourceInterpreter::create(model, *source.parsed);
  if (!interpreter)
    return fail(llvm::toString(interpreter.takeError()));
  std::vector<RefTensor> args;
  for (const HostTensor &t : inputs)
    args.push_back(RefTensor::fromDoubles(t.shape(), toDoubles(t)));
  auto start = std::chrono::steady_clock::now();
  auto out = (*interpreter)->run(source.fn, args);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                          start)
                .count();
  if (failed(out))
    return fail("--check: the interpreter failed on the artifact's source");
  for (auto &t : *out)
    results.push_back(t.toDoubles());
  return 0;
}

/// Whether output \p index of \p entry holds another output's length.
bool isLengthOutput(loom_model *model, int64_t entry, int64_t index) {
  for (int64_t i = 0; i < loom_entry_num_outputs(model, entry); ++i)
    if (loom_entry_output_length(model, entry, i, nullptr) == index)
      return true;
  return false;
}

/// Cuts each output of data-dependent length to its valid part
/// (loom_output_shape), as the interpreter's mode shows it.
int keepValidParts(loom_model *model, loom_context *context, int64_t entry,
                   std::vector<HostTensor> &outputs) {
  for (auto [i, t] : llvm::enumerate(outputs)) {
    int64_t dim = 0;
    if (loom_entry_output_length(model, entry, i, &dim) < 0)
      continue;
    std::vector<int64_t> shape(t.desc.rank);
    if (loom_output_shape(context, entry, i, shape.data()) != LOOM_OK)
      return fail(loom_last_error());
    int64_t elementBytes = t.desc.bytes / std::max<int64_t>(
                                              1, interp::numElementsOf(t.shape()));
    t.bytes = validPart(t.bytes.data(), t.shape(), dim, shape[dim],
                        elementBytes);
    t.validShape = shape;
  }
  return 0;
}

/// The state an entry updates in place (outputs tied to inputs,
/// loom_entry_output_tied_input): the runs write the input's bytes, so the
/// tied outputs get no memory of their own (their pointer is null), and
/// their values are the inputs' after the last run. Keeps the given inputs'
/// bytes so that every run can start from them.
class TiedState {
public:
  TiedState(loom_model *model, int64_t entry,
            const std::vector<HostTensor> &inputs,
            std::vector<HostTensor> &outputs, std::vector<void *> &out) {
    for (int64_t j = 0; j < int64_t(outputs.size()); ++j) {
      int64_t i = loom_entry_output_tied_input(model, entry, j);
      if (i < 0)
        continue;
      ties.push_back({i, j, inputs[i].bytes});
      outputs[j].bytes.clear();
      out[j] = nullptr;
    }
  }
  /// The given inputs' state back in place.
  void restore(std::vector<HostTensor> &inputs) const {
    for (const Tie &t : ties)
      std::memcpy(inputs[t.input].bytes.data(), t.given.data(),
                  t.given.size());
  }
  /// The tied outputs' values: their inputs after the last run.
  void collect(const std::vector<HostTensor> &inputs,
               std::vector<HostTensor> &outputs) const {
    for (const Tie &t : ties)
      outputs[t.output].bytes = inputs[t.input].bytes;
  }

private:
  struct Tie {
    int64_t input, output;
    std::vector<uint8_t> given;
  };
  std::vector<Tie> ties;
};

int writeOutputs(const std::string &path,
                 const std::vector<HostTensor> &outputs) {
  safetensors::Writer writer;
  for (const HostTensor &t : outputs) {
    std::optional<safetensors::DType> dtype;
    for (const ElementTypeInfo &info : allElementTypes())
      if (info.mlirName == t.desc.dtype)
        dtype = info.dtype;
    if (!dtype)
      return fail("output '" + std::string(t.desc.name) +
                  "' has a dtype safetensors cannot hold");
    if (auto err = writer.add(t.desc.name, *dtype, t.shape(), toDoubles(t)))
      return fail(llvm::toString(std::move(err)));
  }
  if (auto err = writer.write(path))
    return fail(llvm::toString(std::move(err)));
  llvm::outs() << "wrote " << path << "\n";
  return 0;
}

} // namespace

namespace {

/// Whether \p bytes (a prefix of a file, possibly cut inside a character
/// at its end) are UTF-8 text without control characters other than tab,
/// newline, carriage return and form feed.
bool looksLikeText(llvm::StringRef bytes, bool truncated) {
  for (size_t i = 0; i < bytes.size();) {
    unsigned char c = bytes[i];
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f')
        return false;
      if (c == 0x7f)
        return false;
      ++i;
      continue;
    }
    size_t length = c >= 0xF0 && c < 0xF5   ? 4
                    : c >= 0xE0            ? 3
                    : c >= 0xC2 && c < 0xE0 ? 2
                                            : 0;
    if (length == 0 || (c >= 0xF5))
      return false;
    if (i + length > bytes.size())
      return truncated; // cut by the prefix
    for (size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(bytes[i + k]) & 0xC0) != 0x80)
        return false;
    i += length;
  }
  return true;
}

} // namespace

run::InputKind loom::run::classifyInput(llvm::StringRef path,
                                        std::string &why) {
  if (path == "-")
    return InputKind::MLIR;
  FILE *f = fopen(path.str().c_str(), "rb");
  if (!f)
    return InputKind::MLIR; // the parser reports what is wrong with it
  char head[4096];
  size_t n = fread(head, 1, sizeof head, f);
  bool truncated = n == sizeof head;
  fclose(f);
  llvm::StringRef bytes(head, n);
  if (bytes.starts_with("\x7f"
                        "ELF"))
    return InputKind::Artifact;
  // MLIR bytecode starts with "ML\xefR".
  if (bytes.starts_with("ML\xef"
                        "R") ||
      looksLikeText(bytes, truncated))
    return InputKind::MLIR;
  why = "neither an ELF shared object nor MLIR text or bytecode";
  return InputKind::Foreign;
}

/// --compare: the largest scaled error of \p outputs (their valid parts)
/// against the tensors of o.compareFile, into \p worst; non-zero on an error.
static int compareWithFile(const ArtifactRunOptions &o, loom_model *model,
                           int64_t entry, std::vector<HostTensor> &outputs,
                           double &worst) {
  auto ref = safetensors::File::open(o.compareFile);
  if (!ref)
    return fail(llvm::toString(ref.takeError()));
  for (auto [i, t] : llvm::enumerate(outputs)) {
    const safetensors::TensorInfo *info = ref->lookup(t.desc.name);
    if (!info && isLengthOutput(model, entry, i))
      continue; // A length the reference has in its shapes only.
    if (info && t.validShape && info->shape != *t.validShape)
      return fail("--compare: tensor '" + std::string(t.desc.name) +
                  "' has shape " + safetensors::formatShape(info->shape) +
                  ", the output " + safetensors::formatShape(*t.validShape));
    auto want = ref->readAsDouble(t.desc.name);
    if (!want)
      return fail(llvm::toString(want.takeError()));
    worst = std::max(worst, maxScaledError(toDoubles(t), *want));
  }
  llvm::outs() << llvm::format("compare: largest error %.3g vs %s "
                               "(tolerance %.3g)\n",
                               worst, o.compareFile.c_str(), o.tolerance);
  return 0;
}

/// --check: the largest scaled error of \p outputs (their valid parts)
/// against the interpreter run on the embedded source (the graph as given,
/// or as compiled in older artifacts; the report says which), into
/// \p worst; non-zero on an error.
static int checkAgainstInterpreter(const ArtifactRunOptions &o,
                                   loom_model *model, int64_t entry,
                                   Source *source,
                                   const std::vector<HostTensor> &inputs,
                                   std::vector<HostTensor> &outputs,
                                   double compiled, double &worst) {
  if (!source)
    return fail("--check needs the artifact's embedded source (it was "
                "compiled with --no-source)");
  std::vector<std::vector<double>> want;
  double seconds = 0;
  if (int rc = interpret(model, *source, inputs, want, seconds))
    return rc;
  double err = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    int64_t dim = 0;
    if (outputs[i].validShape &&
        loom_entry_output_length(model, entry, i, &dim) >= 0) {
      // The interpreter's padded result, cut as the output was (their
      // lengths are outputs too, compared as such).
      std::vector<uint8_t> valid = validPart(
          reinterpret_cast<const uint8_t *>(want[i].data()),
          std::vector<int64_t>(outputs[i].desc.shape,
                               outputs[i].desc.shape + outputs[i].desc.rank),
          dim, (*outputs[i].validShape)[dim], sizeof(double));
      want[i].assign(reinterpret_cast<const double *>(valid.data()),
                     reinterpret_cast<const double *>(valid.data()) +
                         valid.size() / sizeof(double));
    }
    err = std::max(err, maxScaledError(toDoubles(outputs[i]), want[i]));
  }
  worst = std::max(worst, err);
  bool given = llvm::StringRef(loom_model_source_graph(model)) == "given";
  llvm::outs() << (given ? "check: the interpreter runs the graph as given "
                           "(the model before loom-compile's passes)\n"
                         : "check: the interpreter runs the graph as "
                           "compiled (after loom-compile's passes, which "
                           "this check does not cover: an artifact compiled "
                           "with --source=compiled, or before artifacts "
                           "embedded the graph as given)\n");
  llvm::outs() << llvm::format(
      "check: largest error vs the interpreter %.3g (tolerance %.3g); "
      "compiled %.3f ms (median), interpreter %.3f ms: %.1fx\n",
      err, o.tolerance, compiled * 1e3, seconds * 1e3, seconds / compiled);
  if (!(err <= o.tolerance))
    llvm::outs() << (given ? "check: the artifact computes another answer "
                             "than the graph as given: a compile-time pass, "
                             "the generated code or the runtime changes it "
                             "(loom-compile --source=compiled checks the "
                             "code and the runtime alone)\n"
                           : "check: the artifact computes another answer "
                             "than the graph as compiled: the generated "
                             "code or the runtime changes it\n");
  return 0;
}

int loom::run::runArtifact(const ArtifactRunOptions &o) {
  loom_model_options mo = {};
  mo.num_threads = int(o.threads);
  mo.weights_path = o.weightsFile.empty() ? nullptr : o.weightsFile.c_str();
  mo.device = o.device.empty() ? nullptr : o.device.c_str();
  loom_model *model = nullptr;
  if (loom_model_load(o.path.c_str(), &mo, &model) != LOOM_OK)
    return fail(loom_last_error());
  std::unique_ptr<loom_model, void (*)(loom_model *)> owner(model,
                                                            loom_model_free);
  if (o.printPlan) {
    int64_t only = o.entry.empty() ? -1
                                   : loom_model_find_entry(model,
                                                           o.entry.c_str());
    if (!o.entry.empty() && only < 0)
      return fail("no entry '" + o.entry + "' in " + o.path);
    for (int64_t e = 0; e < loom_model_num_entries(model); ++e)
      if (only < 0 || e == only)
        llvm::outs() << loom_entry_plan(model, e);
    return 0;
  }
  if (loom_step_num_micro_batches(model) > 0)
    return runStep(o, model);
  if (int64_t ranks = loom_model_world_ranks(model); ranks > 1)
    return fail(o.path + " runs on a world of " + std::to_string(ranks) +
                " ranks, which meet inside its entries (a cache-parallel, "
                "tensor-parallel or pipeline-stage decoder, "
                "docs/CacheParallel.md): run it with loom-generate "
                "(its ranks as threads, or under a launcher)");
  if (!o.reference.empty() || !o.stepProfile.empty())
    return fail(std::string(o.reference.empty() ? "--step-profile"
                                                : "--reference") +
                " applies to multi-rank artifacts (compiled from a "
                "partitioned module)");
  std::string entryName = o.entry.empty() ? "main" : o.entry;
  int64_t entry = loom_model_find_entry(model, entryName.c_str());
  if (entry < 0 && o.entry.empty() && loom_model_num_entries(model) == 1)
    entry = 0;
  if (entry < 0)
    return fail("no entry '" + entryName + "' in " + o.path);
  entryName = loom_model_entry_name(model, entry);
  llvm::outs() << "loom-run: " << o.path << " @" << entryName
               << " (compiled)\n";
  for (int64_t d = 0; d < loom_model_num_devices(model); ++d) {
    loom_device_desc desc;
    if (loom_model_device(model, d, &desc) != LOOM_OK)
      return fail(loom_last_error());
    llvm::outs() << "device " << d << ": " << desc.kind << ":" << desc.ordinal;
    if (*desc.chip)
      llvm::outs() << ", code for " << desc.chip;
    llvm::outs() << "\n";
  }
  std::unique_ptr<Source> source = parseSource(model, entryName);

  std::vector<HostTensor> inputs, outputs;
  if (int rc = makeInputs(o, model, entry, source.get(), inputs))
    return rc;
  for (int64_t i = 0; i < loom_entry_num_outputs(model, entry); ++i) {
    HostTensor t;
    loom_entry_output(model, entry, i, &t.desc);
    t.bytes.assign(t.desc.bytes, 0);
    outputs.push_back(std::move(t));
  }
  if (o.keepState && o.check)
    return fail("--keep-state carries the state across runs; --check "
                "compares one run from the given inputs: give one of them");
  std::vector<const void *> in;
  std::vector<void *> out;
  for (HostTensor &t : inputs)
    in.push_back(t.bytes.data());
  for (HostTensor &t : outputs)
    out.push_back(t.bytes.data());
  TiedState state(model, entry, inputs, outputs, out);

  loom_context *context = nullptr;
  if (loom_context_create(model, &context) != LOOM_OK)
    return fail(loom_last_error());
  std::unique_ptr<loom_context, void (*)(loom_context *)> ctxOwner(
      context, loom_context_free);
  for (unsigned r = 0; r < o.warmup; ++r) {
    if (!o.keepState)
      state.restore(inputs);
    if (loom_run(context, entry, in.data(), out.data()) != LOOM_OK)
      return fail(loom_last_error());
  }
  std::vector<double> times;
  double cpuStart = 0; // after the first run (its one-time work)
  for (unsigned r = 0; r < std::max(1u, o.repeat); ++r) {
    if (!o.keepState)
      state.restore(inputs);
    auto start = std::chrono::steady_clock::now();
    if (loom_run(context, entry, in.data(), out.data()) != LOOM_OK)
      return fail(loom_last_error());
    times.push_back(std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count());
    if (r == 0)
      cpuStart = run::processCpuSeconds();
  }
  double cpuPerRun =
      (run::processCpuSeconds() - cpuStart) / double(times.size() - 1);
  state.collect(inputs, outputs);
  if (!o.keepState)
    state.restore(inputs); // --check interprets the given inputs

  if (int rc = keepValidParts(model, context, entry, outputs))
    return rc;
  llvm::outs() << "outputs:\n";
  for (HostTensor &t : outputs) {
    llvm::outs() << "  " << t.desc.name << ": " << typeText(t.desc);
    if (t.validShape)
      llvm::outs() << validShapeText(*t.validShape);
    printSummary(llvm::outs(), toDoubles(t), o.printValues);
  }
  if (!o.outputsFile.empty())
    if (int rc = writeOutputs(o.outputsFile, outputs))
      return rc;
  printTimes(llvm::outs(), times);
  llvm::outs() << " on "
               << (o.threads ? o.threads : std::thread::hardware_concurrency())
               << " thread(s), compiled\n";
  if (int64_t kb = run::peakResidentKb(); kb >= 0)
    llvm::outs() << "memory: peak resident " << kb << " KiB\n";
  if (times.size() > 1)
    llvm::outs() << llvm::format("cpu: %.6f s per run (the process's CPU time, "
                                 "every thread, over runs 2 to %zu)\n",
                                 cpuPerRun, times.size());
  std::sort(times.begin(), times.end());
  double compiled = times[times.size() / 2];

  double worst = 0;
  bool compare = false;
  if (!o.compareFile.empty()) {
    if (int rc = compareWithFile(o, model, entry, outputs, worst))
      return rc;
    compare = true;
  }
  if (o.check) {
    if (int rc = checkAgainstInterpreter(o, model, entry, source.get(), inputs,
                                         outputs, compiled, worst))
      return rc;
    compare = true;
  }
  if (compare && !(worst <= o.tolerance))
    return fail("the results differ by more than --tolerance");
  return 0;
}
