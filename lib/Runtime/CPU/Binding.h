//===- Binding.h - The CPU device's team on CPUs of its own -----*- C++ -*-===//
//
// Part of Loom. Where the threads of the CPU device's OpenMP team run: each
// team is bound once, its workers each to a CPU of their own and its
// calling thread to the CPU it ran on; and the calling thread keeps that
// CPU only for the duration of a C API call (CallerPin), so that the
// binding never leaks into the application: a thread the application starts
// between two calls inherits the application's own affinity, not the
// team's one CPU.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_BINDING_H
#define LOOM_LIB_RUNTIME_CPU_BINDING_H

#include "CPU/Policy.h"

namespace loom::rt::cpu {

/// Binds the calling thread's OpenMP team of policy.threads threads, once
/// per calling thread: each worker to a CPU of its own and the calling
/// thread to the one it runs on, as OMP_PROC_BIND=close would. libgomp's
/// workers spin after a parallel region (GOMP_SPINCOUNT, about 8 ms here),
/// and a worker that shares the calling thread's CPU spins ahead of its
/// next sequential kernel (a recurrence at batch 1: 0.35 ms or 8.0 ms a
/// run, by chance, on this 2-core VM; with the workers bound but not the
/// calling thread, 1 run in 20 still took 8 ms). Nothing is done where the
/// policy binds no team (the user binds OpenMP's: OMP_PROC_BIND,
/// OMP_PLACES, GOMP_CPU_AFFINITY; or LOOM_CPU_BIND=0), or when the thread
/// may run on fewer CPUs than the team has threads (as under mpirun's
/// per-core ranks).
void bindTeam(const CpuPolicy &policy);

/// The scope of a C API call that may run the CPU device's team (loading a
/// model, a run, a pipelined step): on entry, a thread whose team is bound
/// goes back to its CPU; on exit (of the outermost scope) it gets back the
/// CPUs it had before. Without it, the calling thread would stay on one
/// CPU after the call, and so would every thread it started afterwards:
/// loom-serve loaded its models on its main thread, whose HTTP and batcher
/// threads then all ran on that CPU (ResNet-50 served at 41-46 ms a run
/// against loom-run's 22-24 ms, 2 threads).
class CallerPin {
public:
  CallerPin();
  ~CallerPin();
  CallerPin(const CallerPin &) = delete;
  CallerPin &operator=(const CallerPin &) = delete;
};

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_BINDING_H
