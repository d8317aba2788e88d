//===- Inception.cpp - Inception-v3 (torchvision) -------------------------===//
//
// Part of Loom. Inception-v3 as TASO measures it (examples/inceptionv3.py:
// 3x299x299, the torchvision block structure), in torchvision's
// inception_v3 layout without the auxiliary classifier: every convolution
// is a BasicConv2d (conv without bias, batchnorm with epsilon 0.001, relu).
//
//   stem        Conv2d_1a..4a (5 convs), 2 max pools       -> 192 x 35 x 35
//   Mixed_5b-d  InceptionA x 3 (7 convs each)              -> 288 x 35 x 35
//   Mixed_6a    InceptionB (4 convs)                       -> 768 x 17 x 17
//   Mixed_6b-e  InceptionC x 4 (10 convs each)             -> 768 x 17 x 17
//   Mixed_7a    InceptionD (6 convs)                       -> 1280 x 8 x 8
//   Mixed_7b-c  InceptionE x 2 (9 convs each)              -> 2048 x 8 x 8
//   head        global average pool, fc 2048 -> 1000
//
// 5 + 21 + 4 + 40 + 6 + 18 = 94 convolutions. The branch average pools are
// PyTorch's F.avg_pool2d(3, stride 1, pad 1), which counts the padding.
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {

/// torchvision's BasicConv2d `name`: `name.conv` and `name.bn`.
Value basic(GraphBuilder &b, Value x, int64_t out, Window kernel,
            StringRef name, Conv2dOptions options = {}) {
  GraphBuilder::Scope s = b.scope(name);
  return b.convBnRelu(x, out, kernel, "conv", "bn", options, /*relu=*/true,
                      /*epsilon=*/1e-3);
}

Conv2dOptions pad(int64_t ph, int64_t pw) {
  return Conv2dOptions().pad(ph, pw);
}
Conv2dOptions stride2() { return Conv2dOptions().stride(2); }

/// The 3x3 stride-1 pad-1 average pool of the pooling branches.
Value branchPool(GraphBuilder &b, Value x) {
  return b.avgpool2d(x, Pool2dOptions(3).pad(1).includePad());
}

Value maxPool3s2(GraphBuilder &b, Value x) {
  return b.maxpool2d(x, Pool2dOptions(3).stride(2));
}

Value inceptionA(GraphBuilder &b, Value x, StringRef name,
                 int64_t poolFeatures) {
  GraphBuilder::Scope s = b.scope(name);
  Value b1 = basic(b, x, 64, 1, "branch1x1");
  Value b5 = basic(b, x, 48, 1, "branch5x5_1");
  b5 = basic(b, b5, 64, 5, "branch5x5_2", pad(2, 2));
  Value b3 = basic(b, x, 64, 1, "branch3x3dbl_1");
  b3 = basic(b, b3, 96, 3, "branch3x3dbl_2", pad(1, 1));
  b3 = basic(b, b3, 96, 3, "branch3x3dbl_3", pad(1, 1));
  Value bp = basic(b, branchPool(b, x), poolFeatures, 1, "branch_pool");
  return b.concat({b1, b5, b3, bp}, 1);
}

Value inceptionB(GraphBuilder &b, Value x, StringRef name) {
  GraphBuilder::Scope s = b.scope(name);
  Value b3 = basic(b, x, 384, 3, "branch3x3", stride2());
  Value bd = basic(b, x, 64, 1, "branch3x3dbl_1");
  bd = basic(b, bd, 96, 3, "branch3x3dbl_2", pad(1, 1));
  bd = basic(b, bd, 96, 3, "branch3x3dbl_3", stride2());
  return b.concat({b3, bd, maxPool3s2(b, x)}, 1);
}

Value inceptionC(GraphBuilder &b, Value x, StringRef name, int64_t c7) {
  GraphBuilder::Scope s = b.scope(name);
  Value b1 = basic(b, x, 192, 1, "branch1x1");
  Value b7 = basic(b, x, c7, 1, "branch7x7_1");
  b7 = basic(b, b7, c7, {1, 7}, "branch7x7_2", pad(0, 3));
  b7 = basic(b, b7, 192, {7, 1}, "branch7x7_3", pad(3, 0));
  Value bd = basic(b, x, c7, 1, "branch7x7dbl_1");
  bd = basic(b, bd, c7, {7, 1}, "branch7x7dbl_2", pad(3, 0));
  bd = basic(b, bd, c7, {1, 7}, "branch7x7dbl_3", pad(0, 3));
  bd = basic(b, bd, c7, {7, 1}, "branch7x7dbl_4", pad(3, 0));
  bd = basic(b, bd, 192, {1, 7}, "branch7x7dbl_5", pad(0, 3));
  Value bp = basic(b, branchPool(b, x), 192, 1, "branch_pool");
  return b.concat({b1, b7, bd, bp}, 1);
}

Value inceptionD(GraphBuilder &b, Value x, StringRef name) {
  GraphBuilder::Scope s = b.scope(name);
  Value b3 = basic(b, x, 192, 1, "branch3x3_1");
  b3 = basic(b, b3, 320, 3, "branch3x3_2", stride2());
  Value b7 = basic(b, x, 192, 1, "branch7x7x3_1");
  b7 = basic(b, b7, 192, {1, 7}, "branch7x7x3_2", pad(0, 3));
  b7 = basic(b, b7, 192, {7, 1}, "branch7x7x3_3", pad(3, 0));
  b7 = basic(b, b7, 192, 3, "branch7x7x3_4", stride2());
  return b.concat({b3, b7, maxPool3s2(b, x)}, 1);
}

Value inceptionE(GraphBuilder &b, Value x, StringRef name) {
  GraphBuilder::Scope s = b.scope(name);
  Value b1 = basic(b, x, 320, 1, "branch1x1");
  Value b3 = basic(b, x, 384, 1, "branch3x3_1");
  b3 = b.concat({basic(b, b3, 384, {1, 3}, "branch3x3_2a", pad(0, 1)),
                 basic(b, b3, 384, {3, 1}, "branch3x3_2b", pad(1, 0))},
                1);
  Value bd = basic(b, x, 448, 1, "branch3x3dbl_1");
  bd = basic(b, bd, 384, 3, "branch3x3dbl_2", pad(1, 1));
  bd = b.concat({basic(b, bd, 384, {1, 3}, "branch3x3dbl_3a", pad(0, 1)),
                 basic(b, bd, 384, {3, 1}, "branch3x3dbl_3b", pad(1, 0))},
                1);
  Value bp = basic(b, branchPool(b, x), 192, 1, "branch_pool");
  return b.concat({b1, b3, bd, bp}, 1);
}

} // namespace

Outputs zoo::buildInceptionV3(GraphBuilder &b, const ModelOptions &o) {
  Value x = b.input("input", {o.batch, 3, o.image.value_or(299), o.image.value_or(299)});
  x = basic(b, x, 32, 3, "Conv2d_1a_3x3", stride2()); // 149
  x = basic(b, x, 32, 3, "Conv2d_2a_3x3");            // 147
  x = basic(b, x, 64, 3, "Conv2d_2b_3x3", pad(1, 1)); // 147
  x = maxPool3s2(b, x);                               // 73
  x = basic(b, x, 80, 1, "Conv2d_3b_1x1");
  x = basic(b, x, 192, 3, "Conv2d_4a_3x3"); // 71
  x = maxPool3s2(b, x);                     // 35
  x = inceptionA(b, x, "Mixed_5b", 32);
  x = inceptionA(b, x, "Mixed_5c", 64);
  x = inceptionA(b, x, "Mixed_5d", 64);
  x = inceptionB(b, x, "Mixed_6a"); // 17
  x = inceptionC(b, x, "Mixed_6b", 128);
  x = inceptionC(b, x, "Mixed_6c", 160);
  x = inceptionC(b, x, "Mixed_6d", 160);
  x = inceptionC(b, x, "Mixed_6e", 192);
  x = inceptionD(b, x, "Mixed_7a"); // 8
  x = inceptionE(b, x, "Mixed_7b");
  x = inceptionE(b, x, "Mixed_7c");
  x = b.flatten(b.globalAvgPool(x));
  return {{"logits", b.linear(x, 2048, 1000, "fc")}};
}
