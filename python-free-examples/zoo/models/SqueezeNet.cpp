//===- SqueezeNet.cpp - SqueezeNet 1.1 (torchvision) ----------------------===//
//
// Part of Loom. SqueezeNet 1.1 (Iandola et al.; the variant torchvision's
// squeezenet1_1 implements, as in TENSAT's model/squeezenet.model) at batch 1,
// 3x224x224:
//
//   features.0   conv 3x3/2 -> 64, relu
//   features.2   maxpool 3x3/2 (ceil mode)
//   features.3-4 Fire(16, 64, 64) x 2
//   features.5   maxpool
//   features.6-7 Fire(32, 128, 128) x 2
//   features.8   maxpool
//   features.9-12 Fire(48, 192, 192) x 2, Fire(64, 256, 256) x 2
//   classifier.1 conv 1x1 -> 1000, relu; global average pool
//
// A Fire module is a 1x1 squeeze, then 1x1 and 3x3 expands concatenated.
// Every convolution has a bias and a relu, fused into tg.conv
// (`activation = relu`): 1 + 8 x 3 + 1 = 26 convolutions, 8 concats.
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {

/// A convolution with bias and a fused relu.
Value convRelu(GraphBuilder &b, Value x, int64_t out, Window kernel,
               StringRef name, Conv2dOptions options = {}) {
  return b.conv(x, out, kernel, name, options.relu(), /*bias=*/true);
}

Value fire(GraphBuilder &b, Value x, StringRef name, int64_t squeeze,
           int64_t expand1x1, int64_t expand3x3) {
  GraphBuilder::Scope s = b.scope(name);
  Value sq = convRelu(b, x, squeeze, 1, "squeeze");
  return b.concat(
      {convRelu(b, sq, expand1x1, 1, "expand1x1"),
       convRelu(b, sq, expand3x3, 3, "expand3x3", Conv2dOptions().pad(1))},
      1);
}

Value maxPool(GraphBuilder &b, Value x) {
  return b.maxpool2d(x, Pool2dOptions(3).stride(2).ceil());
}

} // namespace

Outputs zoo::buildSqueezeNet(GraphBuilder &b, const ModelOptions &o) {
  Value x = b.input("input", {o.batch, 3, o.image.value_or(224), o.image.value_or(224)});
  x = convRelu(b, x, 64, 3, "features.0", Conv2dOptions().stride(2)); // 111
  x = maxPool(b, x);                                                  // 55
  x = fire(b, x, "features.3", 16, 64, 64);
  x = fire(b, x, "features.4", 16, 64, 64);
  x = maxPool(b, x); // 27
  x = fire(b, x, "features.6", 32, 128, 128);
  x = fire(b, x, "features.7", 32, 128, 128);
  x = maxPool(b, x); // 13
  x = fire(b, x, "features.9", 48, 192, 192);
  x = fire(b, x, "features.10", 48, 192, 192);
  x = fire(b, x, "features.11", 64, 256, 256);
  x = fire(b, x, "features.12", 64, 256, 256);
  x = convRelu(b, x, 1000, 1, "classifier.1");
  return {{"logits", b.flatten(b.globalAvgPool(x))}};
}
