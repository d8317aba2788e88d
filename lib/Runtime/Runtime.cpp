//===- Runtime.cpp - The C API of libloomrt -------------------------------===//
//
// Part of Loom. See include/loom-c/Runtime.h and docs/Runtime.md. Loading is
// in two phases (docs/Artifact.md): the file is read and validated first
// (ELF sections, manifest, CPU features, weights and their checksums), and
// only then dlopen'ed; the descriptor it exports must agree with what was
// validated.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace loom::rt;

namespace {

thread_local std::string gLastError;

/// A read-only mapping of a whole file.
struct Mapping {
  const uint8_t *data = nullptr;
  uint64_t size = 0;
  ~Mapping() {
    if (data)
      munmap(const_cast<uint8_t *>(data), size);
  }
  Error map(const std::string &path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return makeError(LOOM_ERROR_IO, "cannot open: " +
                                          std::string(strerror(errno)));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      return makeError(LOOM_ERROR_IO, "not a regular file");
    }
    size = st.st_size;
    if (size == 0) {
      close(fd);
      return makeError(LOOM_ERROR_FORMAT, "empty file");
    }
    void *p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
      return makeError(LOOM_ERROR_IO, "cannot map: " +
                                          std::string(strerror(errno)));
    data = static_cast<const uint8_t *>(p);
    return Error::ok();
  }
};

} // namespace

struct loom_model {
  std::string path;
  Manifest manifest;
  Mapping file, externalWeights;
  const uint8_t *weights = nullptr;
  uint64_t weightsSize = 0;
  std::string source;
  std::map<std::string, WeightView> views;
  /// Per entry: each buffer's size, and the address of each weight buffer.
  std::vector<std::vector<int64_t>> bufferBytes;
  std::vector<std::vector<void *>> constants;
  void *library = nullptr;
  int threads = 0;
  int64_t maxArena = 0;

  ~loom_model() {
    // The prepared steps hold oneDNN objects, not artifact code; the
    // library goes last.
    manifest.entries.clear();
    if (library)
      dlclose(library);
  }
};

struct loom_context {
  const loom_model *model;
  void *arena = nullptr;
  std::vector<void *> buffers;
  std::vector<void *> kernelArgs;
  /// LOOM_PROFILE set at creation: seconds per (entry, step), printed to
  /// stderr when the context is freed.
  bool profile = false;
  std::vector<std::vector<double>> stepSeconds;
  ~loom_context();
};

loom_context::~loom_context() {
  if (profile) {
    struct Row {
      double seconds;
      size_t entry, step;
    };
    std::vector<Row> rows;
    double total = 0;
    for (size_t e = 0; e < stepSeconds.size(); ++e)
      for (size_t s = 0; s < stepSeconds[e].size(); ++s) {
        rows.push_back({stepSeconds[e][s], e, s});
        total += stepSeconds[e][s];
      }
    std::sort(rows.begin(), rows.end(),
              [](const Row &a, const Row &b) { return a.seconds > b.seconds; });
    std::fprintf(stderr, "loomrt profile (all runs): %.3f ms in steps\n",
                 total * 1e3);
    static const char *const kOps[] = {"kernel", "onednn.conv2d",
                                       "onednn.matmul", "openblas.sgemm",
                                       "copy", "branch", "jump",
                                       "onednn.conv2d_filter_grad",
                                       "onednn.pool2d", "onednn.concat",
                                       "onednn.binary"};
    for (const Row &r : rows) {
      if (r.seconds <= 0)
        continue;
      const StepSpec &s = model->manifest.entries[r.entry].steps[r.step];
      std::fprintf(stderr, "  %5.1f%% %10.3f ms  %s step %zu %s %s\n",
                   total > 0 ? 100 * r.seconds / total : 0.0, r.seconds * 1e3,
                   model->manifest.entries[r.entry].name.c_str(), r.step,
                   kOps[int(s.op)], s.kernel.c_str());
    }
  }
  std::free(arena);
}

namespace {

loom_status report(const Error &e, const std::string &where) {
  gLastError = where.empty() ? e.message : where + ": " + e.message;
  return e.status;
}

/// Binds weight buffers and sizes every buffer of every entry.
Error bindBuffers(loom_model &m) {
  for (const EntrySpec &e : m.manifest.entries) {
    std::vector<int64_t> bytes;
    std::vector<void *> constants;
    for (const BufferSpec &b : e.buffers) {
      void *address = nullptr;
      int64_t size = b.bytes;
      if (b.kind == BufferSpec::Kind::Weight) {
        auto it = m.views.find(b.weight);
        if (it == m.views.end())
          return makeError(LOOM_ERROR_FORMAT,
                           "manifest: entry '" + e.name +
                               "' reads weight '" + b.weight +
                               "', which the weights do not hold");
        address = const_cast<uint8_t *>(it->second.data);
        size = it->second.bytes;
      }
      bytes.push_back(size);
      constants.push_back(address);
    }
    m.maxArena = std::max(m.maxArena, e.arenaBytes);
    m.bufferBytes.push_back(std::move(bytes));
    m.constants.push_back(std::move(constants));
  }
  return Error::ok();
}

/// The sizes a library step reads and writes fit its buffers.
Error checkStepSizes(const loom_model &m, size_t entry, size_t index) {
  const EntrySpec &e = m.manifest.entries[entry];
  const StepSpec &s = e.steps[index];
  const std::vector<int64_t> &bytes = m.bufferBytes[entry];
  auto need = [&](int64_t id, int64_t n, const char *what) -> Error {
    if (id != -1 && bytes[id] < n)
      return makeError(LOOM_ERROR_FORMAT,
                       "manifest: entry '" + e.name + "' step " +
                           std::to_string(index) + ": " + what + " needs " +
                           std::to_string(n) + " bytes, buffer " +
                           std::to_string(id) + " has " +
                           std::to_string(bytes[id]));
    return Error::ok();
  };
  Error err;
  switch (s.op) {
  case StepSpec::Op::Conv2d:
  case StepSpec::Op::Conv2dFilterGrad:
  case StepSpec::Op::Matmul:
    if ((err = need(s.src, f32Bytes(s.srcShape), "src")) ||
        (err = need(s.weights, f32Bytes(s.weightsShape), "weights")) ||
        (err = need(s.dst, f32Bytes(s.dstShape), "dst")) ||
        (err = need(s.sum, f32Bytes(s.dstShape), "sum")))
      return err;
    return need(s.bias,
                4 * (s.op != StepSpec::Op::Matmul ? s.dstShape[1]
                                                  : s.dstShape.back()),
                "bias");
  case StepSpec::Op::Pool2d:
    if ((err = need(s.src, f32Bytes(s.srcShape), "src")))
      return err;
    return need(s.dst, f32Bytes(s.dstShape), "dst");
  case StepSpec::Op::Binary:
    if ((err = need(s.src, f32Bytes(s.dstShape), "src0")) ||
        (err = need(s.weights, f32Bytes(s.dstShape), "src1")))
      return err;
    return need(s.dst, f32Bytes(s.dstShape), "dst");
  case StepSpec::Op::Concat: {
    int64_t plane = s.dstShape[0] * s.dstShape[2] * s.dstShape[3];
    for (size_t i = 0; i < s.args.size(); ++i)
      if ((err = need(s.args[i], 4 * plane * s.srcChannels[i], "a source")))
        return err;
    return need(s.dst, f32Bytes(s.dstShape), "dst");
  }
  case StepSpec::Op::Sgemm:
    if ((err = need(s.a, f32Bytes(s.aShape) * s.batch, "a")) ||
        (err = need(s.b, f32Bytes(s.bShape), "b")))
      return err;
    return need(s.c, 4 * s.aShape[0] * s.bShape[1] * s.batch, "c");
  case StepSpec::Op::Copy:
    if (bytes[s.src] != bytes[s.dst])
      return makeError(LOOM_ERROR_FORMAT,
                       "manifest: entry '" + e.name + "' step " +
                           std::to_string(index) +
                           ": a copy between buffers of different sizes");
    return Error::ok();
  case StepSpec::Op::Branch:
    return need(s.cond, 1, "the condition");
  case StepSpec::Op::Kernel:
  case StepSpec::Op::Jump:
    return Error::ok();
  }
  return Error::ok();
}

Error loadWeights(loom_model &m, const loom_model_options *options,
                  const std::map<std::string, Section> &sections) {
  const Manifest &man = m.manifest;
  if (man.storage == "none")
    return Error::ok();
  if (man.storage == "embedded") {
    auto it = sections.find(".loom_weights");
    if (it == sections.end())
      return makeError(LOOM_ERROR_FORMAT,
                       "the manifest says the weights are embedded, but "
                       "there is no .loom_weights section");
    m.weights = m.file.data + it->second.offset;
    m.weightsSize = it->second.size;
  } else {
    std::string path;
    if (options && options->weights_path) {
      path = options->weights_path;
    } else {
      size_t slash = m.path.rfind('/');
      path = (slash == std::string::npos ? std::string()
                                         : m.path.substr(0, slash + 1)) +
             man.file;
    }
    if (Error err = m.externalWeights.map(path))
      return makeError(err.status, path + ": " + err.message);
    m.weights = m.externalWeights.data;
    m.weightsSize = m.externalWeights.size;
  }
  return bindWeights(m.weights, m.weightsSize, man, m.views);
}

/// Phase two: the code. The descriptor must agree with the file.
Error openLibrary(loom_model &m, const std::map<std::string, Section> &sections) {
  char resolved[PATH_MAX];
  if (!realpath(m.path.c_str(), resolved))
    return makeError(LOOM_ERROR_IO, "cannot resolve the path");
  m.library = dlopen(resolved, RTLD_NOW | RTLD_LOCAL);
  if (!m.library)
    return makeError(LOOM_ERROR_LIBRARY,
                     std::string("dlopen failed: ") + dlerror());
  auto get = reinterpret_cast<loom_artifact_v1_fn>(
      dlsym(m.library, "loom_artifact_v1"));
  if (!get)
    return makeError(LOOM_ERROR_FORMAT, "no loom_artifact_v1 function");
  const loom_artifact_descriptor *d = get();
  if (!d || d->magic != LOOM_ARTIFACT_MAGIC)
    return makeError(LOOM_ERROR_FORMAT, "bad artifact descriptor");
  if (d->abi_version != LOOM_ARTIFACT_ABI_VERSION)
    return makeError(LOOM_ERROR_VERSION,
                     "artifact ABI version " +
                         std::to_string(d->abi_version) +
                         "; this runtime loads version 1");
  const Section &man = sections.at(".loom_manifest");
  if (d->manifest_size != man.size ||
      std::memcmp(d->manifest, m.file.data + man.offset, man.size) != 0)
    return makeError(LOOM_ERROR_FORMAT,
                     "the loaded manifest differs from the file's");
  std::map<std::string, loom_kernel_fn> kernels;
  for (uint64_t i = 0; i < d->num_kernels; ++i)
    kernels[d->kernels[i].name] = d->kernels[i].fn;
  for (EntrySpec &e : m.manifest.entries)
    for (StepSpec &s : e.steps) {
      if (s.op != StepSpec::Op::Kernel)
        continue;
      auto it = kernels.find(s.kernel);
      if (it == kernels.end() || !it->second)
        return makeError(LOOM_ERROR_FORMAT,
                         "manifest: entry '" + e.name + "' runs kernel '" +
                             s.kernel + "', which the artifact lacks");
      s.fn = it->second;
    }
  if (d->source)
    m.source.assign(d->source, d->source_size);
  return Error::ok();
}

Error load(loom_model &m, const loom_model_options *options) {
  if (Error err = m.file.map(m.path))
    return err;
  std::map<std::string, Section> sections;
  if (Error err = readElfSections(m.file.data, m.file.size, sections))
    return err;
  auto man = sections.find(".loom_manifest");
  if (man == sections.end())
    return makeError(LOOM_ERROR_FORMAT,
                     "no .loom_manifest section: not a Loom artifact");
  if (Error err = parseManifest(
          std::string_view((const char *)m.file.data + man->second.offset,
                           man->second.size),
          m.manifest))
    return err;
  if (Error err = checkCpuFeatures(m.manifest.features))
    return err;
  if (Error err = loadWeights(m, options, sections))
    return err;
  if (Error err = bindBuffers(m))
    return err;
  for (size_t e = 0; e < m.manifest.entries.size(); ++e)
    for (size_t s = 0; s < m.manifest.entries[e].steps.size(); ++s)
      if (Error err = checkStepSizes(m, e, s))
        return err;
  if (Error err = openLibrary(m, sections))
    return err;
  setThreads(m.threads);
  for (size_t e = 0; e < m.manifest.entries.size(); ++e)
    if (Error err = prepareLibrarySteps(m.manifest.entries[e],
                                        m.bufferBytes[e], m.constants[e]))
      return err;
  return Error::ok();
}

bool validEntry(const loom_model *m, int64_t entry) {
  return m && entry >= 0 && entry < int64_t(m->manifest.entries.size());
}

loom_status describe(const std::vector<TensorSpec> &tensors, int64_t index,
                     loom_tensor_desc *desc) {
  if (index < 0 || index >= int64_t(tensors.size()) || !desc)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "no tensor " + std::to_string(index)),
                  "");
  const TensorSpec &t = tensors[index];
  *desc = {t.name.c_str(), t.dtype.c_str(), int64_t(t.shape.size()),
           t.shape.data(), t.bytes};
  return LOOM_OK;
}

} // namespace

extern "C" {

const char *loom_last_error(void) { return gLastError.c_str(); }

loom_status loom_model_load(const char *path,
                            const loom_model_options *options,
                            loom_model **model) {
  if (!path || !model)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_model_load needs a path and a result"),
                  "");
  *model = nullptr;
  auto m = std::make_unique<loom_model>();
  m->path = path;
  m->threads = options ? options->num_threads : 0;
  if (Error err = load(*m, options))
    return report(err, path);
  *model = m.release();
  gLastError.clear();
  return LOOM_OK;
}

void loom_model_free(loom_model *model) { delete model; }

int64_t loom_model_num_entries(const loom_model *model) {
  return model ? int64_t(model->manifest.entries.size()) : 0;
}

const char *loom_model_entry_name(const loom_model *model, int64_t entry) {
  return validEntry(model, entry)
             ? model->manifest.entries[entry].name.c_str()
             : nullptr;
}

int64_t loom_model_find_entry(const loom_model *model, const char *name) {
  if (!model || !name)
    return -1;
  for (size_t i = 0; i < model->manifest.entries.size(); ++i)
    if (model->manifest.entries[i].name == name)
      return int64_t(i);
  return -1;
}

int64_t loom_entry_num_inputs(const loom_model *model, int64_t entry) {
  return validEntry(model, entry)
             ? int64_t(model->manifest.entries[entry].inputs.size())
             : -1;
}

int64_t loom_entry_num_outputs(const loom_model *model, int64_t entry) {
  return validEntry(model, entry)
             ? int64_t(model->manifest.entries[entry].outputs.size())
             : -1;
}

loom_status loom_entry_input(const loom_model *model, int64_t entry,
                             int64_t index, loom_tensor_desc *desc) {
  if (!validEntry(model, entry))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT, "no such entry"), "");
  return describe(model->manifest.entries[entry].inputs, index, desc);
}

loom_status loom_entry_output(const loom_model *model, int64_t entry,
                              int64_t index, loom_tensor_desc *desc) {
  if (!validEntry(model, entry))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT, "no such entry"), "");
  return describe(model->manifest.entries[entry].outputs, index, desc);
}

const char *loom_model_source(const loom_model *model, size_t *size) {
  if (!model || model->source.empty())
    return nullptr;
  if (size)
    *size = model->source.size();
  return model->source.data();
}

const void *loom_model_weights(const loom_model *model, size_t *size) {
  if (!model || !model->weights)
    return nullptr;
  if (size)
    *size = model->weightsSize;
  return model->weights;
}

loom_status loom_context_create(const loom_model *model,
                                loom_context **context) {
  if (!model || !context)
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_context_create needs a model"),
                  "");
  auto c = std::make_unique<loom_context>();
  c->model = model;
  if (const char *p = std::getenv("LOOM_PROFILE"); p && *p && *p != '0') {
    c->profile = true;
    for (const EntrySpec &e : model->manifest.entries)
      c->stepSeconds.emplace_back(e.steps.size(), 0.0);
  }
  size_t bytes = (size_t(model->maxArena) + 63) / 64 * 64;
  if (bytes) {
    c->arena = std::aligned_alloc(64, bytes);
    if (!c->arena)
      return report(makeError(LOOM_ERROR_IO,
                              "cannot allocate the arena (" +
                                  std::to_string(bytes) + " bytes)"),
                    model->path);
  }
  *context = c.release();
  return LOOM_OK;
}

void loom_context_free(loom_context *context) { delete context; }

loom_status loom_run(loom_context *context, int64_t entry,
                     const void *const *inputs, void *const *outputs) {
  if (!context || !validEntry(context->model, entry))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_run needs a context and an entry"),
                  "");
  const loom_model &m = *context->model;
  const EntrySpec &e = m.manifest.entries[entry];
  if ((!e.inputs.empty() && !inputs) || (!e.outputs.empty() && !outputs))
    return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                            "loom_run needs the entry's inputs and outputs"),
                  m.path);
  std::vector<void *> &buffers = context->buffers;
  buffers.assign(e.buffers.size(), nullptr);
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    const BufferSpec &b = e.buffers[i];
    switch (b.kind) {
    case BufferSpec::Kind::Input:
      buffers[i] = const_cast<void *>(inputs[b.index]);
      break;
    case BufferSpec::Kind::Output:
      buffers[i] = outputs[b.index];
      break;
    case BufferSpec::Kind::Weight:
      buffers[i] = m.constants[entry][i];
      break;
    case BufferSpec::Kind::Arena:
      buffers[i] = static_cast<char *>(context->arena) + b.offset;
      break;
    }
    if (!buffers[i] && m.bufferBytes[entry][i] > 0)
      return report(makeError(LOOM_ERROR_INVALID_ARGUMENT,
                              "a null input or output pointer"),
                    m.path);
  }
  setThreads(m.threads);
  for (size_t index = 0, next; index < e.steps.size(); index = next) {
    const StepSpec &s = e.steps[index];
    next = index + 1;
    auto start = context->profile ? std::chrono::steady_clock::now()
                                  : std::chrono::steady_clock::time_point();
    switch (s.op) {
    case StepSpec::Op::Kernel: {
      std::vector<void *> &args = context->kernelArgs;
      args.clear();
      for (int64_t id : s.args)
        args.push_back(buffers[id]);
      runKernel(s.fn, args.data(), s.range);
      break;
    }
    case StepSpec::Op::Copy:
      std::memmove(buffers[s.dst], buffers[s.src],
                   m.bufferBytes[entry][s.dst]);
      break;
    case StepSpec::Op::Branch: // an i1 tensor holds a byte per element
      if (*static_cast<const unsigned char *>(buffers[s.cond]) == 0)
        next = s.target;
      break;
    case StepSpec::Op::Jump:
      next = s.target;
      break;
    default:
      if (Error err = s.library->run(buffers.data()))
        return report(err, m.path);
    }
    if (context->profile)
      context->stepSeconds[entry][index] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        start)
              .count();
  }
  return LOOM_OK;
}

} // extern "C"
