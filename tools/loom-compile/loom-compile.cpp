//===- loom-compile.cpp - Loom's ahead-of-time compiler
//--------------------===//
//
// Part of Loom. Compiles a tg module (.mlir) or an ONNX model (.onnx,
// .onnxtext) into one shared object for the CPU runtime (docs/Artifact.md,
// docs/tools/loom-compile.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Compiler.h"
#include "loom/Compiler/Passes.h"
#include "loom/Conversion/ONNXToTG/ImportONNX.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/Utils/Weights.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace loom;
namespace cl = llvm::cl;

static cl::OptionCategory compileCat("loom-compile options");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.mlir|model.onnx>"),
                                      cl::Required, cl::cat(compileCat));
static cl::opt<std::string> outputFile("o", cl::desc("The artifact to write"),
                                       cl::value_desc("model.so"), cl::Required,
                                       cl::cat(compileCat));
static cl::opt<std::string>
    cpu("cpu",
        cl::desc("CPU to generate code for: an LLVM CPU name (znver3, "
                 "skylake-avx512, x86-64-v3, ...) or native (default: this "
                 "machine's CPU and features)"),
        cl::init("native"), cl::cat(compileCat));
static cl::opt<std::string> weightsStorage(
    "weights",
    cl::desc("Where the artifact keeps its weights: embedded (in the .so, "
             "default) or external (a safetensors file beside it, "
             "memory-mapped at load)"),
    cl::init("embedded"), cl::cat(compileCat));
static cl::opt<std::string>
    weightsFile("weights-file",
                cl::desc("The model's weights (default: the module's "
                         "tg.weights attribute)"),
                cl::init(""), cl::cat(compileCat));
static cl::opt<std::string>
    convBackend("conv-backend",
                cl::desc("Backend of convolutions: onednn or codegen"),
                cl::init("onednn"), cl::cat(compileCat));
static cl::opt<std::string> matmulBackend(
    "matmul-backend",
    cl::desc("Backend of matrix products: onednn, openblas or codegen"),
    cl::init("onednn"), cl::cat(compileCat));
static cl::list<std::string>
    dims("dim", cl::desc("ONNX input: size of a symbolic input dimension"),
         cl::value_desc("NAME=VALUE"), cl::cat(compileCat));
static cl::opt<bool>
    printSchedule("print-schedule",
                  cl::desc("Print each entry's steps and memory plan"),
                  cl::cat(compileCat));
static cl::opt<bool> timeStages("time-stages",
                                cl::desc("Print the time of each stage"),
                                cl::cat(compileCat));
static cl::opt<bool>
    noSource("no-source",
             cl::desc("Do not embed the tg module (loom-run --check needs it)"),
             cl::cat(compileCat));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "loom-compile") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  compiler::registerCompilerPasses();
  cl::HideUnrelatedOptions(compileCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-compile: compile a tg module or an ONNX model into a shared "
      "object for Loom's CPU runtime\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<tg::TGDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  StringRef path(inputFile);
  OwningOpRef<ModuleOp> module;
  std::optional<safetensors::File> weights;
  if (path.ends_with(".onnx") || path.ends_with(".onnxtext")) {
    ONNXImportOptions options;
    for (const std::string &d : dims) {
      auto [name, value] = StringRef(d).split('=');
      int64_t v;
      if (name.empty() || value.getAsInteger(10, v) || v < 0)
        return fail("--dim expects NAME=VALUE with VALUE >= 0, got '" + d +
                    "'");
      options.dims[name] = v;
    }
    // The initializers are compiled from memory; the attribute only names
    // them (the artifact stores them itself).
    options.weightsAttr =
        llvm::sys::path::stem(inputFile).str() + ".safetensors";
    safetensors::Writer writer;
    module = importONNX(input->getBuffer(), inputFile,
                        path.ends_with(".onnxtext") ? ONNXFormat::Text
                                                    : ONNXFormat::Binary,
                        &context, options, writer);
    if (!module)
      return 1;
    auto parsed = safetensors::File::parse(llvm::MemoryBuffer::getMemBufferCopy(
        writer.serialize(), inputFile + " (weights)"));
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    weights.emplace(std::move(*parsed));
  } else {
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
    if (tg::usesWeights(*module)) {
      auto file = tg::openWeights(*module, weightsFile);
      if (failed(file))
        return 1;
      weights.emplace(std::move(*file));
    }
  }

  compiler::CompileOptions options;
  options.target.cpu = cpu;
  options.weightsStorage = weightsStorage;
  options.convBackend = convBackend;
  options.matmulBackend = matmulBackend;
  options.embedSource = !noSource;
  if (printSchedule)
    options.scheduleOut = &llvm::outs();
  if (timeStages)
    options.timingOut = &llvm::errs();
  if (failed(compiler::compileToArtifact(*module, weights ? &*weights : nullptr,
                                         options, outputFile)))
    return 1;
  return 0;
}
