//===- Pooling.cpp - ONNX pooling operators to tg -------------------------===//
//
// Part of Loom. MaxPool and AveragePool over 1-D and 2-D windows (a 1-D pool
// is a 2-D one over a height of 1), with auto_pad and ceil_mode (as extra
// end padding, which never wins a maximum and is excluded from averages),
// and GlobalAveragePool / GlobalMaxPool over any number of spatial
// dimensions.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

LogicalResult importPool(NodeContext &ctx, bool isMax) {
  if (!ctx.isFloatInput(0))
    return ctx.fail("input 0 has element type " +
                    onnxutil::dataTypeName(ctx.inputDataType(0)) +
                    "; only floating-point types are supported");
  if (isMax && ctx.hasOutput(1))
    return ctx.fail("the Indices output is not supported");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t rank = ctx.inputRank(0);
  if (rank != 3 && rank != 4)
    return ctx.fail("only 1-D and 2-D pooling (inputs of rank 3 or 4) is "
                    "supported, the input has rank " +
                    Twine(rank));
  auto kernel = ctx.getInts("kernel_shape");
  if (!kernel || static_cast<int64_t>(kernel->size()) != rank - 2)
    return ctx.fail("'kernel_shape' needs " + Twine(rank - 2) + " entries");
  llvm::ArrayRef<int64_t> in = ctx.inputShape(0);
  auto attrs = readWindowAttrs(ctx, in.drop_front(2), *kernel);
  if (failed(attrs))
    return failure();
  size_t n = kernel->size();
  for (int64_t k : *kernel)
    if (k < 1 || k > kMaxExtent)
      return ctx.fail("'kernel_shape' entries must be in [1, " +
                      Twine(kMaxExtent) + "]");
  for (int64_t d : attrs->dilations)
    if (d != 1)
      return ctx.fail("dilated pooling is not supported");
  bool countIncludePad = ctx.getInt("count_include_pad", 0) != 0;
  SmallVector<int64_t> pads = attrs->pads;
  if (ctx.getInt("ceil_mode", 0)) {
    for (size_t i = 0; i < n; ++i) {
      int64_t span = in[2 + i] + pads[i] + pads[n + i] - (*kernel)[i];
      if (span < 0)
        return ctx.fail("the window is larger than the padded input");
      int64_t s = attrs->strides[i];
      int64_t outCeil = (span + s - 1) / s + 1;
      // The last window must start inside the input or its begin padding.
      if ((outCeil - 1) * s >= in[2 + i] + pads[i])
        --outCeil;
      int64_t extra = (outCeil - 1) * s + (*kernel)[i] -
                      (in[2 + i] + pads[i] + pads[n + i]);
      if (extra > 0) {
        if (!isMax && countIncludePad)
          return ctx.fail("ceil_mode with count_include_pad is not "
                          "supported where it adds windows");
        pads[n + i] += extra;
      }
    }
  }
  Value input = *x;
  SmallVector<int64_t> k(*kernel), strides = attrs->strides;
  if (rank == 3) {
    auto r = insertUnitHeight(ctx, input);
    if (failed(r))
      return failure();
    input = *r;
    k.insert(k.begin(), 1);
    strides.insert(strides.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  SmallVector<NamedAttribute> named{ctx.arrayAttr("kernel_size", k),
                                    ctx.arrayAttr("strides", strides),
                                    ctx.arrayAttr("pads", pads)};
  FailureOr<Value> y = failure();
  if (isMax) {
    y = ctx.create<tg::MaxPoolOp>(input, named);
  } else {
    named.push_back(ctx.boolAttr("count_include_pad", countIncludePad));
    y = ctx.create<tg::AvgPoolOp>(input, named);
  }
  if (failed(y))
    return failure();
  return setWindowOutput(ctx, *y, rank == 3);
}

LogicalResult importGlobalPool(NodeContext &ctx, bool isMax) {
  if (!ctx.isFloatInput(0))
    return ctx.fail("input 0 has element type " +
                    onnxutil::dataTypeName(ctx.inputDataType(0)) +
                    "; only floating-point types are supported");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t rank = ctx.inputRank(0);
  if (rank < 3)
    return ctx.fail("the input needs spatial dimensions (rank >= 3)");
  FailureOr<Value> y = failure();
  if (!isMax && rank == 4) {
    y = ctx.create<tg::GlobalAvgPoolOp>(*x);
  } else {
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
    auto attrs = {ctx.arrayAttr("axes", axes), ctx.boolAttr("keepdims", true)};
    y = isMax ? ctx.create<tg::ReduceMaxOp>(*x, attrs)
              : ctx.create<tg::ReduceMeanOp>(*x, attrs);
  }
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

} // namespace

void onnx_to_tg::populatePoolingHandlers(HandlerTable &table) {
  table["MaxPool"] = [](NodeContext &c) { return importPool(c, true); };
  table["AveragePool"] = [](NodeContext &c) { return importPool(c, false); };
  table["GlobalAveragePool"] = [](NodeContext &c) {
    return importGlobalPool(c, false);
  };
  table["GlobalMaxPool"] = [](NodeContext &c) {
    return importGlobalPool(c, true);
  };
}
