//===- Library.cpp - The CPU device's library steps -----------------------===//
//
// Part of Loom. See Cpu.h. The top of lib/Runtime/CPU's library steps: the
// device's oneDNN engine (capped at the instruction-set level in use), and
// prepareProgram, which plans the program's layouts (Plan.h) and makes
// each step from its kind's table of forms (Forms.h), on one thread where
// the step is small (Threads.h). The layers below, bottom up:
//
//   Policy.h       the device's switchable choices, parsed once
//   Layouts.h      the layout vocabulary and the plan as data
//   KernelSteps.h  steps on Loom's kernels (Kernels/CpuKernels.h)
//   OneDnnSteps.h  steps on oneDNN primitives
//   Threads.h      which steps run on one thread
//   Problems.h     what a step is, whatever the layouts (ConvProblem)
//   Forms.h        the forms of each kind as tables (Forms/*.cpp)
//   Plan.h         the layout plan, from what the forms want
//
// Each includes only layers below it.
//
//===----------------------------------------------------------------------===//

#include "CPU/CpuFeatures.h"
#include "CPU/Forms.h"
#include "CPU/KernelSteps.h"
#include "CPU/Plan.h"
#include "CPU/Threads.h"

#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

//===----------------------------------------------------------------------===//
// OpenBLAS
//===----------------------------------------------------------------------===//

class BlasSgemm : public LibraryStep {
public:
  explicit BlasSgemm(const art::SgemmStep &s) : spec(s) {}
  StepDescription describe() const override {
    return {"openblas sgemm", {}, "openblas"};
  }
  Error run(Stream &, void *const *buffers) const override {
    int64_t m = spec.aShape[0], k = spec.aShape[1], n = spec.bShape[1];
    auto *a = static_cast<const float *>(buffers[spec.a]);
    auto *b = static_cast<const float *>(buffers[spec.b]);
    auto *c = static_cast<float *>(buffers[spec.c]);
    for (int64_t i = 0; i < spec.batch; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f,
                  a + i * m * k, k, b, n, 0.f, c + i * m * n, n);
    return Error::ok();
  }

private:
  art::SgemmStep spec;
};

/// The prepared form of one step (null for kernels, copies and control
/// steps). \p constantOf gives a buffer's address when it is a weight.
template <typename ConstantOf>
StepPtr prepareStep(const PrepareContext &ctx, const art::Step &step,
                    ConstantOf constantOf, const LayoutPlan &plan) {
  switch (step.kind()) {
  case art::StepKind::Kernel:
  case art::StepKind::Copy:
  case art::StepKind::Branch:
  case art::StepKind::Jump:
  case art::StepKind::WorldRank: // the runtime's (Runtime.cpp, runStep)
  case art::StepKind::AllGather:
    return nullptr;
  case art::StepKind::Dispatch: // a GPU's (stepRunsOn): the reader refuses it
  case art::StepKind::CublasMatmul:
  case art::StepKind::CudnnConv:
    return nullptr;
  case art::StepKind::Conv2d: {
    const auto &s = *step.getIf<art::Conv2dStep>();
    return makeStep(convForms(), ctx, s, constantOf(s.weights), plan);
  }
  case art::StepKind::Conv2dFilterGrad:
    return makeStep(filterGradForms(), ctx,
                    *step.getIf<art::Conv2dFilterGradStep>(), nullptr, plan);
  case art::StepKind::Matmul: {
    const auto &s = *step.getIf<art::MatmulStep>();
    return makeStep(matmulForms(), ctx, s, constantOf(s.weights), plan);
  }
  case art::StepKind::Pool2d:
    return makeStep(poolForms(), ctx, *step.getIf<art::Pool2dStep>(), nullptr,
                    plan);
  case art::StepKind::Concat:
    return makeStep(concatForms(), ctx, *step.getIf<art::ConcatStep>(), nullptr,
                    plan);
  case art::StepKind::Binary: {
    const auto &s = *step.getIf<art::BinaryStep>();
    return makeStep(binaryForms(), ctx, s, constantOf(s.src1), plan);
  }
  case art::StepKind::Sgemm:
    return std::make_unique<BlasSgemm>(*step.getIf<art::SgemmStep>());
  case art::StepKind::TopK:
  case art::StepKind::NonMaxSuppression:
  case art::StepKind::NonZero:
  case art::StepKind::UpdateSlice:
    return prepareDynamicStep(step);
  case art::StepKind::Attention:
    return attentionStep(*step.getIf<art::AttentionStep>());
  }
  return nullptr;
}

} // namespace

/// Caps oneDNN's instruction set at the level the runtime uses (cpuIsa())
/// when LOOM_CPU_ISA lowers it, unless ONEDNN_MAX_CPU_ISA already says
/// what oneDNN may use. oneDNN takes the cap only before its first
/// primitive: a later call fails, and the warning says so.
static void capOneDnnIsa() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (cpuIsa() == detectedCpuIsa() || std::getenv("ONEDNN_MAX_CPU_ISA") ||
        std::getenv("DNNL_MAX_CPU_ISA"))
      return;
    dnnl::cpu_isa isa = dnnl::cpu_isa::all;
    switch (cpuIsa()) {
    case art::CpuIsa::Sse42:
      isa = dnnl::cpu_isa::sse41;
      break;
    case art::CpuIsa::Avx2:
      isa = dnnl::cpu_isa::avx2;
      break;
    case art::CpuIsa::Avx512:
      isa = dnnl::cpu_isa::avx512_core;
      break;
    }
    try {
      dnnl::set_max_cpu_isa(isa);
    } catch (const dnnl::error &e) {
      std::fprintf(stderr,
                   "loom: warning: oneDNN keeps its own instruction set "
                   "(LOOM_CPU_ISA=%s came after its first use: %s)\n",
                   std::string(art::cpuIsaName(cpuIsa())).c_str(), e.what());
    }
  });
}

Error cpu::createEngine(Engine &out) {
  capOneDnnIsa();
  try {
    out = dnnl::engine(dnnl::engine::kind::cpu, 0);
  } catch (const dnnl::error &e) {
    return makeError(LOOM_ERROR_LIBRARY,
                     std::string("oneDNN cannot create its CPU engine: ") +
                         e.what());
  }
  return Error::ok();
}

void cpu::setLibraryThreads(int threads) {
  if (openblas_get_num_threads() != threads)
    openblas_set_num_threads(threads);
}

Error cpu::prepareProgram(const Engine &eng, const CpuPolicy &policy,
                          const std::unordered_set<const void *> &shared,
                          const art::Entry &entry, const art::Program &program,
                          const std::vector<int64_t> &bufferBytes,
                          const std::vector<void *> &constants,
                          std::vector<StepPtr> &out,
                          std::map<int64_t, std::string> &layouts) {
  auto constantOf = [&](int64_t id) -> void * {
    return entry.buffers[id].kind == art::BufferKind::Weight ? constants[id]
                                                             : nullptr;
  };
  std::vector<void *> constantWeights(entry.buffers.size());
  for (size_t id = 0; id < entry.buffers.size(); ++id)
    constantWeights[id] = constantOf(int64_t(id));
  out.clear();
  PrepareContext ctx{eng, policy, shared};
  try {
    LayoutPlan plan =
        planLayouts(ctx, entry, program, bufferBytes, constantWeights);
    if (std::string broken = plainKernelViolation(program, plan);
        !broken.empty())
      return makeError(LOOM_ERROR_LIBRARY,
                       "internal error: the CPU layout plan gives a kernel "
                       "that reads plain buffers another layout: " +
                           broken);
    for (const auto &[id, md] : plan)
      layouts[id] = layoutName(md);
    for (const art::Step &step : program.steps) {
      try {
        if (runsAlone(step, policy)) {
          TeamSize one(1);
          StepPtr prepared = prepareStep(ctx, step, constantOf, plan);
          out.push_back(prepared ? onOneThread(std::move(prepared)) : nullptr);
        } else {
          out.push_back(prepareStep(ctx, step, constantOf, plan));
        }
      } catch (const dnnl::error &e) {
        return makeError(LOOM_ERROR_LIBRARY,
                         "oneDNN cannot make the primitive of a " +
                             std::string(art::stepKindName(step.kind())) +
                             " step: " + e.what());
      } catch (const std::bad_alloc &) {
        return makeError(LOOM_ERROR_LIBRARY,
                         "out of memory packing the weights of a " +
                             std::string(art::stepKindName(step.kind())) +
                             " step");
      }
    }
  } catch (const dnnl::error &e) {
    return makeError(LOOM_ERROR_LIBRARY,
                     std::string("oneDNN failed to plan layouts: ") + e.what());
  }
  return Error::ok();
}
