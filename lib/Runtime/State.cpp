//===- State.cpp - Inputs an entry updates in place, kept by a context ----===//
//
// Part of Loom. See State.h.
//
//===----------------------------------------------------------------------===//

#include "State.h"

#include <cstdint>
#include <cstring>

using namespace loom;
using namespace loom::rt;

std::vector<bool> rt::tiedInputs(const artifact::Entry &entry) {
  std::vector<bool> tied(entry.inputs.size(), false);
  for (const artifact::TensorDesc &out : entry.outputs)
    if (out.tiedInput)
      tied[*out.tiedInput] = true;
  return tied;
}

static std::string shapeText(const artifact::TensorDesc &t) {
  std::string s = t.dtype + "[";
  for (size_t i = 0; i < t.shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(t.shape[i]);
  return s + "]";
}

Error rt::checkTiedInputs(const artifact::Manifest &manifest) {
  std::map<std::string, std::pair<const artifact::TensorDesc *, std::string>>
      seen;
  for (const artifact::Entry &e : manifest.entries) {
    std::vector<bool> tied = tiedInputs(e);
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      if (!tied[i])
        continue;
      const artifact::TensorDesc &t = e.inputs[i];
      auto [it, fresh] = seen.try_emplace(t.name, &t, e.name);
      if (fresh || (it->second.first->dtype == t.dtype &&
                    it->second.first->shape == t.shape))
        continue;
      return makeError(LOOM_ERROR_FORMAT,
                       "manifest: state '" + t.name + "' is " +
                           shapeText(*it->second.first) + " in entry '" +
                           it->second.second + "' and " + shapeText(t) +
                           " in entry '" + e.name + "'");
    }
  }
  return Error::ok();
}

StateStore::Tensor &StateStore::tensor(const std::string &name,
                                      int64_t bytes) {
  Tensor &t = tensors[name];
  if (!t.memory) {
    size_t size = size_t(std::max<int64_t>(bytes, 1)) + 63;
    t.memory.reset(new char[size]);
    std::memset(t.memory.get(), 0, size);
    auto address = reinterpret_cast<uintptr_t>(t.memory.get());
    t.data = t.memory.get() + ((64 - address % 64) % 64);
  }
  return t;
}

StateStore::~StateStore() {
  for (auto &[name, t] : tensors)
    for (auto &[device, copy] : t.copies)
      copy.first->deallocate(copy.second);
}

Error StateStore::host(const std::string &name, int64_t bytes,
                       const std::vector<std::unique_ptr<Queue>> &queues,
                       void *&out) {
  Tensor &t = tensor(name, bytes);
  if (t.current != kHost) {
    auto &[device, copy] = t.copies.at(t.current);
    Queue &queue = *queues[size_t(t.current)];
    if (Error err = device->readToHost(queue, t.data, copy.data, bytes))
      return err;
    if (Error err = queue.synchronize())
      return err;
    t.current = kHost;
  }
  out = t.data;
  return Error::ok();
}

Error StateStore::onDevice(const std::string &name, int64_t bytes,
                           int64_t device,
                           const std::vector<std::unique_ptr<Queue>> &queues,
                           void *&out) {
  Tensor &t = tensor(name, bytes);
  auto it = t.copies.find(device);
  if (it == t.copies.end()) {
    Device &owner = queues[size_t(device)]->device();
    Allocation copy;
    if (Error err = owner.allocate(bytes, copy))
      return err;
    it = t.copies.emplace(device, std::make_pair(&owner, copy)).first;
  }
  void *copy = it->second.second.data;
  if (t.current != device) {
    void *host = nullptr;
    if (Error err = this->host(name, bytes, queues, host))
      return err;
    if (Error err = it->second.first->writeFromHost(*queues[size_t(device)],
                                                    copy, host, bytes))
      return err;
    t.current = device;
  }
  out = copy;
  return Error::ok();
}

Error rt::resolveInputs(const artifact::Entry &entry, int64_t device,
                        const std::vector<std::unique_ptr<Queue>> &queues,
                        StateStore &store, const void *const *inputs,
                        void *const *outputs,
                        std::vector<const void *> &resolved,
                        std::vector<bool> &resident) {
  std::vector<bool> tied = tiedInputs(entry);
  resolved.assign(inputs, inputs + entry.inputs.size());
  resident.assign(entry.inputs.size(), false);
  bool own = !queues[size_t(device)]->device().usesHostMemory();
  for (size_t i = 0; i < entry.inputs.size(); ++i) {
    if (!tied[i] || resolved[i])
      continue;
    const artifact::TensorDesc &t = entry.inputs[i];
    void *data = nullptr;
    Error err = own ? store.onDevice(t.name, t.bytes, device, queues, data)
                    : store.host(t.name, t.bytes, queues, data);
    if (err)
      return err;
    resolved[i] = data;
    resident[i] = own;
  }
  for (size_t j = 0; j < entry.outputs.size(); ++j) {
    const artifact::TensorDesc &out = entry.outputs[j];
    if (!out.tiedInput || !outputs[j] || outputs[j] == resolved[*out.tiedInput])
      continue;
    return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                     "output " + std::to_string(j) + " ('" + out.name +
                         "') is input " + std::to_string(*out.tiedInput) +
                         " updated in place: pass a null pointer or the "
                         "input's");
  }
  return Error::ok();
}
