//===- ConvTiles.cpp - The tiled convolution kernel class -----------------===//
//
// Part of Loom. See the description of LoomGPUMapConvs in Passes.td and
// docs/Codegen/GPU.md ("Kernel classes").
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/GPU/Passes.h"

#include "Tiles.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"

namespace loom::codegen::gpu {
#define GEN_PASS_DEF_LOOMGPUMAPCONVS
#include "loom/Codegen/GPU/Passes.h.inc"
} // namespace loom::codegen::gpu

using namespace mlir;
using namespace loom::codegen::gpu;

namespace {

/// Whether convolution \p op is depthwise: grouped, one input channel per
/// group. Each output element is then kh x kw products and no input
/// element is shared between output channels, so the 16 rows of an A tile
/// (output channels) would hold one useful row: the generic class maps it.
bool isDepthwise(linalg::LinalgOp op,
                 const linalg::ConvolutionDimensions &dims) {
  if (dims.depth.empty())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t channels = 1;
  for (unsigned d : dims.inputChannel)
    channels *= ranges[d];
  return channels == 1;
}

/// \p op as a convolution of this class (implicit GEMM: A the filter,
/// B the input's patches), at least \p minDepth reduction steps deep, or
/// failure (then the generic class maps it).
FailureOr<Contraction> classify(linalg::LinalgOp op, int64_t minDepth) {
  if (!linalg::isaConvolutionOpInterface(op))
    return failure();
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  if (failed(dims) || isDepthwise(op, *dims))
    return failure();
  FailureOr<Contraction> c = classifyContraction(op);
  if (failed(c) || c->extent(c->k) < std::max<int64_t>(minDepth, 1))
    return failure();
  return c;
}

struct MapConvs
    : public loom::codegen::gpu::impl::LoomGPUMapConvsBase<MapConvs> {
  using LoomGPUMapConvsBase::LoomGPUMapConvsBase;

  void runOnOperation() override {
    auto conv = [&](linalg::LinalgOp op) { return classify(op, minDepth); };
    if (failed(mapContractions(getOperation(), conv)))
      signalPassFailure();
  }
};

} // namespace
