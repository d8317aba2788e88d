//===- Binding.cpp - The CPU device's team on CPUs of its own -------------===//
//
// Part of Loom. See Binding.h. A calling thread's state is thread-local:
// whether its team is bound, the CPU the team gave it, and, while a
// CallerPin scope holds it there, the CPUs it had before.
//
//===----------------------------------------------------------------------===//

#include "CPU/Binding.h"
#include "CPU/Cpu.h"

#include <sched.h>
#include <vector>

using namespace loom::rt;

namespace {

/// What bindTeam hands each thread of the team.
struct TeamBinding {
  /// The CPU the calling thread (team thread 0) runs on when bound.
  int self;
  /// The CPUs the workers (team threads 1, 2, ...) go to, in order: the
  /// calling thread's allowed CPUs less `self`.
  std::vector<int> cpus;
};

void bindWorker(void *data) {
  auto *binding = static_cast<TeamBinding *>(data);
  int t = omp_get_thread_num();
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(t == 0 ? binding->self
                 : binding->cpus[size_t(t - 1) % binding->cpus.size()],
          &set);
  sched_setaffinity(0, sizeof(set), &set);
}

/// The calling thread's binding.
struct Caller {
  /// Its team was bound (or binding it was given up: once is enough).
  bool teamBound = false;
  /// The CPU its team gave it; -1: none.
  int cpu = -1;
  /// CallerPin scopes open on it, and whether it is on `cpu` now with
  /// `before` to go back to.
  int scopes = 0;
  bool pinned = false;
  cpu_set_t before;
};
thread_local Caller caller;

} // namespace

void cpu::bindTeam(const CpuPolicy &policy) {
  int threads = policy.threads;
  if (threads <= 1 || caller.teamBound || !policy.bindTeam)
    return;
  caller.teamBound = true;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 ||
      CPU_COUNT(&allowed) < threads)
    return;
  TeamBinding binding;
  binding.self = sched_getcpu();
  if (binding.self < 0)
    return;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed) && c != binding.self)
      binding.cpus.push_back(c);
  if (binding.cpus.empty())
    return;
  GOMP_parallel(bindWorker, &binding, unsigned(threads), 0);
  // The calling thread is on binding.self now, until the (outermost)
  // CallerPin scope open or next to end gives it back `allowed`: a team run
  // outside any scope is undone by the next call.
  caller.cpu = binding.self;
  if (!caller.pinned) {
    caller.before = allowed;
    caller.pinned = true;
  }
}

cpu::CallerPin::CallerPin() {
  if (caller.scopes++ > 0 || caller.cpu < 0 || caller.pinned)
    return;
  if (sched_getaffinity(0, sizeof(caller.before), &caller.before) != 0)
    return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(caller.cpu, &set);
  caller.pinned = sched_setaffinity(0, sizeof(set), &set) == 0;
}

cpu::CallerPin::~CallerPin() {
  if (--caller.scopes > 0 || !caller.pinned)
    return;
  sched_setaffinity(0, sizeof(caller.before), &caller.before);
  caller.pinned = false;
}
