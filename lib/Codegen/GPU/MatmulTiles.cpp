//===- MatmulTiles.cpp - The tiled matrix-product kernel class ------------===//
//
// Part of Loom. See the description of LoomGPUMapMatmuls in Passes.td and
// docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "KernelClasses.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMAPMATMULS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom::codegen::gpu;

namespace {

/// Whether \p map's results are loop indices only.
bool isPermutationLike(AffineMap map) {
  return llvm::all_of(map.getResults(),
                      [](AffineExpr e) { return isa<AffineDimExpr>(e); });
}

} // namespace

FailureOr<Contraction> loom::codegen::gpu::matchMatmulTiles(linalg::LinalgOp op,
                                                            int64_t minDepth) {
  FailureOr<Contraction> c = classifyContraction(op);
  if (failed(c) || c->k.size() != 1 ||
      c->extent(c->k) < std::max<int64_t>(minDepth, 1) ||
      !isPermutationLike(op.getMatchingIndexingMap(c->a)) ||
      !isPermutationLike(op.getMatchingIndexingMap(c->b)))
    return failure();
  return c;
}

namespace {

struct MapMatmuls
    : public loom::codegen::gpu::impl::LoomGPUMapMatmulsBase<MapMatmuls> {
  using LoomGPUMapMatmulsBase::LoomGPUMapMatmulsBase;

  void runOnOperation() override {
    auto matmul = [&](linalg::LinalgOp op, bool recorded) {
      return matchMatmulTiles(op, recorded ? 1 : int64_t(minDepth));
    };
    auto found = opsOfClass(getOperation(), KernelClass::MatmulTiles, matmul);
    if (failed(found) ||
        failed(mapContractions(
            *found, KernelClass::MatmulTiles, largeTileBlocks,
            tensorCoresOf(tensorCores, emulateTensorCores, wgmma))))
      signalPassFailure();
  }
};

} // namespace
