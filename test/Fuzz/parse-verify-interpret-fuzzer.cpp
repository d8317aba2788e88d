//===- parse-verify-interpret-fuzzer.cpp - libFuzzer target ----------------===//
//
// Part of Loom. Feeds arbitrary bytes through the path every user input
// takes: parse as MLIR (tg + func), verify, canonicalise, and interpret every
// function on random inputs in the f32 and modp domains. Any crash, assertion,
// sanitizer report or hang is a bug; diagnostics are the expected outcome for
// bad input.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Interpreter/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace loom;
using namespace loom::interp;

namespace {

template <class D>
void interpretAll(ModuleOp module) {
  InterpreterOptions options;
  // Keep every run small and never touch files named by the input.
  options.maxElements = 1 << 16;
  options.maxCallDepth = 8;
  options.weightsFile = "/nonexistent/loom-fuzz.safetensors";
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    std::vector<Tensor<D>> args;
    bool ok = true;
    for (Type t : fn.getArgumentTypes()) {
      auto rt = dyn_cast<RankedTensorType>(t);
      if (!rt || !rt.hasStaticShape()) {
        ok = false;
        break;
      }
      std::vector<int64_t> shape(rt.getShape().begin(), rt.getShape().end());
      int64_t n = checkedNumElements(shape);
      if (n < 0 || n > options.maxElements) {
        ok = false;
        break;
      }
      args.push_back(Tensor<D>::random(shape, 1));
    }
    if (!ok)
      continue;
    Interpreter<D> interp(module, options);
    (void)interp.run(fn, args);
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setNumThreads(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  registry.insert<tg::TGDialect, func::FuncDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Swallow diagnostics: they are the correct answer to bad input.
  ScopedDiagnosticHandler handler(&context,
                                  [](Diagnostic &) { return success(); });
  // MLIR's lexer relies on the NUL after the buffer that every file a tool
  // reads has (llvm::MemoryBuffer); libFuzzer's bytes have none, so copy.
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, &context, "fuzz.mlir");
  if (!module || failed(verify(*module)))
    return 0;
  interpretAll<F32Domain>(*module);
  interpretAll<ModPDomain>(*module);
  PassManager pm(&context);
  pm.addPass(createCanonicalizerPass());
  if (succeeded(pm.run(*module)) && succeeded(verify(*module)))
    interpretAll<F32Domain>(*module);
  return 0;
}
