//===- ResNeXt.cpp - ResNeXt-50 32x4d (torchvision) -----------------------===//
//
// Part of Loom. ResNeXt-50 (32x4d) as TASO and TENSAT measure it (TASO's
// examples/resnext50.py: batch 1, 3x224x224, bottleneck widths 128, 256, 512,
// 1024 with 32 groups in the 3x3 convolution, outputs 256 ... 2048), here in
// torchvision's resnext50_32x4d layout: the ResNet-50 skeleton with
// batchnorms, width = planes * 4 / 64 * 32 = 2 x planes, the 3x3 convolution
// of each of the 16 blocks grouped 32 ways. 53 convolutions, 16 of them with
// groups = 32. (TASO's graph omits the batchnorms, which it folds, and the
// classifier head.)
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace loom;
using namespace loom::zoo;

Outputs zoo::buildResNeXt50(GraphBuilder &b, const ModelOptions &o) {
  return buildResNetFamily(b, o, /*groups=*/32, /*widthPerGroup=*/4);
}
