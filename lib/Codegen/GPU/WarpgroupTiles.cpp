//===- WarpgroupTiles.cpp - The tiled classes' warpgroup form -------------===//
//
// Part of Loom. TileKernel's wgmma (sm_90a) and its emulation where there
// are no tensor cores: tiles staged as core matrices, read by one
// wgmma.mma_async a step through matrix descriptors. See TileKernel.h and
// docs/Codegen/GPU.md ("Warpgroup products").
//
//===----------------------------------------------------------------------===//

#include "TileKernel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace loom::codegen::gpu::tiles {

namespace {

/// Bytes of one staged element (bf16 or f16: 2).
int64_t elementBytes(Type staged) { return staged.getIntOrFloatBitWidth() / 8; }

/// A descriptor's offsets, PTX's K-major layout without swizzling: from a
/// core matrix to the next along k (leading dimension) and from 8 rows of
/// m or n to the next 8 (stride dimension). tileElement stores the tiles so.
constexpr int64_t kLeadingBytes = kCoreRows * kCoreRowBytes;

int64_t strideBytes(Type staged) {
  return kStep / (kCoreRowBytes / elementBytes(staged)) * kLeadingBytes;
}

Value i64Constant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64Type(),
                                   b.getI64IntegerAttr(v));
}

/// PTX's matrix-descriptor-encode(x): bits 4..17 of \p x.
Value encode(OpBuilder &b, Location loc, Value x) {
  return arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, x, i64Constant(b, loc, 0x3FFFF)),
      i64Constant(b, loc, 4));
}

/// The byte offset a descriptor field holds: bits \p shift .. \p shift + 13
/// of \p desc, times 16 (encode's inverse), as an index.
Value decodedField(OpBuilder &b, Location loc, Value desc, int64_t shift) {
  Value field = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, desc, i64Constant(b, loc, shift)),
      i64Constant(b, loc, 0x3FFF));
  Value bytes = arith::ShLIOp::create(b, loc, field, i64Constant(b, loc, 4));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), bytes);
}

} // namespace

SmallVector<Value, 5> TileKernel::tileElement(OpBuilder &b, bool ofA,
                                              Value buffer, Value row,
                                              Value col) const {
  if (!coreMatrices) {
    SmallVector<Value, 3> at = tileAt(buffer, row, col);
    return SmallVector<Value, 5>(at.begin(), at.end());
  }
  // Both tiles K-major: a core matrix's rows are A's rows (m) or B's
  // columns (n), 16 bytes of consecutive k each.
  Value mn = ofA ? row : col, k = ofA ? col : row;
  int64_t perRow = kCoreRowBytes / elementBytes(staged);
  return {buffer, divIndex(b, mn, kCoreRows), divIndex(b, k, perRow),
          remIndex(b, mn, kCoreRows), remIndex(b, k, perRow)};
}

Value TileKernel::wgmmaDescriptor(OpBuilder &b, Value tile) const {
  // The tile's buffers are its first dimension (sumSteps' double buffering).
  auto type = cast<MemRefType>(tile.getType());
  int64_t bufferBytes =
      type.getNumElements() / type.getDimSize(0) * elementBytes(staged);
  Value start = mulIndex(b, readBuffer, bufferBytes);
  if (!emulatedWarpgroup)
    start = arith::AddIOp::create(
        b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile),
        start);
  Value desc =
      encode(b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), start));
  auto field = [&](int64_t bytes, int64_t shift) -> Value {
    return arith::ShLIOp::create(b, loc,
                                 encode(b, loc, i64Constant(b, loc, bytes)),
                                 i64Constant(b, loc, shift));
  };
  // Bits 16..29: the leading-dimension byte offset; 32..45: the stride
  // one; base offset and swizzling (bits 49..51, 62..63) zero.
  desc = arith::OrIOp::create(b, loc, desc, field(kLeadingBytes, 16));
  return arith::OrIOp::create(b, loc, desc, field(strideBytes(staged), 32));
}

SmallVector<Value> TileKernel::wgmma(OpBuilder &b, Value descA, Value descB,
                                     ValueRange sums) const {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> fields(sums.size(), b.getF32Type());
  auto accumulators = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value acc = LLVM::PoisonOp::create(b, loc, accumulators);
  for (auto [i, s] : llvm::enumerate(sums))
    acc = LLVM::InsertValueOp::create(b, loc, acc, s, int64_t(i));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  NVVM::WGMMATypes type =
      staged.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  // Row-major A and column-major B: both K-major (imm-trans-a and
  // imm-trans-b 0).
  auto op = NVVM::WgmmaMmaAsyncOp::create(
      b, loc, accumulators, acc, descA, descB,
      NVVM::MMAShapeAttr::get(ctx, kWarpgroupM, t.tileN, kStep), type, type,
      NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
      NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row, NVVM::MMALayout::col,
      NVVM::MMAIntOverflowAttr());
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // Waited for at once: the accumulators are read (yielded to the next
  // step), and the buffer this step read is written in the next one.
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  SmallVector<Value> d;
  for (int64_t i = 0; i < int64_t(sums.size()); ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, op, i));
  return d;
}

SmallVector<Value> TileKernel::emulatedWgmma(OpBuilder &b, Value descA,
                                             Value descB,
                                             ValueRange sums) const {
  int64_t bytes = elementBytes(staged);
  // Element (mn, kk) of the K-major matrix \p desc describes in \p tile:
  // start + (mn / 8) SBO + (mn % 8) 16 + (kk / T) LBO + (kk % T) bytes,
  // T the elements of a core matrix's row (PTX's canonical K-major layout
  // without swizzling, ((8, m), (T, 2k)) : ((1T, SBO), (1, LBO))).
  // Each descriptor's fields, decoded once: start, leading, stride.
  struct Fields {
    Value start, leading, stride;
  };
  auto decode = [&](Value desc) -> Fields {
    return {decodedField(b, loc, desc, 0), decodedField(b, loc, desc, 16),
            decodedField(b, loc, desc, 32)};
  };
  Fields fieldsA = decode(descA), fieldsB = decode(descB);
  auto element = [&](Value tile, const Fields &f, Value mn,
                     int64_t kk) -> Value {
    auto [start, leading, stride] = f;
    int64_t perRow = kCoreRowBytes / bytes;
    Value at = arith::AddIOp::create(
        b, loc, start,
        arith::MulIOp::create(b, loc, divIndex(b, mn, kCoreRows), stride));
    at = arith::AddIOp::create(
        b, loc, at, mulIndex(b, remIndex(b, mn, kCoreRows), kCoreRowBytes));
    at = arith::AddIOp::create(
        b, loc, at,
        arith::MulIOp::create(b, loc, index(b, loc, kk / perRow), leading));
    at = plusIndex(b, loc, at, (kk % perRow) * bytes);
    auto shape = cast<MemRefType>(tile.getType()).getShape();
    SmallVector<Value> indices =
        delinearize(b, loc, divIndex(b, at, bytes), shape);
    Value v = memref::LoadOp::create(b, loc, tile, indices);
    return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  };
  // The thread's rows of D: 16 warp + group and 8 below; its columns
  // 8 j + pairStart + {0, 1}.
  Value top =
      arith::AddIOp::create(b, loc, mulIndex(b, lane.warp, kMmaM), lane.group);
  SmallVector<SmallVector<Value>> as;
  for (Value row : {top, plusIndex(b, loc, top, 8)}) {
    as.emplace_back();
    for (int64_t kk = 0; kk < kStep; ++kk)
      as.back().push_back(element(sharedA, fieldsA, row, kk));
  }
  SmallVector<Value> d;
  for (int64_t j = 0; j < t.tileN / kMmaN; ++j) {
    SmallVector<SmallVector<Value>> bs;
    for (int64_t e = 0; e < 2; ++e) {
      Value col = plusIndex(b, loc, lane.pairStart, j * kMmaN + e);
      bs.emplace_back();
      for (int64_t kk = 0; kk < kStep; ++kk)
        bs.back().push_back(element(sharedB, fieldsB, col, kk));
    }
    for (int64_t e = 0; e < 4; ++e) {
      Value sum = sums[4 * j + e];
      for (int64_t kk = 0; kk < kStep; ++kk)
        sum = arith::AddFOp::create(
            b, loc, sum,
            arith::MulFOp::create(b, loc, as[e / 2][kk], bs[e % 2][kk]));
      d.push_back(sum);
    }
  }
  return d;
}

SmallVector<Value> TileKernel::accumulateWgmma(OpBuilder &b,
                                               ValueRange sums) const {
  Value descA = wgmmaDescriptor(b, sharedA);
  Value descB = wgmmaDescriptor(b, sharedB);
  return emulatedWarpgroup ? emulatedWgmma(b, descA, descB, sums)
                           : wgmma(b, descA, descB, sums);
}

void TileKernel::publishTiles(OpBuilder &b) const {
  if (!coreMatrices || emulatedWarpgroup)
    return;
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

} // namespace loom::codegen::gpu::tiles
