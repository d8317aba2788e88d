//===- ArtifactImportsTest.cpp - What an artifact may import --------------===//
//
// Part of Loom. An artifact imports only what include/loom/Artifact/
// Imports.def lists (docs/Artifact.md, "What an artifact imports"):
// writeArtifact links compiler-rt's builtins into it, so code that converts
// to bfloat16 and half on a CPU without instructions for it (x86-64-v2)
// imports none of them, and it refuses a kernel that calls a function no
// runtime provides, writing nothing.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/ArtifactImports.h"
#include "loom/Compiler/Artifact.h"
#include "loom/Target/Target.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace llvm;
using namespace loom;

namespace {

/// A module with one kernel `k0(bufs, begin, end)` that reads a float from
/// bufs[0] and stores at bufs[1]: it as bfloat16 and as half, the half back
/// as a float, an unsigned 128-bit quotient, and \p callee of it (a
/// `float(float)` function the module declares), when given.
std::unique_ptr<Module> kernelModule(LLVMContext &context, StringRef callee) {
  auto module = std::make_unique<Module>("kernels", context);
  Type *ptr = PointerType::getUnqual(context);
  Type *i64 = Type::getInt64Ty(context);
  Type *f32 = Type::getFloatTy(context);
  Type *i128 = Type::getInt128Ty(context);
  Function *fn = Function::Create(
      FunctionType::get(Type::getVoidTy(context), {ptr, i64, i64}, false),
      GlobalValue::ExternalLinkage, "k0", *module);
  IRBuilder<> b(BasicBlock::Create(context, "entry", fn));
  Value *in = b.CreateLoad(ptr, fn->getArg(0));
  Value *out = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, fn->getArg(0), 1));
  Value *x = b.CreateLoad(f32, in);
  Value *half = b.CreateFPTrunc(x, b.getHalfTy());
  b.CreateStore(b.CreateFPTrunc(x, b.getBFloatTy()), out);
  b.CreateStore(half, b.CreateConstGEP1_64(b.getInt8Ty(), out, 2));
  b.CreateStore(b.CreateFPExt(half, f32),
                b.CreateConstGEP1_64(b.getInt8Ty(), out, 4));
  Value *wide = b.CreateLoad(i128, b.CreateConstGEP1_64(b.getInt8Ty(), in, 16));
  Value *by = b.CreateLoad(i128, b.CreateConstGEP1_64(b.getInt8Ty(), in, 32));
  b.CreateStore(b.CreateUDiv(wide, by),
                b.CreateConstGEP1_64(b.getInt8Ty(), out, 16));
  if (!callee.empty()) {
    FunctionCallee f = module->getOrInsertFunction(
        callee, FunctionType::get(f32, {f32}, false));
    b.CreateStore(b.CreateCall(f, {x}),
                  b.CreateConstGEP1_64(b.getInt8Ty(), out, 8));
  }
  b.CreateRetVoid();
  return module;
}

/// Writes an artifact of kernelModule(\p callee) for the CPU \p cpu to a
/// fresh path in \p dir, returned in \p path.
Error writeKernels(StringRef cpu, StringRef callee, StringRef dir,
                   SmallString<128> &path) {
  auto target = target::createCPUTarget(cpu);
  if (!target)
    return target.takeError();
  LLVMContext context;
  compiler::ArtifactContents contents;
  contents.manifest = "{}";
  contents.kernels = kernelModule(context, callee);
  contents.kernelNames = {"k0"};
  path = dir;
  sys::path::append(path, (cpu + "-" + callee + ".so").str());
  return compiler::writeArtifact(contents, context, (*target)->hostMachine(),
                                 path);
}

class ArtifactImportsTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("loom-imports", dir));
  }
  void TearDown() override { sys::fs::remove_directories(dir); }

  /// The symbols of the shared object at \p path: its imports (undefined
  /// dynamic symbols) and the names in its symbol table.
  struct Symbols {
    std::vector<std::string> imported, all;
  };
  Symbols readSymbols(StringRef path) {
    Symbols out;
    auto buffer = MemoryBuffer::getFile(path);
    EXPECT_TRUE(bool(buffer)) << path.str();
    if (!buffer)
      return out;
    MemoryBufferRef bytes = (*buffer)->getMemBufferRef();
    auto imported = compiler::undefinedDynamicSymbols(bytes);
    EXPECT_TRUE(bool(imported)) << toString(imported.takeError());
    if (imported)
      out.imported = std::move(*imported);
    auto file = object::ObjectFile::createObjectFile(bytes);
    EXPECT_TRUE(bool(file)) << toString(file.takeError());
    if (!file)
      return out;
    for (const object::SymbolRef &symbol : (*file)->symbols())
      if (Expected<StringRef> name = symbol.getName())
        out.all.push_back(name->str());
      else
        consumeError(name.takeError());
    return out;
  }

  SmallString<128> dir;
};

TEST_F(ArtifactImportsTest, ListIsImportsDef) {
  EXPECT_TRUE(compiler::isArtifactImport("malloc"));
  EXPECT_TRUE(compiler::isArtifactImport("memcpy"));
  EXPECT_TRUE(compiler::isArtifactImport("exp"));
  EXPECT_TRUE(compiler::isArtifactImport("expf"));
  EXPECT_TRUE(compiler::isArtifactImport("sincosf"));
  EXPECT_FALSE(compiler::isArtifactImport("expl"));
  EXPECT_FALSE(compiler::isArtifactImport("__truncsfbf2"));
  EXPECT_FALSE(compiler::isArtifactImport("__extendhfsf2"));
  EXPECT_FALSE(compiler::isArtifactImport("loom_model_load"));
  EXPECT_FALSE(compiler::isArtifactImport(""));
}

// Without AVX512-BF16 and F16C the conversions are calls to compiler-rt's
// builtins (as is the 128-bit division on any x86-64 CPU): linked in, none
// is imported; libm's expf is.
TEST_F(ArtifactImportsTest, BuiltinsAreLinkedIn) {
  for (StringRef cpu : {"x86-64-v2", "x86-64-v3"}) {
    SmallString<128> path;
    Error err = writeKernels(cpu, "expf", dir, path);
    ASSERT_FALSE(bool(err)) << cpu.str() << ": " << toString(std::move(err));
    Symbols symbols = readSymbols(path);
    for (const std::string &name : symbols.imported)
      EXPECT_TRUE(compiler::isArtifactImport(name))
          << cpu.str() << ": " << name;
    EXPECT_NE(llvm::find(symbols.imported, "expf"), symbols.imported.end())
        << cpu.str();
    // Linked in: the calls are there, to the artifact's own copies.
    for (StringRef builtin : {"__truncsfbf2", "__udivti3"})
      EXPECT_NE(llvm::find(symbols.all, builtin), symbols.all.end())
          << cpu.str() << ": " << builtin.str();
  }
}

// A kernel calling a function no runtime provides: an error naming it (and
// only it), and no artifact.
TEST_F(ArtifactImportsTest, UnknownImportIsRefused) {
  SmallString<128> path;
  Error err = writeKernels("x86-64-v3", "loom_no_such_function", dir, path);
  ASSERT_TRUE(bool(err));
  std::string message = toString(std::move(err));
  EXPECT_NE(message.find("the artifact would not load: it imports symbol "
                         "loom_no_such_function, which no Loom runtime "
                         "provides"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("__"), std::string::npos) << message;
  EXPECT_FALSE(sys::fs::exists(path));
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    ADD_FAILURE() << "left behind: " << it->path();
}

TEST_F(ArtifactImportsTest, NotAnElfFile) {
  auto buffer = MemoryBuffer::getMemBuffer("not an object", "bytes");
  Error err = compiler::checkArtifactImports(buffer->getMemBufferRef());
  ASSERT_TRUE(bool(err));
  EXPECT_NE(toString(std::move(err)).find("cannot read bytes"),
            std::string::npos);
}

} // namespace
