//===- Zoo.cpp - The table of loom-zoo's models ---------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "Zoo.h"

using namespace loom;
using namespace loom::zoo;

static const ModelInfo kModels[] = {
    {"resnet50", "ResNet-50 v1.5, torchvision layout, 3x224x224 -> 1000",
     "TASO examples/resnet50.py, TENSAT src/resnet50.rs; torchvision resnet50",
     kImage, "--image: input height and width (224, at least 32)", buildResNet50},
    {"resnext50-32x4d",
     "ResNeXt-50 32x4d, torchvision layout, 3x224x224 -> 1000",
     "TASO examples/resnext50.py; torchvision resnext50_32x4d", kImage,
     "--image: input height and width (224, at least 32)", buildResNeXt50},
    {"inception-v3",
     "Inception-v3, torchvision layout without aux head, 3x299x299 -> 1000",
     "TASO examples/inceptionv3.py; torchvision inception_v3", kImage,
     "--image: input height and width (299, at least 75)", buildInceptionV3},
    {"squeezenet1.1", "SqueezeNet 1.1, torchvision layout, 3x224x224 -> 1000",
     "TENSAT model/squeezenet.model; torchvision squeezenet1_1", kImage,
     "--image: input height and width (224, at least 32)", buildSqueezeNet},
    {"nasnet-a", "NasNet-A cells as in TASO/TENSAT, 3x224x224 -> 5120x7x7",
     "TASO examples/nasnet_a.py, TENSAT src/nasneta.rs", kNone, "",
     buildNasNetA},
    {"nasrnn", "NAS recurrent cell, hidden 512, 5 steps",
     "TASO examples/nasrnn.py, TENSAT src/nasrnn.rs", kSeq | kHidden,
     "--seq: steps (5); --hidden: hidden size (512)", buildNasRNN},
    {"bert-base",
     "BERT-base, HuggingFace BertModel, 12 layers, seq 128, hidden 768",
     "BERT (Devlin et al.), bert-base-uncased configuration",
     kSeq | kLayers | kVocab,
     "--seq: tokens (128, at most 512); --layers: encoder layers (12); "
     "--vocab: word vocabulary (30522)",
     buildBertBase},
    {"bert-1layer", "BERT-base with 1 encoder layer, seq 128", "as bert-base",
     kSeq | kLayers | kVocab,
     "--seq: tokens (128); --layers: encoder layers (1); --vocab: (30522)",
     buildBert1Layer},
    {"multimodal",
     "two-branch multi-modal transformer (CLIP: text 12x512, image ViT "
     "24x1024/16)",
     "GraphPipe artifact examples/cpp/CLIP/clip.cc", kSeq | kLayers | kVocab,
     "--seq: text tokens (76); --layers: layers of both branches (12 text, "
     "24 image); --vocab: text vocabulary (49408)",
     buildMultiModal},
    {"dlrm", "DLRM, 7 sparse + 7 dense branches, dot interaction",
     "GraphPipe artifact examples/cpp/DLRM/dlrm.cc; DLRM (Naumov et al.)",
     kVocab, "--vocab: rows of each of the 7 embedding tables (1000000)",
     buildDLRM},
    {"candle-uno",
     "CANDLE Uno, 9 inputs, 7 feature encoders 4x4096, tower 2x4096",
     "GraphPipe artifact examples/cpp/candle_uno/candle_uno.cc",
     kHidden | kLayers,
     "--hidden: width of every dense layer (4096); --layers: depth of each "
     "feature encoder (4)",
     buildCandleUno},
    {"gpt2-small",
     "GPT-2 small as a decoder program (prefill + decode over a KV cache "
     "updated in place), 12 layers, hidden 768, vocab 50257",
     "GPT-2 (Radford et al.), the gpt2 checkpoint's configuration; "
     "HuggingFace GPT2LMHeadModel",
     kSeq | kLayers | kHidden | kVocab | kContext,
     "--seq: longest prompt of the prefill entry (128); --context: cache "
     "capacity in tokens (1024); --layers: (12); --hidden: (768, heads of "
     "64); --vocab: (50257)",
     buildGPT2Small, "prefill"},
    {"tinyllama",
     "TinyLlama-1.1B as a decoder program: RMSNorm, rotary embeddings, 32 "
     "query heads over 4 key/value heads, SwiGLU, 22 layers, hidden 2048",
     "TinyLlama/TinyLlama-1.1B configuration; HuggingFace LlamaForCausalLM",
     kSeq | kLayers | kHidden | kVocab | kContext,
     "--seq: longest prompt of the prefill entry (128); --context: cache "
     "capacity in tokens (2048); --layers: (22); --hidden: (2048, heads of "
     "64, 8 per key/value head); --vocab: (32000)",
     buildTinyLlama, "prefill"},
};

llvm::ArrayRef<ModelInfo> zoo::models() { return kModels; }

const ModelInfo *zoo::findModel(llvm::StringRef name) {
  for (const ModelInfo &m : kModels)
    if (name == m.name)
      return &m;
  return nullptr;
}

bool zoo::checkRange(GraphBuilder &b, llvm::StringRef option, int64_t value,
                     int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi)
    return true;
  b.fail(option + " " + llvm::Twine(value) + " is out of range [" +
         llvm::Twine(lo) + ", " + llvm::Twine(hi) + "]");
  return false;
}
