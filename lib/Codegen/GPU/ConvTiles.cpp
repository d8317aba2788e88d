//===- ConvTiles.cpp - The tiled convolution kernel class -----------------===//
//
// Part of Loom. See the description of LoomGPUMapConvs in Passes.td and
// docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "KernelClasses.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMAPCONVS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom::codegen::gpu;

/// \p op as a convolution of this class (implicit GEMM: A the filter,
/// B the input's patches), at least \p minDepth reduction steps deep and
/// \p minChannels output channels per group, or failure (then the generic
/// class maps it). With fewer channels (a depthwise convolution's one, a
/// ResNeXt group's four) most rows of an A tile are zeros: each thread
/// would compute more products than the generic class's thread does.
FailureOr<Contraction> loom::codegen::gpu::matchConvTiles(linalg::LinalgOp op,
                                                          int64_t minDepth,
                                                          int64_t minChannels) {
  if (!linalg::isaConvolutionOpInterface(op))
    return failure();
  FailureOr<Contraction> c = classifyContraction(op);
  if (failed(c) || c->extent(c->k) < std::max<int64_t>(minDepth, 1))
    return failure();
  // The output channels are the loops of the filter's side of the product
  // (the input's side: the batch and the output image).
  AffineMap filterMap = op.getMatchingIndexingMap(c->a);
  bool aIsFilter = llvm::all_of(filterMap.getResults(), [](AffineExpr e) {
    return isa<AffineDimExpr>(e);
  });
  if (c->extent(aIsFilter ? c->m : c->n) < minChannels)
    return failure();
  return c;
}

namespace {

struct MapConvs
    : public loom::codegen::gpu::impl::LoomGPUMapConvsBase<MapConvs> {
  using LoomGPUMapConvsBase::LoomGPUMapConvsBase;

  void runOnOperation() override {
    auto conv = [&](linalg::LinalgOp op, bool recorded) {
      return recorded ? matchConvTiles(op, 1, 0)
                      : matchConvTiles(op, minDepth, minChannels);
    };
    auto found = opsOfClass(getOperation(), KernelClass::ConvTiles, conv);
    if (failed(found) ||
        failed(mapContractions(
            *found, KernelClass::ConvTiles, largeTileBlocks,
            tensorCoresOf(tensorCores, emulateTensorCores, wgmma))))
      signalPassFailure();
  }
};

} // namespace
