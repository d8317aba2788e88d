//===- OneDnnSteps.h - The CPU device's oneDNN steps ------------*- C++ -*-===//
//
// Part of Loom. Layer 2 of lib/Runtime/CPU's library steps (above
// Layouts.h and Policy.h, beside KernelSteps.h): the prepared steps that
// run oneDNN primitives, whatever chose them. A oneDNN step binds its
// buffers, reorders at its edges where its primitive computes in another
// layout than a buffer holds (Loom's transposes where they apply), packs
// constant weights once at load, and says what it runs (describe()). Which
// primitive a step gets is the forms' choice (Forms.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_ONEDNNSTEPS_H
#define LOOM_LIB_RUNTIME_CPU_ONEDNNSTEPS_H

#include "CPU/Layouts.h"
#include "CPU/Policy.h"

#include <memory>
#include <string>
#include <vector>

namespace loom::rt::cpu {

using StepPtr = std::unique_ptr<PreparedStep>;

/// What preparing a step needs: the device's engine and policy.
struct PrepareContext {
  const dnnl::engine &engine;
  const CpuPolicy &policy;
  /// Constant weights that several entries' programs read: packed by no
  /// step (one copy, the artifact's; Device::setSharedConstants).
  const std::unordered_set<const void *> &shared;
  bool isShared(const void *constant) const {
    return constant && shared.count(constant);
  }
};

/// Runs \p body, which executes oneDNN primitives: a oneDNN error becomes
/// the step's error.
template <typename Body> Error guardOneDnn(Body &&body) {
  try {
    body();
  } catch (const dnnl::error &e) {
    return makeError(LOOM_ERROR_LIBRARY,
                     std::string("oneDNN failed: ") + e.what());
  }
  return Error::ok();
}

/// A step's post-ops: a residual sum when it has one, or an addend of
/// \p shift's layout (a binary step's shift), then its activation.
dnnl::post_ops postOps(const artifact::PostOp &a, bool sum,
                       const memory::desc &shift = {});

/// Every primitive gets its queue's scratchpad (scratchpad_mode::user): the
/// library's own is not safe when two threads run one primitive.
dnnl::primitive_attr userScratchpad(dnnl::post_ops ops = {});

/// Whether oneDNN fell back to its reference (unoptimised) implementation.
bool isReference(const dnnl::primitive_desc_base &pd);

/// "onednn <primitive kind> <oneDNN's implementation>" of \p prim
/// ("onednn convolution brgconv:avx512_core").
std::string implementationOf(const dnnl::primitive &prim);

/// oneDNN's name of eltwise algorithm \p alg with its parameters, as its
/// verbose log writes a post-op: "eltwise_relu", "eltwise_relu:0.01",
/// "eltwise_clip:0:6" (alpha where alpha or beta is not 0, beta where it is
/// not 0).
std::string eltwiseName(dnnl::algorithm alg, float alpha, float beta);

/// The post-ops \p prim applies to its result, in order, as its
/// description names them (StepDescription::postOps): "sum", "eltwise_*"
/// (eltwiseName), "binary_add per-channel" (a second operand of one value a
/// channel; "full" where it has the result's dimensions, "broadcast"
/// otherwise).
std::vector<std::string> postOpsOf(const dnnl::primitive &prim);

/// The layouts of a oneDNN step's activations: the one its primitive
/// computes in and the one the buffer holds (equal unless a reorder is
/// needed at the edge of a run of blocked-layout steps).
struct StepLayouts {
  memory::desc src, srcBuffer, dst, dstBuffer, sumBuffer;
  /// src as the reorder from srcBuffer writes it when their dimensions
  /// differ (a grouped filter gradient reads its [C, G*N, H, W] input as
  /// [N, G, C, H, W]: a reshape of src); empty: src itself.
  memory::desc srcView;
  /// Where the primitive reads its source buffer in place through other
  /// dimensions (a pixel product reads an NCHW source as [HW, C]): the
  /// layout the buffer holds, which the description names ("src nchw read
  /// as ba"); empty otherwise.
  memory::desc srcHeld;
  /// The manifest's role of the buffer bound in the weights' place, as the
  /// description names it (a binary step's second source: "src1").
  std::string weightsRole = "weights";
  /// The primitive's arguments the weights, bias and dst buffers bind to (a
  /// backward-weights convolution reads the result gradient in the weights'
  /// place and writes the weights' gradient; a binary step's shift is its
  /// first post-op's operand).
  int weightsArg = DNNL_ARG_WEIGHTS, biasArg = DNNL_ARG_BIAS,
      dstArg = DNNL_ARG_DST;
};

/// The buffers a step binds (-1: absent). A binary step's second source
/// takes the weights' place, its shift the bias's.
struct DnnlOperands {
  int64_t src = -1, weights = -1, bias = -1, sum = -1, dst = -1;
  /// Where in its buffer a strided operand starts, in bytes (a matmul's
  /// views).
  int64_t srcOffset = 0, weightsOffset = 0, dstOffset = 0;
};

/// The weights a oneDNN step's primitive reads: their buffer's layout, the
/// primitive's, and the constant weights to prepack once (else null).
struct WeightsLayout {
  memory::desc user, primitive;
  void *constant = nullptr;
};

/// A oneDNN primitive with its bound constant weights (packed once at load,
/// on huge pages as the policy says) and the reorders between its buffers'
/// layouts and its own; with \p swishAfter the SiLU runs after it as Loom's
/// pass (swishInPlace) on its result in the primitive's layout.
StepPtr dnnlStep(const PrepareContext &ctx, const DnnlOperands &ids,
                 dnnl::primitive prim, const StepLayouts &layouts,
                 const WeightsLayout &weights, const memory::desc &bias,
                 const memory::desc &scratchpad, bool swishAfter = false);

/// An onednn.concat step along channels, reading and writing its buffers in
/// the layouts \p plan gives them (a copy per source when they match).
StepPtr dnnlConcat(const PrepareContext &ctx, const artifact::ConcatStep &s,
                   const LayoutPlan &plan);

/// Matmul step \p s as oneDNN's sgemm of \p m x \p k by \p k x \p n on plain
/// row-major operands, its bias and a ReLU (if the step has them) applied
/// in one pass after it.
StepPtr dnnlSgemm(const artifact::MatmulStep &s, int64_t m, int64_t k,
                  int64_t n);

/// 1x1 convolution step \p s of one image between plain NCHW buffers as
/// oneDNN's sgemm of its weights [O, C] by its source [C, HW] into its
/// result [O, HW], its bias and a ReLU (if the step has them) applied in
/// one pass after it.
StepPtr dnnlPlaneProduct(const artifact::Conv2dStep &s);

/// Convolution step \p s (stride 1, plain NCHW buffers, constant OIHW
/// \p weights) as oneDNN's sgemm per filter tap over the outputs whose
/// input pixel for that tap lies inside the image; its bias and a ReLU (if
/// the step has them) applied in passes.
StepPtr dnnlTapProducts(const artifact::Conv2dStep &s, const float *weights);

/// \p step, then \p activation as oneDNN's eltwise primitives in place on
/// its dense result \p dst of layout \p md (the eltwise post-ops postOps
/// makes of it, one primitive each): for an activation a kernel's epilogue
/// lacks (a transformer's GELU after a product on Loom's pointwise
/// kernel). A pass over a result of few rows, which the step has just
/// written into the cache.
StepPtr withActivationPass(const PrepareContext &ctx, StepPtr step,
                           const artifact::PostOp &activation, int64_t dst,
                           const memory::desc &md);

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_ONEDNNSTEPS_H
