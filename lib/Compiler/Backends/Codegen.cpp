//===- Codegen.cpp - Loom's generated kernels as a backend ----------------===//
//
// Part of Loom. The code generator runs every computing tg op (each has a
// LinalgLoweringOpInterface model; OpFactsTest checks it): a fragment becomes one generated kernel
// (tg -> linalg -> LLVM, lib/Codegen/CPU). As a candidate
// for placement it is an anchor op with the chain of single-use elementwise
// consumers its fusion would fold into the same kernel.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Backend.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace loom;
using namespace loom::compiler;
using namespace loom::compiler::patterns;

namespace {

/// The longest epilogue a candidate grows (anchor included).
constexpr size_t kMaxCandidateOps = 4;

/// Whether a generated kernel computes \p op: not an op whose value is
/// the world's (tg::ReadsWorld: the runtime's loomrt steps, with no
/// generated form), which --backends=auto would otherwise try to time as
/// a kernel.
bool computes(Operation *op) {
  return (op->hasTrait<tg::Elementwise>() || op->hasTrait<tg::Structured>()) &&
         !op->hasTrait<tg::ReadsWorld>();
}

class CodegenBackend : public Backend {
public:
  explicit CodegenBackend(StringRef device) : kind(device.str()) {}
  StringRef name() const override { return "codegen"; }
  StringRef summary() const override {
    return "Loom's generated kernels (tg -> linalg -> LLVM): every op";
  }
  StringRef device() const override { return kind; }
  bool generatesCode() const override { return true; }
  /// The GPU's kernel pipeline folds a transpose into the product reading
  /// or computing it (loom-gpu-fold-transposes); on a CPU a transpose
  /// stays a step of its own or a view of a library product
  /// (docs/Compiler.md).
  bool productsTakeTransposes() const override { return kind != "cpu"; }
  std::vector<StringRef> anchorOps() const override { return {}; }
  std::vector<std::string> patterns() const override {
    return {"any computing tg op, with the single-use elementwise ops "
            "after it (up to 3) fused into the same kernel; any element "
            "type the lowering takes"};
  }

  void collectCandidates(Operation *anchor, Available available,
                         SmallVectorImpl<LibraryCall> &out) const override {
    if (!computes(anchor))
      return;
    LibraryCall call;
    call.anchor = anchor;
    call.ops.push_back(anchor);
    // An elementwise anchor is a fragment of its own (what is left over
    // when a library takes a shorter fragment).
    while (!isElementwise(anchor) && call.ops.size() < kMaxCandidateOps &&
           call.ops.back()->getNumResults() == 1) {
      Operation *user = soleUser(call.ops.back()->getResult(0), available);
      if (!user || !computes(user) || !isElementwise(user))
        break;
      call.ops.push_back(user);
    }
    for (size_t n = call.ops.size(); n >= 1; --n) {
      LibraryCall prefix = call;
      prefix.ops.resize(n);
      out.push_back(std::move(prefix));
    }
  }

  LogicalResult lower(const LibraryCall &call, const StepOperands &,
                      LibraryStep &) const override {
    return call.anchor->emitOpError(
        "is generated code: the kernel pipeline lowers it, not a library "
        "step");
  }

  /// Register-tiled f32 products (static, 32-wide output rows) reach ~80%
  /// of peak (loom-bench-gemm); other contractions and convolutions run
  /// the scalar-tiled path, around a tenth.
  double analyticSeconds(const LibraryCall &call,
                         const cost::RooflineTarget &target) const override {
    if (kind != "cpu") {
      // The tiled classes' tensor-core form is CUDA's (docs/Codegen/GPU.md),
      // for operands whose rounding the kernel sees: not a weight folded
      // into TF32 values (docs/Precision.md, "TF32"), which it multiplies
      // in f32.
      bool tensorCores =
          kind == "cuda" &&
          llvm::none_of(tg::multiplicands(call.anchor), [](OpOperand *o) {
            auto folded = o->get().getDefiningOp<tg::ConstantOp>();
            return folded && folded->hasAttr(tg::kTF32ValuesAttr);
          });
      return rooflineSeconds(call.ops, target,
                             gpuEfficiency(call.anchor, tensorCores),
                             tensorCores);
    }
    double efficiency = 0.5;
    if (auto matmul = dyn_cast<tg::MatmulOp>(call.anchor)) {
      auto type = matmul.getType();
      efficiency = allF32(matmul) && type.hasStaticShape() &&
                           type.getShape().back() % 32 == 0
                       ? 0.8
                       : 0.25;
    } else if (isa<tg::ConvOp>(call.anchor)) {
      efficiency = 0.1;
    }
    return rooflineSeconds(call.ops, target, efficiency);
  }

private:
  /// The GPU kernel classes (docs/Codegen/GPU.md), estimated, not measured
  /// (no GPU has run the current forms): f32 products in the tiled class at
  /// a tenth of the FP32 peak; narrow and TF32 products in the tensor-core
  /// form (\p tensorCores) at a twentieth of the tensor-core peak
  /// (docs/benchmarks/gpu.md's prediction: 30-60 TFLOP/s in bf16); f32
  /// convolutions at a fiftieth; the rest (memory-bound) at half.
  static double gpuEfficiency(Operation *anchor, bool tensorCores) {
    if (tensorCores && cost::tensorCoreType(anchor))
      return 0.05;
    if (isa<tg::MatmulOp>(anchor))
      return 0.1;
    if (isa<tg::ConvOp>(anchor))
      return 0.02;
    return 0.5;
  }

  std::string kind;
};

} // namespace

std::unique_ptr<Backend> compiler::createCodegenBackend(StringRef device) {
  return std::make_unique<CodegenBackend>(device);
}
