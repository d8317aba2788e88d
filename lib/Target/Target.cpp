//===- Target.cpp - The target registry -----------------------------------===//
//
// Part of Loom. See Target.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/Target.h"

#include "loom/Codegen/GPU/Passes.h"

#include "llvm/Support/ErrorHandling.h"

using namespace loom::target;

Target::~Target() = default;

const TargetRegistry &TargetRegistry::builtin() {
  static const TargetRegistry registry = [] {
    TargetRegistry r;
    r.add("cpu",
          "cpu[:NAME] (x86-64; NAME an LLVM CPU such as znver4, "
          "skylake-avx512, x86-64-v3, or native: this machine, the default)",
          createCPUTarget);
    r.add("vulkan", "vulkan (SPIR-V kernels for Vulkan 1.3)",
          createVulkanTarget);
    r.add("cuda",
          "cuda:CHIP[,CHIP...] (NVIDIA GPUs; CHIP one of " +
              loom::codegen::gpu::supportedChips() + ")",
          createCUDATarget);
    return r;
  }();
  return registry;
}

void TargetRegistry::add(llvm::StringRef name, llvm::StringRef usage,
                         Factory factory) {
  for (const Entry &e : entries)
    if (e.name == name)
      llvm::report_fatal_error("target '" + name + "' registered twice");
  entries.push_back({name.str(), usage.str(), std::move(factory)});
}

llvm::Expected<std::unique_ptr<Target>>
TargetRegistry::create(llvm::StringRef spelling) const {
  auto [name, options] = spelling.split(':');
  for (const Entry &e : entries)
    if (e.name == name)
      return e.factory(options);
  std::string known;
  for (const Entry &e : entries)
    known += (known.empty() ? "" : "; ") + e.usage;
  return llvm::createStringError(
      "unknown target '" + spelling + "': no target named '" + name +
      "' is registered (registered targets: " + known + ")");
}

std::vector<std::string> TargetRegistry::usages() const {
  std::vector<std::string> out;
  for (const Entry &e : entries)
    out.push_back(e.usage);
  return out;
}
