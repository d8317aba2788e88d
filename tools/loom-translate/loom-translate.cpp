//===- loom-translate.cpp - ONNX to tg and back
//----------------------------===//
//
// Part of Loom.
//
//   loom-translate --import-onnx model.onnx -o model.mlir
//       writes model.mlir and, when the model has weights, model.safetensors
//       beside it (named by the module attribute tg.weights);
//   loom-translate --import-onnx model.onnxtext ...      ONNX's text syntax
//   loom-translate --export-onnx model.mlir -o model.onnx
//       reads the weights from the module's safetensors file.
//
// The work is done by the library (loom/Conversion/ONNXToTG/ImportONNX.h,
// loom/Conversion/TGToONNX/ExportONNX.h); this is its command line.
//
//===----------------------------------------------------------------------===//

#include "loom/Conversion/ONNXToTG/ImportONNX.h"
#include "loom/Conversion/TGToONNX/ExportONNX.h"
#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/CacheInPlace.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace loom;
namespace cl = llvm::cl;

static cl::OptionCategory translateCat("loom-translate options");

static cl::opt<bool> importONNXMode("import-onnx",
                                    cl::desc("Translate an ONNX model to tg"),
                                    cl::cat(translateCat));
static cl::opt<bool> exportONNXMode("export-onnx",
                                    cl::desc("Translate a tg module to ONNX"),
                                    cl::cat(translateCat));
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input>"),
                                      cl::init("-"), cl::cat(translateCat));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(translateCat));
static cl::opt<bool>
    onnxText("onnx-text",
             cl::desc("The ONNX side is ONNX's textual syntax (the default for "
                      "files ending in .onnxtext)"),
             cl::cat(translateCat));
static cl::list<std::string>
    dims("dim", cl::desc("Size of a symbolic input dimension (import)"),
         cl::value_desc("NAME=VALUE"), cl::cat(translateCat));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Shape of a graph input, replacing the declared one (import)"),
    cl::value_desc("NAME=D0xD1x..."), cl::cat(translateCat));
static cl::list<std::string> bindInputs(
    "bind-input",
    cl::desc("Bind a graph input to a value at import time, from a "
             "serialized TensorProto (NAME=FILE.pb) or as a list of values "
             "(NAME=V0,V1,...) that fills the input's declared shape (a "
             "scalar: NAME=V); it becomes a constant, recorded in the "
             "module's loom.onnx.bound_inputs (import)"),
    cl::value_desc("NAME=VALUE"), cl::cat(translateCat));
static cl::alias bindAlias("bind", cl::desc("Alias for --bind-input"),
                           cl::aliasopt(bindInputs), cl::cat(translateCat));
static cl::opt<int64_t>
    opset("opset",
          cl::desc("Opset the model is converted to before import (0: keep the "
                   "model's; default 17)"),
          cl::init(17), cl::cat(translateCat));
static cl::opt<std::string> weightsFile(
    "weights-file",
    cl::desc("Import: where to write the weights (default: beside the "
             "output, <output stem>.safetensors). Export: the weights to read "
             "(default: the module's tg.weights)"),
    cl::value_desc("file"), cl::init(""), cl::cat(translateCat));
static cl::opt<std::string>
    entry("entry",
          cl::desc("Export: the function to export (default @main). Import: "
                   "the name of the function (default main)"),
          cl::init(""), cl::cat(translateCat));
static cl::opt<bool> noFuse(
    "no-fuse",
    cl::desc("Import: keep exporters' spellings of LayerNormalization and "
             "Gelu as they are instead of fusing them into tg.layernorm and "
             "tg.gelu"),
    cl::cat(translateCat));
static cl::opt<int64_t> cacheInPlace(
    "cache-in-place",
    cl::desc("Import: C > 0 makes the concat(past, new) key/value cache of a "
             "decoder export a cache of C positions updated in place, read "
             "up to a run-time past_length input (--tg-cache-in-place, "
             "docs/Decoding.md); a past it cannot rewrite stays as it is, "
             "with a remark saying why (default 0: off)"),
    cl::init(0), cl::cat(translateCat));
static cl::opt<bool> noCheck("no-check",
                             cl::desc("Do not run the ONNX checker"),
                             cl::cat(translateCat));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "loom-translate") << message << "\n";
  return 1;
}

/// ONNX text when --onnx-text says so, else by the file's extension.
static bool isText(llvm::StringRef file) {
  if (onnxText.getNumOccurrences())
    return onnxText;
  return file.ends_with(".onnxtext");
}

static int runImport(MLIRContext &context) {
  ONNXImportOptions options;
  options.targetOpset = opset;
  options.check = !noCheck;
  options.fuseIdioms = !noFuse;
  if (!entry.empty())
    options.functionName = entry;
  for (const std::string &d : dims) {
    auto [name, value] = llvm::StringRef(d).split('=');
    int64_t v;
    if (name.empty() || value.getAsInteger(10, v) || v < 0)
      return fail("--dim expects NAME=VALUE with VALUE >= 0, got '" + d + "'");
    options.dims[name] = v;
  }
  for (const std::string &s : inputShapes) {
    auto [name, shapeText] = llvm::StringRef(s).rsplit('=');
    llvm::SmallVector<int64_t> shape;
    llvm::SmallVector<llvm::StringRef> parts;
    if (!shapeText.empty())
      shapeText.split(parts, 'x');
    for (llvm::StringRef p : parts) {
      int64_t v;
      if (p.getAsInteger(10, v) || v < 0)
        return fail("--input-shape expects NAME=D0xD1x..., got '" + s + "'");
      shape.push_back(v);
    }
    if (name.empty())
      return fail("--input-shape expects NAME=D0xD1x..., got '" + s + "'");
    options.inputShapes[name] = shape;
  }

  for (const std::string &b : bindInputs) {
    auto [name, value] = llvm::StringRef(b).split('=');
    if (name.empty() || value.empty())
      return fail("--bind-input expects NAME=FILE.pb or NAME=V0,V1,..., got '" +
                  b + "'");
    ONNXTensor t;
    if (value.ends_with(".pb")) {
      auto buf = llvm::MemoryBuffer::getFile(value);
      if (!buf)
        return fail("cannot read " + value + ": " + buf.getError().message());
      auto read = readONNXTensor((*buf)->getBuffer(), value);
      if (!read)
        return fail(llvm::toString(read.takeError()));
      t = std::move(*read);
    } else {
      llvm::SmallVector<llvm::StringRef> parts;
      value.split(parts, ',');
      for (llvm::StringRef p : parts) {
        double v;
        if (p.trim().getAsDouble(v))
          return fail("--bind-input: '" + p + "' is not a number");
        t.values.push_back(v);
      }
      t.shapeFromInput = true;
    }
    if (options.boundInputs.count(name))
      return fail("graph input '" + name + "' is bound twice");
    options.boundInputs[name] = std::move(t);
  }

  // Where the weights go, and how the module names them.
  std::string weightsPath = weightsFile;
  if (weightsPath.empty() && outputFile != "-") {
    llvm::SmallString<256> p(outputFile.getValue());
    llvm::sys::path::replace_extension(p, "safetensors");
    weightsPath = std::string(p);
  }
  if (!weightsPath.empty()) {
    if (outputFile == "-") {
      options.weightsAttr = weightsPath;
    } else {
      llvm::SmallString<256> out(outputFile.getValue()), w(weightsPath);
      llvm::sys::fs::make_absolute(out);
      llvm::sys::fs::make_absolute(w);
      options.weightsAttr =
          llvm::sys::path::parent_path(out) == llvm::sys::path::parent_path(w)
              ? llvm::sys::path::filename(w).str()
              : std::string(w);
    }
  }

  std::string error;
  auto input = mlir::openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  safetensors::Writer writer;
  OwningOpRef<ModuleOp> module =
      importONNX(input->getBuffer(), inputFile,
                 isText(inputFile) ? ONNXFormat::Text : ONNXFormat::Binary,
                 &context, options, writer);
  if (!module)
    return 1;
  if (cacheInPlace < 0)
    return fail("--cache-in-place must be a capacity C > 0 (or 0: off)");
  if (cacheInPlace > 0) {
    // The rewrite folds small computations on the weights first: it reads
    // them from the importer's, in memory.
    auto weights =
        safetensors::File::parse(writer.toBuffer(inputFile + " (weights)"));
    if (!weights)
      return fail(llvm::toString(weights.takeError()));
    if (failed(tg::makeCachesInPlace(*module, cacheInPlace, &*weights)))
      return 1;
  }
  if ((*module)->hasAttr(tg::TGDialect::kWeightsAttrName)) {
    if (weightsPath.empty())
      return fail("the model has weights: give -o FILE (they go beside it) or "
                  "--weights-file FILE");
    if (auto err = writer.write(weightsPath))
      return fail(llvm::toString(std::move(err)));
  }
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

static int runExport(MLIRContext &context) {
  std::string error;
  auto input = mlir::openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(verify(*module)))
    return 1;
  ONNXExportOptions options;
  options.entry = entry;
  options.weightsFile = weightsFile;
  options.text = isText(outputFile);
  options.check = !noCheck;
  // Produce the model in memory first: a failure leaves no output file.
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed(exportONNX(*module, os, options)))
    return 1;
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  output->os() << bytes;
  output->keep();
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::HideUnrelatedOptions(translateCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-translate: ONNX models to the tg dialect and back\n\n"
      "  loom-translate --import-onnx model.onnx -o model.mlir\n"
      "  loom-translate --import-onnx model.onnxtext --dim N=1 -o model.mlir\n"
      "  loom-translate --export-onnx model.mlir -o model.onnx\n");
  if (importONNXMode == exportONNXMode)
    return fail("give exactly one of --import-onnx and --export-onnx");

  DialectRegistry registry;
  registerONNXImportDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  return importONNXMode ? runImport(context) : runExport(context);
}
