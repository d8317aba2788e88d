//===- KernelCodegen.cpp - Codegen fragments to machine code --------------===//
//
// Part of Loom. See KernelCodegen.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/KernelCodegen.h"

#include "loom/Compiler/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Operator.h"

namespace loom::compiler {
#define GEN_PASS_DEF_LOOMAPPROXIMATEMATH
#include "loom/Compiler/Passes.h.inc"
} // namespace loom::compiler

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

namespace {

struct ApproximateMath
    : public compiler::impl::LoomApproximateMathBase<ApproximateMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

/// The stages after outlining, as one textual pipeline of registered passes
/// (so that `loom-opt --pass-pipeline=...` can replay any prefix).
constexpr const char *kLoweringPipeline =
    "convert-tg-to-linalg,"
    "canonicalize,cse,linalg-fuse-elementwise-ops,canonicalize,cse,"
    "loom-parallelize-kernels,canonicalize,cse,"
    "loom-register-tiles{rows=%ROWS% columns=%COLUMNS%},canonicalize,cse,"
    "one-shot-bufferize{bufferize-function-boundaries=1 "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{hoist-static-allocs=1 "
    "modify-public-functions=1},"
    "buffer-deallocation-pipeline,"
    "loom-forall-to-range,"
    "loom-strided-copies-to-linalg,"
    "loom-vectorize-convs{lanes=%LANES% accumulators=%ACCUMULATORS%},"
    "loom-vectorizable-loop-order,"
    "convert-linalg-to-loops,lower-affine,"
    "convert-vector-to-scf{full-unroll=1},"
    "convert-vector-to-llvm{vector-contract-lowering=outerproduct},"
    "convert-ub-to-llvm,"
    "func.func(loom-approximate-math),convert-math-to-llvm,"
    "convert-math-to-libm,"
    "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
    "reconcile-unrealized-casts";

/// Adds `void <name>(void *const *bufs, i64 begin, i64 end)` calling the
/// lowered kernel `<name>.impl(ptr..., i64 begin, i64 end)`.
void addEntryPoint(llvm::Module &m, llvm::Function *impl, StringRef name) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                       {ptr, i64, i64}, false);
  auto *fn =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, m);
  fn->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  SmallVector<llvm::Value *> args;
  unsigned numBuffers = impl->arg_size() - 2;
  for (unsigned i = 0; i < numBuffers; ++i) {
    llvm::Value *slot =
        b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(0), i, "slot");
    args.push_back(b.CreateAlignedLoad(ptr, slot, llvm::Align(8)));
  }
  args.push_back(fn->getArg(1));
  args.push_back(fn->getArg(2));
  b.CreateCall(impl, args);
  b.CreateRetVoid();
}

/// What LLVM may assume of a kernel so that it vectorises it: its buffers
/// never overlap (the memory plan gives tensors alive at one step disjoint
/// bytes; inputs and weights are only read), and its floating-point sums
/// may be reassociated and multiply-adds contracted (a reduction is split
/// over vector lanes, as oneDNN's and ONNX Runtime's are).
void relaxKernel(llvm::Function &impl) {
  for (llvm::Argument &arg : impl.args())
    if (arg.getType()->isPointerTy())
      arg.addAttr(llvm::Attribute::NoAlias);
  llvm::FastMathFlags flags;
  flags.setAllowReassoc();
  flags.setAllowContract();
  for (llvm::Instruction &inst : llvm::instructions(impl))
    if (isa<llvm::FPMathOperator>(inst))
      inst.setFastMathFlags(inst.getFastMathFlags() | flags);
}

} // namespace

OwningOpRef<ModuleOp> compiler::outlineKernels(const EntrySchedule &entry,
                                               MLIRContext *context) {
  OpBuilder b(context);
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(kernels->getBody());
  for (const Step &step : entry.steps) {
    const artifact::KernelStep *kernel = step.kernel();
    if (!kernel)
      continue;
    tg::FragmentOp fragment = step.fragment;
    Block &body = fragment.getBody().front();
    auto fn = func::FuncOp::create(
        b, fragment.getLoc(), kernel->name,
        b.getFunctionType(body.getArgumentTypes(), fragment.getResultTypes()));
    Block *block = fn.addEntryBlock();
    IRMapping mapping;
    mapping.map(body.getArguments(), block->getArguments());
    OpBuilder inner = OpBuilder::atBlockEnd(block);
    for (Operation &op : body.without_terminator())
      inner.clone(op, mapping);
    SmallVector<Value> results =
        llvm::map_to_vector(body.getTerminator()->getOperands(),
                            [&](Value v) { return mapping.lookup(v); });
    func::ReturnOp::create(inner, fragment.getLoc(), results);
  }
  return kernels;
}

LogicalResult compiler::buildKernelLoweringPipeline(OpPassManager &pm,
                                                    Location loc,
                                                    bool wideVectors) {
  // Register tiles: 8x32 f32 (16 of AVX-512's 32 registers), or 6x16 (12
  // of AVX2's 16).
  std::string pipeline = kLoweringPipeline;
  auto replace = [&](StringRef key, StringRef value) {
    size_t at = pipeline.find(key.str());
    pipeline.replace(at, key.size(), value.str());
  };
  replace("%ROWS%", wideVectors ? "8" : "6");
  replace("%COLUMNS%", wideVectors ? "32" : "16");
  // Convolution rows: 16-float vectors and 16 accumulators on AVX-512
  // (32 registers), 8 and 8 on AVX2 (16).
  replace("%LANES%", wideVectors ? "16" : "8");
  replace("%ACCUMULATORS%", wideVectors ? "16" : "8");
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(parsePassPipeline(pipeline, pm, os)))
    return emitError(loc, "the kernel lowering pipeline cannot be built: ")
           << error;
  return success();
}

FailureOr<std::unique_ptr<llvm::Module>>
compiler::translateKernels(ModuleOp kernels, llvm::LLVMContext &context,
                           MutableArrayRef<EntrySchedule> entries) {
  // The range each kernel recorded, before the module is translated.
  llvm::StringMap<int64_t> ranges;
  for (auto fn : kernels.getOps<LLVM::LLVMFuncOp>())
    if (auto range = fn->getAttrOfType<IntegerAttr>("loom.range"))
      ranges[fn.getName()] = range.getInt();
  registerBuiltinDialectTranslation(*kernels->getContext());
  registerLLVMDialectTranslation(*kernels->getContext());
  std::unique_ptr<llvm::Module> m = translateModuleToLLVMIR(kernels, context);
  if (!m)
    return kernels.emitError("cannot translate the kernels to LLVM IR");
  for (EntrySchedule &entry : entries) {
    for (Step &step : entry.steps) {
      artifact::KernelStep *kernel = step.kernel();
      if (!kernel)
        continue;
      llvm::Function *impl = m->getFunction(kernel->name);
      auto range = ranges.find(kernel->name);
      if (!impl || range == ranges.end())
        return kernels.emitError("kernel ")
               << kernel->name << " was not generated";
      impl->setName(kernel->name + ".impl");
      impl->setLinkage(llvm::GlobalValue::InternalLinkage);
      relaxKernel(*impl);
      addEntryPoint(*m, impl, kernel->name);
      kernel->range = range->second;
    }
  }
  return m;
}
