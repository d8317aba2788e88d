//===- NasNet.cpp - NasNet-A as TASO and TENSAT measure it ----------------===//
//
// Part of Loom. The NasNet-A graph of TASO (examples/nasnet_a.py) with the
// 224x224 stem of TENSAT (src/nasneta.rs), batch 1:
//
//   stem     conv 7x7/2 -> 64 (relu), maxpool 3x3/2          -> 64 x 56 x 56
//   3 stages of 5 normal cells and 1 reduction cell; the cell width is
//   128, 256, 512 in the normal cells and doubles for each reduction cell
//   (256, 512, 1024), which halves the resolution: 56 -> 28 -> 14 -> 7.
//
// Each cell first squeezes its two inputs (the outputs of the two previous
// cells) to the cell width with 1x1 convolutions (relu), then combines them
// with separable convolutions (a depthwise k x k convolution, groups = width,
// followed by a pointwise 1x1), 3x3 average / max pools and identities,
// adds pairs and concatenates the five sums (5 x width channels). Padding
// is TensorFlow's "SAME". A cell has 2 + 5 x 2 = 12 convolutions, so the
// graph has 1 + 18 x 12 = 217, 90 adds and 18 concats. As in TASO and
// TENSAT there are no batchnorms and no classifier: the output is the last
// reduction cell, 5120 x 7 x 7.
//
// This is a simplified NasNet-A: the published NASNet-A Mobile (4 @ 1056)
// has 4 normal cells per stage, a 3x3 stem and ReLU-sepconv-BN stacks; the
// superoptimisation papers measure the graph above.
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {

int64_t dim(Value v, unsigned i) {
  return cast<RankedTensorType>(v.getType()).getDimSize(i);
}

/// 1x1 convolution with relu to `width` channels.
Value squeeze(GraphBuilder &b, Value x, int64_t width, StringRef name) {
  return b.conv(x, width, 1, name, Conv2dOptions().same().relu());
}

/// Brings `input` (the older cell output) to the shape of `cur`.
Value fit(GraphBuilder &b, Value cur, Value input, StringRef name) {
  if (!cur || !input)
    return {};
  if (dim(input, 2) == dim(cur, 2))
    return squeeze(b, input, dim(cur, 1), name);
  return b.conv(input, dim(cur, 1), 3, name,
                Conv2dOptions().stride(2).same().relu());
}

/// Depthwise k x k (groups = width) then pointwise 1x1, no activation.
Value sepConv(GraphBuilder &b, Value x, int64_t width, int64_t kernel,
              int64_t stride, StringRef name) {
  GraphBuilder::Scope s = b.scope(name);
  Value t = b.conv(x, width, kernel, "depthwise",
                   Conv2dOptions().stride(stride).same().group(width));
  return b.conv(t, width, 1, "pointwise", Conv2dOptions().same());
}

Value avgPool(GraphBuilder &b, Value x, int64_t stride) {
  return b.avgpool2d(x, Pool2dOptions(3).stride(stride).same());
}

Value maxPool(GraphBuilder &b, Value x, int64_t stride) {
  return b.maxpool2d(x, Pool2dOptions(3).stride(stride).same());
}

Value normalCell(GraphBuilder &b, Value prev, Value cur, int64_t width,
                 StringRef name) {
  GraphBuilder::Scope s = b.scope(name);
  cur = squeeze(b, cur, width, "squeeze");
  prev = fit(b, cur, prev, "fit");
  // A braced list is evaluated in order.
  Value t[10] = {
      sepConv(b, cur, width, 3, 1, "sep0"),
      cur,
      sepConv(b, prev, width, 3, 1, "sep1"),
      sepConv(b, cur, width, 3, 1, "sep2"),
      avgPool(b, cur, 1),
      prev,
      avgPool(b, prev, 1),
      avgPool(b, prev, 1),
      sepConv(b, prev, width, 3, 1, "sep3"),
      sepConv(b, prev, width, 3, 1, "sep4"),
  };
  SmallVector<Value, 5> sums;
  for (int i = 0; i < 5; ++i)
    sums.push_back(b.add(t[2 * i], t[2 * i + 1]));
  return b.concat(sums, 1);
}

Value reductionCell(GraphBuilder &b, Value prev, Value cur, int64_t width,
                    StringRef name) {
  GraphBuilder::Scope s = b.scope(name);
  cur = squeeze(b, cur, width, "squeeze");
  prev = fit(b, cur, prev, "fit");
  // One builder call per statement, so that the op order does not depend on
  // the compiler's order of evaluating arguments.
  SmallVector<Value, 5> out;
  Value a = sepConv(b, prev, width, 7, 2, "sep0");
  Value c = sepConv(b, cur, width, 5, 2, "sep1");
  out.push_back(b.add(a, c));
  a = maxPool(b, cur, 2);
  c = sepConv(b, prev, width, 7, 2, "sep2");
  out.push_back(b.add(a, c));
  a = avgPool(b, cur, 2);
  c = sepConv(b, prev, width, 5, 2, "sep3");
  out.push_back(b.add(a, c));
  a = maxPool(b, cur, 2);
  c = sepConv(b, out[0], width, 3, 1, "sep4");
  out.push_back(b.add(a, c));
  a = avgPool(b, out[0], 1);
  out.push_back(b.add(a, out[1]));
  return b.concat(out, 1);
}

} // namespace

Outputs zoo::buildNasNetA(GraphBuilder &b, const ModelOptions &o) {
  Value x = b.input("input", {o.batch, 3, 224, 224});
  x = b.conv(x, 64, 7, "stem", Conv2dOptions().stride(2).same().relu());
  x = maxPool(b, x, 2);
  int64_t width = 128;
  for (int stage = 0; stage < 3; ++stage) {
    std::string prefix = "stage" + std::to_string(stage);
    Value prev = x, cur = x;
    for (int cell = 0; cell < 5; ++cell) {
      Value next = normalCell(b, prev, cur, width,
                              prefix + ".normal" + std::to_string(cell));
      prev = cur;
      cur = next;
    }
    width *= 2;
    x = reductionCell(b, prev, cur, width, prefix + ".reduction");
  }
  return {{"output", x}};
}
