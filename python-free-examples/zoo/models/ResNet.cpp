//===- ResNet.cpp - ResNet-50 v1.5 (torchvision) --------------------------===//
//
// Part of Loom. ResNet-50, which TASO (examples/resnet50.py: the 16
// bottleneck blocks from 1x64x56x56, no batchnorms) and TENSAT measure at
// batch 1, here complete at 3x224x224 in torchvision's layout: conv1 7x7/2 +
// bn + relu, maxpool 3x3/2, four stages of [3, 4, 6, 3] bottleneck blocks
// (1x1 reduce, 3x3 carrying the stride - the "v1.5" variant -, 1x1 expand
// by 4) with a projection shortcut on each stage's first block, global
// average pooling and a 1000-way fully connected layer. 1 + 16 x 3 + 4 = 53
// convolutions.
//
// Weights are named as in torchvision's state_dict (`layer2.0.conv2.weight`,
// `layer2.0.downsample.1.running_var`, ...); `fc.weight` is stored
// transposed, [2048, 1000]. The graph is the one loom-gen-resnet50 prints
// (test/Examples/zoo/resnet50.test checks that they are equal).
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {

/// One torchvision Bottleneck `prefix`: 1x1 to `width`, 3x3 (`groups`,
/// carrying the stride), 1x1 to `outChannels`, plus the identity or a
/// conv 1x1 + bn projection, then relu.
Value bottleneck(GraphBuilder &b, Value x, StringRef prefix, int64_t width,
                 int64_t outChannels, int64_t stride, int64_t groups,
                 bool project) {
  GraphBuilder::Scope s = b.scope(prefix);
  Value y = b.convBnRelu(x, width, 1, "conv1", "bn1");
  y = b.convBnRelu(y, width, 3, "conv2", "bn2",
                   Conv2dOptions().stride(stride).pad(1).group(groups));
  y = b.convBnRelu(y, outChannels, 1, "conv3", "bn3", {}, /*relu=*/false);
  Value shortcut = x;
  if (project)
    shortcut = b.convBnRelu(x, outChannels, 1, "downsample.0", "downsample.1",
                            Conv2dOptions().stride(stride), /*relu=*/false);
  return b.relu(b.add(y, shortcut));
}

} // namespace

Outputs zoo::buildResNetFamily(GraphBuilder &b, const ModelOptions &o,
                               int64_t groups, int64_t widthPerGroup) {
  Value x = b.input("input", {o.batch, 3, o.image.value_or(224), o.image.value_or(224)});
  x = b.convBnRelu(x, 64, 7, "conv1", "bn1", Conv2dOptions().stride(2).pad(3));
  x = b.maxpool2d(x, Pool2dOptions(3).stride(2).pad(1));

  static const int kBlocks[4] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    int64_t planes = int64_t(64) << stage;
    // torchvision: width = planes * (width_per_group / 64) * groups.
    int64_t width = planes * widthPerGroup / 64 * groups;
    for (int block = 0; block < kBlocks[stage]; ++block) {
      std::string name =
          "layer" + std::to_string(stage + 1) + "." + std::to_string(block);
      int64_t stride = block == 0 && stage > 0 ? 2 : 1;
      x = bottleneck(b, x, name, width, 4 * planes, stride, groups,
                     /*project=*/block == 0);
    }
  }
  x = b.flatten(b.globalAvgPool(x));
  return {{"logits", b.linear(x, 2048, 1000, "fc")}};
}

Outputs zoo::buildResNet50(GraphBuilder &b, const ModelOptions &o) {
  return buildResNetFamily(b, o, /*groups=*/1, /*widthPerGroup=*/64);
}
