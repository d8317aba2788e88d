//===- ThreadsOption.h - The runtime's --threads of a tool ------*- C++ -*-===//
//
// Part of Loom. `--threads N`, the runtime threads of a tool that runs
// artifacts (loom-generate, loom-serve). libLLVM registers an option of
// that name of its own (Polly's, not one a Loom tool's users can reach:
// HideUnrelatedOptions), which is removed first, so that the name reads as
// every other Loom tool's thread count.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_COMMON_THREADSOPTION_H
#define LOOM_TOOLS_COMMON_THREADSOPTION_H

#include "llvm/Support/CommandLine.h"

namespace loom::tools {

/// Registers --threads in \p category (call from main, before parsing).
inline llvm::cl::opt<unsigned> &
registerThreadsOption(llvm::cl::OptionCategory &category) {
  auto &options = llvm::cl::getRegisteredOptions();
  if (llvm::cl::Option *theirs = options.lookup("threads"))
    theirs->removeArgument();
  static llvm::cl::opt<unsigned> mine(
      "threads", llvm::cl::desc("Threads of the runtime (0: the hardware's)"),
      llvm::cl::init(0), llvm::cl::cat(category));
  return mine;
}

} // namespace loom::tools

#endif // LOOM_TOOLS_COMMON_THREADSOPTION_H
