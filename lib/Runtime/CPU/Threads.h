//===- Threads.h - The CPU device's thread policy for library steps -*- C++
//-*-===//
//
// Part of Loom. Layer 2 of lib/Runtime/CPU's library steps (above Cpu.h and
// Policy.h): which oneDNN steps run on the calling thread alone (too little
// work to fork for) and how: the team's size set for a scope, and a step
// made and run on one thread. Kernels fork through Cpu.h's forkTeam (or
// forkShares over it) and threadsFor; the device's team and its binding are CpuDevice.cpp's.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_THREADS_H
#define LOOM_LIB_RUNTIME_CPU_THREADS_H

#include "CPU/Cpu.h"
#include "CPU/Policy.h"

#include <memory>

namespace loom::rt::cpu {

/// OpenMP's team size for the calling thread, set for a scope.
class TeamSize {
public:
  explicit TeamSize(int n);
  ~TeamSize();
  TeamSize(const TeamSize &) = delete;
  TeamSize &operator=(const TeamSize &) = delete;

private:
  int before;
};

/// Whether \p step runs alone on the calling thread under \p policy: a
/// oneDNN step of little work on a device of more than one thread, unless
/// the policy keeps every step on the team (LOOM_ONEDNN_ALONE=0).
bool runsAlone(const artifact::Step &step, const CpuPolicy &policy);

/// \p step run on the calling thread alone; it must have been made under a
/// TeamSize of 1 too, so that its primitive plans for one thread (oneDNN's
/// convolutions fix their thread count when made, its other primitives
/// read OpenMP's when run).
std::unique_ptr<PreparedStep> onOneThread(std::unique_ptr<PreparedStep> step);

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_THREADS_H
