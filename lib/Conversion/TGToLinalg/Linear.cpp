//===- Linear.cpp - Lowering of tg.matmul, tg.conv and pooling ----------===//
//
// Part of Loom. tg.matmul becomes a generic contraction with numpy-broadcast
// batch dimensions; a 2-D tg.conv a padded linalg.conv_2d_nchw_fchw (groups
// = 1) or linalg.conv_2d_ngchw_gfchw (grouped and depthwise, on reshaped
// views), a 3-D one linalg.conv_3d_ncdhw_fcdhw or a grouped generic
// contraction, then the bias and fused activation as an elementwise
// epilogue; 1-D convolutions and pools as 2-D ones over a unit height;
// 2-D pooling the linalg pooling ops on padded inputs, 3-D pooling a
// generic over the window, with the interpreter's divisor for
// average pooling (the window clipped to the input unless
// count_include_pad); tg.maxpool_grad of disjoint windows as one
// elementwise generic comparing each position with its window, of
// overlapping ones as generics finding each window's argmax and summing the
// gradient of the windows at it.
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"

#include "loom/Interpreter/ScalarFunctions.h"

#include <limits>

using namespace mlir;
using namespace loom;
namespace lowering = loom::tg::lowering;
using namespace loom::tg;
using namespace loom::tg::lowering;

namespace {

/// \p x (channels-first) padded on its spatial dimensions by \p pads (the
/// begin pads of every spatial dimension, then the end pads: [top, left,
/// bottom, right] in 2-D) with \p value.
Value padNCHW(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> pads,
              double value) {
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  int64_t k = type.getRank() - 2;
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> low(2, b.getIndexAttr(0)), high = low;
  for (int64_t i = 0; i < k; ++i) {
    shape[2 + i] += pads[i] + pads[k + i];
    low.push_back(b.getIndexAttr(pads[i]));
    high.push_back(b.getIndexAttr(pads[k + i]));
  }
  auto padded = RankedTensorType::get(shape, type.getElementType());
  Value v = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), value));
  return tensor::PadOp::create(b, loc, padded, x, low, high, v);
}

/// How a 1-D convolution or pooling op lowers: as the 2-D one over a unit
/// height (linalg's 2-D convolutions and pools, and the 2-D paths below,
/// with loom-vectorize-convs' vector rows): operands [N, C, W] viewed as
/// [N, C, 1, W], sizes {1, v}, pads {0, begin, 0, end}.
struct UnitHeight {
  bool active;
  explicit UnitHeight(Value input)
      : active(cast<RankedTensorType>(input.getType()).getRank() == 3) {}
  Value view(OpBuilder &b, Location loc, Value v) const {
    return active ? reshapeTo(b, loc, v, type(v.getType())) : v;
  }
  RankedTensorType type(Type t) const {
    auto r = cast<RankedTensorType>(t);
    if (!active)
      return r;
    SmallVector<int64_t> shape(r.getShape());
    shape.insert(shape.end() - 1, 1);
    return RankedTensorType::get(shape, r.getElementType());
  }
  SmallVector<int64_t> sizes(ArrayRef<int64_t> v) const {
    return active ? SmallVector<int64_t>{1, v[0]} : llvm::to_vector(v);
  }
  SmallVector<int64_t> pads(ArrayRef<int64_t> v) const {
    return active ? SmallVector<int64_t>{0, v[0], 0, v[1]} : llvm::to_vector(v);
  }
  /// \p v, computed on the 2-D view, back in the shape of \p result.
  Lowered back(OpBuilder &b, Location loc, Value v, Value result) const {
    return SmallVector<Value>{
        active ? reshapeTo(b, loc, v,
                           cast<RankedTensorType>(result.getType()))
               : v};
  }
};

/// \p x (NCHW) shifted by \p top and \p left and fitted to \p rows x
/// \p cols: padded with \p value, cropped where it reaches further.
Value fitNCHW(OpBuilder &b, Location loc, Value x, int64_t top, int64_t left,
              int64_t rows, int64_t cols, double value) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t bottom = rows - type.getDimSize(2) - top,
          right = cols - type.getDimSize(3) - left;
  x = padNCHW(b, loc, x,
              {top, left, std::max<int64_t>(bottom, 0),
               std::max<int64_t>(right, 0)},
              value);
  if (bottom >= 0 && right >= 0)
    return x;
  SmallVector<OpFoldResult> zeros(4, b.getIndexAttr(0)),
      ones(4, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = {
      b.getIndexAttr(type.getDimSize(0)), b.getIndexAttr(type.getDimSize(1)),
      b.getIndexAttr(rows), b.getIndexAttr(cols)};
  return tensor::ExtractSliceOp::create(b, loc, x, zeros, sizes, ones);
}

Lowered lowerMatmul(MatmulOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  auto outType = cast<RankedTensorType>(op.getType());
  int64_t rank = outType.getRank();
  ArrayRef<int64_t> out = outType.getShape();
  // Loops: the result's dimensions, then k.
  auto operandMap = [&](Value v, bool lhs) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t r = type.getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t j = 0; j < r - 2; ++j) {
      int64_t dim = rank - r + j;
      exprs.push_back(type.getDimSize(j) == 1 && out[dim] != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(dim));
    }
    if (lhs) {
      exprs.push_back(b.getAffineDimExpr(rank - 2));
      exprs.push_back(b.getAffineDimExpr(rank));
    } else {
      exprs.push_back(b.getAffineDimExpr(rank));
      exprs.push_back(b.getAffineDimExpr(rank - 1));
    }
    return AffineMap::get(rank + 1, 0, exprs, b.getContext());
  };
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps = {
      operandMap(op.getLhs(), true), operandMap(op.getRhs(), false),
      AffineMap::get(rank + 1, 0, outExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value acc = multiplyAccumulate(b, loc, accumulatorType(outType), op.getLhs(),
                                 op.getRhs(), maps, iterators);
  return SmallVector<Value>{convertedTo(b, loc, acc, outType)};
}

/// conv + bias, then the fused activation, as the interpreter's
/// biasAndActivate. \p channels are the dimensions of \p conv that index
/// the bias (NCHW: {1}; a grouped convolution's [N, G, C/G, H, W]: {1, 2});
/// the bias is read there through a projection (no broadcast reshape), so
/// that tiling the epilogue fuses the convolution, and a reshape around it
/// can be propagated through.
Value biasAndActivate(OpBuilder &b, Location loc, Value conv, Value bias,
                      Activation act, ArrayRef<int64_t> channels) {
  auto type = cast<RankedTensorType>(conv.getType());
  if (!bias && act == Activation::None)
    return conv;
  SmallVector<Value> stats;
  SmallVector<int64_t> others;
  if (bias) {
    SmallVector<int64_t> shape;
    for (int64_t d : channels)
      shape.push_back(type.getDimSize(d));
    stats.push_back(reshapeTo(
        b, loc, bias, RankedTensorType::get(shape, type.getElementType())));
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!llvm::is_contained(channels, d))
        others.push_back(d);
  }
  return elementwiseWithStats(
      b, loc, type, ValueRange{conv}, stats, others,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        LinalgDomain::Scope scope(nb, nl, args[0].getType());
        Value v = args[0];
        if (args.size() > 1)
          v = LinalgDomain::add(v, args[1]);
        interp::UnaryConsts<LinalgDomain> c({});
        switch (act) {
        case Activation::None:
          return v;
        case Activation::Relu:
          return interp::applyUnary<LinalgDomain, interp::UnaryKind::Relu>(c,
                                                                           v);
        case Activation::Sigmoid:
          return interp::applyUnary<LinalgDomain, interp::UnaryKind::Sigmoid>(
              c, v);
        case Activation::Tanh:
          return interp::applyUnary<LinalgDomain, interp::UnaryKind::Tanh>(c,
                                                                           v);
        }
        return v;
      });
}

/// The attributes of a tg.conv lowered as a 2-D or 3-D convolution.
struct ConvForm {
  Value input, filter, bias;
  RankedTensorType outType;
  SmallVector<int64_t> strides, pads, dilations;
  int64_t groups;
  Activation activation;
};

/// A box of \p x (channels-first, static shape): spatial dimension i kept
/// from \p starts[i] for \p sizes[i]; the others whole.
Value spatialSlice(OpBuilder &b, Location loc, Value x,
                   ArrayRef<int64_t> starts, ArrayRef<int64_t> sizes) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
  SmallVector<OpFoldResult> offsets, extents,
      ones(shape.size(), b.getIndexAttr(1));
  for (size_t d = 0; d < shape.size(); ++d) {
    bool spatial = d >= 2;
    offsets.push_back(b.getIndexAttr(spatial ? starts[d - 2] : 0));
    extents.push_back(b.getIndexAttr(spatial ? sizes[d - 2] : shape[d]));
  }
  return tensor::ExtractSliceOp::create(b, loc, x, offsets, extents, ones);
}

/// Drops the kernel taps of \p c that read only padding at every output
/// (docs/Superopt/PET.md, "Candidates measured and not built"): per spatial
/// dimension, the taps outside [t0, t1], the first and last that read a
/// real element for some output, are cut from the filter, and the padding
/// (or, where the kept taps start inside the input, a slice of it) is
/// moved so that every output reads what it read. Fully equivalent: a cut
/// tap only ever multiplied zeros. A dilated convolution whose off-centre
/// taps fall outside a small map (DeepLabV3's ASPP: dilation 36 on 28x28)
/// becomes a 1x1 one: generated code computes every tap it is given.
void trimPaddingTaps(OpBuilder &b, Location loc, ConvForm &c) {
  auto in = cast<RankedTensorType>(c.input.getType());
  auto w = cast<RankedTensorType>(c.filter.getType());
  if (!in.hasStaticShape() || !w.hasStaticShape())
    return;
  int64_t k = in.getRank() - 2;
  SmallVector<int64_t> first(k), taps(k), starts(k), sizes(k), pads(2 * k);
  bool trimmed = false;
  for (int64_t i = 0; i < k; ++i) {
    int64_t size = in.getDimSize(2 + i), kernel = w.getDimSize(2 + i);
    int64_t outs = c.outType.getDimSize(2 + i), stride = c.strides[i],
            dil = c.dilations[i], lo = c.pads[i];
    // Tap t reads o * stride - lo + t * dil, o in [0, outs): only padding
    // when the first output's read is >= `size` or the last's < 0 (with a
    // stride, a tap that steps over the input is kept: cutting only what
    // surely reads padding keeps the convolution equal).
    auto real = [&](int64_t t) {
      return t * dil - lo < size && (outs - 1) * stride - lo + t * dil >= 0;
    };
    int64_t t0 = 0, t1 = kernel - 1;
    while (t0 < kernel && !real(t0))
      ++t0;
    while (t1 > t0 && !real(t1))
      --t1;
    if (t0 == kernel)
      return; // every tap reads padding: the output is the bias alone
    trimmed |= t0 > 0 || t1 < kernel - 1;
    first[i] = t0;
    taps[i] = t1 - t0 + 1;
    // Input indices read: [begin, end), clipped to the input; the rest
    // stays padding.
    int64_t begin = t0 * dil - lo,
            end = (outs - 1) * stride - lo + t1 * dil + 1;
    starts[i] = std::max<int64_t>(begin, 0);
    sizes[i] = std::min(end, size) - starts[i];
    pads[i] = std::max<int64_t>(-begin, 0);
    pads[k + i] = std::max<int64_t>(end - size, 0);
  }
  if (!trimmed)
    return;
  if (llvm::any_of(llvm::seq<int64_t>(0, k), [&](int64_t i) {
        return sizes[i] != in.getDimSize(2 + i);
      }))
    c.input = spatialSlice(b, loc, c.input, starts, sizes);
  c.filter = spatialSlice(b, loc, c.filter, first, taps);
  c.pads = pads;
}

/// The linalg convolution \p ConvOpT of \p input by \p filter into a
/// zero-filled tensor of \p type.
template <typename ConvOpT>
Value namedConv(OpBuilder &b, Location loc, RankedTensorType type, Value input,
                Value filter, const ConvForm &c) {
  return ConvOpT::create(b, loc, TypeRange{type}, ValueRange{input, filter},
                         ValueRange{filled(b, loc, type, 0.0)},
                         b.getI64VectorAttr(c.strides),
                         b.getI64VectorAttr(c.dilations))
      .getResult(0);
}

/// A 2-D convolution: the padded input into linalg.conv_2d_nchw_fchw
/// (groups = 1) or linalg.conv_2d_ngchw_gfchw on grouped views.
Value convNCHW(OpBuilder &b, Location loc, const ConvForm &c) {
  RankedTensorType outType = c.outType;
  Value input = padNCHW(b, loc, c.input, c.pads, 0.0);
  Value filter = c.filter;
  int64_t groups = c.groups;
  if (groups == 1) {
    Value conv = namedConv<linalg::Conv2DNchwFchwOp>(b, loc, outType, input,
                                                     filter, c);
    return biasAndActivate(b, loc, conv, c.bias, c.activation, {1});
  }
  auto inType = cast<RankedTensorType>(input.getType());
  auto fType = cast<RankedTensorType>(filter.getType());
  auto g5 = [&](RankedTensorType t) {
    ArrayRef<int64_t> s = t.getShape();
    return RankedTensorType::get({s[0], groups, s[1] / groups, s[2], s[3]},
                                 t.getElementType());
  };
  auto fg = RankedTensorType::get({groups, fType.getDimSize(0) / groups,
                                   fType.getDimSize(1), fType.getDimSize(2),
                                   fType.getDimSize(3)},
                                  fType.getElementType());
  Value in5 = reshapeTo(b, loc, input, g5(inType));
  Value f5 = reshapeTo(b, loc, filter, fg);
  Value c5 =
      namedConv<linalg::Conv2DNgchwGfchwOp>(b, loc, g5(outType), in5, f5, c);
  // The epilogue on the grouped view, collapsed last: the kernel's result
  // is then computed by an op on [N, G, C/G, H, W] that its thread tiles
  // fuse the convolution into (after a collapse, each thread ran the whole
  // convolution).
  c5 = biasAndActivate(b, loc, c5, c.bias, c.activation, {1, 2});
  return reshapeTo(b, loc, c5, outType);
}

/// A 3-D convolution: the padded input into linalg.conv_3d_ncdhw_fcdhw
/// (groups = 1), or a generic contraction over grouped views [N, G, C/G,
/// D, H, W] x [G, O/G, C/G, KD, KH, KW] (linalg has no grouped 3-D
/// convolution). loom-vectorize-convs handles 2-D convolutions only: these
/// run as tiled scalar loops that LLVM vectorises where it can.
Value convNCDHW(OpBuilder &b, Location loc, const ConvForm &c) {
  RankedTensorType outType = c.outType;
  Value input = padNCHW(b, loc, c.input, c.pads, 0.0);
  int64_t groups = c.groups;
  if (groups == 1) {
    Value conv = namedConv<linalg::Conv3DNcdhwFcdhwOp>(b, loc, outType, input,
                                                       c.filter, c);
    return biasAndActivate(b, loc, conv, c.bias, c.activation, {1});
  }
  MLIRContext *ctx = b.getContext();
  auto grouped = [&](Type t, bool filter) {
    auto type = cast<RankedTensorType>(t);
    ArrayRef<int64_t> s = type.getShape();
    SmallVector<int64_t> shape =
        filter ? SmallVector<int64_t>{groups, s[0] / groups, s[1]}
               : SmallVector<int64_t>{s[0], groups, s[1] / groups};
    shape.append(s.begin() + 2, s.end());
    return RankedTensorType::get(shape, type.getElementType());
  };
  Value in6 = reshapeTo(b, loc, input, grouped(input.getType(), false));
  Value f6 = reshapeTo(b, loc, c.filter, grouped(c.filter.getType(), true));
  auto out6 = grouped(outType, false);
  // Loops (n, g, o, od, oh, ow, c, kd, kh, kw).
  SmallVector<AffineExpr> d(10);
  for (unsigned i = 0; i < 10; ++i)
    d[i] = b.getAffineDimExpr(i);
  SmallVector<AffineExpr> inExprs = {d[0], d[1], d[6]};
  for (int i = 0; i < 3; ++i)
    inExprs.push_back(d[3 + i] * c.strides[i] + d[7 + i] * c.dilations[i]);
  SmallVector<AffineMap> maps = {
      AffineMap::get(10, 0, inExprs, ctx),
      AffineMap::get(10, 0, {d[1], d[2], d[6], d[7], d[8], d[9]}, ctx),
      AffineMap::get(10, 0, {d[0], d[1], d[2], d[3], d[4], d[5]}, ctx)};
  SmallVector<utils::IteratorType> iterators(6, utils::IteratorType::parallel);
  iterators.append(4, utils::IteratorType::reduction);
  Value conv = multiplyAccumulate(b, loc, out6, in6, f6, maps, iterators);
  conv = biasAndActivate(b, loc, conv, c.bias, c.activation, {1, 2});
  return reshapeTo(b, loc, conv, outType);
}

/// tg.conv: 2-D and 3-D as they are, 1-D as 2-D over a unit height; an
/// f16 or bf16 one accumulates in f32, its bias and activation applied
/// there, and is rounded once to its type.
Lowered lowerConv(ConvOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  UnitHeight unit(op.getInput());
  RankedTensorType acc = accumulatorType(unit.type(op.getType()));
  Value bias = op.getBias();
  if (bias)
    bias = convertedTo(
        b, loc, bias,
        RankedTensorType::get(cast<RankedTensorType>(bias.getType()).getShape(),
                              acc.getElementType()));
  ConvForm c{unit.view(b, loc, op.getInput()),
             unit.view(b, loc, op.getFilter()),
             bias,
             acc,
             unit.sizes(op.getStrides()),
             unit.pads(op.getPads()),
             unit.sizes(op.getDilations()),
             int64_t(op.getGroups()),
             op.getActivation()};
  trimPaddingTaps(b, loc, c);
  RankedTensorType rounded = unit.type(op.getType());
  if (c.outType.getRank() == 5)
    return SmallVector<Value>{
        convertedTo(b, loc, convNCDHW(b, loc, c), rounded)};
  return unit.back(b, loc, convertedTo(b, loc, convNCHW(b, loc, c), rounded),
                   op.getOutput());
}

/// The window maxima of \p padded (NCHW, already padded with -inf: padding
/// never wins) for the window \p k and \p strides, of type \p outType.
Value pooledMax(OpBuilder &b, Location loc, Value padded, ArrayRef<int64_t> k,
                ArrayRef<int64_t> strides, RankedTensorType outType) {
  Value window = tensor::EmptyOp::create(b, loc, k, b.getF32Type());
  Value init =
      filled(b, loc, outType, -std::numeric_limits<double>::infinity());
  return linalg::PoolingNchwMaxOp::create(
             b, loc, TypeRange{outType}, ValueRange{padded, window},
             ValueRange{init}, b.getI64VectorAttr(strides),
             b.getI64VectorAttr({1, 1}))
      .getResult(0);
}

/// The maxima of windows that do not overlap (stride >= kernel on both
/// axes) as one elementwise generic over the result: the input, padded with
/// -inf and fitted to the windows' extent, viewed as [N, C, OH, sh, OW, sw]
/// and read once per window offset (maps with constant offsets), so that
/// LLVM vectorises along the output row instead of over a 2-wide window.
Value disjointWindowsMax(OpBuilder &b, Location loc, Value input,
                         RankedTensorType outType, ArrayRef<int64_t> k,
                         ArrayRef<int64_t> s, ArrayRef<int64_t> pads) {
  MLIRContext *ctx = b.getContext();
  int64_t n = outType.getDimSize(0), c = outType.getDimSize(1),
          oh = outType.getDimSize(2), ow = outType.getDimSize(3);
  Value x = fitNCHW(b, loc, input, pads[0], pads[1], oh * s[0], ow * s[1],
                    -std::numeric_limits<double>::infinity());
  Value x6 = reshapeTo(
      b, loc, x,
      RankedTensorType::get({n, c, oh, s[0], ow, s[1]},
                            outType.getElementType()));
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (int64_t i = 0; i < k[0]; ++i)
    for (int64_t j = 0; j < k[1]; ++j) {
      inputs.push_back(x6);
      maps.push_back(AffineMap::get(4, 0,
                                    {d0, d1, d2, b.getAffineConstantExpr(i),
                                     d3, b.getAffineConstantExpr(j)},
                                    ctx));
    }
  maps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
  Value empty = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                        outType.getElementType());
  return linalg::GenericOp::create(
             b, loc, outType, inputs, ValueRange{empty}, maps,
             SmallVector<utils::IteratorType>(4,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value m = args[0];
               for (Value v : args.drop_front().drop_back())
                 m = arith::MaximumFOp::create(nb, nl, m, v);
               linalg::YieldOp::create(nb, nl, m);
             })
      .getResult(0);
}

/// The window maxima (\p max) or sums of \p padded (3-D, channels-first,
/// already padded with -inf or zero) for the window \p k and \p strides, of
/// type \p outType: a generic over the result and the window (linalg's
/// 3-D pools are channels-last).
Value pooled3d(OpBuilder &b, Location loc, Value padded, ArrayRef<int64_t> k,
               ArrayRef<int64_t> strides, RankedTensorType outType, bool max) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> d(8);
  for (unsigned i = 0; i < 8; ++i)
    d[i] = b.getAffineDimExpr(i);
  SmallVector<AffineExpr> inExprs = {d[0], d[1]};
  for (int i = 0; i < 3; ++i)
    inExprs.push_back(d[2 + i] * strides[i] + d[5 + i]);
  SmallVector<AffineMap> maps = {
      AffineMap::get(8, 0, inExprs, ctx),
      AffineMap::get(8, 0, {d[5], d[6], d[7]}, ctx),
      AffineMap::get(8, 0, {d[0], d[1], d[2], d[3], d[4]}, ctx)};
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value window = tensor::EmptyOp::create(b, loc, k, b.getF32Type());
  Value init = filled(
      b, loc, outType, max ? -std::numeric_limits<double>::infinity() : 0.0);
  return linalg::GenericOp::create(
             b, loc, outType, ValueRange{padded, window}, ValueRange{init},
             maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value r =
                   max ? Value(arith::MaximumFOp::create(nb, nl, args[2],
                                                         args[0]))
                       : Value(arith::AddFOp::create(nb, nl, args[2], args[0]));
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

/// Max pooling of \p input (2-D or 3-D) into \p outType.
Value maxPool(OpBuilder &b, Location loc, Value input, RankedTensorType outType,
              ArrayRef<int64_t> k, ArrayRef<int64_t> s,
              ArrayRef<int64_t> pads) {
  if (outType.getRank() == 4 && s[0] >= k[0] && s[1] >= k[1])
    return disjointWindowsMax(b, loc, input, outType, k, s, pads);
  Value padded = padNCHW(b, loc, input, pads,
                         -std::numeric_limits<double>::infinity());
  if (outType.getRank() == 5)
    return pooled3d(b, loc, padded, k, s, outType, /*max=*/true);
  return pooledMax(b, loc, padded, k, s, outType);
}

Lowered lowerMaxPool(MaxPoolOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  UnitHeight unit(op.getInput());
  Value r = maxPool(b, loc, unit.view(b, loc, op.getInput()),
                    unit.type(op.getType()), unit.sizes(op.getKernelSize()),
                    unit.sizes(op.getStrides()), unit.pads(op.getPads()));
  return unit.back(b, loc, r, op.getOutput());
}

/// The gradient of windows that do not overlap (stride >= kernel on both
/// axes, the usual 2x2/2 pooling), in one elementwise generic with no
/// gathers (it vectorises): the input, padded with -inf and fitted to the
/// windows' extent [OH * sh, OW * sw], is viewed as [N, C, OH, sh, OW, sw];
/// over those loops (n, c, oh, i, ow, j) each position reads its own value,
/// the k * k values of its window (maps with constant offsets) and the
/// window's gradient, and takes the gradient when it is the window's first
/// maximum in row-major order: greater than every value before it, at
/// least every value after it (a NaN is never one, as in the general
/// path). The result is shifted back by the padding and cropped or
/// zero-extended to the input.
Value disjointWindowsGrad(OpBuilder &b, Location loc, Value input, Value grad,
                          ArrayRef<int64_t> k, ArrayRef<int64_t> s,
                          ArrayRef<int64_t> pads) {
  MLIRContext *ctx = b.getContext();
  auto inType = cast<RankedTensorType>(input.getType());
  auto gradType = cast<RankedTensorType>(grad.getType());
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1),
          h = inType.getDimSize(2), w = inType.getDimSize(3),
          oh = gradType.getDimSize(2), ow = gradType.getDimSize(3);
  Type f = inType.getElementType();
  Value x = fitNCHW(b, loc, input, pads[0], pads[1], oh * s[0], ow * s[1],
                    -std::numeric_limits<double>::infinity());
  auto sixType = RankedTensorType::get({n, c, oh, s[0], ow, s[1]}, f);
  Value x6 = reshapeTo(b, loc, x, sixType);
  AffineExpr d0, d1, d2, d3, d4, d5;
  bindDims(ctx, d0, d1, d2, d3, d4, d5);
  AffineMap all = AffineMap::getMultiDimIdentityMap(6, ctx);
  SmallVector<Value> inputs = {x6, grad};
  SmallVector<AffineMap> maps = {all, AffineMap::get(6, 0, {d0, d1, d2, d4},
                                                     ctx)};
  for (int64_t i = 0; i < k[0]; ++i)
    for (int64_t j = 0; j < k[1]; ++j) {
      inputs.push_back(x6);
      maps.push_back(AffineMap::get(
          6, 0,
          {d0, d1, d2, b.getAffineConstantExpr(i), d4,
           b.getAffineConstantExpr(j)},
          ctx));
    }
  maps.push_back(all);
  Value empty = tensor::EmptyOp::create(b, loc, sixType.getShape(), f);
  auto spread = linalg::GenericOp::create(
      b, loc, sixType, inputs, ValueRange{empty}, maps,
      SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto cst = [&](int64_t v) {
          return Value(arith::ConstantIndexOp::create(nb, nl, v));
        };
        auto icmp = [&](arith::CmpIPredicate p, Value l, Value r) {
          return Value(arith::CmpIOp::create(nb, nl, p, l, r));
        };
        Value i = linalg::IndexOp::create(nb, nl, 3);
        Value j = linalg::IndexOp::create(nb, nl, 5);
        Value self = arith::AddIOp::create(
            nb, nl, arith::MulIOp::create(nb, nl, i, cst(k[1])), j);
        Value take =
            arith::AndIOp::create(nb, nl,
                                  icmp(arith::CmpIPredicate::ult, i, cst(k[0])),
                                  icmp(arith::CmpIPredicate::ult, j, cst(k[1])));
        for (int64_t t = 0; t < k[0] * k[1]; ++t) {
          Value other = args[2 + t];
          Value after = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE,
                                              args[0], other);
          Value before = arith::CmpFOp::create(
              nb, nl, arith::CmpFPredicate::OGT, args[0], other);
          Value wins = arith::SelectOp::create(
              nb, nl, icmp(arith::CmpIPredicate::ult, cst(t), self), before,
              after);
          take = arith::AndIOp::create(nb, nl, take, wins);
        }
        Value none = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(f, 0.0));
        linalg::YieldOp::create(
            nb, nl, Value(arith::SelectOp::create(nb, nl, take, args[1], none)));
      });
  Value full = reshapeTo(
      b, loc, spread.getResult(0),
      RankedTensorType::get({n, c, oh * s[0], ow * s[1]}, f));
  // Row r of `full` is input row r - top: keep rows [top, top + h), the
  // ones beyond `full` zero (the same for columns).
  int64_t rows = std::min(h, oh * s[0] - pads[0]),
          cols = std::min(w, ow * s[1] - pads[1]);
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                       b.getIndexAttr(pads[0]),
                                       b.getIndexAttr(pads[1])};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(n), b.getIndexAttr(c),
                                     b.getIndexAttr(rows),
                                     b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> ones(4, b.getIndexAttr(1));
  Value cropped = tensor::ExtractSliceOp::create(b, loc, full, offsets, sizes,
                                                 ones);
  return padNCHW(b, loc, cropped, {0, 0, h - rows, w - cols}, 0.0);
}

/// tg.maxpool_grad: windows that do not overlap by disjointWindowsGrad;
/// overlapping ones in three steps, none of which depends on the order of
/// evaluation: the window maxima (as tg.maxpool); each window's argmax,
/// the smallest flat in-bounds position y * W + x of its plane holding the
/// maximum (a min reduction over the window offsets, so ties go to the
/// first position in row-major order, as in the interpreter); and the
/// gradient of every input position (y, x), a sum over the window offsets
/// (i, j) of the grad_output of window ((y + top - i) / sh, (x + left - j) /
/// sw), when that is a window and its argmax is (y, x). The windows are read
/// with tensor.extract at clamped positions (a select discards them when
/// they are not windows). NaN maxima match no position (the interpreter
/// picks the first NaN).
Value maxPoolGrad(OpBuilder &b, Location loc, Value input, Value gradOutput,
                  ArrayRef<int64_t> k, ArrayRef<int64_t> s,
                  ArrayRef<int64_t> pads) {
  MLIRContext *ctx = b.getContext();
  auto inType = cast<RankedTensorType>(input.getType());
  auto gradType = cast<RankedTensorType>(gradOutput.getType());
  int64_t h = inType.getDimSize(2), w = inType.getDimSize(3);
  int64_t oh = gradType.getDimSize(2), ow = gradType.getDimSize(3);
  if (s[0] >= k[0] && s[1] >= k[1])
    return disjointWindowsGrad(b, loc, input, gradOutput, k, s, pads);
  Value padded = padNCHW(b, loc, input, pads,
                         -std::numeric_limits<double>::infinity());
  Value maxima = pooledMax(b, loc, padded, k, s, gradType);
  // Both generics loop over four positions and the window offsets, whose
  // ranges come from this operand.
  Value window = tensor::EmptyOp::create(b, loc, k, b.getF32Type());
  AffineExpr d0, d1, d2, d3, d4, d5;
  bindDims(ctx, d0, d1, d2, d3, d4, d5);
  auto map = [&](ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(6, 0, exprs, ctx);
  };
  AffineMap position = map({d0, d1, d2, d3}), offsets = map({d4, d5});
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  auto cst = [](OpBuilder &nb, Location nl, int64_t v) {
    return Value(arith::ConstantIndexOp::create(nb, nl, v));
  };
  auto cmp = [](OpBuilder &nb, Location nl, arith::CmpIPredicate p, Value x,
                Value y) {
    return Value(arith::CmpIOp::create(nb, nl, p, x, y));
  };
  auto all = [](OpBuilder &nb, Location nl, ArrayRef<Value> conds) {
    Value r = conds.front();
    for (Value c : conds.drop_front())
      r = arith::AndIOp::create(nb, nl, r, c);
    return r;
  };

  // Loops (n, c, oh, ow, i, j): the argmax of each window.
  auto argType = RankedTensorType::get(gradType.getShape(), b.getI64Type());
  Value none = arith::ConstantOp::create(
      b, loc, b.getI64IntegerAttr(std::numeric_limits<int64_t>::max()));
  Value argEmpty =
      tensor::EmptyOp::create(b, loc, argType.getShape(), b.getI64Type());
  Value argInit = linalg::FillOp::create(b, loc, none, argEmpty).getResult(0);
  auto argmax = linalg::GenericOp::create(
      b, loc, argType, ValueRange{padded, maxima, window}, ValueRange{argInit},
      {map({d0, d1, d2 * s[0] + d4, d3 * s[1] + d5}), position, offsets,
       position},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto coord = [&](unsigned out, unsigned off, int64_t stride,
                         int64_t pad) {
          Value o = linalg::IndexOp::create(nb, nl, out);
          Value i = linalg::IndexOp::create(nb, nl, off);
          return Value(arith::SubIOp::create(
              nb, nl,
              arith::AddIOp::create(
                  nb, nl, arith::MulIOp::create(nb, nl, o, cst(nb, nl, stride)),
                  i),
              cst(nb, nl, pad)));
        };
        Value y = coord(2, 4, s[0], pads[0]), x = coord(3, 5, s[1], pads[1]);
        Value zero = cst(nb, nl, 0);
        Value isMax = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            args[0], args[1]);
        Value valid =
            all(nb, nl,
                {isMax, cmp(nb, nl, arith::CmpIPredicate::sge, y, zero),
                 cmp(nb, nl, arith::CmpIPredicate::slt, y, cst(nb, nl, h)),
                 cmp(nb, nl, arith::CmpIPredicate::sge, x, zero),
                 cmp(nb, nl, arith::CmpIPredicate::slt, x, cst(nb, nl, w))});
        Value flat = arith::IndexCastOp::create(
            nb, nl, nb.getI64Type(),
            arith::AddIOp::create(
                nb, nl, arith::MulIOp::create(nb, nl, y, cst(nb, nl, w)), x));
        Value least = arith::MinSIOp::create(nb, nl, args[3], flat);
        linalg::YieldOp::create(
            nb, nl,
            Value(arith::SelectOp::create(nb, nl, valid, least, args[3])));
      });
  Value arg = argmax.getResult(0);
  Value grad = gradOutput;

  // Loops (n, c, y, x, i, j): the gradient of each input position.
  auto sum = linalg::GenericOp::create(
      b, loc, inType, ValueRange{window},
      ValueRange{filled(b, loc, inType, 0.0)}, {offsets, position}, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> at = {linalg::IndexOp::create(nb, nl, 0),
                                 linalg::IndexOp::create(nb, nl, 1)};
        SmallVector<Value> conds;
        // The window index along one spatial axis, clamped into [0, n),
        // and whether it is a window containing the position.
        auto windowOf = [&](unsigned pos, unsigned off, int64_t stride,
                            int64_t pad, int64_t n) {
          Value t = arith::SubIOp::create(
              nb, nl,
              arith::AddIOp::create(nb, nl,
                                    linalg::IndexOp::create(nb, nl, pos),
                                    cst(nb, nl, pad)),
              linalg::IndexOp::create(nb, nl, off));
          Value nonNeg = arith::MaxSIOp::create(nb, nl, t, cst(nb, nl, 0));
          Value q = arith::DivUIOp::create(nb, nl, nonNeg, cst(nb, nl, stride));
          Value r = arith::RemUIOp::create(nb, nl, nonNeg, cst(nb, nl, stride));
          conds.push_back(
              cmp(nb, nl, arith::CmpIPredicate::sge, t, cst(nb, nl, 0)));
          conds.push_back(
              cmp(nb, nl, arith::CmpIPredicate::eq, r, cst(nb, nl, 0)));
          conds.push_back(
              cmp(nb, nl, arith::CmpIPredicate::slt, q, cst(nb, nl, n)));
          at.push_back(arith::MinSIOp::create(nb, nl, q, cst(nb, nl, n - 1)));
        };
        windowOf(2, 4, s[0], pads[0], oh);
        windowOf(3, 5, s[1], pads[1], ow);
        Value self = arith::IndexCastOp::create(
            nb, nl, nb.getI64Type(),
            arith::AddIOp::create(
                nb, nl,
                arith::MulIOp::create(
                    nb, nl, linalg::IndexOp::create(nb, nl, 2), cst(nb, nl, w)),
                linalg::IndexOp::create(nb, nl, 3)));
        conds.push_back(arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::eq,
            tensor::ExtractOp::create(nb, nl, arg, at), self));
        Value g = tensor::ExtractOp::create(nb, nl, grad, at);
        Value added = arith::AddFOp::create(nb, nl, args[1], g);
        linalg::YieldOp::create(
            nb, nl,
            Value(arith::SelectOp::create(nb, nl, all(nb, nl, conds), added,
                                          args[1])));
      });
  return sum.getResult(0);
}

/// 1-D and 2-D (the verifier refuses 3-D max pooling gradients).
Lowered lowerMaxPoolGrad(MaxPoolGradOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  UnitHeight unit(op.getInput());
  Value r = maxPoolGrad(b, loc, unit.view(b, loc, op.getInput()),
                        unit.view(b, loc, op.getGradOutput()),
                        unit.sizes(op.getKernelSize()),
                        unit.sizes(op.getStrides()), unit.pads(op.getPads()));
  return unit.back(b, loc, r, op.getOutput());
}

/// Average pooling of \p input (2-D or 3-D) into \p outType: the window
/// sums, divided by the window's size (\p includePad) or by its part
/// inside the input, from linalg.index arithmetic.
Value avgPool(OpBuilder &b, Location loc, Value input, RankedTensorType outType,
              ArrayRef<int64_t> k, ArrayRef<int64_t> s, ArrayRef<int64_t> pads,
              bool includePad) {
  Value padded = padNCHW(b, loc, input, pads, 0.0);
  Value sum;
  if (outType.getRank() == 5) {
    sum = pooled3d(b, loc, padded, k, s, outType, /*max=*/false);
  } else {
    Value window = tensor::EmptyOp::create(b, loc, k, b.getF32Type());
    sum = linalg::PoolingNchwSumOp::create(
              b, loc, TypeRange{outType}, ValueRange{padded, window},
              ValueRange{filled(b, loc, outType, 0.0)}, b.getI64VectorAttr(s),
              b.getI64VectorAttr({1, 1}))
              .getResult(0);
  }
  auto inShape = cast<RankedTensorType>(input.getType()).getShape();
  int64_t spatial = k.size();
  return elementwise(
      b, loc, outType, {sum}, [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto cst = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, nl, v);
        };
        if (includePad) {
          int64_t size = 1;
          for (int64_t e : k)
            size *= e;
          return Value(
              arith::DivFOp::create(nb, nl, args[0], f32(nb, nl, double(size))));
        }
        // The window clipped to the input: [max(o*s - p, 0), min(o*s - p +
        // k, n)) on each spatial axis.
        Value count = cst(1);
        for (int64_t i = 0; i < spatial; ++i) {
          Value o = linalg::IndexOp::create(nb, nl, 2 + i);
          Value start = arith::SubIOp::create(
              nb, nl, arith::MulIOp::create(nb, nl, o, cst(s[i])),
              cst(pads[i]));
          Value end = arith::AddIOp::create(nb, nl, start, cst(k[i]));
          Value lo = arith::MaxSIOp::create(nb, nl, start, cst(0));
          Value hi = arith::MinSIOp::create(nb, nl, end, cst(inShape[2 + i]));
          Value extent = arith::MaxSIOp::create(
              nb, nl, arith::SubIOp::create(nb, nl, hi, lo), cst(0));
          count = arith::MulIOp::create(nb, nl, count, extent);
        }
        Value asInt = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), count);
        Value asFloat =
            arith::SIToFPOp::create(nb, nl, nb.getF32Type(), asInt);
        return Value(arith::DivFOp::create(nb, nl, args[0], asFloat));
      });
}

Lowered lowerAvgPool(AvgPoolOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  UnitHeight unit(op.getInput());
  Value r = avgPool(b, loc, unit.view(b, loc, op.getInput()),
                    unit.type(op.getType()), unit.sizes(op.getKernelSize()),
                    unit.sizes(op.getStrides()), unit.pads(op.getPads()),
                    op.getCountIncludePad());
  return unit.back(b, loc, r, op.getOutput());
}

} // namespace

void lowering::attachLinearModels(MLIRContext *context) {
  attach<MatmulOp, lowerMatmul>(context);
  attach<ConvOp, lowerConv>(context);
  attach<MaxPoolOp, lowerMaxPool>(context);
  attach<MaxPoolGradOp, lowerMaxPoolGrad>(context);
  attach<AvgPoolOp, lowerAvgPool>(context);
}
