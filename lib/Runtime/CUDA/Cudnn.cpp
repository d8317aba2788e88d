//===- Cudnn.cpp - cuDNN for the CUDA device ------------------------------===//
//
// Part of Loom. See Cudnn.h. cuDNN's backend API is declared here from its
// documented ABI (cudnn_graph.h of cuDNN 9; the values in CudnnEncoding.h),
// so that libloomrt builds without cuDNN's headers; every entry point comes
// from dlsym on the library opened.
//
//===----------------------------------------------------------------------===//

#include "CUDA/Cudnn.h"
#include "CUDA/CudnnEncoding.h"
#include "DynamicSymbols.h"

#include <algorithm>
#include <vector>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cudnn;
namespace art = loom::artifact;

namespace {

using Status = int;    // cudnnStatus_t
using Handle = void *; // cudnnHandle_t
using Desc = void *;   // cudnnBackendDescriptor_t

} // namespace

// Every entry point, with its signature.
#define LOOM_CUDNN_FUNCTIONS(X)                                                \
  X(size_t, cudnnGetVersion)                                                   \
  X(const char *, cudnnGetErrorString, Status)                                 \
  X(Status, cudnnCreate, Handle *)                                             \
  X(Status, cudnnDestroy, Handle)                                              \
  X(Status, cudnnSetStream, Handle, void *)                                    \
  X(Status, cudnnBackendCreateDescriptor, int32_t, Desc *)                     \
  X(Status, cudnnBackendDestroyDescriptor, Desc)                               \
  X(Status, cudnnBackendFinalize, Desc)                                        \
  X(Status, cudnnBackendSetAttribute, Desc, int32_t, int32_t, int64_t,         \
    const void *)                                                              \
  X(Status, cudnnBackendGetAttribute, Desc, int32_t, int32_t, int64_t,         \
    int64_t *, void *)                                                         \
  X(Status, cudnnBackendExecute, Handle, Desc, Desc)

struct Library::Api {
  DynamicLibrary library;
#define LOOM_CUDNN_DECLARE(result, name, ...)                                  \
  result (*name)(__VA_ARGS__) = nullptr;
  LOOM_CUDNN_FUNCTIONS(LOOM_CUDNN_DECLARE)
#undef LOOM_CUDNN_DECLARE
};

namespace {

/// Descriptors made for one step, destroyed with it (last made first).
struct Owned {
  const Library::Api *api = nullptr;
  std::vector<Desc> descriptors;
  ~Owned() {
    for (auto it = descriptors.rbegin(); it != descriptors.rend(); ++it)
      api->cudnnBackendDestroyDescriptor(*it);
  }
};

/// Makes, sets and finalizes descriptors, stopping at the first call that
/// fails: its status and what it was are kept for the diagnostic.
class Builder {
public:
  Builder(const Library::Api &api, Owned &owned) : api(api), owned(owned) {}

  Desc make(int32_t type, const char *what) {
    Desc d = nullptr;
    if (ok(api.cudnnBackendCreateDescriptor(type, &d), what))
      owned.descriptors.push_back(d);
    return d;
  }
  void set(Desc d, int32_t name, int32_t type, int64_t count,
           const void *values, const char *what) {
    if (status == 0)
      ok(api.cudnnBackendSetAttribute(d, name, type, count, values), what);
  }
  void setInts(Desc d, int32_t name, const std::vector<int64_t> &values,
               const char *what) {
    set(d, name, kTypeInt64, int64_t(values.size()), values.data(), what);
  }
  void setDesc(Desc d, int32_t name, Desc value, const char *what) {
    set(d, name, kTypeBackendDescriptor, 1, &value, what);
  }
  void finalize(Desc d, const char *what) {
    if (status == 0)
      ok(api.cudnnBackendFinalize(d), what);
  }

  Status status = 0;
  std::string failed;

private:
  bool ok(Status s, const char *what) {
    if (status != 0)
      return false;
    status = s;
    if (s != 0)
      failed = what;
    return s == 0;
  }

  const Library::Api &api;
  Owned &owned;
};

/// A cudnn.conv made ready: its descriptors and execution plan, and the
/// variant pack's unique ids in the order of its buffers.
struct PreparedConv : public PreparedStep {
  Owned owned;
  art::CudnnConvStep step;
  Desc plan = nullptr;
  int64_t workspaceBytes = 0;
  std::vector<int64_t> uids, buffers;

  StepDescription describe() const override {
    return {"cudnn convolution",
            {"workspace " + std::to_string(workspaceBytes) + " bytes"},
            "stream"};
  }
};

/// The tensors, the convolution and the pointwise operations of \p e, in
/// graph order (none of them needs the handle).
std::vector<Desc> buildOperations(Builder &b, const Encoding &e) {
  std::vector<std::pair<int64_t, Desc>> tensors;
  auto tensorOf = [&](int64_t uid) {
    for (auto &[id, d] : tensors)
      if (id == uid)
        return d;
    return Desc(nullptr);
  };
  const int32_t f32 = kDataFloat;
  for (const Tensor &t : e.tensors) {
    Desc d = b.make(kTensorDescriptor, "a tensor descriptor");
    bool isVirtual = t.isVirtual;
    b.set(d, kTensorDataType, kTypeDataType, 1, &t.dataType, "its data type");
    b.setInts(d, kTensorDimensions, t.dims, "its dimensions");
    b.setInts(d, kTensorStrides, t.strides, "its strides");
    b.set(d, kTensorUniqueId, kTypeInt64, 1, &t.uid, "its unique id");
    b.set(d, kTensorByteAlignment, kTypeInt64, 1, &kBufferAlignment,
          "its alignment");
    b.set(d, kTensorIsVirtual, kTypeBoolean, 1, &isVirtual, "its virtuality");
    b.finalize(d, "finalizing a tensor descriptor");
    tensors.emplace_back(t.uid, d);
  }
  Desc conv = b.make(kConvolutionDescriptor, "the convolution descriptor");
  const int32_t mode = kCrossCorrelation;
  b.set(conv, kConvCompType, kTypeDataType, 1, &f32, "its compute type");
  b.set(conv, kConvMode, kTypeConvolutionMode, 1, &mode, "its mode");
  b.set(conv, kConvSpatialDims, kTypeInt64, 1, &e.spatialDims,
        "its spatial dimensions");
  b.setInts(conv, kConvFilterStrides, e.strides, "its strides");
  b.setInts(conv, kConvPrePaddings, e.prePaddings, "its pre-paddings");
  b.setInts(conv, kConvPostPaddings, e.postPaddings, "its post-paddings");
  b.setInts(conv, kConvDilations, e.dilations, "its dilations");
  b.finalize(conv, "finalizing the convolution descriptor");

  std::vector<Desc> ops;
  Desc fwd = b.make(kConvForwardDescriptor, "the convolution operation");
  const float one = 1, zero = 0;
  b.setDesc(fwd, kConvForwardConvDesc, conv, "its convolution");
  b.setDesc(fwd, kConvForwardX, tensorOf(kUidSrc), "its x");
  b.setDesc(fwd, kConvForwardW, tensorOf(kUidWeights), "its w");
  b.setDesc(fwd, kConvForwardY, tensorOf(e.convolved), "its y");
  b.set(fwd, kConvForwardAlpha, kTypeFloat, 1, &one, "its alpha");
  b.set(fwd, kConvForwardBeta, kTypeFloat, 1, &zero, "its beta");
  b.finalize(fwd, "finalizing the convolution operation");
  ops.push_back(fwd);
  for (const Pointwise &p : e.pointwise) {
    Desc pw = b.make(kPointwiseDescriptor, "a pointwise descriptor");
    b.set(pw, kPointwiseMode, kTypePointwiseMode, 1, &p.mode, "its mode");
    b.set(pw, kPointwiseMathPrec, kTypeDataType, 1, &f32, "its precision");
    b.finalize(pw, "finalizing a pointwise descriptor");
    Desc op = b.make(kPointwiseOperationDescriptor, "a pointwise operation");
    b.setDesc(op, kPointwisePwDescriptor, pw, "its pointwise descriptor");
    b.setDesc(op, kPointwiseXDesc, tensorOf(p.x), "its x");
    if (p.b != -1)
      b.setDesc(op, kPointwiseBDesc, tensorOf(p.b), "its b");
    b.setDesc(op, kPointwiseYDesc, tensorOf(p.y), "its y");
    b.finalize(op, "finalizing a pointwise operation");
    ops.push_back(op);
  }
  return ops;
}

/// What the search for a plan saw, for the diagnostic when it finds none.
struct Search {
  /// The step's operand type (computesExactly).
  std::string operandType;
  int64_t configs = 0, belowF32 = 0, overWorkspace = 0, refused = 0;
  std::string summary() const {
    return std::to_string(configs) +
           " engine configurations: " + std::to_string(belowF32) +
           " not exact on these operands (TF32 or reduced precision), " +
           std::to_string(overWorkspace) + " over the workspace, " +
           std::to_string(refused) + " refused by the execution plan";
  }
};

/// The execution plan of the first engine configuration of \p graph that
/// heuristics mode \p mode lists, computes the step exactly
/// (computesExactly) and needs at most
/// \p maxWorkspace bytes; null when none does.
Desc planFor(const Library::Api &api, Owned &owned, Desc graph, Handle handle,
             int32_t mode, int64_t maxWorkspace, int64_t &workspace,
             Search &search) {
  Owned scratch{&api, {}};
  Builder b(api, scratch);
  Desc heur = b.make(kEngineHeurDescriptor, "the heuristics");
  b.setDesc(heur, kHeurOperationGraph, graph, "its graph");
  b.set(heur, kHeurMode, kTypeHeurMode, 1, &mode, "its mode");
  b.finalize(heur, "finalizing the heuristics");
  int64_t count = 0;
  if (b.status != 0 ||
      api.cudnnBackendGetAttribute(heur, kHeurResults, kTypeBackendDescriptor,
                                   0, &count, nullptr) != 0 ||
      count <= 0)
    return nullptr;
  std::vector<Desc> configs;
  for (int64_t i = 0; i < count; ++i)
    configs.push_back(b.make(kEngineCfgDescriptor, "an engine configuration"));
  if (b.status != 0 ||
      api.cudnnBackendGetAttribute(heur, kHeurResults, kTypeBackendDescriptor,
                                   count, &count, configs.data()) != 0)
    return nullptr;
  for (int64_t i = 0; i < count && i < int64_t(configs.size()); ++i) {
    ++search.configs;
    Desc engine = b.make(kEngineDescriptor, "an engine");
    int64_t n = 0;
    std::vector<int32_t> notes(16);
    if (b.status != 0 ||
        api.cudnnBackendGetAttribute(configs[i], kEngineCfgEngine,
                                     kTypeBackendDescriptor, 1, &n,
                                     &engine) != 0 ||
        api.cudnnBackendGetAttribute(engine, kEngineNumericalNote,
                                     kTypeNumericalNote, int64_t(notes.size()),
                                     &n, notes.data()) != 0) {
      ++search.refused;
      continue;
    }
    notes.resize(size_t(std::min<int64_t>(n, int64_t(notes.size()))));
    if (!computesExactly(notes, search.operandType)) {
      ++search.belowF32;
      continue;
    }
    Desc plan = nullptr;
    if (api.cudnnBackendCreateDescriptor(kExecutionPlanDescriptor, &plan) != 0)
      return nullptr;
    int64_t bytes = 0;
    if (api.cudnnBackendSetAttribute(plan, kPlanHandle, kTypeHandle, 1,
                                     &handle) != 0 ||
        api.cudnnBackendSetAttribute(plan, kPlanEngineConfig,
                                     kTypeBackendDescriptor, 1,
                                     &configs[i]) != 0 ||
        api.cudnnBackendFinalize(plan) != 0 ||
        api.cudnnBackendGetAttribute(plan, kPlanWorkspaceSize, kTypeInt64, 1,
                                     &n, &bytes) != 0) {
      ++search.refused;
      api.cudnnBackendDestroyDescriptor(plan);
      continue;
    }
    if (bytes > maxWorkspace) {
      ++search.overWorkspace;
      api.cudnnBackendDestroyDescriptor(plan);
      continue;
    }
    // The plan, its configuration and the rest live as long as the step.
    workspace = bytes;
    owned.descriptors.insert(owned.descriptors.end(),
                             scratch.descriptors.begin(),
                             scratch.descriptors.end());
    scratch.descriptors.clear();
    owned.descriptors.push_back(plan);
    return plan;
  }
  return nullptr;
}


} // namespace

Library::~Library() {
  if (handle)
    api->cudnnDestroy(handle);
}

Error Library::check(Status status, const std::string &what) const {
  if (status == 0)
    return Error::ok();
  const char *name =
      api->cudnnGetErrorString ? api->cudnnGetErrorString(status) : nullptr;
  return makeError(LOOM_ERROR_LIBRARY,
                   device + ": " + what + " failed (" +
                       (name ? name : "cudnnStatus_t " + std::to_string(status)) +
                       ")");
}

Error Library::open(const std::string &device, std::unique_ptr<Library> &out) {
  std::unique_ptr<Library> dnn(new Library());
  dnn->device = device;
  dnn->api = std::make_unique<Api>();
  DynamicLibrary &library = dnn->api->library;
  if (!library.open("LOOM_CUDNN_LIBRARY",
                    {"libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.9",
                     "/usr/local/cuda/lib/libcudnn.so.9"}))
    return makeError(LOOM_ERROR_LIBRARY,
                     device +
                         ": the artifact's cudnn.conv steps need cuDNN 9, "
                         "and " +
                         library.tried() +
                         " did not open (install cuDNN 9, or name the "
                         "library with LOOM_CUDNN_LIBRARY)");
#define LOOM_CUDNN_SYMBOL(result, fn, ...) requiredSymbol(#fn, dnn->api->fn),
  if (const char *missing =
          library.resolve({LOOM_CUDNN_FUNCTIONS(LOOM_CUDNN_SYMBOL)}))
    return makeError(LOOM_ERROR_LIBRARY, device + ": " + library.tried() +
                                             " has no " + missing +
                                             " (not cuDNN 9)");
#undef LOOM_CUDNN_SYMBOL
  size_t version = dnn->api->cudnnGetVersion();
  if (version / 10000 != 9)
    return makeError(LOOM_ERROR_LIBRARY,
                     device + ": " + library.tried() + " is cuDNN version " +
                         std::to_string(version) +
                         ", not 9 (the backend API Loom calls)");
  out = std::move(dnn);
  return Error::ok();
}

Error Library::prepare(const art::CudnnConvStep &s, const std::string &at,
                       int64_t maxWorkspace,
                       std::unique_ptr<PreparedStep> &out) {
  auto p = std::make_unique<PreparedConv>();
  p->owned.api = api.get();
  p->step = s;
  Encoding e = encode(s);
  Builder b(*api, p->owned);
  std::vector<Desc> ops = buildOperations(b, e);
  if (b.status != 0)
    return check(b.status, at + "describing the convolution to cuDNN (" +
                               b.failed + ")");
  // The handle (which needs the GPU) only from here: the descriptors above
  // are checked by cuDNN without one.
  if (!handle) {
    Handle h = nullptr;
    if (Error err = check(api->cudnnCreate(&h), "cudnnCreate"))
      return err;
    handle = h;
  }
  Desc graph = b.make(kOperationGraphDescriptor, "the operation graph");
  b.set(graph, kGraphHandle, kTypeHandle, 1, &handle, "its handle");
  b.set(graph, kGraphOps, kTypeBackendDescriptor, int64_t(ops.size()),
        ops.data(), "its operations");
  b.finalize(graph, "finalizing the operation graph");
  if (b.status != 0)
    return check(b.status, at + "describing the convolution to cuDNN (" +
                               b.failed + ")");
  Search search;
  search.operandType = s.operandType;
  for (int32_t mode : {kHeurModeA, kHeurModeFallback})
    if (!p->plan)
      p->plan = planFor(*api, p->owned, graph, handle, mode, maxWorkspace,
                        p->workspaceBytes, search);
  if (!p->plan)
    return makeError(LOOM_ERROR_LIBRARY,
                     device + ": " + at +
                         "cuDNN has no execution plan for the convolution "
                         "graph (" +
                         search.summary() + ")");
  p->uids = {kUidSrc, kUidWeights, kUidDst};
  p->buffers = {s.src, s.weights, s.dst};
  if (s.bias != -1) {
    p->uids.push_back(kUidBias);
    p->buffers.push_back(s.bias);
  }
  out = std::move(p);
  return Error::ok();
}

Error Library::launch(const PreparedStep &step, void *stream,
                      void *const *buffers, void *workspace) const {
  const auto &p = static_cast<const PreparedConv &>(step);
  std::vector<void *> pointers;
  for (int64_t id : p.buffers)
    pointers.push_back(buffers[id]);
  Owned owned{api.get(), {}};
  Builder b(*api, owned);
  Desc pack = b.make(kVariantPackDescriptor, "a variant pack");
  b.set(pack, kVariantPackUniqueIds, kTypeInt64, int64_t(p.uids.size()),
        p.uids.data(), "its unique ids");
  b.set(pack, kVariantPackDataPointers, kTypeVoidPtr,
        int64_t(pointers.size()), pointers.data(), "its data pointers");
  b.set(pack, kVariantPackWorkspace, kTypeVoidPtr, 1, &workspace,
        "its workspace");
  b.finalize(pack, "finalizing the variant pack");
  if (b.status != 0)
    return check(b.status, "a cudnn.conv's variant pack (" + b.failed + ")");
  std::lock_guard<std::mutex> guard(lock);
  if (Error err = check(api->cudnnSetStream(handle, stream), "cudnnSetStream"))
    return err;
  return check(api->cudnnBackendExecute(handle, p.plan, pack),
               "cudnnBackendExecute");
}
