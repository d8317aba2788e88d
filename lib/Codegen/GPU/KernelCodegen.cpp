//===- KernelCodegen.cpp - Lowered GPU kernels as a device image ----------===//
//
// Part of Loom. See KernelCodegen.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/KernelCodegen.h"
#include "loom/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace mlir;
using namespace loom::codegen;
using loom::codegen::gpu::DeviceKernel;
using loom::codegen::gpu::kKernelModuleName;
using loom::codegen::gpu::Launch;

namespace {

/// The three constants of \p sizes, or failure.
FailureOr<std::array<int64_t, 3>> constantSizes(mlir::gpu::KernelDim3 sizes) {
  std::array<int64_t, 3> out;
  Value dims[] = {sizes.x, sizes.y, sizes.z};
  for (int i = 0; i < 3; ++i) {
    auto v = getConstantIntValue(dims[i]);
    if (!v)
      return failure();
    out[i] = *v;
  }
  return out;
}

FailureOr<Launch> describeLaunch(func::FuncOp fn,
                                 mlir::gpu::LaunchFuncOp launch) {
  Launch out;
  out.kernel = launch.getKernelName().str();
  auto grid = constantSizes(launch.getGridSizeOperandValues());
  auto block = constantSizes(launch.getBlockSizeOperandValues());
  if (failed(grid) || failed(block))
    return launch.emitOpError("has a launch size that is not a constant");
  out.grid = *grid;
  out.block = *block;
  if (Value shared = launch.getDynamicSharedMemorySize()) {
    auto bytes = getConstantIntValue(shared);
    if (!bytes)
      return launch.emitOpError("has dynamic shared memory that is not a "
                                "constant");
    out.sharedBytes = *bytes;
  }
  for (Value operand : launch.getKernelOperands()) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg || arg.getOwner() != &fn.getBody().front())
      return launch.emitOpError("passes a value that is not a parameter of ")
             << fn.getName() << ": a dispatch binds only its buffers";
    out.params.push_back(arg.getArgNumber());
  }
  return out;
}

/// Runs \p program with \p args; an error names it and its message.
LogicalResult runTool(Location loc, StringRef program,
                      ArrayRef<StringRef> args) {
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(program, args, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0)
    return emitError(loc) << llvm::sys::path::filename(program)
                          << " failed (exit " << rc << ")"
                          << (message.empty() ? "" : ": ") << message;
  return success();
}

/// A temporary file holding \p bytes, removed by the caller.
FailureOr<std::string> writeTemporary(Location loc, StringRef suffix,
                                      StringRef bytes) {
  SmallString<128> path;
  int fd;
  if (auto ec =
          llvm::sys::fs::createTemporaryFile("loom-gpu", suffix, fd, path))
    return emitError(loc) << "cannot create a temporary file: " << ec.message();
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << bytes;
  os.close();
  if (os.has_error())
    return emitError(loc) << "cannot write " << path;
  return std::string(path);
}

} // namespace

FailureOr<llvm::StringMap<DeviceKernel>>
loom::codegen::gpu::collectLaunches(ModuleOp lowered,
                                    ArrayRef<std::string> names) {
  llvm::StringMap<DeviceKernel> out;
  for (const std::string &name : names) {
    auto fn = lowered.lookupSymbol<func::FuncOp>(name);
    if (!fn || fn.isExternal())
      return lowered.emitError("kernel ") << name << " was not generated";
    DeviceKernel &kernel = out[name];
    if (auto scratch = fn->getAttrOfType<DenseI64ArrayAttr>("loom.scratch"))
      kernel.scratchBytes.assign(scratch.asArrayRef().begin(),
                                 scratch.asArrayRef().end());
    for (Operation &op : fn.getBody().front()) {
      if (auto launch = dyn_cast<mlir::gpu::LaunchFuncOp>(op)) {
        auto described = describeLaunch(fn, launch);
        if (failed(described))
          return failure();
        kernel.launches.push_back(std::move(*described));
        continue;
      }
      if (!op.hasTrait<OpTrait::IsTerminator>() && !isPure(&op))
        return op.emitOpError("is left on the host of a GPU kernel function: "
                              "only launches may touch memory");
    }
  }
  return out;
}

FailureOr<std::string> loom::codegen::gpu::serializeSPIRV(ModuleOp lowered) {
  SmallVector<spirv::ModuleOp> modules;
  lowered.walk([&](spirv::ModuleOp m) { modules.push_back(m); });
  if (modules.size() != 1)
    return lowered.emitError("expected one spirv.module of the kernels, got ")
           << modules.size();
  SmallVector<uint32_t> words;
  if (failed(spirv::serialize(modules.front(), words)))
    return modules.front().emitError("cannot serialise the SPIR-V module");
  return std::string(reinterpret_cast<const char *>(words.data()),
                     words.size() * sizeof(uint32_t));
}

std::vector<std::string>
loom::codegen::gpu::spirvCapabilities(ModuleOp lowered) {
  std::set<std::string> names;
  lowered.walk([&](spirv::ModuleOp m) {
    if (std::optional<spirv::VerCapExtAttr> vce = m.getVceTriple())
      for (spirv::Capability c : vce->getCapabilities())
        names.insert(spirv::stringifyCapability(c).str());
  });
  return {names.begin(), names.end()};
}

FailureOr<std::vector<loom::codegen::gpu::ChipPTX>>
loom::codegen::gpu::ptxByChip(ModuleOp lowered) {
  auto binary = lowered.lookupSymbol<mlir::gpu::BinaryOp>(kKernelModuleName);
  if (!binary)
    return lowered.emitError("no gpu.binary @") << kKernelModuleName;
  std::vector<ChipPTX> out;
  for (Attribute a : binary.getObjects()) {
    auto object = cast<mlir::gpu::ObjectAttr>(a);
    auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
    if (!target || object.getFormat() != mlir::gpu::CompilationTarget::Assembly)
      return binary.emitError("expected PTX objects of NVVM targets");
    out.push_back({target.getChip().str(), object.getObject().str()});
  }
  return out;
}

FailureOr<std::string> loom::codegen::gpu::buildFatbin(Location loc,
                                                       ArrayRef<ChipPTX> ptx,
                                                       StringRef toolkit) {
  SmallString<128> ptxas(toolkit), fatbinary(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  llvm::sys::path::append(fatbinary, "bin", "fatbinary");
  std::vector<std::string> temporaries;
  llvm::scope_exit removeTemporaries([&] {
    for (const std::string &path : temporaries)
      llvm::sys::fs::remove(path);
  });
  std::vector<std::string> images;
  for (const ChipPTX &chip : ptx) {
    auto ptxFile = writeTemporary(loc, "ptx", chip.ptx);
    if (failed(ptxFile))
      return failure();
    temporaries.push_back(*ptxFile);
    std::string cubin = *ptxFile + ".cubin";
    temporaries.push_back(cubin);
    std::string arch = "-arch=" + chip.chip;
    if (failed(
            runTool(loc, ptxas, {ptxas, arch, "-O3", *ptxFile, "-o", cubin})))
      return failure();
    StringRef sm = StringRef(chip.chip).drop_front(3); // sm_90a -> 90a
    images.push_back(("--image3=kind=elf,sm=" + sm + ",file=" + cubin).str());
    images.push_back(
        ("--image3=kind=ptx,sm=" + sm + ",file=" + *ptxFile).str());
  }
  SmallString<128> fatbin;
  if (auto ec =
          llvm::sys::fs::createTemporaryFile("loom-gpu", "fatbin", fatbin))
    return emitError(loc) << "cannot create a temporary file: " << ec.message();
  temporaries.push_back(std::string(fatbin));
  std::string create = ("--create=" + fatbin).str();
  SmallVector<StringRef> args = {fatbinary, "--64", create};
  for (const std::string &image : images)
    args.push_back(image);
  if (failed(runTool(loc, fatbinary, args)))
    return failure();
  auto bytes = llvm::MemoryBuffer::getFile(fatbin, /*IsText=*/false);
  if (!bytes)
    return emitError(loc) << "cannot read " << fatbin << ": "
                          << bytes.getError().message();
  return (*bytes)->getBuffer().str();
}
