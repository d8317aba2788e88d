//===- Check.cpp - Compare an optimised module with its original ----------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/Check.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::search;

namespace {

using D = interp::F64Domain;
using Tensor = interp::Tensor<D>;

FailureOr<std::vector<Tensor>> randomInputs(func::FuncOp fn, uint64_t seed) {
  std::vector<Tensor> args;
  for (BlockArgument arg : fn.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || !t.hasStaticShape())
      return fn.emitError("tg-superopt check: argument #")
             << arg.getArgNumber() << " is not a statically shaped tensor";
    args.push_back(interp::randomArgument<D>(arg, seed));
  }
  return args;
}

} // namespace

LogicalResult search::checkEquivalent(ModuleOp original, ModuleOp optimized,
                                      const CheckOptions &options) {
  // Weights: the given file, the module's own, or random ones.
  std::string weights = options.weightsFile;
  std::optional<llvm::FileRemover> removeTemp;
  if (weights.empty() && tg::usesWeights(original)) {
    {
      ScopedDiagnosticHandler quiet(original.getContext(),
                                    [](Diagnostic &) { return success(); });
      FailureOr<std::string> own = tg::resolveWeightsPath(original, "");
      if (succeeded(own) && llvm::sys::fs::exists(*own))
        weights = *own;
    }
    if (weights.empty()) {
      SmallString<128> path;
      if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
              "loom-superopt-check", "safetensors", path))
        return optimized.emitError("tg-superopt check: cannot create a "
                                   "temporary weights file: ")
               << ec.message();
      removeTemp.emplace(path);
      if (failed(tg::writeRandomWeights(original, path, options.seed)))
        return failure();
      weights = path.str().str();
    }
  }

  interp::InterpreterOptions iopts;
  iopts.weightsFile = weights;
  interp::Interpreter<D> before(original, iopts), after(optimized, iopts);
  for (auto fn : optimized.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    auto ref = original.lookupSymbol<func::FuncOp>(fn.getSymName());
    if (!ref)
      continue;
    FailureOr<std::vector<Tensor>> args = randomInputs(ref, options.seed);
    if (failed(args))
      return failure();
    auto want = before.run(ref, *args);
    if (failed(want))
      return fn.emitError("tg-superopt check: the original @")
             << fn.getSymName() << " fails to run";
    auto got = after.run(fn, *args);
    if (failed(got))
      return fn.emitError("tg-superopt check: the optimised @")
             << fn.getSymName() << " fails to run";
    for (size_t r = 0; r < want->size(); ++r) {
      const Tensor &a = (*want)[r], &b = (*got)[r];
      if (a.shape != b.shape)
        return fn.emitError("tg-superopt check: result #")
               << r << " of @" << fn.getSymName() << " changed shape";
      double scale = 0;
      for (double v : a.data)
        if (std::isfinite(v))
          scale = std::max(scale, std::fabs(v));
      double tol = options.atol + options.rtol * scale;
      double worst = 0;
      int64_t where = -1;
      for (size_t i = 0; i < a.data.size(); ++i) {
        double x = a.data[i], y = b.data[i];
        if (std::isnan(x) && std::isnan(y))
          continue;
        double err =
            std::isnan(x) != std::isnan(y) ? INFINITY : std::fabs(x - y);
        if (x == y)
          err = 0; // equal infinities
        if (err > worst) {
          worst = err;
          where = i;
        }
      }
      if (worst > tol)
        return fn.emitError("tg-superopt check: result #")
               << r << " of @" << fn.getSymName()
               << " differs from the original: max |error| " << worst
               << " at element " << where << " (original " << a.data[where]
               << ", optimised " << b.data[where] << "), tolerance " << tol
               << "; a rule or the matcher is unsound";
    }
  }
  return success();
}
