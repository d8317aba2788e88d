//===- ServedModel.cpp - An artifact as loom-serve serves it --------------===//
//
// Part of Loom. See ServedModel.h.
//
//===----------------------------------------------------------------------===//

#include "ServedModel.h"

#include "HostTensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cstring>

using namespace loom;
using namespace loom::serve;

namespace {

/// An entry's inputs and outputs.
struct Signature {
  std::vector<loom_tensor_desc> inputs, outputs;
};

Signature signatureOf(const loom_model *model, int64_t entry) {
  Signature s;
  s.inputs.resize(loom_entry_num_inputs(model, entry));
  s.outputs.resize(loom_entry_num_outputs(model, entry));
  for (size_t i = 0; i < s.inputs.size(); ++i)
    loom_entry_input(model, entry, i, &s.inputs[i]);
  for (size_t i = 0; i < s.outputs.size(); ++i)
    loom_entry_output(model, entry, i, &s.outputs[i]);
  return s;
}

/// The dimension 0 every input and output of \p s shares, or -1 (a rank-0
/// tensor, or two that differ).
int64_t commonBatch(const Signature &s) {
  int64_t batch = -1;
  for (const auto *list : {&s.inputs, &s.outputs})
    for (const loom_tensor_desc &d : *list) {
      if (d.rank == 0 || (batch != -1 && d.shape[0] != batch) ||
          d.shape[0] <= 0)
        return -1;
      batch = d.shape[0];
    }
  return batch;
}

bool sameBeyondBatch(const std::vector<loom_tensor_desc> &a,
                     const std::vector<loom_tensor_desc> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (llvm::StringRef(a[i].name) != b[i].name ||
        llvm::StringRef(a[i].dtype) != b[i].dtype || a[i].rank != b[i].rank)
      return false;
    for (int64_t d = 1; d < a[i].rank; ++d)
      if (a[i].shape[d] != b[i].shape[d])
        return false;
  }
  return true;
}

/// Whether \p entry keeps state between runs (an output tied to an input)
/// or has an output of data-dependent length: neither is a batch of
/// independent rows.
bool hasStateOrLengths(const loom_model *model, int64_t entry) {
  for (int64_t o = 0; o < loom_entry_num_outputs(model, entry); ++o)
    if (loom_entry_output_tied_input(model, entry, o) >= 0 ||
        loom_entry_output_length(model, entry, o, nullptr) >= 0)
      return true;
  return false;
}

std::vector<TensorSpec> specsOf(const std::vector<loom_tensor_desc> &descs,
                                int64_t batch) {
  std::vector<TensorSpec> specs;
  for (const loom_tensor_desc &d : descs) {
    TensorSpec s;
    s.name = d.name;
    s.kind = tools::elemKindOfDtype(d.dtype).value_or(ElemKind::F32);
    s.shape.assign(d.shape, d.shape + d.rank);
    s.rowBytes = d.bytes;
    if (batch > 0) {
      s.shape[0] = -1;
      s.rowBytes = d.bytes / batch;
    }
    specs.push_back(std::move(s));
  }
  return specs;
}

} // namespace

llvm::Expected<std::unique_ptr<ServedModel>>
ServedModel::create(const std::string &name, const std::string &path,
                    loom_model *model, int64_t maxBatch) {
  std::unique_ptr<ServedModel> m(new ServedModel());
  m->sig.name = name;
  m->artifactPath = path;
  m->model = model;
  if (llvm::Error e = m->chooseEntries(maxBatch))
    return std::move(e);
  if (loom_context_create(m->model, &m->context) != LOOM_OK)
    return llvm::createStringError(loom_last_error());
  return std::move(m);
}

ServedModel::~ServedModel() {
  if (context)
    loom_context_free(context);
  if (model)
    loom_model_free(model);
}

/// The served entry is @main, else the artifact's first; the batch range
/// is every entry with its inputs and outputs but for dimension 0, which
/// all of an entry's tensors share (docs/tools/loom-serve.md).
llvm::Error ServedModel::chooseEntries(int64_t cap) {
  int64_t primary = loom_model_find_entry(model, "main");
  if (primary < 0)
    primary = 0;
  if (loom_model_num_entries(model) == 0)
    return llvm::createStringError("%s: the artifact has no entry",
                                   artifactPath.c_str());
  bool stateful = false;
  for (int64_t o = 0; o < loom_entry_num_outputs(model, primary); ++o)
    stateful |= loom_entry_output_tied_input(model, primary, o) >= 0;
  if (stateful)
    return llvm::createStringError(
        "%s: entry '%s' keeps state between runs (a tied output); the "
        "KServe endpoint serves stateless entries only",
        artifactPath.c_str(), loom_model_entry_name(model, primary));
  Signature base = signatureOf(model, primary);
  int64_t batch = hasStateOrLengths(model, primary) ? -1 : commonBatch(base);
  entries.push_back({primary, batch > 0 ? batch : 1});
  if (batch > 0) {
    for (int64_t e = 0; e < loom_model_num_entries(model); ++e) {
      Signature s = signatureOf(model, e);
      int64_t b = commonBatch(s);
      if (e == primary || b <= 0 || hasStateOrLengths(model, e) ||
          !sameBeyondBatch(base.inputs, s.inputs) ||
          !sameBeyondBatch(base.outputs, s.outputs) ||
          llvm::any_of(entries, [&](const Entry &x) { return x.batch == b; }))
        continue;
      entries.push_back({e, b});
    }
    llvm::sort(entries, [](const Entry &a, const Entry &b) {
      return a.batch < b.batch;
    });
  }
  if (entries.size() > 1)
    for (const Entry &e : entries)
      sig.batchSizes.push_back(e.batch);
  int64_t specBatch = batched() ? batch : -1;
  sig.inputs = specsOf(base.inputs, specBatch);
  sig.outputs = specsOf(base.outputs, specBatch);
  sig.maxBatch = batched() ? entries.back().batch : 1;
  if (batched() && cap > 0)
    sig.maxBatch = std::min(sig.maxBatch, cap);
  return llvm::Error::success();
}

llvm::Expected<int64_t>
ServedModel::run(int64_t rows, std::vector<std::vector<uint8_t>> &inputs,
                 std::vector<std::vector<uint8_t>> &outputs) {
  auto entry =
      llvm::find_if(entries, [&](const Entry &e) { return e.batch >= rows; });
  if (entry == entries.end())
    return llvm::createStringError("%lld rows are more than the largest batch",
                                   static_cast<long long>(rows));
  int64_t scale = batched() ? entry->batch : 1;
  std::vector<const void *> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].resize(scale * sig.inputs[i].rowBytes, 0);
    in.push_back(inputs[i].data());
  }
  outputs.assign(sig.outputs.size(), {});
  std::vector<void *> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].resize(scale * sig.outputs[i].rowBytes);
    out.push_back(outputs[i].data());
  }
  if (loom_run(context, entry->index, in.data(), out.data()) != LOOM_OK)
    return llvm::createStringError(loom_last_error());
  if (batched())
    for (size_t i = 0; i < outputs.size(); ++i)
      outputs[i].resize(rows * sig.outputs[i].rowBytes);
  return entry->batch;
}
