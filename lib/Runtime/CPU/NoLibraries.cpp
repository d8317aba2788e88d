//===- NoLibraries.cpp - The CPU device without oneDNN and OpenBLAS -------===//
//
// Part of Loom. See Cpu.h: compiled instead of Library.cpp where oneDNN or
// OpenBLAS is absent at configure time (lib/Runtime/CMakeLists.txt). The
// CPU then runs generated kernels, copies, control steps and libloomrt's own
// dynamic steps (DynamicSteps.cpp); a program with a library step is refused
// at load, naming the step.
//
//===----------------------------------------------------------------------===//

#include "CPU/Cpu.h"

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;

Error cpu::createEngine(Engine &) { return Error::ok(); }

void cpu::setLibraryThreads(int) {}

Error cpu::prepareProgram(const Engine &, const CpuPolicy &,
                          const std::unordered_set<const void *> &,
                          const art::Entry &entry,
                          const art::Program &program,
                          const std::vector<int64_t> &,
                          const std::vector<void *> &,
                          std::vector<std::unique_ptr<PreparedStep>> &out,
                          std::map<int64_t, std::string> &) {
  out.clear();
  for (size_t i = 0; i < program.steps.size(); ++i) {
    out.emplace_back(prepareDynamicStep(program.steps[i]));
    art::StepKind kind = program.steps[i].kind();
    if (!out.back() && kind != art::StepKind::Kernel &&
        kind != art::StepKind::Copy && kind != art::StepKind::Branch &&
        kind != art::StepKind::Jump)
      return makeError(LOOM_ERROR_LIBRARY,
                       "entry '" + entry.name + "' step " + std::to_string(i) +
                           " (" + std::string(art::stepKindName(kind)) +
                           "): this libloomrt was built without oneDNN and "
                           "OpenBLAS, which run the CPU's library steps");
  }
  return Error::ok();
}
