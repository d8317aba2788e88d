//===- Interpret.cpp - The interpreter column of loom-bench-cpu -----------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "Interpret.h"

#include "loom/Conversion/ONNXToTG/ImportONNX.h"
#include "loom/Dialect/TG/IR/BoundedResults.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Interpreter/Kernels.h"
#include "loom/Support/Bounded.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace llvm;

namespace loom::bench {

namespace {

/// Collects the error diagnostics of a context as text, each with its
/// location ("model.onnx:node 'Conv_3': ..."); warnings and notes are kept
/// too, after the errors.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          std::string text;
          raw_string_ostream os(text);
          os << diag.getLocation() << ": " << diag;
          for (const Diagnostic &note : diag.getNotes())
            os << " (note: " << note << ")";
          (diag.getSeverity() == DiagnosticSeverity::Error ? errors : others)
              .push_back(text);
          return success();
        }) {}

  /// The errors (else the other diagnostics) joined by "; ", or `fallback`.
  std::string message(StringRef fallback) const {
    const std::vector<std::string> &list = errors.empty() ? others : errors;
    if (list.empty())
      return fallback.str();
    std::string s;
    for (const std::string &m : list)
      s += (s.empty() ? "" : "; ") + m;
    return s;
  }

private:
  std::vector<std::string> errors, others;
  ScopedDiagnosticHandler handler;
};

std::string typeName(Type type) {
  std::string s;
  raw_string_ostream os(s);
  os << type;
  return s;
}

std::string nameOf(func::FuncOp fn, unsigned i, bool result) {
  StringAttr name = result ? fn.getResultAttrOfType<StringAttr>(i, "tg.name")
                           : fn.getArgAttrOfType<StringAttr>(i, "tg.name");
  if (name)
    return name.str();
  return (result ? "result" : "arg") + std::to_string(i);
}

/// The signature tensor `type` called `name`, as safetensors sees it.
Expected<TensorDesc> describe(StringRef name, Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape())
    return createStringError("'" + name + "' has type " + typeName(type) +
                             "; the benchmark needs static shapes (give --dim)");
  auto dtype = tg::dtypeForElementType(ranked.getElementType());
  if (!dtype)
    return createStringError("'" + name + "' has type " + typeName(type) +
                             ", which safetensors cannot hold");
  return TensorDesc{name.str(), safetensors::dtypeName(*dtype).str(),
                    std::vector<int64_t>(ranked.getShape().begin(),
                                         ranked.getShape().end())};
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

} // namespace

Expected<InterpretResult> interpretModel(StringRef onnxPath,
                                         StringRef weightsPath,
                                         StringRef inputsPath,
                                         const InterpretOptions &options) {
  using D = interp::F32Domain;
  InterpretResult result;

  DialectRegistry registry;
  registerONNXImportDialects(registry);
  registry.insert<tg::TGDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  DiagnosticCollector diagnostics(&context);

  // Import, as loom-translate --import-onnx does, weights to `weightsPath`.
  auto bytes = MemoryBuffer::getFile(onnxPath, /*IsText=*/false,
                                     /*RequiresNullTerminator=*/false);
  if (!bytes)
    return createStringError("cannot read " + onnxPath + ": " +
                             bytes.getError().message());
  ONNXImportOptions importOptions;
  for (const auto &[name, value] : options.dims)
    importOptions.dims[name] = value;
  importOptions.weightsAttr = weightsPath.str();
  auto importStart = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> module;
  {
    safetensors::Writer weights;
    module = importONNX((*bytes)->getBuffer(), onnxPath, ONNXFormat::Binary,
                        &context, importOptions, weights);
    if (!module)
      return createStringError("import failed: " +
                               diagnostics.message("no diagnostic"));
    if (Error err = weights.write(weightsPath))
      return std::move(err);
  }
  result.importSeconds = secondsSince(importStart);
  bytes->reset();

  auto fn = module->lookupSymbol<func::FuncOp>("main");
  if (!fn)
    return createStringError("the imported module has no @main");
  FunctionType type = fn.getFunctionType();

  // Inputs from the seed, as loom-run draws them; written for the peers.
  std::vector<interp::Tensor<D>> args;
  RunTensors inputs;
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    auto desc = describe(nameOf(fn, i, false), t);
    if (!desc)
      return desc.takeError();
    args.push_back(interp::randomArgument<D>(fn.getArgument(i), options.seed));
    inputs[desc->name] =
        RunTensor{*safetensors::parseDType(desc->dtype), desc->shape,
                  args.back().toDoubles()};
    result.inputs.push_back(std::move(*desc));
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    auto desc = describe(nameOf(fn, i, true), t);
    if (!desc)
      return desc.takeError();
    result.outputs.push_back(std::move(*desc));
  }
  if (Error err = writeTensors(inputs, inputsPath))
    return std::move(err);

  // The interpreter: one warm-up run, then timed runs within the budget.
  interp::setNumThreads(options.threads);
  result.peakIsPerModel = resetPeakRss();
  interp::InterpreterOptions interpOptions;
  interpOptions.weightsFile = weightsPath.str();
  interp::Interpreter<D> interpreter(*module, interpOptions);
  FailureOr<std::vector<interp::Tensor<D>>> outputs = failure();
  double spent = 0;
  for (unsigned r = 0; r <= options.repeat; ++r) {
    if (r > 1 && spent >= options.budgetSeconds) {
      result.capped = true;
      break;
    }
    auto start = std::chrono::steady_clock::now();
    outputs = interpreter.run(fn, args);
    double seconds = secondsSince(start);
    if (failed(outputs))
      return createStringError("the interpreter failed: " +
                               diagnostics.message("no diagnostic"));
    if (r == 0) {
      result.warmupSeconds = seconds;
    } else {
      result.seconds.push_back(seconds);
      spent += seconds;
    }
  }
  result.peakRssKb = peakRssKb();

  // A result of data-dependent length is padded to its bound: only its valid
  // part, as its length result says, is an output (what ONNX Runtime and the
  // artifact report; docs/ONNX/Import.md "Bounded dynamic shapes").
  for (auto [i, t] : llvm::enumerate(*outputs)) {
    const TensorDesc &desc = result.outputs[i];
    std::vector<int64_t> shape = t.shape;
    std::vector<double> values = t.toDoubles();
    if (auto bound = tg::getResultBound(fn, i)) {
      auto length =
          int64_t(D::toDouble((*outputs)[bound->lengthResult].data[0]));
      cutToValid(values, shape, bound->dim, length);
    }
    result.values[desc.name] = RunTensor{*safetensors::parseDType(desc.dtype),
                                         std::move(shape), std::move(values)};
  }
  return result;
}

} // namespace loom::bench
