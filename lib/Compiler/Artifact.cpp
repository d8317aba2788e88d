//===- Artifact.cpp - Writing the CPU artifact ----------------------------===//
//
// Part of Loom. See Artifact.h and docs/Artifact.md.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Artifact.h"
#include "loom/Compiler/ArtifactImports.h"
#include "loom/Compiler/WeightsObject.h"
#include "loom/Support/Files.h"

#include "loom-c/ArtifactABI.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;
using namespace loom::compiler;

namespace {

// The descriptor's magic and ABI version: include/loom-c/ArtifactABI.h's,
// the runtime's.
constexpr uint32_t kMagic = LOOM_ARTIFACT_MAGIC;
constexpr uint32_t kABIVersion = LOOM_ARTIFACT_ABI_VERSION;

Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// Closes \p os, written for \p path, with a failed write as the error.
Error closeOrError(raw_fd_ostream &os, const Twine &path) {
  if (std::error_code ec = loom::closeChecked(os))
    return makeError("cannot write " + path + ": " + ec.message());
  return Error::success();
}

/// A private constant byte array in \p section.
GlobalVariable *addBytes(Module &m, StringRef name, StringRef section,
                         StringRef bytes) {
  Constant *init = ConstantDataArray::getString(m.getContext(), bytes,
                                                /*AddNull=*/false);
  auto *gv = new GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                GlobalValue::PrivateLinkage, init, name);
  gv->setSection(section);
  gv->setAlignment(Align(64));
  return gv;
}

/// The weights' symbol, defined in their own object (WeightsObject.h).
Constant *declareWeights(Module &m) {
  auto *i8 = Type::getInt8Ty(m.getContext());
  auto *gv =
      new GlobalVariable(m, ArrayType::get(i8, 0), true,
                         GlobalValue::ExternalLinkage, nullptr, kWeightsSymbol);
  gv->setVisibility(GlobalValue::HiddenVisibility);
  return gv;
}

/// The table {name, fn} of the kernels.
Constant *addKernelTable(Module &m, ArrayRef<std::string> names) {
  LLVMContext &ctx = m.getContext();
  auto *ptr = PointerType::getUnqual(ctx);
  auto *entryType = StructType::get(ctx, {ptr, ptr});
  SmallVector<Constant *> entries;
  for (const std::string &name : names) {
    Function *fn = m.getFunction(name);
    auto *nameGV = addBytes(m, "__loom_kernel_name", ".rodata",
                            StringRef(name.c_str(), name.size() + 1));
    nameGV->setAlignment(Align(1));
    entries.push_back(ConstantStruct::get(entryType, {nameGV, fn}));
  }
  auto *tableType = ArrayType::get(entryType, entries.size());
  return new GlobalVariable(m, tableType, true, GlobalValue::PrivateLinkage,
                            ConstantArray::get(tableType, entries),
                            "__loom_kernels");
}

/// The descriptor and the exported function returning it.
void addDescriptor(Module &m, Constant *manifest, uint64_t manifestSize,
                   Constant *weights, uint64_t weightsSize, Constant *source,
                   uint64_t sourceSize, Constant *kernels,
                   uint64_t numKernels) {
  LLVMContext &ctx = m.getContext();
  auto *i32 = Type::getInt32Ty(ctx);
  auto *i64 = Type::getInt64Ty(ctx);
  auto *ptr = PointerType::getUnqual(ctx);
  auto *type =
      StructType::get(ctx, {i32, i32, ptr, i64, ptr, i64, ptr, i64, ptr, i64});
  auto orNull = [&](Constant *c) {
    return c ? c : ConstantPointerNull::get(ptr);
  };
  Constant *init = ConstantStruct::get(
      type, {ConstantInt::get(i32, kMagic), ConstantInt::get(i32, kABIVersion),
             manifest, ConstantInt::get(i64, manifestSize), orNull(weights),
             ConstantInt::get(i64, weightsSize), orNull(source),
             ConstantInt::get(i64, sourceSize), orNull(kernels),
             ConstantInt::get(i64, numKernels)});
  auto *descriptor = new GlobalVariable(
      m, type, true, GlobalValue::PrivateLinkage, init, "__loom_descriptor");
  auto *fn =
      Function::Create(FunctionType::get(ptr, false),
                       GlobalValue::ExternalLinkage, "loom_artifact_v1", m);
  IRBuilder<> b(BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(descriptor);
}

/// compiler-rt's builtins archive, found when Loom was configured
/// (LOOM_COMPILER_RT_BUILTINS in lib/Compiler/CMakeLists.txt).
constexpr const char *kBuiltins = LOOM_COMPILER_RT_BUILTINS;

/// Runs ld.lld to link \p objects into the shared object \p output, with
/// compiler-rt's builtins linked in and hidden (docs/Codegen/CPU.md,
/// "Runtime functions of the compiler"): the code LLVM generates calls them
/// for what the CPU has no instruction for (`__truncsfbf2` without
/// AVX512-BF16), and the process that loads the artifact need not have them.
Error link(ArrayRef<StringRef> objects, StringRef output) {
  ErrorOr<std::string> lld = sys::findProgramByName("ld.lld");
  if (!lld)
    lld = sys::findProgramByName("ld.lld-22");
  if (!lld)
    return makeError("cannot link the artifact: ld.lld is not on PATH "
                     "(Debian: apt-get install lld-22)");
  if (!sys::fs::exists(kBuiltins))
    return makeError("cannot link the artifact: compiler-rt's builtins (" +
                     Twine(kBuiltins) +
                     ") are missing (Debian: apt-get install "
                     "libclang-rt-22-dev)");
  SmallVector<StringRef> args{
      *lld, "-shared", "--no-undefined-version", "-z", "noexecstack",
      "-z", "now",     "--exclude-libs=ALL",     "-o", output};
  args.append(objects.begin(), objects.end());
  args.push_back(kBuiltins);
  std::string message;
  int rc = sys::ExecuteAndWait(*lld, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return makeError("ld.lld failed to link " + output +
                     (message.empty() ? "" : ": " + message));
  return Error::success();
}

/// Checks that what \p path holds imports only what Imports.def allows.
Error checkImports(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path);
  if (!buffer)
    return makeError("cannot read " + path + ": " +
                     buffer.getError().message());
  return checkArtifactImports((*buffer)->getMemBufferRef());
}

} // namespace

Error loom::compiler::writeArtifact(ArtifactContents &contents,
                                    LLVMContext &context, TargetMachine &tm,
                                    StringRef outputPath,
                                    mlir::Timer timing) {
  mlir::TimingScope whole(timing);
  mlir::TimingScope phase(timing.nest("llvm-optimize"));
  std::unique_ptr<Module> owned = std::move(contents.kernels);
  if (!owned)
    owned = std::make_unique<Module>("loom_artifact", context);
  Module &m = *owned;
  m.setTargetTriple(tm.getTargetTriple());
  m.setDataLayout(tm.createDataLayout());
  if (auto err = mlir::makeOptimizingTransformer(3, 0, &tm)(&m))
    return err;

  phase = mlir::TimingScope(timing.nest("sections"));
  Constant *manifest =
      addBytes(m, "__loom_manifest", ".loom_manifest", contents.manifest);
  Constant *source =
      contents.source.empty()
          ? nullptr
          : addBytes(m, "__loom_source", ".loom_source", contents.source);
  if (!contents.image.empty()) {
    // Nothing in the shared object refers to the image: the runtime finds
    // it by its section name.
    GlobalVariable *image =
        addBytes(m, "__loom_image", contents.imageSection, contents.image);
    appendToUsed(m, {image});
  }
  // The embedded weights go into an object of their own, written first.
  SmallString<128> weightsObject;
  llvm::scope_exit removeWeights([&] {
    if (!weightsObject.empty())
      sys::fs::remove(weightsObject);
  });
  Constant *weights = nullptr;
  uint64_t weightsSize = 0;
  if (contents.embeddedWeights) {
    if (auto ec =
            sys::fs::createTemporaryFile("loom-weights", "o", weightsObject))
      return makeError("cannot create a temporary file: " + ec.message());
    if (auto err = writeWeightsObject(*contents.embeddedWeights,
                                      tm.getTargetTriple(), weightsObject))
      return err;
    weights = declareWeights(m);
    weightsSize = contents.embeddedWeights->serializedSize();
  }
  Constant *kernels = contents.kernelNames.empty()
                          ? nullptr
                          : addKernelTable(m, contents.kernelNames);
  addDescriptor(m, manifest, contents.manifest.size(), weights, weightsSize,
                source, contents.source.size(), kernels,
                contents.kernelNames.size());

  // Object code, then the shared object (written next to the output and
  // renamed, so a failure leaves no partial artifact).
  phase = mlir::TimingScope(timing.nest("object"));
  SmallString<128> objectPath;
  if (auto ec = sys::fs::createTemporaryFile("loom-artifact", "o", objectPath))
    return makeError("cannot create a temporary file: " + ec.message());
  llvm::scope_exit removeObject([&] { sys::fs::remove(objectPath); });
  {
    std::error_code ec;
    raw_fd_ostream os(objectPath, ec);
    if (ec)
      return makeError("cannot write " + objectPath + ": " + ec.message());
    legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::ObjectFile))
      return makeError("the target machine cannot emit object code");
    pm.run(m);
    if (auto err = closeOrError(os, objectPath))
      return err;
  }
  phase = mlir::TimingScope(timing.nest("link"));
  std::string partial = partialPathFor(outputPath, ".partial");
  // The weights' object first: ld.lld places sections of one kind in the
  // order it meets them, so .loom_weights comes before the kernels'
  // read-only data, never between it and the code that reaches it by a
  // 32-bit PC-relative offset (which weights of 2 GiB and more would
  // overflow).
  SmallVector<StringRef, 2> objects;
  if (!weightsObject.empty())
    objects.push_back(weightsObject);
  objects.push_back(objectPath);
  Error linked = link(objects, partial);
  if (!linked)
    linked = checkImports(partial);
  if (linked) {
    sys::fs::remove(partial);
    return linked;
  }
  if (auto ec = moveIntoPlace(partial, outputPath))
    return makeError("cannot write " + outputPath + ": " + ec.message());
  return Error::success();
}
