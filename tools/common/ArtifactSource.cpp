//===- ArtifactSource.cpp - The interpreter on an artifact's source -------===//
//
// Part of Loom. See ArtifactSource.h.
//
//===----------------------------------------------------------------------===//

#include "ArtifactSource.h"

#include "loom/Dialect/Pipe/IR/PipeDialect.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace loom;
using namespace loom::tools;

std::unique_ptr<ArtifactSource>
loom::tools::parseArtifactSource(const loom_model *model) {
  size_t size = 0;
  const char *text = loom_model_source(model, &size);
  if (!text)
    return nullptr;
  auto src = std::make_unique<ArtifactSource>();
  DialectRegistry registry;
  registry.insert<tg::TGDialect, func::FuncDialect, pipe::PipeDialect>();
  src->context.appendDialectRegistry(registry);
  src->context.loadAllAvailableDialects();
  src->sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(text, size),
                                           "<artifact source>"),
      llvm::SMLoc());
  src->module = parseSourceFile<ModuleOp>(src->sourceMgr, &src->context);
  if (!src->module)
    return nullptr;
  return src;
}

llvm::Expected<std::unique_ptr<SourceInterpreter>>
SourceInterpreter::create(const loom_model *model, ArtifactSource &source) {
  std::unique_ptr<SourceInterpreter> result(new SourceInterpreter());
  size_t size = 0;
  const void *weights = loom_model_weights(model, &size);
  if (weights) {
    int fd;
    if (llvm::sys::fs::createTemporaryFile("loom-weights", "safetensors", fd,
                                           result->weightsPath))
      return llvm::createStringError(
          "cannot create a temporary file for the weights");
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(static_cast<const char *>(weights), size);
  }
  interp::InterpreterOptions options;
  options.weightsFile = std::string(result->weightsPath);
  result->interpreter =
      std::make_unique<interp::Interpreter<interp::F32Domain>>(*source.module,
                                                               options);
  return result;
}

SourceInterpreter::~SourceInterpreter() {
  interpreter.reset();
  if (!weightsPath.empty())
    llvm::sys::fs::remove(weightsPath);
}

FailureOr<std::vector<RefTensor>>
SourceInterpreter::run(func::FuncOp fn, llvm::ArrayRef<RefTensor> args) {
  return interpreter->run(fn, args);
}
