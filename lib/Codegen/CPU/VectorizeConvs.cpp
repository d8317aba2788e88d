//===- VectorizeConvs.cpp - Convolutions as rows of vector FMAs -----------===//
//
// Part of Loom. See LoomVectorizeConvs in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMVECTORIZECONVS
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;

namespace {

/// A convolution's operands in one shape: [N, G, C, H, W] input,
/// [G, F, C, KH, KW] filter, [N, G, F, OH, OW] output (a dense convolution
/// is one group: its memrefs have no G dimension, `grouped` false).
struct ConvShape {
  bool grouped = false;
  int64_t n = 0, g = 1, c = 0, f = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  /// A convolution with one kernel column, unit strides, no column padding
  /// and contiguous planes: computed on the planes collapsed to one row of
  /// OH * OW (ResNet's 7x7 1x1 convolutions: one 49-long row, not seven
  /// masked 7-wide ones).
  bool flat = false;
  /// With `flat`: the input plane's row length (a kernel row ky reads the
  /// collapsed input ky * dh * pitch further on).
  int64_t pitch = 0;
};

/// Whether \p type's innermost dimension is contiguous, and (with
/// \p plane) the one before it too, so that the last two collapse.
bool contiguous(MemRefType type, bool plane) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.size() < 2 ||
      strides.back() != 1)
    return false;
  return !plane || strides[strides.size() - 2] == type.getShape().back();
}

std::optional<ConvShape> shapeOf(linalg::LinalgOp op, bool grouped,
                                 DenseIntElementsAttr strides,
                                 DenseIntElementsAttr dilations) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  auto in = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto w = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
  auto out = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!in || !w || !out || !in.hasStaticShape() || !w.hasStaticShape() ||
      !out.hasStaticShape() || !in.getElementType().isF32() ||
      !w.getElementType().isF32() || !out.getElementType().isF32() ||
      !contiguous(in, false) || !contiguous(out, false))
    return std::nullopt;
  ConvShape s;
  s.grouped = grouped;
  ArrayRef<int64_t> i = in.getShape(), k = w.getShape(), o = out.getShape();
  int64_t at = grouped ? 1 : 0; // the G dimension shifts the rest by one
  s.n = i[0];
  s.g = grouped ? i[1] : 1;
  s.c = i[1 + at];
  s.f = k[at];
  s.kh = k[2 + at];
  s.kw = k[3 + at];
  s.oh = o[2 + at];
  s.ow = o[3 + at];
  auto sv = strides.getValues<int64_t>(), dv = dilations.getValues<int64_t>();
  s.sh = sv[0];
  s.sw = sv[1];
  s.dh = dv[0];
  s.dw = dv[1];
  // Any kernel height works too when kernel columns are 1 and the input
  // rows are as long as the output's (no column padding): output element p
  // of the collapsed plane reads input p + ky * dh * W.
  s.flat = s.kw == 1 && s.sh == 1 && s.sw == 1 && i[3 + at] == s.ow &&
           s.oh > 1 && contiguous(in, true) && contiguous(out, true);
  s.pitch = i[3 + at];
  return s;
}

/// Rewrites one convolution on buffers (see the pass description).
class ConvVectorizer {
public:
  ConvVectorizer(IRRewriter &rewriter, linalg::LinalgOp op,
                 const ConvShape &shape, int64_t lanes, int64_t accumulators)
      : b(rewriter), op(op), s(shape), lanes(lanes), accumulators(accumulators),
        loc(op.getLoc()) {}

  void run() {
    b.setInsertionPoint(op);
    in = op.getDpsInputs()[0];
    filter = op.getDpsInputs()[1];
    out = op.getDpsInits()[0];
    vec = VectorType::get({lanes}, b.getF32Type());
    zeroVec = arith::ConstantOp::create(b, loc, vec, b.getZeroAttr(vec));
    if (s.flat) {
      // [..., H, W] -> [..., H * W] (contiguous: checked), one row.
      auto collapse = [&](Value v) {
        int64_t rank = cast<MemRefType>(v.getType()).getRank();
        SmallVector<ReassociationIndices> groups;
        for (int64_t d = 0; d + 2 < rank; ++d)
          groups.push_back({d});
        groups.push_back({rank - 2, rank - 1});
        return memref::CollapseShapeOp::create(b, loc, v, groups).getResult();
      };
      in = collapse(in);
      out = collapse(out);
      s.ow *= s.oh;
      s.oh = 1;
    }
    // A row is done in chunks of up to 4 vectors; the filter block is the
    // most output channels whose chunk accumulators fit.
    int64_t rowVectors = llvm::divideCeil(s.ow, lanes);
    int64_t chunkVectors = std::min<int64_t>(rowVectors, 4);
    fBlock = 1;
    for (int64_t d = 1; d <= s.f; ++d)
      if (s.f % d == 0 && d * chunkVectors <= accumulators)
        fBlock = d;
    loops({s.n, s.g, s.f / fBlock, s.oh}, [&](ArrayRef<Value> iv) {
      for (int64_t col = 0; col < s.ow; col += chunkVectors * lanes)
        chunk(iv, col, std::min(chunkVectors * lanes, s.ow - col));
    });
    b.eraseOp(op);
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// \p a * \p scale + \p add, folded where constant.
  Value affine(Value a, int64_t scale, int64_t add) {
    Value v = a;
    if (scale != 1)
      v = arith::MulIOp::create(b, loc, v, index(scale));
    if (add != 0)
      v = arith::AddIOp::create(b, loc, v, index(add));
    return v;
  }

  /// Nested scf.for loops over [0, extent) (extent-1 loops are omitted:
  /// their index is the constant 0).
  void loops(ArrayRef<int64_t> extents,
             function_ref<void(ArrayRef<Value>)> body) {
    SmallVector<Value> ivs;
    std::function<void(size_t)> nest = [&](size_t d) {
      if (d == extents.size())
        return body(ivs);
      if (extents[d] == 1) {
        ivs.push_back(index(0));
        nest(d + 1);
        ivs.pop_back();
        return;
      }
      auto loop =
          scf::ForOp::create(b, loc, index(0), index(extents[d]), index(1));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      ivs.push_back(loop.getInductionVar());
      nest(d + 1);
      ivs.pop_back();
    };
    nest(0);
  }

  /// Indices into a memref of this convolution (the G one left out of a
  /// dense convolution's).
  SmallVector<Value> at(Value n, Value g, Value ch, Value y, Value x) {
    SmallVector<Value> idx = {n};
    if (s.grouped)
      idx.push_back(g);
    idx.push_back(ch);
    if (!s.flat) // collapsed planes: x runs over the whole plane
      idx.push_back(y);
    idx.push_back(x);
    return idx;
  }
  SmallVector<Value> filterAt(Value g, Value f, Value c, Value y, Value x) {
    if (s.grouped)
      return {g, f, c, y, x};
    return {f, c, y, x};
  }

  Value load(Value mem, ValueRange idx, int64_t valid) {
    if (valid == lanes)
      return vector::LoadOp::create(b, loc, vec, mem, idx);
    return vector::MaskedLoadOp::create(b, loc, vec, mem, idx, mask(valid),
                                        zeroVec);
  }
  void store(Value v, Value mem, ValueRange idx, int64_t valid) {
    if (valid == lanes)
      vector::StoreOp::create(b, loc, v, mem, idx);
    else
      vector::MaskedStoreOp::create(b, loc, mem, idx, mask(valid), v);
  }
  /// The input elements \p first, first + sw, ... of the row \p idx
  /// (its last index is set here) that \p valid outputs read: one load at
  /// column stride 1; at stride sw, sw loads (masked to what is read) and
  /// one shuffle picking every sw-th element.
  Value inputs(SmallVector<Value> idx, int64_t first, int64_t valid) {
    if (s.sw == 1) {
      idx.back() = index(first);
      return load(in, idx, valid);
    }
    int64_t needed = (valid - 1) * s.sw + 1;
    SmallVector<Value> parts;
    for (int64_t j = 0; j < s.sw; ++j) {
      int64_t count = std::clamp<int64_t>(needed - j * lanes, 0, lanes);
      if (count == 0) {
        parts.push_back(zeroVec);
        continue;
      }
      idx.back() = index(first + j * lanes);
      parts.push_back(load(in, idx, count));
    }
    // Pairwise shuffles: [a | b] picks lanes of a then b; with sw > 2 the
    // parts are joined first into wider vectors.
    Value joined = parts[0];
    int64_t width = lanes;
    for (int64_t j = 1; j < s.sw; ++j) {
      SmallVector<int64_t> all;
      for (int64_t k = 0; k < width + lanes; ++k)
        all.push_back(k);
      joined = vector::ShuffleOp::create(b, loc, joined, parts[j], all);
      width += lanes;
    }
    SmallVector<int64_t> pick;
    for (int64_t k = 0; k < lanes; ++k)
      pick.push_back(k * s.sw);
    return vector::ShuffleOp::create(b, loc, joined, joined, pick);
  }

  Value mask(int64_t valid) {
    return vector::ConstantMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()),
        b.getDenseI64ArrayAttr({valid}));
  }

  /// Output row iv = (n, g, f block, oh), columns [col, col + width): the
  /// accumulators (fBlock x vectors) are read from the output, updated over
  /// every input channel (a loop carrying them) and every tap (unrolled),
  /// and written back.
  void chunk(ArrayRef<Value> iv, int64_t col, int64_t width) {
    Value n = iv[0], g = iv[1], oh = iv[3];
    Value f0 = affine(iv[2], fBlock, 0);
    int64_t vectors = llvm::divideCeil(width, lanes);
    auto valid = [&](int64_t v) { return std::min(lanes, width - v * lanes); };
    SmallVector<Value> acc;
    for (int64_t i = 0; i < fBlock; ++i)
      for (int64_t v = 0; v < vectors; ++v)
        acc.push_back(
            load(out, at(n, g, affine(f0, 1, i), oh, index(col + v * lanes)),
                 valid(v)));
    auto channels =
        scf::ForOp::create(b, loc, index(0), index(s.c), index(1), acc);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(channels.getBody());
      Value c = channels.getInductionVar();
      SmallVector<Value> sums(channels.getRegionIterArgs());
      Value row0 = affine(oh, s.sh, 0);
      for (int64_t ky = 0; ky < s.kh; ++ky) {
        Value row = affine(row0, 1, ky * s.dh);
        for (int64_t kx = 0; kx < s.kw; ++kx) {
          SmallVector<Value> x;
          for (int64_t v = 0; v < vectors; ++v)
            x.push_back(inputs(at(n, g, c, row, Value()),
                               (col + v * lanes) * s.sw + kx * s.dw +
                                   (s.flat ? ky * s.dh * s.pitch : 0),
                               valid(v)));
          for (int64_t i = 0; i < fBlock; ++i) {
            Value weight = memref::LoadOp::create(
                b, loc, filter,
                filterAt(g, affine(f0, 1, i), c, index(ky), index(kx)));
            Value splat = vector::BroadcastOp::create(b, loc, vec, weight);
            for (int64_t v = 0; v < vectors; ++v) {
              Value &sum = sums[i * vectors + v];
              sum = vector::FMAOp::create(b, loc, x[v], splat, sum);
            }
          }
        }
      }
      scf::YieldOp::create(b, loc, sums);
    }
    for (int64_t i = 0; i < fBlock; ++i)
      for (int64_t v = 0; v < vectors; ++v)
        store(channels.getResult(i * vectors + v), out,
              at(n, g, affine(f0, 1, i), oh, index(col + v * lanes)), valid(v));
  }

  IRRewriter &b;
  linalg::LinalgOp op;
  ConvShape s;
  int64_t lanes, accumulators, fBlock = 1;
  Location loc;
  Value in, filter, out, zeroVec;
  VectorType vec;
};

struct VectorizeConvs
    : public loom::codegen::cpu::impl::LoomVectorizeConvsBase<VectorizeConvs> {
  using LoomVectorizeConvsBase::LoomVectorizeConvsBase;

  void runOnOperation() override {
    if (lanes < 1 || accumulators < 1) {
      getOperation()->emitError("--loom-vectorize-convs: lanes and "
                                "accumulators must be at least 1 (got lanes=")
          << int64_t(lanes) << " accumulators=" << int64_t(accumulators) << ")";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, ConvShape>> convs;
    getOperation()->walk([&](linalg::LinalgOp op) {
      std::optional<ConvShape> shape;
      if (auto dense = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation()))
        shape = shapeOf(op, false, dense.getStrides(), dense.getDilations());
      else if (auto grouped =
                   dyn_cast<linalg::Conv2DNgchwGfchwOp>(op.getOperation()))
        shape = shapeOf(op, true, grouped.getStrides(), grouped.getDilations());
      // Column strides above 4 are left to the scalar loops (each vector
      // would need 5+ loads).
      if (shape && shape->sw <= 4)
        convs.emplace_back(op, *shape);
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, shape] : convs)
      ConvVectorizer(rewriter, op, shape, lanes, accumulators).run();
  }
};

} // namespace
