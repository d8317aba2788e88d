//===- Target.h - What loom-compile generates code for ----------*- C++ -*-===//
//
// Part of Loom. A target is a kind of device and its code generation
// (docs/Codegen/CPU.md, docs/Compiler.md): what the kernel pipeline is, how
// lowered kernels are emitted into the artifact, and what a device must
// have to run them. Targets are open: each registers a factory under its
// name, and `loom-compile --target=NAME[:OPTIONS]` asks the registry; no
// caller names one target. Built in: `cpu` (`cpu`, `cpu:native`: this
// machine; `cpu:NAME`: an LLVM CPU name such as znver4, skylake-avx512 or
// x86-64-v3), `vulkan` (SPIR-V for Vulkan 1.3) and `cuda:CHIP[,CHIP...]`
// (a fatbin of cubins and PTX for NVIDIA chips such as sm_80 and sm_90a).
// A GPU target implements the same methods: its pipeline maps the kernels
// to blocks and threads (lib/Codegen/GPU, docs/Codegen/GPU.md), its
// emitKernels returns the device image and each kernel's launches instead
// of host functions, and its requirements name the kind and the chips.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_TARGET_H
#define LOOM_TARGET_TARGET_H

#include "loom/Codegen/GPU/KernelCodegen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace loom::target {

/// What a device must be and have to run the code of a target: the
/// manifest's `target` section.
struct DeviceRequirements {
  /// The kind of device, as the artifact's devices spell it: "cpu",
  /// "vulkan", "cuda".
  std::string kind;
  /// The LLVM triple the code is for.
  std::string triple;
  /// The processor the code is tuned for: an LLVM CPU name; for CUDA the
  /// chips the image has code for, comma-separated (`sm_80,sm_90a`); empty
  /// for Vulkan.
  std::string processor;
  /// The ISA features the code may use that a device of this kind can
  /// lack, spelled as __builtin_cpu_supports spells them (avx2, fma,
  /// avx512f, ...): what the runtime checks before loading the code.
  std::vector<std::string> features;
};

/// Kernels as a target emits them for the artifact: host functions (a CPU
/// target), or a device image and launches (a GPU target).
struct EmittedKernels {
  /// LLVM IR that the artifact links: for each kernel name, a hidden
  /// function `void name(void *const *buffers, int64_t begin, int64_t end)`
  /// (docs/Artifact.md). Null for a GPU target.
  std::unique_ptr<llvm::Module> module;
  /// For each kernel name, its range: the iterations [0, range) that the
  /// runtime may split over calls of [begin, end).
  llvm::StringMap<int64_t> ranges;
  /// The kernels that every thread of a team calls once, each with its
  /// thread and the team size as [begin, end) and the team after the
  /// buffers (docs/Compiler.md, "Recurrences"); their range is 1.
  llvm::StringSet<> teams;
  /// A GPU target's device image (a SPIR-V module, a CUDA fatbin); empty
  /// for a CPU target.
  std::string image;
  /// What the image requires of the device beyond the target's
  /// DeviceRequirements::features (a SPIR-V module's capabilities, from its
  /// version-capabilities-extensions triple: Float64 only where a kernel
  /// computes in f64), checked by the runtime at load.
  std::vector<std::string> imageFeatures;
  /// A GPU target's kernels: for each kernel name, the launches of the
  /// image's entry points it is and the scratch buffers they share.
  llvm::StringMap<codegen::gpu::DeviceKernel> deviceKernels;
  /// What `loom-compile --dump-kernels` writes besides the IR: file name
  /// and contents (a GPU target: `image.spv`, or `<chip>.ptx` per chip and
  /// `image.fatbin`).
  std::vector<std::pair<std::string, std::string>> listings;
};

class Target {
public:
  virtual ~Target();
  /// The name it is registered under: "cpu".
  virtual llvm::StringRef name() const = 0;
  /// The spelling that creates it again: `cpu`, `cpu:znver4`.
  virtual std::string spelling() const = 0;
  /// True when its code is for this machine (a measured placement times
  /// fragments here).
  virtual bool isHost() const = 0;
  virtual DeviceRequirements requirements() const = 0;

  /// Adds the kernel pipeline to \p pm: from a module of outlined kernels
  /// (one function per codegen fragment, on tg tensors) to what
  /// emitKernels() takes.
  virtual void buildKernelPipeline(mlir::OpPassManager &pm) const = 0;
  /// The registered pipeline, with its options, that `loom-opt` runs to do
  /// what buildKernelPipeline() adds: `loom-cpu-kernel-pipeline{...}`.
  virtual std::string kernelPipelineSpelling() const = 0;
  /// Emits the kernels \p names of \p lowered (the kernel pipeline's
  /// result) in \p context. Diagnoses failures at \p lowered.
  virtual mlir::FailureOr<EmittedKernels>
  emitKernels(mlir::ModuleOp lowered, llvm::ArrayRef<std::string> names,
              llvm::LLVMContext &context) const = 0;
  /// The machine that compiles the artifact's host module (its kernels'
  /// module, manifest, weights and descriptor) to object code.
  virtual llvm::TargetMachine &hostMachine() const = 0;
};

/// The targets loom-compile can generate code for, by name.
class TargetRegistry {
public:
  /// Creates a target from the options of its spelling (what follows
  /// `NAME:`, empty for a bare `NAME`), or an error that says what is
  /// wrong with them.
  using Factory = std::function<llvm::Expected<std::unique_ptr<Target>>(
      llvm::StringRef options)>;

  /// The built-in targets: cpu. Adding one: a factory and one line in
  /// builtin() (or add() on a registry of one's own); nothing else names it.
  static const TargetRegistry &builtin();

  /// Registers \p factory under \p name; \p usage is how it is spelled
  /// (`cpu[:NAME]`) and what it is, for messages. A name registered twice
  /// is a programming error (reported fatally).
  void add(llvm::StringRef name, llvm::StringRef usage, Factory factory);
  /// The target \p spelling (`NAME` or `NAME:OPTIONS`) names, or an error
  /// naming the registered targets when none has that name.
  llvm::Expected<std::unique_ptr<Target>>
  create(llvm::StringRef spelling) const;
  /// The usage line of every registered target, in registration order.
  std::vector<std::string> usages() const;

private:
  struct Entry {
    std::string name, usage;
    Factory factory;
  };
  std::vector<Entry> entries;
};

/// Vulkan 1.3 (SPIR-V kernels); \p options must be empty.
llvm::Expected<std::unique_ptr<Target>>
createVulkanTarget(llvm::StringRef options);
/// NVIDIA GPUs: \p chips is a comma-separated list of the chips the image
/// has cubins for (sm_80, sm_90a, ...). An error names a chip the pipeline
/// does not support, before any code is generated.
llvm::Expected<std::unique_ptr<Target>> createCUDATarget(llvm::StringRef chips);
/// The command-line options of the GPU targets (--gpu-...), for a tool's
/// --help.
llvm::cl::OptionCategory &gpuTargetOptions();

/// The x86-64 Linux CPU: \p cpu is an LLVM CPU name, or empty or "native"
/// for this machine's CPU and features. An error names a CPU LLVM does not
/// know.
llvm::Expected<std::unique_ptr<Target>> createCPUTarget(llvm::StringRef cpu);

} // namespace loom::target

#endif // LOOM_TARGET_TARGET_H
