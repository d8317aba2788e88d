//===- DynamicSymbols.cpp - Libraries opened at run time ------------------===//
//
// Part of Loom. See DynamicSymbols.h.
//
//===----------------------------------------------------------------------===//

#include "DynamicSymbols.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace loom::rt;

const char *loom::rt::resolveSymbols(std::initializer_list<Symbol> table,
                                     const SymbolLookup &lookup) {
  for (const Symbol &s : table) {
    void *address = lookup(s.name);
    if (!address && s.required)
      return s.name;
    *s.slot = address;
  }
  return nullptr;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle && owned)
    dlclose(handle);
}

bool DynamicLibrary::open(const char *variable,
                          std::initializer_list<const char *> sonames) {
  auto tryFile = [&](const char *file) {
    triedNames += (triedNames.empty() ? "" : ", ") + std::string(file);
    handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *error = dlerror();
      why = error ? error : "not found";
    }
    return handle != nullptr;
  };
  if (const char *path = variable ? std::getenv(variable) : nullptr;
      path && *path)
    return tryFile(path);
  for (const char *name : sonames)
    if (tryFile(name))
      return true;
  return false;
}

void *DynamicLibrary::symbol(const char *name) const {
  return handle ? dlsym(handle, name) : nullptr;
}

const char *DynamicLibrary::resolve(std::initializer_list<Symbol> table) const {
  return resolveSymbols(table, [&](const char *name) { return symbol(name); });
}
