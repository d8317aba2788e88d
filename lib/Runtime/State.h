//===- State.h - Inputs an entry updates in place, kept by a context -*- C++ -*-===//
//
// Part of Loom. An entry's output tied to an input (docs/Artifact.md "State
// updated in place") is that input's memory: the run updates the input in
// place. The caller passes the state itself, or a null pointer for the
// input, and the context then uses its own copy: zero-filled when first
// used, kept between runs, and shared by every entry whose tied input has
// that name (a decoder's prefill and decode entries share their caches).
// On a device with memory of its own (a GPU), the context's copy lives there
// between runs (a decoder's cache is not copied in and out every token); the
// host copy is brought up to date when the caller asks for it
// (loom_context_state) or a run on the host needs it. docs/Runtime.md
// "State".
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_STATE_H
#define LOOM_LIB_RUNTIME_STATE_H

#include "Device.h"
#include "Model.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loom::rt {

/// The inputs of \p entry an output is tied to, by input index.
std::vector<bool> tiedInputs(const artifact::Entry &entry);

/// Every tied input of one name has one dtype and shape across the
/// manifest's entries (they are one state).
Error checkTiedInputs(const artifact::Manifest &manifest);

/// A context's own state tensors, by name: a host copy and, for each
/// device with memory of its own that ran an entry on it, a copy there;
/// one of them is current.
class StateStore {
public:
  StateStore() = default;
  StateStore(const StateStore &) = delete;
  StateStore &operator=(const StateStore &) = delete;
  ~StateStore();

  /// The host copy of the state named \p name of \p bytes bytes (64-byte
  /// aligned, zero-filled when made), brought up to date from the device
  /// copy a run last updated (read on \p queues, the context's queues by
  /// manifest device). The caller may write it: the next run on a device
  /// copies it there.
  Error host(const std::string &name, int64_t bytes,
             const std::vector<std::unique_ptr<Queue>> &queues, void *&out);
  /// The copy on manifest device \p device (of \p queues) that a run
  /// there reads and updates: made on first use (its address then stays
  /// until the store goes: a recorded graph may hold it), and written from
  /// the host (or another device, through the host) when that copy is the
  /// current one.
  Error onDevice(const std::string &name, int64_t bytes, int64_t device,
                 const std::vector<std::unique_ptr<Queue>> &queues,
                 void *&out);

private:
  static constexpr int64_t kHost = -1;
  struct Tensor {
    std::unique_ptr<char[]> memory;
    void *data = nullptr;
    /// Per manifest device: its copy and the device that owns it.
    std::map<int64_t, std::pair<Device *, Allocation>> copies;
    int64_t current = kHost;
  };
  Tensor &tensor(const std::string &name, int64_t bytes);
  std::map<std::string, Tensor> tensors;
};

/// The input pointers of one run of \p entry on manifest device \p device
/// (of \p queues): \p inputs with each null tied input replaced by
/// \p store's state of its name, the device's copy where the device has
/// memory of its own (\p resident marks those: the run neither stages nor
/// reads them back), else the host's. Fails when an output tied to an
/// input is given and is not that input's pointer.
Error resolveInputs(const artifact::Entry &entry, int64_t device,
                    const std::vector<std::unique_ptr<Queue>> &queues,
                    StateStore &store, const void *const *inputs,
                    void *const *outputs, std::vector<const void *> &resolved,
                    std::vector<bool> &resident);

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_STATE_H
