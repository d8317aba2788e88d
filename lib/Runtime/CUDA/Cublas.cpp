//===- Cublas.cpp - cuBLASLt for the CUDA device --------------------------===//
//
// Part of Loom. See Cublas.h. cuBLASLt's types and entry points are
// declared here from its documented ABI (cublasLt.h of CUDA 12 and 13; the
// values in CublasEncoding.h), so that libloomrt builds without the
// toolkit; every entry point comes from dlsym on the library opened.
//
//===----------------------------------------------------------------------===//

#include "CUDA/Cublas.h"
#include "CUDA/CublasEncoding.h"
#include "DynamicSymbols.h"

#include <mutex>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cublas;
namespace art = loom::artifact;

namespace {

using Status = int;                // cublasStatus_t
using Handle = struct LtContext *; // cublasLtHandle_t
using MatmulDesc = void *;         // cublasLtMatmulDesc_t
using LayoutDesc = void *;         // cublasLtMatrixLayout_t
using Preference = void *;         // cublasLtMatmulPreference_t
/// cublasLtMatmulAlgo_t.
struct Algo {
  uint64_t data[8];
};
/// cublasLtMatmulHeuristicResult_t.
struct HeuristicResult {
  Algo algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};

} // namespace

// Every entry point, with its signature.
#define LOOM_CUBLASLT_FUNCTIONS(X)                                             \
  X(Status, cublasLtCreate, Handle *)                                          \
  X(Status, cublasLtDestroy, Handle)                                           \
  X(const char *, cublasLtGetStatusName, Status)                               \
  X(Status, cublasLtMatmulDescCreate, MatmulDesc *, int32_t, int32_t)          \
  X(Status, cublasLtMatmulDescDestroy, MatmulDesc)                             \
  X(Status, cublasLtMatmulDescSetAttribute, MatmulDesc, int32_t, const void *, \
    size_t)                                                                    \
  X(Status, cublasLtMatrixLayoutCreate, LayoutDesc *, int32_t, uint64_t,       \
    uint64_t, int64_t)                                                         \
  X(Status, cublasLtMatrixLayoutDestroy, LayoutDesc)                           \
  X(Status, cublasLtMatrixLayoutSetAttribute, LayoutDesc, int32_t,             \
    const void *, size_t)                                                      \
  X(Status, cublasLtMatmulPreferenceCreate, Preference *)                      \
  X(Status, cublasLtMatmulPreferenceDestroy, Preference)                       \
  X(Status, cublasLtMatmulPreferenceSetAttribute, Preference, int32_t,         \
    const void *, size_t)                                                      \
  X(Status, cublasLtMatmulAlgoGetHeuristic, Handle, MatmulDesc, LayoutDesc,    \
    LayoutDesc, LayoutDesc, LayoutDesc, Preference, int, HeuristicResult *,    \
    int *)                                                                     \
  X(Status, cublasLtMatmul, Handle, MatmulDesc, const void *, const void *,    \
    LayoutDesc, const void *, LayoutDesc, const void *, const void *,          \
    LayoutDesc, void *, LayoutDesc, const Algo *, void *, size_t, void *)

struct Library::Api {
  DynamicLibrary library;
#define LOOM_CUBLASLT_DECLARE(result, name, ...)                               \
  result (*name)(__VA_ARGS__) = nullptr;
  LOOM_CUBLASLT_FUNCTIONS(LOOM_CUBLASLT_DECLARE)
#undef LOOM_CUBLASLT_DECLARE
};

namespace {

/// A cublas.matmul made ready: its descriptors and algorithm. The bias
/// pointer is a context's buffer, set on the descriptor at each launch
/// under the step's lock (contexts on several threads share the step).
struct PreparedMatmul : public PreparedStep {
  const Library::Api *api = nullptr;
  art::CublasMatmulStep step;
  Encoding encoding;
  MatmulDesc desc = nullptr;
  LayoutDesc a = nullptr, b = nullptr, d = nullptr;
  Algo algo = {};
  size_t workspaceBytes = 0;
  mutable std::mutex lock;

  StepDescription describe() const override {
    return {"cublaslt matmul",
            {"workspace " + std::to_string(workspaceBytes) + " bytes"},
            "stream"};
  }
  ~PreparedMatmul() override {
    for (LayoutDesc l : {a, b, d})
      if (l)
        api->cublasLtMatrixLayoutDestroy(l);
    if (desc)
      api->cublasLtMatmulDescDestroy(desc);
  }
};

} // namespace

Library::~Library() {
  if (handle)
    api->cublasLtDestroy(static_cast<Handle>(handle));
}

Error Library::check(Status status, const std::string &what) const {
  if (status == 0)
    return Error::ok();
  const char *name =
      api->cublasLtGetStatusName ? api->cublasLtGetStatusName(status) : nullptr;
  return makeError(
      LOOM_ERROR_LIBRARY,
      device + ": " + what + " failed (" +
          (name ? name : "cublasStatus_t " + std::to_string(status)) + ")");
}

Error Library::open(const std::string &device, std::unique_ptr<Library> &out) {
  std::unique_ptr<Library> lt(new Library());
  lt->device = device;
  lt->api = std::make_unique<Api>();
  DynamicLibrary &library = lt->api->library;
  if (!library.open("LOOM_CUBLASLT_LIBRARY",
                    {"libcublasLt.so.13",
                     "/usr/local/cuda/lib64/libcublasLt.so.13",
                     "libcublasLt.so.12"}))
    return makeError(LOOM_ERROR_LIBRARY,
                     device +
                         ": the artifact's cublas.matmul steps need "
                         "cuBLASLt, and " +
                         library.tried() +
                         " did not open (install CUDA's cuBLAS, or name the "
                         "library with LOOM_CUBLASLT_LIBRARY)");
#define LOOM_CUBLASLT_SYMBOL(result, fn, ...) requiredSymbol(#fn, lt->api->fn),
  if (const char *missing =
          library.resolve({LOOM_CUBLASLT_FUNCTIONS(LOOM_CUBLASLT_SYMBOL)}))
    return makeError(LOOM_ERROR_LIBRARY, device + ": " + library.tried() +
                                             " has no " + missing +
                                             " (not cuBLASLt 12 or later)");
#undef LOOM_CUBLASLT_SYMBOL
  Handle h = nullptr;
  if (Error err = lt->check(lt->api->cublasLtCreate(&h), "cublasLtCreate"))
    return err;
  lt->handle = h;
  out = std::move(lt);
  return Error::ok();
}

Error Library::prepare(const art::CublasMatmulStep &s, const std::string &at,
                       std::unique_ptr<PreparedStep> &out) const {
  auto p = std::make_unique<PreparedMatmul>();
  p->api = api.get();
  p->step = s;
  p->encoding = encode(s);
  const Encoding &e = p->encoding;
  auto layout = [&](const cublas::Layout &l, LayoutDesc &made) {
    Status st =
        api->cublasLtMatrixLayoutCreate(&made, l.type, l.rows, l.cols, l.ld);
    if (st == 0 && l.batch > 1) {
      st = api->cublasLtMatrixLayoutSetAttribute(made, kLayoutBatchCount,
                                                 &l.batch, sizeof(l.batch));
      if (st == 0)
        st = api->cublasLtMatrixLayoutSetAttribute(made, kLayoutBatchStride,
                                                   &l.stride, sizeof(l.stride));
    }
    return st;
  };
  Status st = api->cublasLtMatmulDescCreate(&p->desc, e.compute, kDataF32);
  if (st == 0)
    st = api->cublasLtMatmulDescSetAttribute(p->desc, kDescTransA, &e.transA,
                                             sizeof(e.transA));
  if (st == 0)
    st = api->cublasLtMatmulDescSetAttribute(p->desc, kDescTransB, &e.transB,
                                             sizeof(e.transB));
  if (st == 0)
    st = api->cublasLtMatmulDescSetAttribute(p->desc, kDescEpilogue,
                                             &e.epilogue, sizeof(e.epilogue));
  if (st == 0)
    st = layout(e.a, p->a);
  if (st == 0)
    st = layout(e.b, p->b);
  if (st == 0)
    st = layout(e.d, p->d);
  if (Error err = check(st, at + "describing the product to cuBLASLt"))
    return err;
  Preference pref = nullptr;
  uint64_t most = kWorkspaceBytes;
  HeuristicResult result = {};
  int found = 0;
  st = api->cublasLtMatmulPreferenceCreate(&pref);
  if (st == 0)
    st = api->cublasLtMatmulPreferenceSetAttribute(pref, kPrefMaxWorkspace,
                                                   &most, sizeof(most));
  for (int32_t attr : kPrefMinAlignment)
    if (st == 0)
      st = api->cublasLtMatmulPreferenceSetAttribute(
          pref, attr, &kBufferAlignment, sizeof(kBufferAlignment));
  if (st == 0)
    st = api->cublasLtMatmulAlgoGetHeuristic(static_cast<Handle>(handle),
                                             p->desc, p->a, p->b, p->d, p->d,
                                             pref, 1, &result, &found);
  if (pref)
    api->cublasLtMatmulPreferenceDestroy(pref);
  if (Error err = check(st, at + "cublasLtMatmulAlgoGetHeuristic"))
    return err;
  if (found < 1 || result.state != 0)
    return makeError(LOOM_ERROR_LIBRARY,
                     device + ": " + at + "cuBLASLt has no algorithm for it");
  p->algo = result.algo;
  p->workspaceBytes = result.workspaceSize;
  out = std::move(p);
  return Error::ok();
}

Error Library::launch(const PreparedStep &step, void *stream,
                      void *const *buffers, void *workspace) const {
  const auto &p = static_cast<const PreparedMatmul &>(step);
  const float alpha = 1, beta = 0;
  std::lock_guard<std::mutex> guard(p.lock);
  if (p.encoding.bias) {
    void *bias = buffers[p.step.bias];
    if (Error err = check(api->cublasLtMatmulDescSetAttribute(
                              p.desc, kDescBiasPointer, &bias, sizeof(bias)),
                          "setting the bias of a cublas.matmul"))
      return err;
  }
  // cuBLASLt's A is the step's b and its B the step's a (CublasEncoding.h);
  // C (read with beta 0) and D are the step's d.
  void *d = buffers[p.step.d];
  return check(api->cublasLtMatmul(static_cast<Handle>(handle), p.desc, &alpha,
                                   buffers[p.step.b], p.a, buffers[p.step.a],
                                   p.b, &beta, d, p.d, d, p.d, &p.algo,
                                   workspace, p.workspaceBytes, stream),
               "cublasLtMatmul");
}
