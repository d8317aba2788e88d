//===- SpirvModule.cpp - One entry point's SPIR-V module ------------------===//
//
// Part of Loom. See SpirvModule.h.
//
//===----------------------------------------------------------------------===//

#include "Vulkan/SpirvModule.h"

using namespace loom::rt::spirv;

namespace {

// Opcodes (the SPIR-V specification, "Instructions").
enum : uint32_t {
  OpName = 5,
  OpMemberName = 6,
  OpEntryPoint = 15,
  OpExecutionMode = 16,
  OpFunction = 54,
  OpFunctionEnd = 56,
  OpVariable = 59,
  OpDecorate = 71,
  OpMemberDecorate = 72,
  OpDecorationGroup = 73,
  OpGroupDecorate = 74,
  OpGroupMemberDecorate = 75,
  OpExecutionModeId = 331,
  OpDecorateId = 332,
  OpDecorateString = 5632,
  OpMemberDecorateString = 5633,
};

/// A debug name or decoration: kept when what its first operand names is.
bool isAnnotation(uint32_t opcode) {
  return opcode == OpName || opcode == OpMemberName || opcode == OpDecorate ||
         opcode == OpMemberDecorate || opcode == OpDecorateId ||
         opcode == OpDecorateString || opcode == OpMemberDecorateString;
}

} // namespace

bool EntryPointModules::index(std::vector<uint32_t> words,
                              std::string &error) {
  module = std::move(words);
  if (module.size() < 5 || module[0] != 0x07230203u) {
    error = "not a SPIR-V module (bad magic)";
    return false;
  }
  size_t open = 0;
  bool inFunction = false;
  uint32_t current = 0;
  for (size_t at = 5; at < module.size();) {
    uint32_t count = module[at] >> 16, opcode = module[at] & 0xffff;
    if (count == 0 || at + count > module.size()) {
      error = "a truncated SPIR-V module (word " + std::to_string(at) + ")";
      return false;
    }
    Instruction i{uint32_t(at), count, opcode};
    size_t n = instructions.size();
    instructions.push_back(i);
    at += count;
    if (opcode == OpDecorationGroup || opcode == OpGroupDecorate ||
        opcode == OpGroupMemberDecorate)
      decorationGroups = true;
    if (opcode == OpFunction && count >= 3 && !inFunction) {
      inFunction = true;
      open = n;
      current = operands(i)[1];
      continue;
    }
    if (inFunction) {
      if (opcode == OpFunctionEnd) {
        functions[current] = {open, n};
        inFunction = false;
      }
      continue;
    }
    if (opcode == OpVariable && count >= 4) {
      variables.insert(operands(i)[1]);
      continue;
    }
    if (opcode == OpEntryPoint || opcode == OpExecutionMode ||
        opcode == OpExecutionModeId || isAnnotation(opcode))
      continue;
    moduleWords.insert(operands(i), operands(i) + count - 1);
  }
  if (inFunction) {
    error = "a SPIR-V function with no OpFunctionEnd";
    return false;
  }
  return true;
}

bool EntryPointModules::named(
    uint32_t id, const std::unordered_set<uint32_t> &keptWords,
    const std::unordered_set<uint32_t> &keptVariables,
    const std::unordered_set<uint32_t> &keptFunctions) const {
  if (variables.count(id))
    return keptVariables.count(id);
  if (functions.count(id))
    return keptFunctions.count(id);
  return moduleWords.count(id) || keptWords.count(id);
}

bool EntryPointModules::cut(uint32_t function, std::vector<uint32_t> &out,
                            std::string &error) const {
  const Instruction *entry = nullptr;
  for (const Instruction &i : instructions) {
    if (i.opcode == OpEntryPoint && i.count >= 3 && operands(i)[1] == function)
      entry = &i;
    if (i.opcode == OpFunction)
      break; // entry points precede the functions
  }
  if (!entry || !functions.count(function)) {
    error = "no entry point has function %" + std::to_string(function);
    return false;
  }
  if (decorationGroups) {
    out = module;
    return true;
  }
  // The functions the entry point calls, transitively, and every word they
  // and the entry point hold.
  std::unordered_set<uint32_t> keptFunctions{function}, keptWords;
  keptWords.insert(operands(*entry), operands(*entry) + entry->count - 1);
  std::vector<uint32_t> work{function};
  while (!work.empty()) {
    const Function &f = functions.at(work.back());
    work.pop_back();
    for (size_t n = f.first; n <= f.last; ++n) {
      const Instruction &i = instructions[n];
      for (uint32_t k = 1; k < i.count; ++k) {
        uint32_t w = module[i.at + k];
        keptWords.insert(w);
        if (functions.count(w) && keptFunctions.insert(w).second)
          work.push_back(w);
      }
    }
  }
  std::unordered_set<uint32_t> keptVariables;
  for (uint32_t v : variables)
    if (keptWords.count(v))
      keptVariables.insert(v);

  out.assign(module.begin(), module.begin() + 5);
  auto copy = [&](const Instruction &i) {
    out.insert(out.end(), module.begin() + i.at,
               module.begin() + i.at + i.count);
  };
  for (size_t n = 0; n < instructions.size(); ++n) {
    const Instruction &i = instructions[n];
    const uint32_t *ops = operands(i);
    if (i.opcode == OpFunction) {
      auto f = functions.find(ops[1]);
      if (f != functions.end() && n == f->second.first) {
        if (keptFunctions.count(ops[1]))
          for (size_t k = n; k <= f->second.last; ++k)
            copy(instructions[k]);
        n = f->second.last;
        continue;
      }
    }
    bool keep = true;
    if (i.opcode == OpEntryPoint)
      keep = &i == entry;
    else if (i.opcode == OpExecutionMode || i.opcode == OpExecutionModeId)
      keep = i.count >= 2 && ops[0] == function;
    else if (i.opcode == OpVariable)
      keep = i.count < 3 || !variables.count(ops[1]) ||
             keptVariables.count(ops[1]);
    else if (isAnnotation(i.opcode))
      keep = i.count < 2 ||
             named(ops[0], keptWords, keptVariables, keptFunctions);
    if (keep)
      copy(i);
  }
  return true;
}
