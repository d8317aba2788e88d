//===- TensorCoreTiles.cpp - The tiled classes' tensor-core form ----------===//
//
// Part of Loom. TileKernel's mma.sync and ldmatrix, and their emulations
// where there are no tensor cores. See TileKernel.h and docs/Codegen/GPU.md
// ("Tensor cores").
//
//===----------------------------------------------------------------------===//

#include "TileKernel.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace loom::codegen::gpu::tiles {

Value TileKernel::pair(OpBuilder &b, Value lo, Value hi) const {
  auto type = VectorType::get({2}, staged);
  Value v = LLVM::PoisonOp::create(b, loc, type);
  for (auto [i, e] : llvm::enumerate(ArrayRef<Value>{lo, hi})) {
    Value at = LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                        b.getI32IntegerAttr(int32_t(i)));
    v = LLVM::InsertElementOp::create(b, loc, v, e, at);
  }
  if (staged.isBF16())
    v = LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
  return v;
}

SmallVector<Value, 4> TileKernel::mma(OpBuilder &b, ArrayRef<Value> a,
                                      ArrayRef<Value> bv,
                                      ValueRange acc) const {
  SmallVector<Value, 4> aRegs, bRegs;
  auto bits = [&](Value v) -> Value {
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
  };
  bool tf32 = multiplied.isTF32();
  for (size_t i = 0; i < a.size(); i += tf32 ? 1 : 2)
    aRegs.push_back(tf32 ? bits(a[i]) : pair(b, a[i], a[i + 1]));
  for (size_t i = 0; i < bv.size(); i += tf32 ? 1 : 2)
    bRegs.push_back(tf32 ? bits(bv[i]) : pair(b, bv[i], bv[i + 1]));
  NVVM::MMATypes ptxType = tf32              ? NVVM::MMATypes::tf32
                           : staged.isBF16() ? NVVM::MMATypes::bf16
                                             : NVVM::MMATypes::f16;
  Type f32 = b.getF32Type();
  auto result =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto op = NVVM::MmaOp::create(
      b, loc, result, aRegs, bRegs, acc, {kMmaM, kMmaN, mmaDepth()},
      std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value, 4> d;
  for (int64_t e = 0; e < 4; ++e)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, op, e));
  return d;
}

SmallVector<Value, 4> TileKernel::emulatedMma(OpBuilder &b, ArrayRef<Value> a,
                                              ArrayRef<Value> bv,
                                              ValueRange acc) const {
  auto widened = [&](Value v) -> Value {
    if (v.getType().isF32())
      return v;
    return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  };
  bool tf32 = multiplied.isTF32();
  for (int64_t i = 0; i < int64_t(a.size()); ++i) {
    // A (m16n8k16): row groupID for a0, a1, a4, a5, groupID + 8
    // otherwise; column threadID_in_group * 2 + (i & 1), + 8 for i >= 4.
    // A (m16n8k8 tf32): row groupID for a0, a2, groupID + 8 for a1, a3;
    // column threadID_in_group, + 4 for a2, a3.
    Value row, col;
    if (tf32) {
      row = plusIndex(b, loc, lane.group, (i & 1) ? 8 : 0);
      col = plusIndex(b, loc, lane.member, i >= 2 ? 4 : 0);
    } else {
      bool low = i < 2 || (i >= 4 && i < 6);
      row = plusIndex(b, loc, lane.group, low ? 0 : 8);
      col = plusIndex(b, loc, lane.pairStart, (i & 1) + (i >= 4 ? 8 : 0));
    }
    memref::StoreOp::create(b, loc, widened(a[i]), emulatedA,
                            ValueRange{lane.warp, row, col});
  }
  for (int64_t i = 0; i < int64_t(bv.size()); ++i) {
    // B (m16n8k16): row threadID_in_group * 2 + (i & 1), + 8 for i >= 2;
    // (m16n8k8 tf32): row threadID_in_group, + 4 for b1; column groupID.
    Value row =
        tf32 ? plusIndex(b, loc, lane.member, i ? 4 : 0)
             : plusIndex(b, loc, lane.pairStart, (i & 1) + (i >= 2 ? 8 : 0));
    memref::StoreOp::create(b, loc, widened(bv[i]), emulatedB,
                            ValueRange{lane.warp, row, lane.group});
  }
  mlir::gpu::BarrierOp::create(b, loc);
  SmallVector<Value, 4> d;
  for (int64_t i = 0; i < 4; ++i) {
    // C and D: row groupID, + 8 for i >= 2; column
    // threadID_in_group * 2 + (i & 1).
    Value row = plusIndex(b, loc, lane.group, i >= 2 ? 8 : 0);
    Value col = plusIndex(b, loc, lane.pairStart, i & 1);
    Value sum = acc[i];
    for (int64_t kk = 0; kk < mmaDepth(); ++kk) {
      Value x = memref::LoadOp::create(
          b, loc, emulatedA, ValueRange{lane.warp, row, index(b, loc, kk)});
      Value y = memref::LoadOp::create(
          b, loc, emulatedB, ValueRange{lane.warp, index(b, loc, kk), col});
      sum = arith::AddFOp::create(b, loc, sum,
                                  arith::MulFOp::create(b, loc, x, y));
    }
    d.push_back(sum);
  }
  mlir::gpu::BarrierOp::create(b, loc);
  return d;
}

SmallVector<Value, 8> TileKernel::ldmatrix(OpBuilder &b, Value tile, Value row,
                                           Value col, bool trans) const {
  if (emulatedRows)
    return emulatedLdmatrix(b, tile, row, col, trans);
  auto type = cast<MemRefType>(tile.getType());
  // The tiles are dense row-major allocations (allocWorkgroupMemory).
  SmallVector<int64_t> strides;
  int64_t offset;
  bool strided = succeeded(type.getStridesAndOffset(strides, offset));
  assert(strided && offset == 0 && "a workgroup tile is dense");
  (void)strided;
  Value element = index(b, loc, 0);
  for (auto [i, v] : llvm::enumerate(tileAt(readBuffer, row, col)))
    element = arith::AddIOp::create(
        b, loc, element,
        arith::MulIOp::create(b, loc, v, index(b, loc, strides[i])));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tile);
  Value bytes = arith::MulIOp::create(
      b, loc, element, index(b, loc, type.getElementTypeBitWidth() / 8));
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, bytes));
  Value ptr = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
  Type i32 = b.getI32Type();
  auto regs =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
  Value loaded = NVVM::LdMatrixOp::create(
      b, loc, regs, ptr, 4, trans ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  SmallVector<Value, 8> elements;
  auto pairType = VectorType::get({2}, staged);
  for (int64_t q = 0; q < 4; ++q) {
    Value reg = LLVM::ExtractValueOp::create(b, loc, loaded, q);
    Value pairOf = LLVM::BitcastOp::create(b, loc, pairType, reg);
    for (int32_t e = 0; e < 2; ++e)
      elements.push_back(LLVM::ExtractElementOp::create(
          b, loc, pairOf,
          LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(e))));
  }
  return elements;
}

SmallVector<Value, 8> TileKernel::emulatedLdmatrix(OpBuilder &b, Value tile,
                                                   Value row, Value col,
                                                   bool trans) const {
  Type i32 = b.getI32Type();
  auto slot = [&](Value from, int64_t which) -> SmallVector<Value, 3> {
    return {lane.warp, from, index(b, loc, which)};
  };
  for (auto [which, v] : llvm::enumerate(ArrayRef<Value>{row, col}))
    memref::StoreOp::create(b, loc, arith::IndexCastOp::create(b, loc, i32, v),
                            emulatedRows, slot(lane.id, which));
  mlir::gpu::BarrierOp::create(b, loc);
  auto given = [&](Value from, int64_t which) -> Value {
    Value v = memref::LoadOp::create(b, loc, emulatedRows, slot(from, which));
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  SmallVector<Value, 8> elements;
  for (int64_t q = 0; q < 4; ++q)
    for (int64_t e = 0; e < 2; ++e) {
      // Not transposed: row lane / 4 of matrix q, given by lane
      // 8q + lane / 4, at its columns 2 (lane % 4) + e. Transposed: row
      // 2 (lane % 4) + e of matrix q, at its column lane / 4.
      Value from = plusIndex(b, loc, trans ? lane.pairStart : lane.group,
                             8 * q + (trans ? e : 0));
      Value r = given(from, 0);
      Value c = arith::AddIOp::create(
          b, loc, given(from, 1),
          trans ? lane.group : plusIndex(b, loc, lane.pairStart, e));
      elements.push_back(tileLoad(b, tile, r, c));
    }
  mlir::gpu::BarrierOp::create(b, loc);
  return elements;
}

SmallVector<SmallVector<Value, 8>, 2>
TileKernel::fragmentsA(OpBuilder &b, Value warpRow, int64_t i) const {
  Value top = plusIndex(b, loc, warpRow, i * kMmaM);
  if (!multiplied.isTF32()) {
    Value q = divIndex(b, lane.id, 8);
    Value r = arith::AddIOp::create(
        b, loc, top,
        arith::AddIOp::create(b, loc, mulIndex(b, remIndex(b, q, 2), 8),
                              remIndex(b, lane.id, 8)));
    Value c = mulIndex(b, divIndex(b, q, 2), 8);
    return {ldmatrix(b, sharedA, r, c, /*trans=*/false)};
  }
  Value lo = arith::AddIOp::create(b, loc, top, lane.group);
  Value hi = plusIndex(b, loc, lo, 8);
  SmallVector<SmallVector<Value, 8>, 2> halves;
  for (int64_t h : {0, 8}) {
    SmallVector<Value, 8> fragment;
    for (int64_t kOff : {0, 4})
      for (Value r : {lo, hi})
        fragment.push_back(
            tileLoad(b, sharedA, r, plusIndex(b, loc, lane.member, h + kOff)));
    halves.push_back(fragment);
  }
  return halves;
}

void TileKernel::fragmentsB(
    OpBuilder &b, Value warpCol, int64_t j,
    SmallVectorImpl<SmallVector<SmallVector<Value, 8>, 2>> &out) const {
  Value left = plusIndex(b, loc, warpCol, j * kMmaN);
  if (!multiplied.isTF32()) {
    Value q = divIndex(b, lane.id, 8);
    Value r = arith::AddIOp::create(b, loc, mulIndex(b, remIndex(b, q, 2), 8),
                                    remIndex(b, lane.id, 8));
    Value c = arith::AddIOp::create(b, loc, left,
                                    mulIndex(b, divIndex(b, q, 2), kMmaN));
    SmallVector<Value, 8> both = ldmatrix(b, sharedB, r, c, /*trans=*/true);
    out.push_back({SmallVector<Value, 8>(both.begin(), both.begin() + 4)});
    out.push_back({SmallVector<Value, 8>(both.begin() + 4, both.end())});
    return;
  }
  Value col = arith::AddIOp::create(b, loc, left, lane.group);
  SmallVector<SmallVector<Value, 8>, 2> halves;
  for (int64_t h : {0, 8}) {
    SmallVector<Value, 8> fragment;
    for (int64_t kOff : {0, 4})
      fragment.push_back(
          tileLoad(b, sharedB, plusIndex(b, loc, lane.member, h + kOff), col));
    halves.push_back(fragment);
  }
  out.push_back(halves);
}

SmallVector<Value> TileKernel::accumulateMma(OpBuilder &b, Value warpRow,
                                             Value warpCol,
                                             ValueRange sums) const {
  int64_t subRows = t.tileM / kWarpRows / kMmaM;
  int64_t subCols = t.tileN / kWarpCols / kMmaN;
  static_assert(kSmallMmaTiles.tileN / kWarpCols / kMmaN % 2 == 0 &&
                    kLargeMmaTiles.tileN / kWarpCols / kMmaN % 2 == 0,
                "B's ldmatrix.x4 loads two sub-tiles' fragments");
  // as[i][h], bs[j][h]: the fragments of the h-th mma along the step.
  SmallVector<SmallVector<SmallVector<Value, 8>, 2>> as, bs;
  for (int64_t i = 0; i < subRows; ++i)
    as.push_back(fragmentsA(b, warpRow, i));
  for (int64_t j = 0; j < subCols; j += multiplied.isTF32() ? 1 : 2)
    fragmentsB(b, warpCol, j, bs);
  SmallVector<Value> next;
  for (int64_t i = 0; i < subRows; ++i)
    for (int64_t j = 0; j < subCols; ++j) {
      SmallVector<Value, 4> acc(sums.slice((i * subCols + j) * 4, 4));
      for (size_t h = 0; h < as[i].size(); ++h)
        acc = emulatedA ? emulatedMma(b, as[i][h], bs[j][h], acc)
                        : mma(b, as[i][h], bs[j][h], acc);
      llvm::append_range(next, acc);
    }
  return next;
}

} // namespace loom::codegen::gpu::tiles
