//===- CPUTarget.cpp - The x86-64 CPU target ------------------------------===//
//
// Part of Loom. See Target.h. Code for an x86-64 Linux CPU: the kernel
// pipeline of lib/Codegen/CPU with vectors as wide as the CPU's, kernels
// translated to LLVM IR that the artifact links, and the ISA features the
// runtime checks.
//
//===----------------------------------------------------------------------===//

#include "loom/Artifact/CpuIsa.h"
#include "loom/Codegen/CPU/KernelCodegen.h"
#include "loom/Codegen/CPU/Passes.h"
#include "loom/Target/Target.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>
#include <optional>

using namespace llvm;
using namespace loom::target;
namespace cpu = loom::codegen::cpu;

namespace {

constexpr const char *kTriple = "x86_64-unknown-linux-gnu";

Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The cap LOOM_CPU_ISA puts on the host's features (loom/Artifact/CpuIsa.h:
/// an AVX-512 machine compiles as an AVX2 one for LOOM_CPU_ISA=avx2, as its
/// runtime then runs); none when it is unset or empty.
Expected<std::optional<loom::artifact::CpuIsa>> hostIsaCap() {
  const char *value = std::getenv(loom::artifact::kCpuIsaVariable);
  if (!value || !*value)
    return std::optional<loom::artifact::CpuIsa>();
  if (auto isa = loom::artifact::parseCpuIsa(value))
    return std::optional<loom::artifact::CpuIsa>(*isa);
  return makeError(Twine(loom::artifact::kCpuIsaVariable) + "='" + value +
                   "' is not one of the values it takes (" +
                   loom::artifact::kCpuIsaValues + ")");
}

/// An LLVM target machine for \p cpuName (empty or "native": the host's CPU
/// and features), PIC, -O3.
Expected<std::unique_ptr<TargetMachine>>
createTargetMachine(StringRef cpuName) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  InitializeNativeTargetAsmParser();
  std::string error;
  Triple triple(kTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("no LLVM target for " + Twine(kTriple) + ": " + error);
  std::string cpu = cpuName.str(), features;
  if (cpu.empty() || cpu == "native") {
    auto cap = hostIsaCap();
    if (!cap)
      return cap.takeError();
    cpu = sys::getHostCPUName().str();
    SmallVector<std::string> flags;
    for (auto &f : sys::getHostCPUFeatures()) {
      bool on = f.second &&
                (!*cap || loom::artifact::cpuIsaAllows(**cap, f.first()));
      flags.push_back((on ? "+" : "-") + f.first().str());
    }
    llvm::sort(flags);
    features = llvm::join(flags, ",");
  }
  // Asked with the generic CPU, so that LLVM does not warn about a name it
  // does not know before we say so.
  std::unique_ptr<MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!sti || !sti->isCPUStringValid(cpu))
    return makeError("target 'cpu:" + cpu + "': '" + cpu +
                     "' is not a CPU LLVM knows for " + kTriple +
                     " (try znver4, skylake-avx512, x86-64-v3, or native)");
  TargetOptions options;
  std::unique_ptr<TargetMachine> tm(
      target->createTargetMachine(triple, cpu, features, options, Reloc::PIC_,
                                  std::nullopt, CodeGenOptLevel::Aggressive));
  if (!tm)
    return makeError("cannot create an LLVM target machine for " + cpu);
  return tm;
}

class CPUTarget : public loom::target::Target {
public:
  CPUTarget(std::unique_ptr<TargetMachine> tm, bool host)
      : tm(std::move(tm)), host(host) {
    pipeline.vectorWidth = checkFeature("avx512f") ? cpu::VectorWidth::Bits512
                                                   : cpu::VectorWidth::Bits256;
  }

  StringRef name() const override { return "cpu"; }
  std::string spelling() const override {
    return host ? "cpu" : "cpu:" + tm->getTargetCPU().str();
  }
  bool isHost() const override { return host; }

  DeviceRequirements requirements() const override {
    // The features a CPU can lack, that the runtime can check.
    static const char *const kCheckable[] = {
        "sse4.2",  "avx",      "avx2",     "fma",      "f16c",
        "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512bf16"};
    DeviceRequirements needs{
        "cpu", tm->getTargetTriple().str(), tm->getTargetCPU().str(), {}};
    for (const char *f : kCheckable)
      if (checkFeature(f))
        needs.features.push_back(f);
    return needs;
  }

  void buildKernelPipeline(mlir::OpPassManager &pm) const override {
    cpu::buildCPUKernelPipeline(pm, pipeline);
  }

  std::string kernelPipelineSpelling() const override {
    std::string text = "loom-cpu-kernel-pipeline";
    raw_string_ostream os(text);
    pipeline.print(os);
    return text;
  }

  mlir::FailureOr<EmittedKernels>
  emitKernels(mlir::ModuleOp lowered, ArrayRef<std::string> names,
              LLVMContext &context) const override {
    EmittedKernels out;
    auto module = cpu::translateKernels(lowered, context, names, out.ranges,
                                              out.teams);
    if (failed(module))
      return mlir::failure();
    out.module = std::move(*module);
    return out;
  }

  TargetMachine &hostMachine() const override { return *tm; }

private:
  bool checkFeature(StringRef feature) const {
    return tm->getMCSubtargetInfo()->checkFeatures(("+" + feature).str());
  }

  std::unique_ptr<TargetMachine> tm;
  bool host;
  cpu::CPUKernelPipelineOptions pipeline;
};

} // namespace

Expected<std::unique_ptr<loom::target::Target>>
loom::target::createCPUTarget(StringRef cpuName) {
  auto tm = createTargetMachine(cpuName);
  if (!tm)
    return tm.takeError();
  bool host = cpuName.empty() || cpuName == "native";
  return std::make_unique<CPUTarget>(std::move(*tm), host);
}
