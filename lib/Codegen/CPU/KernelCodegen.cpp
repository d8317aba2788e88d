//===- KernelCodegen.cpp - Lowered kernels to LLVM IR ---------------------===//
//
// Part of Loom. See KernelCodegen.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/KernelCodegen.h"
#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Operator.h"

using namespace mlir;
using namespace loom;
using namespace loom::codegen;

namespace {

/// Adds `void <name>(void *const *bufs, i64 begin, i64 end)` calling the
/// lowered kernel `<name>.impl(ptr..., i64 begin, i64 end)`.
void addEntryPoint(llvm::Module &m, llvm::Function *impl, StringRef name,
                   bool team) {
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
  // A team kernel's last argument is the team, in buffers[numBuffers].
  unsigned numBuffers = impl->arg_size() - (team ? 3 : 2);
  auto load = [&](unsigned i) {
    llvm::Value *slot =
        b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(0), i, "slot");
    return b.CreateAlignedLoad(ptr, slot, llvm::Align(8));
  };
  for (unsigned i = 0; i < numBuffers; ++i)
    args.push_back(load(i));
  args.push_back(fn->getArg(1));
  args.push_back(fn->getArg(2));
  if (team)
    args.push_back(b.CreatePtrToInt(load(numBuffers), i64));
  b.CreateCall(impl, args);
  b.CreateRetVoid();
}

/// What LLVM may assume of a kernel so that it vectorises it: its buffers
/// never overlap (the memory plan gives tensors alive at one step disjoint
/// bytes; inputs and weights are only read), and its floating-point sums
/// may be reassociated and multiply-adds contracted (a reduction is split
/// over vector lanes, as oneDNN's and ONNX Runtime's are). A team kernel's
/// buffers are `noalias` only where loom-team-kernels marked them (no
/// thread writes them): other threads write the rest between barriers,
/// which LLVM must not assume leave them unchanged.
void relaxKernel(llvm::Function &impl, bool team) {
  for (llvm::Argument &arg : impl.args())
    if (arg.getType()->isPointerTy() && !team)
      arg.addAttr(llvm::Attribute::NoAlias);
  llvm::FastMathFlags flags;
  flags.setAllowReassoc();
  flags.setAllowContract();
  for (llvm::Instruction &inst : llvm::instructions(impl))
    if (isa<llvm::FPMathOperator>(inst))
      inst.setFastMathFlags(inst.getFastMathFlags() | flags);
}

} // namespace

void cpu::registerKernelTranslations(MLIRContext &context) {
  registerBuiltinDialectTranslation(context);
  registerLLVMDialectTranslation(context);
}

FailureOr<std::unique_ptr<llvm::Module>>
cpu::translateKernels(ModuleOp kernels, llvm::LLVMContext &context,
                      ArrayRef<std::string> names,
                      llvm::StringMap<int64_t> &ranges,
                      llvm::StringSet<> &teams) {
  // The range each kernel recorded, before the module is translated.
  ranges.clear();
  teams.clear();
  for (auto fn : kernels.getOps<LLVM::LLVMFuncOp>()) {
    if (auto range = fn->getAttrOfType<IntegerAttr>("loom.range"))
      ranges[fn.getName()] = range.getInt();
    if (fn->hasAttr(kTeamAttr))
      teams.insert(fn.getName());
  }
  registerKernelTranslations(*kernels->getContext());
  std::unique_ptr<llvm::Module> m = translateModuleToLLVMIR(kernels, context);
  if (!m)
    return kernels.emitError("cannot translate the kernels to LLVM IR");
  for (const std::string &name : names) {
    llvm::Function *impl = m->getFunction(name);
    if (!impl || !ranges.count(name))
      return kernels.emitError("kernel ") << name << " was not generated";
    impl->setName(name + ".impl");
    impl->setLinkage(llvm::GlobalValue::InternalLinkage);
    bool team = teams.contains(name);
    relaxKernel(*impl, team);
    addEntryPoint(*m, impl, name, team);
  }
  return m;
}
