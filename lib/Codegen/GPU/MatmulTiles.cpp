//===- MatmulTiles.cpp - The tiled matrix-product kernel class ------------===//
//
// Part of Loom. See the description of LoomGPUMapMatmuls in Passes.td and
// docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "Tiles.h"

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

/// \p op as a matrix product (a contraction whose inputs are indexed by
/// loops only, with one reduction loop) at least \p minDepth steps deep,
/// or failure (then another class maps it).
FailureOr<Contraction> classify(linalg::LinalgOp op, int64_t minDepth) {
  FailureOr<Contraction> c = classifyContraction(op);
  if (failed(c) || c->k.size() != 1 ||
      c->extent(c->k) < std::max<int64_t>(minDepth, 1) ||
      !isPermutationLike(op.getMatchingIndexingMap(c->a)) ||
      !isPermutationLike(op.getMatchingIndexingMap(c->b)))
    return failure();
  return c;
}

struct MapMatmuls
    : public loom::codegen::gpu::impl::LoomGPUMapMatmulsBase<MapMatmuls> {
  using LoomGPUMapMatmulsBase::LoomGPUMapMatmulsBase;

  void runOnOperation() override {
    auto matmul = [&](linalg::LinalgOp op) { return classify(op, minDepth); };
    if (failed(mapContractions(getOperation(), matmul)))
      signalPassFailure();
  }
};

} // namespace
