//===- Prepare.cpp - A decoder's weights, artifact and export -------------===//
//
// Part of Loom. See Prepare.h.
//
//===----------------------------------------------------------------------===//

#include "Prepare.h"

#include "BenchSupport.h"

#include "loom/Support/SafeTensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace loom::bench {
namespace {

/// The tables a decode step gathers one row of.
bool gatheredTable(StringRef name) {
  return name == "transformer.wpe.weight" ||
         name == "model.embed_tokens.weight";
}

Error countWeights(StringRef path, PreparedModel &m) {
  auto file = safetensors::File::open(path);
  if (!file)
    return file.takeError();
  for (const safetensors::TensorInfo &t : file->tensors()) {
    int64_t bytes = int64_t(t.end - t.begin);
    m.weightBytes += bytes;
    if (!gatheredTable(t.name))
      m.decodeWeightBytes += bytes;
  }
  return Error::success();
}

/// loom-zoo's module and weights of the zoo model of `o`.
Error makeZooModel(const DecodeOptions &o, const PreparedModel &m,
                   StringRef mlir) {
  std::vector<std::string> args = {o.model.zooName,
                                   "--seq",
                                   std::to_string(m.promptBound),
                                   "--context",
                                   std::to_string(m.capacity),
                                   "-o",
                                   mlir.str(),
                                   "--weights",
                                   m.peer.weights,
                                   "--seed",
                                   std::to_string(o.seed)};
  for (auto [flag, value] : {std::pair{"--layers", o.layers},
                             {"--hidden", o.hidden},
                             {"--vocab", o.vocab}})
    if (value) {
      args.push_back(flag);
      args.push_back(std::to_string(value));
    }
  ProcessResult r = runProcess(pathIn(o.binDir, "loom-zoo"), args, 3600);
  if (!r.succeeded())
    return createStringError("loom-zoo: " + r.summary());
  return Error::success();
}

} // namespace

Expected<PreparedModel> prepareModel(const DecodeOptions &o, int64_t capacity,
                                     StringRef dir, bool withOnnx) {
  if (std::error_code ec = sys::fs::create_directories(dir))
    return createStringError("cannot create " + dir + ": " + ec.message());
  PreparedModel m;
  m.capacity = capacity;
  m.promptBound = std::min(o.promptBound, capacity);
  m.peer.capacity = capacity;
  m.peer.arch = o.model.arch;
  std::string source = o.model.onnxFile;
  if (o.model.isZoo()) {
    m.peer.weights = pathIn(dir, "weights.safetensors");
    source = pathIn(dir, "model.mlir");
    if (!(o.reuse && sys::fs::exists(source) &&
          sys::fs::exists(m.peer.weights)))
      if (Error e = makeZooModel(o, m, source))
        return std::move(e);
    if (Error e = countWeights(m.peer.weights, m))
      return std::move(e);
  } else {
    m.peer.onnx = o.model.onnxFile;
    m.torchReason = "no torch module for an ONNX file";
  }
  m.artifact = pathIn(dir, "model.so");
  if (!(o.reuse && sys::fs::exists(m.artifact))) {
    ProcessResult compiled = runProcess(pathIn(o.binDir, "loom-compile"),
                                        {source, "-o", m.artifact}, 3600);
    m.compileSeconds = compiled.seconds;
    m.compilePeakRssKb = compiled.peakRssKb;
    if (!compiled.succeeded())
      m.loomReason = "loom-compile: " + compiled.summary();
  }
  if (o.model.isZoo() && withOnnx) {
    m.peer.onnx = pathIn(pathIn(dir, "onnx"), "model.onnx");
    if (!(o.reuse && sys::fs::exists(m.peer.onnx)))
      if (Error e = exportOnnx(o, m.peer, m.peer.onnx))
        m.ortReason = toString(std::move(e));
  }
  return m;
}

} // namespace loom::bench
