//===- Fold.cpp - PET's split-to-batch transformation and corrections -----===//
//
// Part of Loom. The index arithmetic of sliding windows, the folded program
// (pieces of a spatial dimension moved into the batch) and the corrected
// program (the wrong rows recomputed on their input windows).
//
//===----------------------------------------------------------------------===//

#include "loom/Pet/Pet.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;
using namespace loom;
using namespace loom::pet;

int64_t Box::numElements() const {
  int64_t n = 1;
  for (size_t i = 0; i < lo.size(); ++i)
    n *= hi[i] - lo[i];
  return n;
}

std::string Box::str() const {
  std::string s = "[";
  for (size_t i = 0; i < lo.size(); ++i)
    s += (i ? ", " : "") + std::to_string(lo[i]) + ":" + std::to_string(hi[i]);
  return s + "]";
}

StringRef pet::foldName(Fold fold) {
  switch (fold) {
  case Fold::SplitConcat:
    return "split-concat";
  case Fold::ReshapeTranspose:
    return "reshape-transpose";
  }
  llvm_unreachable("unknown fold");
}

FailureOr<Fold> pet::parseFold(StringRef name) {
  for (Fold f : {Fold::SplitConcat, Fold::ReshapeTranspose})
    if (foldName(f) == name)
      return f;
  return failure();
}

std::string SplitToBatch::str() const {
  return llvm::formatv("split-to-batch(dim={0}, parts={1}, {2})", dim, parts,
                       foldName(fold))
      .str();
}

int64_t Window::outSize(int64_t in) const {
  int64_t span = in + padLo + padHi - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

namespace {

/// The per-spatial-dim attributes of a sliding-window op.
struct WindowAttrs {
  ArrayRef<int64_t> kernel, strides, dilations, pads;
  bool padIsZero;
};

FailureOr<WindowAttrs> windowAttrsOf(Operation *op, std::string &why) {
  return llvm::TypeSwitch<Operation *, FailureOr<WindowAttrs>>(op)
      .Case([](tg::ConvOp c) -> FailureOr<WindowAttrs> {
        auto f = cast<RankedTensorType>(c.getFilter().getType());
        return WindowAttrs{f.getShape().drop_front(2), c.getStrides(),
                           c.getDilations(), c.getPads(), true};
      })
      .Case([](tg::AvgPoolOp p) -> FailureOr<WindowAttrs> {
        return WindowAttrs{p.getKernelSize(), p.getStrides(), {}, p.getPads(),
                           p.getCountIncludePad()};
      })
      .Case([](tg::MaxPoolOp p) -> FailureOr<WindowAttrs> {
        return WindowAttrs{p.getKernelSize(), p.getStrides(), {}, p.getPads(),
                           false};
      })
      .Default([&](Operation *other) -> FailureOr<WindowAttrs> {
        why = "'" + other->getName().getStringRef().str() +
              "' is not a sliding-window op (tg.conv, tg.avgpool, "
              "tg.maxpool)";
        return failure();
      });
}

RankedTensorType rankedStatic(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t : RankedTensorType();
}

} // namespace

FailureOr<Window> pet::windowOf(Operation *op, unsigned dim, std::string &why) {
  FailureOr<WindowAttrs> a = windowAttrsOf(op, why);
  if (failed(a))
    return failure();
  RankedTensorType in = rankedStatic(op->getOperand(0));
  if (!in || !rankedStatic(op->getResult(0))) {
    why = "the input or result is not a statically shaped tensor";
    return failure();
  }
  unsigned spatial = in.getRank() - 2;
  if (dim < 2 || dim >= in.getRank()) {
    why = llvm::formatv("dim {0} is not a spatial dimension of a rank-{1} "
                        "input",
                        dim, in.getRank());
    return failure();
  }
  unsigned s = dim - 2;
  if (a->kernel.size() != spatial || a->strides.size() != spatial ||
      a->pads.size() != 2 * spatial ||
      (!a->dilations.empty() && a->dilations.size() != spatial)) {
    why = "the window attributes do not match the input's rank";
    return failure();
  }
  Window w;
  w.kernel = a->kernel[s];
  w.stride = a->strides[s];
  w.dilation = a->dilations.empty() ? 1 : a->dilations[s];
  w.padLo = a->pads[s];
  w.padHi = a->pads[spatial + s];
  w.padIsZero = a->padIsZero;
  return w;
}

int64_t pet::padRows(int64_t extent, const SplitToBatch &t) {
  return (t.parts - extent % t.parts) % t.parts;
}

LogicalResult pet::checkApplicable(Operation *op, const SplitToBatch &t,
                                   std::string &why) {
  FailureOr<Window> w = windowOf(op, t.dim, why);
  if (failed(w))
    return failure();
  if (t.parts < 2) {
    why = "parts must be at least 2";
    return failure();
  }
  int64_t extent = rankedStatic(op->getOperand(0)).getDimSize(t.dim);
  int64_t piece = (extent + padRows(extent, t)) / t.parts;
  if (padRows(extent, t) >= piece) {
    why = llvm::formatv("extent {0} of dim {1} is too short for {2} pieces",
                        extent, t.dim, t.parts);
    return failure();
  }
  int64_t rows = w->outSize(piece);
  if (rows == 0 || rows * t.parts != w->outSize(piece * t.parts)) {
    why = llvm::formatv("pieces of {0} rows give {1} output rows, not the {2} "
                        "of {3} rows",
                        piece, rows * t.parts, w->outSize(piece * t.parts),
                        piece * t.parts);
    return failure();
  }
  return success();
}

std::vector<bool> pet::wrongRows(const Window &w, int64_t inExtent,
                                 const SplitToBatch &t) {
  int64_t h = (inExtent + padRows(inExtent, t)) / t.parts, ho = w.outSize(h);
  std::vector<bool> wrong(w.outSize(inExtent), false);
  for (int64_t q = 0; q < t.parts; ++q)
    for (int64_t o = 0; o < ho && q * ho + o < int64_t(wrong.size()); ++o)
      for (int64_t j = 0; j < w.kernel; ++j) {
        // The tap j of local row o reads piece row `local` (input row
        // q * h + local, a zero row when past the input); the original's tap
        // j of the same output row reads input row `global`.
        int64_t local = o * w.stride - w.padLo + j * w.dilation;
        int64_t global = (q * ho + o) * w.stride - w.padLo + j * w.dilation;
        bool localReal = local >= 0 && local < h && q * h + local < inExtent;
        bool localZeroRow = local >= 0 && local < h && !localReal;
        bool globalReal = global >= 0 && global < inExtent;
        bool same = localReal ? globalReal && q * h + local == global
                              : !globalReal && (!localZeroRow || w.padIsZero);
        if (!same)
          wrong[q * ho + o] = true;
      }
  return wrong;
}

RowBoxes pet::boxesOfRows(const std::vector<bool> &wrong,
                          ArrayRef<int64_t> outShape, unsigned dim) {
  RowBoxes boxes;
  int64_t n = wrong.size();
  for (int64_t start = 0; start < n;) {
    int64_t end = start;
    while (end < n && wrong[end] == wrong[start])
      ++end;
    Box b;
    b.lo.assign(outShape.size(), 0);
    b.hi.assign(outShape.begin(), outShape.end());
    b.lo[dim] = start;
    b.hi[dim] = end;
    (wrong[start] ? boxes.wrong : boxes.equal).push_back(b);
    start = end;
  }
  return boxes;
}

namespace {

RankedTensorType withDim(RankedTensorType t, unsigned dim, int64_t size) {
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = size;
  return t.clone(shape);
}

/// A copy of \p op on \p input (its other operands kept), with the begin and
/// end pads of t.dim replaced, and the result type \p type.
Value cloneOnInput(OpBuilder &b, Operation *op, Value input, unsigned dim,
                   int64_t padLo, int64_t padHi, RankedTensorType type) {
  Operation *c = b.clone(*op);
  c->setOperand(0, input);
  SmallVector<int64_t> pads(
      cast<DenseI64ArrayAttr>(c->getAttr("pads")).asArrayRef());
  unsigned spatial = pads.size() / 2;
  pads[dim - 2] = padLo;
  pads[spatial + dim - 2] = padHi;
  c->setAttr("pads", b.getDenseI64ArrayAttr(pads));
  c->getResult(0).setType(type);
  return c->getResult(0);
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(v.getType());
  return tg::ReshapeOp::create(b, loc, t.clone(shape), v);
}

/// Moves dim \p dim of \p v (split into [parts, size / parts]) into the
/// batch: [N, ..., S, ...] -> [parts * N, ..., S / parts, ...].
Value foldIntoBatch(OpBuilder &b, Location loc, Value v,
                    const SplitToBatch &t) {
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t piece = shape[t.dim] / t.parts;
  switch (t.fold) {
  case Fold::SplitConcat: {
    SmallVector<int64_t> sizes(t.parts, piece);
    auto split = tg::SplitOp::create(b, loc, v, t.dim, sizes);
    return tg::ConcatOp::create(b, loc, split.getResults(), 0);
  }
  case Fold::ReshapeTranspose: {
    SmallVector<int64_t> split(shape.take_front(t.dim));
    split.append({t.parts, piece});
    split.append(shape.begin() + t.dim + 1, shape.end());
    SmallVector<int64_t> perm = {int64_t(t.dim)};
    for (int64_t i = 0; i <= int64_t(shape.size()); ++i)
      if (i != int64_t(t.dim))
        perm.push_back(i);
    Value moved = tg::TransposeOp::create(b, loc, reshape(b, loc, v, split),
                                          perm);
    SmallVector<int64_t> folded(shape);
    folded[0] *= t.parts;
    folded[t.dim] = piece;
    return reshape(b, loc, moved, folded);
  }
  }
  llvm_unreachable("unknown fold");
}

/// The inverse of foldIntoBatch on the op's result.
Value unfoldFromBatch(OpBuilder &b, Location loc, Value v,
                      const SplitToBatch &t) {
  auto type = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t batch = shape[0] / t.parts;
  SmallVector<int64_t> full(shape);
  full[0] = batch;
  full[t.dim] *= t.parts;
  switch (t.fold) {
  case Fold::SplitConcat: {
    SmallVector<int64_t> sizes(t.parts, batch);
    auto split = tg::SplitOp::create(b, loc, v, 0, sizes);
    return tg::ConcatOp::create(b, loc, split.getResults(), t.dim);
  }
  case Fold::ReshapeTranspose: {
    SmallVector<int64_t> unbatched = {t.parts, batch};
    unbatched.append(shape.begin() + 1, shape.end());
    // [parts, N, ..., s, ...] -> [N, ..., parts, s, ...].
    SmallVector<int64_t> perm;
    for (int64_t i = 1; i <= int64_t(t.dim); ++i)
      perm.push_back(i);
    perm.push_back(0);
    for (int64_t i = t.dim + 1; i <= int64_t(shape.size()); ++i)
      perm.push_back(i);
    Value moved = tg::TransposeOp::create(
        b, loc, reshape(b, loc, v, unbatched), perm);
    return reshape(b, loc, moved, full);
  }
  }
  llvm_unreachable("unknown fold");
}

/// One wrong box's correction: the input rows its windows read and the pads
/// that stand for rows outside the input.
struct CorrectionWindow {
  int64_t outLo, outHi, inLo, inHi, padLo, padHi;
};

CorrectionWindow correctionWindow(const Window &w, int64_t extent,
                                  int64_t outLo, int64_t outHi) {
  int64_t lo = outLo * w.stride - w.padLo;
  int64_t hi = (outHi - 1) * w.stride - w.padLo + w.dilation * (w.kernel - 1) +
               1;
  CorrectionWindow c{outLo, outHi, std::max<int64_t>(lo, 0),
                     std::min(hi, extent), 0, 0};
  c.padLo = c.inLo - lo;
  c.padHi = hi - c.inHi;
  return c;
}

Value sliceDim(OpBuilder &b, Location loc, Value v, unsigned dim, int64_t lo,
               int64_t hi) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> starts(type.getRank(), 0),
      limits(type.getShape().begin(), type.getShape().end());
  starts[dim] = lo;
  limits[dim] = hi;
  return tg::SliceOp::create(b, loc, v, starts, limits, DenseI64ArrayAttr());
}

/// The corrections of \p windows, in order: one op each, or, when \p fuse,
/// one op per group of equal window shape and pads over the windows stacked
/// on the batch.
SmallVector<Value> buildCorrections(OpBuilder &b, Operation *op,
                                    const SplitToBatch &t,
                                    ArrayRef<CorrectionWindow> windows,
                                    bool fuse, unsigned *count) {
  Location loc = op->getLoc();
  Value input = op->getOperand(0);
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t batch = outType.getDimSize(0);
  // Group key: window extent, pads, output rows.
  std::map<std::array<int64_t, 4>, SmallVector<size_t>> groups;
  for (size_t i = 0; i < windows.size(); ++i) {
    const CorrectionWindow &c = windows[i];
    std::array<int64_t, 4> key = {c.inHi - c.inLo, c.padLo, c.padHi,
                                  c.outHi - c.outLo};
    if (!fuse)
      key[0] = -int64_t(i) - 1; // every window its own group
    groups[key].push_back(i);
  }
  SmallVector<Value> results(windows.size());
  unsigned built = 0;
  for (auto &[key, members] : groups) {
    const CorrectionWindow &c = windows[members.front()];
    SmallVector<Value> slices;
    for (size_t i : members)
      slices.push_back(
          sliceDim(b, loc, input, t.dim, windows[i].inLo, windows[i].inHi));
    Value stacked = slices.size() == 1
                        ? slices.front()
                        : tg::ConcatOp::create(b, loc, slices, 0).getResult();
    RankedTensorType type = withDim(outType, t.dim, c.outHi - c.outLo);
    type = withDim(type, 0, batch * members.size());
    Value out = cloneOnInput(b, op, stacked, t.dim, c.padLo, c.padHi, type);
    ++built;
    if (members.size() == 1) {
      results[members.front()] = out;
      continue;
    }
    SmallVector<int64_t> sizes(members.size(), batch);
    auto split = tg::SplitOp::create(b, loc, out, 0, sizes);
    for (size_t k = 0; k < members.size(); ++k)
      results[members[k]] = split.getResult(k);
  }
  if (count)
    *count = built;
  return results;
}

} // namespace

namespace {

/// \p op on its folded input: the result with the pieces in the batch.
Value buildBatched(OpBuilder &b, Operation *op, const SplitToBatch &t) {
  Location loc = op->getLoc();
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Value input = op->getOperand(0);
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t pad = padRows(inType.getDimSize(t.dim), t);
  if (pad) {
    SmallVector<int64_t> low(inType.getRank(), 0), high(inType.getRank(), 0);
    high[t.dim] = pad;
    input = tg::PadOp::create(
        b, loc, withDim(inType, t.dim, inType.getDimSize(t.dim) + pad), input,
        low, high, llvm::APFloat(0.0));
  }
  Value folded = foldIntoBatch(b, loc, input, t);
  std::string why;
  Window w = *windowOf(op, t.dim, why);
  RankedTensorType type = withDim(
      outType, t.dim,
      w.outSize((inType.getDimSize(t.dim) + pad) / t.parts));
  type = withDim(type, 0, outType.getDimSize(0) * t.parts);
  return cloneOnInput(b, op, folded, t.dim, w.padLo, w.padHi, type);
}

/// Rows [lo, hi) (along t.dim, of the unfolded result) of the folded
/// program, as tg.slices of \p batched, the op's result on the folded input:
/// with split-concat the pieces are read where they lie in the batch, so the
/// result is never unfolded as a whole (the unfold's split and concat fused
/// into the join); \p unfolded with reshape-transpose.
void appendFoldedRows(OpBuilder &b, Location loc, Value batched,
                      Value &unfolded, const SplitToBatch &t, int64_t lo,
                      int64_t hi, SmallVectorImpl<Value> &pieces) {
  switch (t.fold) {
  case Fold::SplitConcat: {
    auto type = cast<RankedTensorType>(batched.getType());
    int64_t batch = type.getDimSize(0) / t.parts, rows = type.getDimSize(t.dim);
    for (int64_t q = lo / rows; q * rows < hi; ++q) {
      SmallVector<int64_t> starts(type.getRank(), 0),
          limits(type.getShape().begin(), type.getShape().end());
      starts[0] = q * batch;
      limits[0] = (q + 1) * batch;
      starts[t.dim] = std::max(lo, q * rows) - q * rows;
      limits[t.dim] = std::min(hi, (q + 1) * rows) - q * rows;
      pieces.push_back(tg::SliceOp::create(b, loc, batched, starts, limits,
                                           DenseI64ArrayAttr()));
    }
    return;
  }
  case Fold::ReshapeTranspose:
    if (!unfolded)
      unfolded = unfoldFromBatch(b, loc, batched, t);
    pieces.push_back(sliceDim(b, loc, unfolded, t.dim, lo, hi));
    return;
  }
  llvm_unreachable("unknown fold");
}

} // namespace

Value pet::buildFolded(OpBuilder &b, Operation *op, const SplitToBatch &t) {
  Value unfolded = unfoldFromBatch(b, op->getLoc(), buildBatched(b, op, t), t);
  // Past the padded input's end: rows the original does not have.
  int64_t rows =
      cast<RankedTensorType>(op->getResult(0).getType()).getDimSize(t.dim);
  if (cast<RankedTensorType>(unfolded.getType()).getDimSize(t.dim) == rows)
    return unfolded;
  return sliceDim(b, op->getLoc(), unfolded, t.dim, 0, rows);
}

Value pet::buildCorrected(OpBuilder &b, Operation *op, const SplitToBatch &t,
                          bool fuse, unsigned *corrections) {
  Location loc = op->getLoc();
  std::string why;
  Window w = *windowOf(op, t.dim, why);
  int64_t extent =
      cast<RankedTensorType>(op->getOperand(0).getType()).getDimSize(t.dim);
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  std::vector<bool> wrong = wrongRows(w, extent, t);
  RowBoxes boxes = boxesOfRows(wrong, outType.getShape(), t.dim);
  if (corrections)
    *corrections = 0;
  if (boxes.wrong.empty())
    return buildFolded(b, op, t);
  Value batched = buildBatched(b, op, t), unfolded;
  SmallVector<CorrectionWindow> windows;
  for (const Box &box : boxes.wrong)
    windows.push_back(
        correctionWindow(w, extent, box.lo[t.dim], box.hi[t.dim]));
  SmallVector<Value> fixes =
      buildCorrections(b, op, t, windows, fuse, corrections);
  // The result, row run by row run: the folded result where it is right,
  // the correction where it is wrong.
  SmallVector<Value> pieces;
  size_t nextFix = 0;
  for (int64_t start = 0, n = wrong.size(); start < n;) {
    int64_t end = start;
    while (end < n && wrong[end] == wrong[start])
      ++end;
    if (wrong[start])
      pieces.push_back(fixes[nextFix++]);
    else
      appendFoldedRows(b, loc, batched, unfolded, t, start, end, pieces);
    start = end;
  }
  return tg::ConcatOp::create(b, loc, pieces, t.dim);
}
