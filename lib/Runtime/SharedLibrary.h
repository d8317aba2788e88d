//===- SharedLibrary.h - Opening a GPU library at run time ------*- C++ -*-===//
//
// Part of Loom. The CUDA device's libraries (cuBLASLt, cuDNN) are opened at
// run time, never linked: the file an environment variable names, else the
// first of the library's sonames that opens.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_SHAREDLIBRARY_H
#define LOOM_LIB_RUNTIME_SHAREDLIBRARY_H

#include <cstdlib>
#include <dlfcn.h>
#include <initializer_list>
#include <string>

namespace loom::rt {

/// dlopen's handle of the file \p variable names (when set and not empty),
/// else of the first of \p names that opens; null when none does. \p tried
/// gets what was tried, comma-separated, for the diagnostic.
inline void *openSharedLibrary(const char *variable,
                               std::initializer_list<const char *> names,
                               std::string &tried) {
  if (const char *path = std::getenv(variable); path && *path) {
    tried = path;
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  for (const char *name : names) {
    tried += (tried.empty() ? "" : ", ") + std::string(name);
    if (void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL))
      return library;
  }
  return nullptr;
}

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_SHAREDLIBRARY_H
