//===- State.h - Inputs an entry updates in place, kept by a context -*- C++ -*-===//
//
// Part of Loom. An entry's output tied to an input (docs/Artifact.md "State
// updated in place") is that input's memory: the run updates the input in
// place. The caller passes the state itself, or a null pointer for the
// input, and the context then uses its own copy: zero-filled when first
// used, kept between runs, and shared by every entry whose tied input has
// that name (a decoder's prefill and decode entries share their caches).
// docs/Runtime.md "State".
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_STATE_H
#define LOOM_LIB_RUNTIME_STATE_H

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

/// A context's own state tensors, by name.
class StateStore {
public:
  /// The state named \p name of \p bytes bytes (64-byte aligned,
  /// zero-filled when made).
  void *get(const std::string &name, int64_t bytes);

private:
  struct Tensor {
    std::unique_ptr<char[]> memory;
    void *data = nullptr;
  };
  std::map<std::string, Tensor> tensors;
};

/// The input pointers of one run of \p entry: \p inputs with each null
/// tied input replaced by \p store's state of its name. Fails when an
/// output tied to an input is given and is not that input's pointer.
Error resolveInputs(const artifact::Entry &entry, StateStore &store,
                    const void *const *inputs, void *const *outputs,
                    std::vector<const void *> &resolved);

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_STATE_H
