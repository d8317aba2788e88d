//===- TypeInference.cpp - Shape rules of the tg operators ----------------===//
//
// Part of Loom. See TypeInference.h. All arithmetic on user-provided sizes is
// overflow-checked: a bad attribute is a diagnostic, never undefined behaviour.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TypeInference.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cmath>

using namespace mlir;

namespace loom::tg {

namespace {

std::string listStr(ArrayRef<int64_t> values) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(values, os);
  os << "]";
  return s;
}

RankedTensorType ranked(Type t) { return llvm::cast<RankedTensorType>(t); }

LogicalResult expectSize(Loc location, StringRef name, ArrayRef<int64_t> values,
                         size_t size) {
  if (values.size() != size)
    return emitOptionalError(location, "'", name, "' must have ", size,
                             " entries, got ", values.size());
  return success();
}

LogicalResult expectAllAtLeast(Loc location, StringRef name,
                               ArrayRef<int64_t> values, int64_t lower) {
  for (int64_t v : values)
    if (v < lower)
      return emitOptionalError(location, "'", name, "' entries must be >= ",
                               lower, ", got ", listStr(values));
  return success();
}

LogicalResult expectSameElementType(Loc location, StringRef what, Type a,
                                    Type b) {
  Type ea = ranked(a).getElementType(), eb = ranked(b).getElementType();
  if (ea != eb)
    return emitOptionalError(location, what, " element type ", eb,
                             " differs from the input element type ", ea);
  return success();
}

/// Output size of one spatial dimension of a sliding window, or failure on a
/// window that does not fit or an overflow.
FailureOr<int64_t> windowOutputSize(Loc location, StringRef dimName,
                                    int64_t in, int64_t padBegin,
                                    int64_t padEnd, int64_t kernel,
                                    int64_t stride, int64_t dilation) {
  auto padded = llvm::checkedAdd(in, padBegin);
  if (padded)
    padded = llvm::checkedAdd(*padded, padEnd);
  auto span = llvm::checkedMul(dilation, kernel - 1);
  if (span)
    span = llvm::checkedAdd(*span, int64_t(1));
  if (!padded || !span) {
    (void)emitOptionalError(location, "window arithmetic overflows in dimension ",
                      dimName);
    return failure();
  }
  if (*span > *padded) {
    (void)emitOptionalError(location, "window of extent ", *span,
                      " (kernel ", kernel, ", dilation ", dilation,
                      ") does not fit the padded input extent ", *padded,
                      " in dimension ", dimName);
    return failure();
  }
  return (*padded - *span) / stride + 1;
}

} // namespace

FailureOr<int64_t> normalizeAxis(Loc location, int64_t axis, int64_t rank,
                                 StringRef what) {
  if (axis < -rank || axis >= rank) {
    (void)emitOptionalError(location, what, " ", axis, " is out of range for rank ",
                      rank, " (expected [", -rank, ", ", rank, "))");
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

LogicalResult inferBroadcastBinary(Loc location, Type lhs, Type rhs,
                                   Inferred &inferred) {
  auto l = ranked(lhs), r = ranked(rhs);
  if (l.getElementType() != r.getElementType())
    return emitOptionalError(location, "operand element types differ: ",
                             l.getElementType(), " vs ", r.getElementType());
  auto shape = broadcastShapes(l.getShape(), r.getShape());
  if (!shape)
    return emitOptionalError(location, "operand shapes ",
                             shapeString(l.getShape()), " and ",
                             shapeString(r.getShape()), " do not broadcast");
  inferred.push_back(RankedTensorType::get(*shape, l.getElementType()));
  return success();
}

LogicalResult inferCompare(Loc location, Type lhs, Type rhs,
                           Inferred &inferred) {
  if (failed(inferBroadcastBinary(location, lhs, rhs, inferred)))
    return failure();
  auto shape = ranked(inferred.pop_back_val()).getShape();
  inferred.push_back(RankedTensorType::get(
      shape, IntegerType::get(lhs.getContext(), 1)));
  return success();
}

LogicalResult inferSelect(Loc location, Type cond, Type a, Type b,
                          Inferred &inferred) {
  auto c = ranked(cond), x = ranked(a), y = ranked(b);
  if (x.getElementType() != y.getElementType())
    return emitOptionalError(location, "true and false values have different "
                             "element types: ",
                             x.getElementType(), " vs ", y.getElementType());
  auto values = broadcastShapes(x.getShape(), y.getShape());
  auto shape = values ? broadcastShapes(c.getShape(), *values) : std::nullopt;
  if (!shape)
    return emitOptionalError(location, "condition, true and false shapes ",
                             shapeString(c.getShape()), ", ",
                             shapeString(x.getShape()), " and ",
                             shapeString(y.getShape()), " do not broadcast");
  inferred.push_back(RankedTensorType::get(*shape, x.getElementType()));
  return success();
}

LogicalResult inferMatmul(Loc location, Type lhs, Type rhs,
                          Inferred &inferred) {
  auto l = ranked(lhs), r = ranked(rhs);
  if (l.getRank() < 2 || r.getRank() < 2)
    return emitOptionalError(location, "operands must have rank >= 2, got ",
                             l.getRank(), " and ", r.getRank());
  if (l.getElementType() != r.getElementType())
    return emitOptionalError(location, "operand element types differ: ",
                             l.getElementType(), " vs ", r.getElementType());
  ArrayRef<int64_t> ls = l.getShape(), rs = r.getShape();
  int64_t m = ls[ls.size() - 2], k = ls.back();
  int64_t k2 = rs[rs.size() - 2], n = rs.back();
  if (k != k2)
    return emitOptionalError(location, "contraction sizes differ: lhs ",
                             shapeString(ls), " has K = ", k, ", rhs ",
                             shapeString(rs), " has K = ", k2);
  auto batch = broadcastShapes(ls.drop_back(2), rs.drop_back(2));
  if (!batch)
    return emitOptionalError(location, "batch dimensions ",
                             shapeString(ls.drop_back(2)), " and ",
                             shapeString(rs.drop_back(2)), " do not broadcast");
  batch->push_back(m);
  batch->push_back(n);
  inferred.push_back(RankedTensorType::get(*batch, l.getElementType()));
  return success();
}

/// The name of spatial dimension \p i of \p k (W; H, W; D, H, W).
static StringRef spatialName(int64_t k, int64_t i) {
  static const char *names[] = {"D", "H", "W"};
  return names[3 - k + i];
}

/// Checks that \p in is channels-first with 1 to 3 spatial dimensions (rank
/// 3 to 5) and returns their number.
static FailureOr<int64_t> spatialRank(Loc location, RankedTensorType in,
                                      StringRef operand, StringRef layouts) {
  if (in.getRank() < 3 || in.getRank() > 5)
    return emitOptionalError(location, operand,
                             " must have rank 3, 4 or 5 (", layouts,
                             ": 1 to 3 spatial dimensions), got ",
                             shapeString(in.getShape()));
  return in.getRank() - 2;
}

/// The window attributes of a k-D convolution or pooling: \p sizes (each
/// named in \p names) have k entries, \p pads 2k.
static LogicalResult
expectWindowSizes(Loc location, int64_t k,
                  ArrayRef<std::pair<StringRef, ArrayRef<int64_t>>> sizes,
                  ArrayRef<int64_t> pads) {
  auto check = [&](StringRef name, ArrayRef<int64_t> values, int64_t size) {
    if (int64_t(values.size()) == size)
      return success();
    return emitOptionalError(
        location, "'", name, "' must have ", size, " entries (", k,
        " spatial dimension(s); the defaults are the 2-D ones), got ",
        values.size());
  };
  for (auto [name, values] : sizes)
    if (failed(check(name, values, k)))
      return failure();
  return check("pads", pads, 2 * k);
}

/// The result extents of a k-D window over the spatial dimensions of
/// \p is: in + pads - dilation * (kernel - 1) - 1, over the stride, plus 1.
static FailureOr<SmallVector<int64_t>>
windowOutputShape(Loc location, ArrayRef<int64_t> is, ArrayRef<int64_t> kernel,
                  ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                  ArrayRef<int64_t> dilations) {
  int64_t k = kernel.size();
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < k; ++i) {
    auto o = windowOutputSize(location, spatialName(k, i), is[2 + i], pads[i],
                              pads[k + i], kernel[i], strides[i],
                              dilations.empty() ? 1 : dilations[i]);
    if (failed(o))
      return failure();
    out.push_back(*o);
  }
  return out;
}

LogicalResult inferConv(Loc location, Type input, Type filter, Type bias,
                        ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                        ArrayRef<int64_t> dilations, int64_t groups,
                        Inferred &inferred) {
  auto in = ranked(input), f = ranked(filter);
  auto k = spatialRank(location, in, "input", "NCW, NCHW or NCDHW");
  if (failed(k))
    return failure();
  if (f.getRank() != in.getRank())
    return emitOptionalError(location, "filter must have rank ", in.getRank(),
                             " (O, C / groups and ", *k,
                             " spatial dimensions, as the input), got ",
                             shapeString(f.getShape()));
  if (failed(expectSameElementType(location, "filter", input, filter)))
    return failure();
  if (failed(expectWindowSizes(location, *k,
                               {{"strides", strides}, {"dilations", dilations}},
                               pads)) ||
      failed(expectAllAtLeast(location, "strides", strides, 1)) ||
      failed(expectAllAtLeast(location, "pads", pads, 0)) ||
      failed(expectAllAtLeast(location, "dilations", dilations, 1)))
    return failure();
  if (groups < 1)
    return emitOptionalError(location, "'groups' must be >= 1, got ", groups);
  ArrayRef<int64_t> is = in.getShape(), fs = f.getShape();
  if (llvm::any_of(fs.drop_front(2), [](int64_t d) { return d < 1; }))
    return emitOptionalError(location, "filter spatial size must be >= 1, got ",
                             shapeString(fs));
  if (is[1] % groups != 0 || fs[0] % groups != 0)
    return emitOptionalError(location, "input channels ", is[1],
                             " and output channels ", fs[0],
                             " must both be divisible by groups = ", groups);
  if (fs[1] * groups != is[1])
    return emitOptionalError(location, "filter expects ", fs[1],
                             " channels per group but the input has ", is[1],
                             " channels in ", groups, " group(s)");
  if (bias) {
    auto b = ranked(bias);
    if (failed(expectSameElementType(location, "bias", input, bias)))
      return failure();
    if (b.getRank() != 1 || b.getDimSize(0) != fs[0])
      return emitOptionalError(location, "bias must have shape ", fs[0],
                               ", got ", shapeString(b.getShape()));
  }
  auto spatial = windowOutputShape(location, is, fs.drop_front(2), strides,
                                   pads, dilations);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape = {is[0], fs[0]};
  shape.append(*spatial);
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult inferPool(Loc location, Type input, ArrayRef<int64_t> kernel,
                        ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                        Inferred &inferred) {
  auto in = ranked(input);
  auto k = spatialRank(location, in, "input", "NCW, NCHW or NCDHW");
  if (failed(k))
    return failure();
  if (failed(expectWindowSizes(location, *k,
                               {{"kernel_size", kernel}, {"strides", strides}},
                               pads)) ||
      failed(expectAllAtLeast(location, "kernel_size", kernel, 1)) ||
      failed(expectAllAtLeast(location, "strides", strides, 1)) ||
      failed(expectAllAtLeast(location, "pads", pads, 0)))
    return failure();
  for (int64_t i = 0; i < *k; ++i)
    if (pads[i] >= kernel[i] || pads[i + *k] >= kernel[i])
      return emitOptionalError(location, "pads ", listStr(pads),
                               " must be smaller than the kernel ",
                               listStr(kernel));
  ArrayRef<int64_t> is = in.getShape();
  auto spatial = windowOutputShape(location, is, kernel, strides, pads, {});
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape = {is[0], is[1]};
  shape.append(*spatial);
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult inferMaxPoolGrad(Loc location, Type input, Type gradOutput,
                                 ArrayRef<int64_t> kernel,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> pads, Inferred &inferred) {
  SmallVector<Type, 1> pooled;
  if (failed(inferPool(location, input, kernel, strides, pads, pooled)))
    return failure();
  if (ranked(input).getRank() == 5)
    return emitOptionalError(location, "3-D max pooling has no gradient op: "
                                       "input must have rank 3 or 4, got ",
                             shapeString(ranked(input).getShape()));
  if (failed(expectSameElementType(location, "grad_output", input, gradOutput)))
    return failure();
  ArrayRef<int64_t> expected = ranked(pooled[0]).getShape();
  ArrayRef<int64_t> got = ranked(gradOutput).getShape();
  if (got != expected)
    return emitOptionalError(location, "grad_output shape ", shapeString(got),
                             " is not the maxpool result shape ",
                             shapeString(expected), " of input ",
                             shapeString(ranked(input).getShape()));
  inferred.push_back(input);
  return success();
}

LogicalResult inferSoftmaxCrossEntropy(Loc location, Type logits, Type labels,
                                       Inferred &inferred) {
  auto l = ranked(logits), y = ranked(labels);
  if (l.getRank() != 2)
    return emitOptionalError(location, "logits must be rank 2 ([N, C]), got ",
                             shapeString(l.getShape()));
  if (l.getDimSize(0) == 0 || l.getDimSize(1) == 0)
    return emitOptionalError(location, "logits ", shapeString(l.getShape()),
                             " must have a row and a class");
  if (y.getShape() != l.getShape().take_front())
    return emitOptionalError(
        location, "labels shape ", shapeString(y.getShape()),
        " is not [N] = ", shapeString(l.getShape().take_front()));
  inferred.push_back(RankedTensorType::get({}, l.getElementType()));
  return success();
}

LogicalResult inferMseLoss(Loc location, Type lhs, Type rhs,
                           Inferred &inferred) {
  auto l = ranked(lhs), r = ranked(rhs);
  if (l != r)
    return emitOptionalError(location, "operand types ", l, " and ", r,
                             " differ");
  if (l.getNumElements() == 0)
    return emitOptionalError(location, "operands must not be empty");
  inferred.push_back(RankedTensorType::get({}, l.getElementType()));
  return success();
}

LogicalResult inferGlobalAvgPool(Loc location, Type input, Inferred &inferred) {
  auto in = ranked(input);
  auto k = spatialRank(location, in, "input", "NCW, NCHW or NCDHW");
  if (failed(k))
    return failure();
  ArrayRef<int64_t> is = in.getShape();
  if (llvm::is_contained(is.drop_front(2), 0))
    return emitOptionalError(location, "spatial dimensions must be non-empty");
  SmallVector<int64_t> shape(is.take_front(2));
  shape.append(*k, 1);
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult inferTranspose(Loc location, Type input, ArrayRef<int64_t> perm,
                             Inferred &inferred) {
  auto in = ranked(input);
  int64_t rank = in.getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOptionalError(location, "'perm' has ", perm.size(),
                             " entries but the input has rank ", rank);
  llvm::SmallBitVector seen(rank);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen.test(p))
      return emitOptionalError(location, "'perm' ", listStr(perm),
                               " is not a permutation of [0, ", rank, ")");
    seen.set(p);
    shape.push_back(in.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult inferConcat(Loc location, TypeRange inputs, int64_t axis,
                          Inferred &inferred) {
  if (inputs.empty())
    return emitOptionalError(location, "needs at least one input");
  auto first = ranked(inputs.front());
  auto ax = normalizeAxis(location, axis, first.getRank(), "axis");
  if (failed(ax))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, t] : llvm::enumerate(inputs.drop_front())) {
    auto ty = ranked(t);
    if (ty.getElementType() != first.getElementType())
      return emitOptionalError(location, "input ", i + 1, " has element type ",
                               ty.getElementType(), ", input 0 has ",
                               first.getElementType());
    if (ty.getRank() != first.getRank())
      return emitOptionalError(location, "input ", i + 1, " has rank ",
                               ty.getRank(), ", input 0 has rank ",
                               first.getRank());
    for (int64_t d = 0; d < ty.getRank(); ++d) {
      if (d == *ax)
        continue;
      if (ty.getDimSize(d) != shape[d])
        return emitOptionalError(location, "input ", i + 1, " has shape ",
                                 shapeString(ty.getShape()),
                                 ", which differs from input 0's ",
                                 shapeString(first.getShape()),
                                 " outside axis ", *ax);
    }
    auto sum = llvm::checkedAdd(shape[*ax], ty.getDimSize(*ax));
    if (!sum)
      return emitOptionalError(location, "concatenated size overflows");
    shape[*ax] = *sum;
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult inferSplit(Loc location, Type input, int64_t axis,
                         ArrayRef<int64_t> sizes, Inferred &inferred) {
  auto in = ranked(input);
  auto ax = normalizeAxis(location, axis, in.getRank(), "axis");
  if (failed(ax))
    return failure();
  if (sizes.empty())
    return emitOptionalError(location, "'sizes' must not be empty");
  if (failed(expectAllAtLeast(location, "sizes", sizes, 1)))
    return failure();
  int64_t total = 0;
  for (int64_t s : sizes) {
    auto sum = llvm::checkedAdd(total, s);
    if (!sum)
      return emitOptionalError(location, "'sizes' overflow");
    total = *sum;
  }
  if (total != in.getDimSize(*ax))
    return emitOptionalError(location, "'sizes' ", listStr(sizes), " sum to ",
                             total, " but axis ", *ax, " has size ",
                             in.getDimSize(*ax));
  for (int64_t s : sizes) {
    SmallVector<int64_t> shape(in.getShape());
    shape[*ax] = s;
    inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  }
  return success();
}

LogicalResult inferSlice(Loc location, Type input, ArrayRef<int64_t> starts,
                         ArrayRef<int64_t> limits,
                         std::optional<ArrayRef<int64_t>> strides,
                         Inferred &inferred) {
  auto in = ranked(input);
  size_t rank = in.getRank();
  if (failed(expectSize(location, "starts", starts, rank)) ||
      failed(expectSize(location, "limits", limits, rank)))
    return failure();
  if (strides && (failed(expectSize(location, "strides", *strides, rank)) ||
                  failed(expectAllAtLeast(location, "strides", *strides, 1))))
    return failure();
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < rank; ++d) {
    int64_t dim = in.getDimSize(d);
    if (starts[d] < 0 || starts[d] > limits[d] || limits[d] > dim)
      return emitOptionalError(location, "dimension ", d, ": need 0 <= start (",
                               starts[d], ") <= limit (", limits[d],
                               ") <= size (", dim, ")");
    int64_t stride = strides ? (*strides)[d] : 1;
    shape.push_back((limits[d] - starts[d] + stride - 1) / stride);
  }
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult inferPad(Loc location, Type input, ArrayRef<int64_t> low,
                       ArrayRef<int64_t> high, Inferred &inferred) {
  auto in = ranked(input);
  size_t rank = in.getRank();
  if (failed(expectSize(location, "low", low, rank)) ||
      failed(expectSize(location, "high", high, rank)) ||
      failed(expectAllAtLeast(location, "low", low, 0)) ||
      failed(expectAllAtLeast(location, "high", high, 0)))
    return failure();
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < rank; ++d) {
    auto s = llvm::checkedAdd(in.getDimSize(d), low[d]);
    if (s)
      s = llvm::checkedAdd(*s, high[d]);
    if (!s)
      return emitOptionalError(location, "padded size of dimension ", d,
                               " overflows");
    shape.push_back(*s);
  }
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult inferEnlarge(Loc location, Type input, ArrayRef<int64_t> kernel,
                           Inferred &inferred) {
  auto in = ranked(input);
  if (in.getRank() != 4)
    return emitOptionalError(location, "input must be a rank-4 filter (OIHW), "
                                       "got ",
                             shapeString(in.getShape()));
  if (failed(expectSize(location, "kernel_size", kernel, 2)))
    return failure();
  for (int i = 0; i < 2; ++i) {
    int64_t have = in.getDimSize(2 + i);
    if (kernel[i] < have || (kernel[i] - have) % 2 != 0)
      return emitOptionalError(
          location, "'kernel_size' ", listStr(kernel), " must be at least the ",
          "filter's ", shapeString(in.getShape().drop_front(2)),
          " and differ from it by an even amount in each dimension");
  }
  inferred.push_back(RankedTensorType::get(
      {in.getDimSize(0), in.getDimSize(1), kernel[0], kernel[1]},
      in.getElementType()));
  return success();
}

LogicalResult inferGather(Loc location, Type data, Type indices, int64_t axis,
                          Inferred &inferred) {
  auto d = ranked(data), idx = ranked(indices);
  if (d.getRank() < 1)
    return emitOptionalError(location, "data must have rank >= 1");
  auto ax = normalizeAxis(location, axis, d.getRank(), "axis");
  if (failed(ax))
    return failure();
  if (d.getDimSize(*ax) == 0 && idx.getNumElements() != 0)
    return emitOptionalError(location, "cannot gather from an empty axis");
  SmallVector<int64_t> shape(d.getShape().take_front(*ax));
  llvm::append_range(shape, idx.getShape());
  llvm::append_range(shape, d.getShape().drop_front(*ax + 1));
  inferred.push_back(RankedTensorType::get(shape, d.getElementType()));
  return success();
}

LogicalResult inferUpdateSlice(Loc location, Type base, Type update,
                               Type offsets, int64_t axis,
                               Inferred &inferred) {
  auto b = ranked(base), u = ranked(update), o = ranked(offsets);
  if (u.getElementType() != b.getElementType())
    return emitOptionalError(location, "update element type ",
                             u.getElementType(), " is not the base's ",
                             b.getElementType());
  if (u.getRank() != b.getRank())
    return emitOptionalError(location, "update rank ", u.getRank(),
                             " is not the base rank ", b.getRank());
  auto ax = normalizeAxis(location, axis, b.getRank(), "axis");
  if (failed(ax))
    return failure();
  for (int64_t d = 0; d < b.getRank(); ++d) {
    if (d == *ax ? u.getDimSize(d) > b.getDimSize(d)
                 : u.getDimSize(d) != b.getDimSize(d))
      return emitOptionalError(
          location, "update shape ", shapeString(u.getShape()),
          " does not fit base shape ", shapeString(b.getShape()),
          " along axis ", *ax,
          " (equal elsewhere, at most the base's on the axis)");
  }
  bool perRow = o.getRank() == 1 && *ax >= 1 &&
                o.getDimSize(0) == b.getDimSize(0);
  if (o.getRank() != 0 && !perRow)
    return emitOptionalError(
        location, "offsets must be rank 0, or [", b.getDimSize(0),
        "] (one per index of dimension 0) for an axis past 0; got ",
        shapeString(o.getShape()));
  inferred.push_back(b);
  return success();
}

LogicalResult inferScatterAdd(Loc location, Type updates, Type indices,
                              int64_t axis, int64_t dimSize,
                              Inferred &inferred) {
  auto u = ranked(updates), idx = ranked(indices);
  int64_t dataRank = u.getRank() - idx.getRank() + 1;
  if (dataRank < 1)
    return emitOptionalError(location, "updates rank ", u.getRank(),
                             " is less than the indices rank ", idx.getRank());
  auto ax = normalizeAxis(location, axis, dataRank, "axis");
  if (failed(ax))
    return failure();
  ArrayRef<int64_t> indexed = u.getShape().slice(*ax, idx.getRank());
  if (indexed != idx.getShape())
    return emitOptionalError(location, "updates dims ", *ax, "..",
                             *ax + idx.getRank(), " are ", shapeString(indexed),
                             ", not the indices shape ",
                             shapeString(idx.getShape()));
  if (dimSize < 0)
    return emitOptionalError(location, "'dim_size' must be >= 0, got ",
                             dimSize);
  if (dimSize == 0 && idx.getNumElements() != 0)
    return emitOptionalError(location, "cannot scatter into an empty axis");
  SmallVector<int64_t> shape(u.getShape().take_front(*ax));
  shape.push_back(dimSize);
  llvm::append_range(shape, u.getShape().drop_front(*ax + idx.getRank()));
  inferred.push_back(RankedTensorType::get(shape, u.getElementType()));
  return success();
}

LogicalResult inferResize(Loc location, Type input, ArrayRef<int64_t> sizes,
                          std::optional<ArrayRef<double>> scales,
                          Inferred &inferred) {
  auto in = ranked(input);
  size_t rank = in.getRank();
  if (failed(expectSize(location, "sizes", sizes, rank)) ||
      failed(expectAllAtLeast(location, "sizes", sizes, 1)))
    return failure();
  if (llvm::is_contained(in.getShape(), 0))
    return emitOptionalError(location, "cannot resize the empty input ",
                             shapeString(in.getShape()));
  if (scales) {
    if (scales->size() != rank)
      return emitOptionalError(location, "'scales' must have ", rank,
                               " entries, got ", scales->size());
    for (double s : *scales)
      if (!(s > 0) || std::isinf(s))
        return emitOptionalError(location,
                                 "'scales' entries must be positive and "
                                 "finite, got ",
                                 s);
  }
  inferred.push_back(RankedTensorType::get(sizes, in.getElementType()));
  return success();
}

LogicalResult inferReduce(Loc location, Type input, ArrayRef<int64_t> axes,
                          bool keepDims, Inferred &inferred) {
  auto in = ranked(input);
  int64_t rank = in.getRank();
  if (axes.empty())
    return emitOptionalError(location, "'axes' must not be empty");
  llvm::SmallBitVector reduced(rank);
  for (int64_t a : axes) {
    auto ax = normalizeAxis(location, a, rank, "reduction axis");
    if (failed(ax))
      return failure();
    if (reduced.test(*ax))
      return emitOptionalError(location, "reduction axis ", *ax,
                               " appears twice in ", listStr(axes));
    if (in.getDimSize(*ax) == 0)
      return emitOptionalError(location, "cannot reduce the empty axis ", *ax);
    reduced.set(*ax);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced.test(d))
      shape.push_back(in.getDimSize(d));
    else if (keepDims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult inferSoftmax(Loc location, Type input, int64_t axis,
                           Inferred &inferred) {
  auto in = ranked(input);
  if (in.getRank() < 1)
    return emitOptionalError(location, "input must have rank >= 1");
  if (failed(normalizeAxis(location, axis, in.getRank(), "axis")))
    return failure();
  inferred.push_back(in);
  return success();
}

LogicalResult inferAttention(Loc location, Type q, Type k, Type v,
                             Type length, double scale, bool causal,
                             Inferred &inferred) {
  auto tq = ranked(q), tk = ranked(k), tv = ranked(v);
  for (auto [name, t] : {std::pair<StringRef, RankedTensorType>{"q", tq},
                         {"k", tk},
                         {"v", tv}})
    if (t.getRank() != 4)
      return emitOptionalError(location, name,
                               " must be rank 4 ([B, heads, positions, D]), "
                               "got ",
                               shapeString(t.getShape()));
  if (failed(expectSameElementType(location, "k", q, k)) ||
      failed(expectSameElementType(location, "v", q, v)))
    return failure();
  if (tk.getShape() != tv.getShape())
    return emitOptionalError(location, "k ", shapeString(tk.getShape()),
                             " and v ", shapeString(tv.getShape()),
                             " must have one shape");
  int64_t batch = tq.getDimSize(0), qHeads = tq.getDimSize(1);
  int64_t kvHeads = tk.getDimSize(1), qLen = tq.getDimSize(2);
  if (tk.getDimSize(0) != batch)
    return emitOptionalError(location, "k's batch ", tk.getDimSize(0),
                             " differs from q's ", batch);
  if (tk.getDimSize(3) != tq.getDimSize(3))
    return emitOptionalError(location, "k's head size ", tk.getDimSize(3),
                             " differs from q's ", tq.getDimSize(3));
  if (kvHeads < 1 || qHeads % kvHeads != 0)
    return emitOptionalError(location, "q's ", qHeads,
                             " heads are not a multiple of k's ", kvHeads,
                             " heads");
  if (length) {
    auto tl = ranked(length);
    bool perBatch = tl.getRank() == 1 && tl.getDimSize(0) == batch;
    if (tl.getRank() != 0 && !perBatch)
      return emitOptionalError(location, "length must have shape [B] = [",
                               batch, "] or rank 0, got ",
                               shapeString(tl.getShape()));
  }
  if (!std::isfinite(scale))
    return emitOptionalError(location, "scale ", scale, " is not finite");
  if (causal && qLen > tk.getDimSize(2))
    return emitOptionalError(location, "causal attention of ", qLen,
                             " queries needs at least as many key positions, "
                             "k has ",
                             tk.getDimSize(2));
  inferred.push_back(tq);
  return success();
}

LogicalResult inferLayerNorm(Loc location, Type input, Type scale, Type bias,
                             int64_t axis, Inferred &inferred) {
  auto in = ranked(input);
  if (in.getRank() < 1)
    return emitOptionalError(location, "input must have rank >= 1");
  auto ax = normalizeAxis(location, axis, in.getRank(), "axis");
  if (failed(ax))
    return failure();
  ArrayRef<int64_t> normShape = in.getShape().drop_front(*ax);
  for (auto [name, t] : {std::pair<StringRef, Type>{"scale", scale},
                         std::pair<StringRef, Type>{"bias", bias}}) {
    if (failed(expectSameElementType(location, name, input, t)))
      return failure();
    if (ranked(t).getShape() != normShape)
      return emitOptionalError(location, name, " must have shape ",
                               shapeString(normShape), " (input dims from axis ",
                               *ax, "), got ", shapeString(ranked(t).getShape()));
  }
  inferred.push_back(in);
  return success();
}

LogicalResult inferBatchNorm(Loc location, Type input, Type scale, Type bias,
                             Type mean, Type variance, Inferred &inferred) {
  auto in = ranked(input);
  if (in.getRank() < 2)
    return emitOptionalError(location, "input must have rank >= 2 (N, C, ...)");
  int64_t c = in.getDimSize(1);
  for (auto [name, t] : {std::pair<StringRef, Type>{"scale", scale},
                         {"bias", bias},
                         {"mean", mean},
                         {"variance", variance}}) {
    if (failed(expectSameElementType(location, name, input, t)))
      return failure();
    auto ty = ranked(t);
    if (ty.getRank() != 1 || ty.getDimSize(0) != c)
      return emitOptionalError(location, name, " must have shape ", c,
                               " (the channel dimension), got ",
                               shapeString(ty.getShape()));
  }
  inferred.push_back(in);
  return success();
}

} // namespace loom::tg
