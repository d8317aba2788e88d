//===- loom-zoo.cpp - Build the models of the papers Loom follows ---------===//
//
// Part of Loom. Writes one of the zoo's models as tg dialect MLIR, and
// optionally random weights for it:
//
//   loom-zoo MODEL [--batch N[,N...]] [--seq N] [--layers N] [--hidden N]
//            [--vocab N] [--image N] [--context N] [--seed S] -o OUT.mlir [--weights OUT.safetensors]
//            [--onnx OUT.onnx] [--op-counts]
//   loom-zoo --list
//
// The module's `tg.weights` attribute names the weights file: the file given
// with --weights (its base name when it lies beside OUT.mlir, else its
// absolute path), or OUT's stem + `.safetensors`. --onnx (where Loom is
// built with ONNX) also exports the model with those weights as ONNX.
// Several batch sizes make one function per size, @<entry>_b<N>, over the
// same weights: an artifact's batch range (docs/tools/loom-serve.md).
//
//===----------------------------------------------------------------------===//

#include "Zoo.h"

#ifdef LOOM_ZOO_HAVE_ONNX
#include "loom/Conversion/TGToONNX/ExportONNX.h"
#endif

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace loom;
using namespace loom::zoo;
namespace cl = llvm::cl;

namespace {

/// One function, `entry`, of `model` at `options` in a module of its own.
FailureOr<OwningOpRef<ModuleOp>> buildModule(MLIRContext &context,
                                             const ModelInfo &model,
                                             const ModelOptions &options,
                                             const std::string &entry,
                                             const std::string &weights) {
  GraphBuilder b(context, weights, entry);
  Outputs outputs = model.build(b, options);
  SmallVector<Value> values;
  SmallVector<StringRef> names;
  for (const Output &o : outputs) {
    values.push_back(o.value);
    names.push_back(o.name);
  }
  if (outputs.empty() && !b.hadError())
    b.fail("model '" + std::string(model.name) + "' built no outputs");
  return b.finish(values, names);
}

cl::OptionCategory zooCategory("loom-zoo options");

cl::opt<std::string> modelName(cl::Positional, cl::desc("<model>"),
                               cl::init(""), cl::cat(zooCategory));
cl::opt<bool> list("list", cl::desc("List the models and exit"),
                   cl::cat(zooCategory));
cl::opt<std::string> batch(
    "batch",
    cl::desc("Batch size (default 1); several, comma-separated: one function "
             "@<entry>_b<N> per size over the same weights (a batch range "
             "for loom-serve)"),
    cl::init("1"), cl::cat(zooCategory));
cl::opt<int64_t> seq("seq", cl::desc("Sequence length (models that have one)"),
                     cl::cat(zooCategory));
cl::opt<int64_t> layers("layers",
                        cl::desc("Number of layers (models that have it)"),
                        cl::cat(zooCategory));
cl::opt<int64_t> hidden("hidden",
                        cl::desc("Hidden width (models that have one)"),
                        cl::cat(zooCategory));
cl::opt<int64_t> vocab("vocab",
                       cl::desc("Embedding table rows (models that have one)"),
                       cl::cat(zooCategory));
cl::opt<int64_t> image("image",
                       cl::desc("Input height and width (the CNNs)"),
                       cl::cat(zooCategory));
cl::opt<int64_t> context("context",
                         cl::desc("Key/value cache capacity in tokens "
                                  "(decoder programs)"),
                         cl::cat(zooCategory));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random weights"),
                       cl::init(0), cl::cat(zooCategory));
cl::opt<std::string> output("o", cl::desc("Output .mlir file ('-': stdout)"),
                            cl::value_desc("file"), cl::init("-"),
                            cl::cat(zooCategory));
cl::opt<std::string>
    weightsFile("weights",
                cl::desc("Also write random weights to this safetensors file"),
                cl::value_desc("file"), cl::init(""), cl::cat(zooCategory));
#ifdef LOOM_ZOO_HAVE_ONNX
cl::opt<std::string>
    onnxFile("onnx",
             cl::desc("Also export the model with its random weights as "
                      "ONNX to this file (needs --weights)"),
             cl::value_desc("file"), cl::init(""), cl::cat(zooCategory));
#endif
cl::opt<bool> opCounts("op-counts",
                       cl::desc("Print the op counts and parameter count to "
                                "stderr"),
                       cl::cat(zooCategory));

int listModels() {
  llvm::outs() << "models (loom-zoo MODEL -o OUT.mlir):\n";
  for (const ModelInfo &m : models()) {
    llvm::outs() << "  " << m.name << "\n      " << m.summary
                 << "\n      source: " << m.source << "\n";
    if (m.options)
      llvm::outs() << "      options: " << m.optionHelp << "\n";
  }
  return 0;
}

/// The `tg.weights` attribute for the module written to `out`.
std::string weightsAttr(StringRef model, StringRef out, StringRef weights) {
  if (weights.empty()) {
    if (out == "-")
      return (model + ".safetensors").str();
    return (llvm::sys::path::stem(out) + ".safetensors").str();
  }
  llvm::SmallString<256> absWeights(weights), absOut(out == "-" ? "." : out);
  llvm::sys::fs::make_absolute(absWeights);
  llvm::sys::fs::make_absolute(absOut);
  StringRef outDir =
      out == "-" ? StringRef(absOut) : llvm::sys::path::parent_path(absOut);
  if (llvm::sys::path::parent_path(absWeights) == outDir)
    return llvm::sys::path::filename(weights).str();
  return std::string(absWeights);
}

void printStats(ModuleOp module) {
  llvm::StringMap<unsigned> counts = countOps(module);
  std::vector<std::pair<std::string, unsigned>> sorted;
  for (const auto &it : counts)
    sorted.emplace_back(it.getKey().str(), it.getValue());
  llvm::sort(sorted);
  // A weight read by several entries (a decoder's prefill and decode) is
  // one parameter tensor.
  int64_t params = 0;
  llvm::StringSet<> seen;
  module.walk([&](tg::WeightOp op) {
    if (seen.insert(op.getName()).second)
      params += op.getType().getNumElements();
  });
  llvm::errs() << "ops:\n";
  for (const auto &[name, count] : sorted)
    llvm::errs() << "  " << llvm::left_justify(name, 22) << " " << count
                 << "\n";
  llvm::errs() << "parameters: " << params << " ("
               << llvm::format("%.1f", double(params) * 4 / 1e6)
               << " MB in f32)\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(zooCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-zoo: writes a model of the TASO / TENSAT / PET / GraphPipe "
      "evaluations as tg dialect MLIR (and random weights)\n");
  if (list)
    return listModels();
  if (modelName.empty()) {
    llvm::errs() << "loom-zoo: no model given (loom-zoo --list shows them)\n";
    return 2;
  }
  const ModelInfo *model = findModel(modelName);
  if (!model) {
    llvm::errs() << "loom-zoo: unknown model '" << modelName
                 << "' (loom-zoo --list shows them)\n";
    return 2;
  }
  std::vector<int64_t> batches;
  for (StringRef text : llvm::split(StringRef(batch), ',')) {
    int64_t n = 0;
    if (text.trim().getAsInteger(10, n) || n < 1 || n > (1 << 20) ||
        llvm::is_contained(batches, n)) {
      llvm::errs() << "loom-zoo: bad --batch " << batch
                   << " (expected sizes of 1 to 1048576, comma-separated, "
                      "each once)\n";
      return 2;
    }
    batches.push_back(n);
  }
  ModelOptions options;
  options.batch = batches.front();
  struct {
    cl::opt<int64_t> &opt;
    unsigned mask;
    std::optional<int64_t> &slot;
  } settings[] = {{seq, kSeq, options.seq},
                  {layers, kLayers, options.layers},
                  {hidden, kHidden, options.hidden},
                  {vocab, kVocab, options.vocab},
                  {image, kImage, options.image},
                  {context, kContext, options.context}};
  for (auto &s : settings) {
    if (!s.opt.getNumOccurrences())
      continue;
    if (!(model->options & s.mask)) {
      llvm::errs() << "loom-zoo: model '" << model->name << "' has no --"
                   << s.opt.ArgStr << " option";
      if (model->options)
        llvm::errs() << " (" << model->optionHelp << ")";
      llvm::errs() << "\n";
      return 2;
    }
    s.slot = s.opt.getValue();
  }
  if (options.image) {
    int64_t least = model->build == buildInceptionV3 ? 75 : 32;
    if (*options.image < least || *options.image > 4096) {
      llvm::errs() << "loom-zoo: bad --image " << *options.image
                   << " for model '" << model->name << "' (expected " << least
                   << " to 4096)\n";
      return 2;
    }
  }

#ifdef LOOM_ZOO_HAVE_ONNX
  if (!onnxFile.empty() && batches.size() > 1) {
    llvm::errs() << "loom-zoo: --onnx exports one batch size, not "
                 << batches.size() << "\n";
    return 2;
  }
  if (!onnxFile.empty() && weightsFile.empty()) {
    llvm::errs() << "loom-zoo: --onnx needs --weights (the ONNX model "
                    "carries the weights)\n";
    return 2;
  }
#endif

  MLIRContext mlirContext;
  std::optional<OwningOpRef<ModuleOp>> module;
  for (int64_t n : batches) {
    options.batch = n;
    std::string entry = batches.size() == 1
                            ? std::string(model->entry)
                            : std::string(model->entry) + "_b" + llvm::itostr(n);
    auto built = buildModule(mlirContext, *model, options, entry,
                             weightsAttr(model->name, output, weightsFile));
    if (failed(built)) {
      llvm::errs() << "loom-zoo: could not build '" << model->name << "'\n";
      return 1;
    }
    if (!module) {
      module = std::move(*built);
      continue;
    }
    // The other sizes' functions join the first size's module.
    for (Operation &op : llvm::make_early_inc_range(*(*built)->getBody()))
      op.moveBefore((**module).getBody(), (**module).getBody()->end());
  }

  std::string header;
  llvm::raw_string_ostream os(header);
  os << model->name << ": " << model->summary << "\n"
     << "Configuration: " << model->source << "\n"
     << "Generated by: loom-zoo";
  for (int i = 1; i < argc; ++i)
    os << " " << argv[i];
  os << "\nWeights: tg.weight ops read from the safetensors file named by "
        "tg.weights; random ones:\n  loom-run FILE.mlir "
        "--write-random-weights "
     << weightsAttr(model->name, output, weightsFile);
  if (failed(writeModule(**module, output, header)))
    return 1;
  if (!weightsFile.empty() &&
      failed(writeRandomWeights(**module, weightsFile, seed)))
    return 1;
#ifdef LOOM_ZOO_HAVE_ONNX
  if (!onnxFile.empty()) {
    std::error_code ec;
    llvm::ToolOutputFile onnx(onnxFile, ec, llvm::sys::fs::OF_None);
    if (ec) {
      llvm::errs() << "loom-zoo: cannot write '" << onnxFile
                   << "': " << ec.message() << "\n";
      return 1;
    }
    ONNXExportOptions exportOptions;
    exportOptions.weightsFile = weightsFile;
    exportOptions.producerName = "loom-zoo";
    if (failed(exportONNX(**module, onnx.os(), exportOptions)))
      return 1;
    onnx.keep();
  }
#endif
  if (opCounts)
    printStats(**module);
  return 0;
}
