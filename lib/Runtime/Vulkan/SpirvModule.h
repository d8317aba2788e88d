//===- SpirvModule.h - One entry point's SPIR-V module ----------*- C++ -*-===//
//
// Part of Loom. See docs/Runtime.md ("Vulkan"). A Vulkan image is one SPIR-V
// module with an entry point per kernel; a driver parses the whole module
// for every pipeline it creates (Mesa's spirv_to_nir walks every function
// and global of the module, whichever entry point is asked for), so a model
// of n kernels costs O(n^2) at load. EntryPointModules cuts the module down
// to one entry point: what the pipeline of that kernel needs, for a cost
// proportional to the kernel.
//
// Plain data, no Vulkan: linked into libloomrt and into the unit tests.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_RUNTIME_SPIRVMODULE_H
#define LOOM_RUNTIME_SPIRVMODULE_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace loom::rt::spirv {

/// A SPIR-V module indexed once (its instructions, functions, module-scope
/// variables and entry points) so that each entry point's module is cut in
/// time proportional to that entry point's functions plus the module's
/// module-scope instructions.
class EntryPointModules {
public:
  /// Indexes \p module (the SPIR-V specification's "Physical Layout"),
  /// bounds-checked: false with \p error set when it is not a module.
  bool index(std::vector<uint32_t> module, std::string &error);

  /// The module with only the entry point whose function is \p function:
  /// the other OpEntryPoint and OpExecutionMode(Id) instructions, the
  /// functions that function does not call (transitively), the module-scope
  /// variables the kept functions and the kept OpEntryPoint do not name, and
  /// the debug names and decorations of what was dropped are left out. Types
  /// and constants are kept whole and no id is renumbered (the bound stays).
  /// A word that merely equals an id keeps what that id names: the cut may
  /// keep more than needed, never less. A module with decoration groups
  /// (which MLIR never writes) is returned whole. False, with \p error set,
  /// when \p function is no entry point's function.
  bool cut(uint32_t function, std::vector<uint32_t> &out,
           std::string &error) const;

  const std::vector<uint32_t> &words() const { return module; }

private:
  struct Instruction {
    uint32_t at, count, opcode;
  };
  struct Function {
    size_t first, last; // instructions [first, last]
  };
  /// The words after the opcode word of instruction \p i.
  const uint32_t *operands(const Instruction &i) const {
    return module.data() + i.at + 1;
  }
  bool named(uint32_t id, const std::unordered_set<uint32_t> &keptWords,
             const std::unordered_set<uint32_t> &keptVariables,
             const std::unordered_set<uint32_t> &keptFunctions) const;

  std::vector<uint32_t> module;
  std::vector<Instruction> instructions;
  std::unordered_map<uint32_t, Function> functions;
  /// Module-scope OpVariable result ids.
  std::unordered_set<uint32_t> variables;
  /// Every word of the module-scope instructions that are always kept
  /// (capabilities, types, constants...).
  std::unordered_set<uint32_t> moduleWords;
  bool decorationGroups = false;
};

} // namespace loom::rt::spirv

#endif // LOOM_RUNTIME_SPIRVMODULE_H
