//===- DynamicSymbols.h - Libraries opened at run time ----------*- C++ -*-===//
//
// Part of Loom. The one way the runtime opens what it never links (the CUDA
// driver, cuBLASLt, cuDNN, NCCL, the Vulkan loader: docs/Runtime.md): the
// file an environment variable names, else the first of the library's
// sonames that opens; then the library's entry points resolved at once from
// a table (its X-macro list of functions), the first required one missing
// failing the table. What was tried, why it did not open and which symbol
// is missing are recorded here; each opener words them into its own
// diagnostic (what the library is for, how to install or name it).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_DYNAMICSYMBOLS_H
#define LOOM_LIB_RUNTIME_DYNAMICSYMBOLS_H

#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>

namespace loom::rt {

/// One entry of a symbol table: a symbol's name and the function pointer
/// its address goes to. A required symbol not found fails the table; an
/// optional one is left null.
struct Symbol {
  const char *name;
  void **slot;
  bool required;
};

template <typename Fn> Symbol requiredSymbol(const char *name, Fn *&slot) {
  static_assert(std::is_function_v<Fn>, "a symbol table holds functions");
  return {name, reinterpret_cast<void **>(&slot), true};
}

template <typename Fn> Symbol optionalSymbol(const char *name, Fn *&slot) {
  static_assert(std::is_function_v<Fn>, "a symbol table holds functions");
  return {name, reinterpret_cast<void **>(&slot), false};
}

/// Where a table's addresses come from: dlsym on a library, or a driver's
/// own resolver (cuGetProcAddress). Null when the symbol is not there.
using SymbolLookup = std::function<void *(const char *name)>;

/// Fills every slot of \p table from \p lookup, in order. Returns the first
/// required symbol that \p lookup does not find (its slot and those after
/// it are then left as they were), or null when every required one is
/// found.
const char *resolveSymbols(std::initializer_list<Symbol> table,
                           const SymbolLookup &lookup);

/// A shared library opened at run time (dlopen, RTLD_NOW | RTLD_LOCAL),
/// closed with this object unless kept open.
class DynamicLibrary {
public:
  DynamicLibrary() = default;
  DynamicLibrary(const DynamicLibrary &) = delete;
  DynamicLibrary &operator=(const DynamicLibrary &) = delete;
  ~DynamicLibrary();

  /// Opens the file \p variable names when it is set and not empty, else
  /// the first of \p sonames that opens. Returns whether a file opened.
  bool open(const char *variable, std::initializer_list<const char *> sonames);

  bool isOpen() const { return handle != nullptr; }
  /// What was tried, comma-separated: the variable's file, or the sonames
  /// up to the one that opened (every one when none did).
  const std::string &tried() const { return triedNames; }
  /// dlerror's reason why the last file tried did not open.
  const std::string &reason() const { return why; }

  /// The address of \p name in the library, or null.
  void *symbol(const char *name) const;
  /// resolveSymbols on the library's own symbols (dlsym).
  const char *resolve(std::initializer_list<Symbol> table) const;

  /// Leaves the library open when this object goes: NCCL's threads run its
  /// code until the process exits.
  void keepOpen() { owned = false; }

private:
  void *handle = nullptr;
  bool owned = true;
  std::string triedNames, why;
};

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_DYNAMICSYMBOLS_H
