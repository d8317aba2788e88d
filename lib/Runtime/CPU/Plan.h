//===- Plan.h - The CPU device's layout plan --------------------*- C++ -*-===//
//
// Part of Loom. Layer 5 of lib/Runtime/CPU's library steps (above the forms,
// Forms.h, whose tables it asks for the layouts they want; below
// Library.cpp): at load, the layout each arena buffer of a program is kept
// in (docs/Runtime.md, "Activation layouts"). The planner collects what the
// convolutions' forms want per buffer, settles disagreements on NHWC, lets
// layout-free steps (pools, concatenations, binary steps, elementwise
// kernels) adopt their neighbours' layouts, and drops what would leave a
// convolution on oneDNN's reference kernel or an elementwise kernel on
// mixed layouts. The forms then read the finished plan; they never call
// the planner.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_PLAN_H
#define LOOM_LIB_RUNTIME_CPU_PLAN_H

#include "CPU/OneDnnSteps.h"

#include <string>
#include <vector>

namespace loom::rt::cpu {

/// The layout plan of \p program of \p entry, whose buffers have
/// \p bufferBytes bytes and whose constant weights are at \p constants
/// (null for the other buffers). Empty with the policy's
/// LayoutChoice::Plain (LOOM_ONEDNN_LAYOUT=plain).
LayoutPlan planLayouts(const PrepareContext &ctx, const artifact::Entry &entry,
                       const artifact::Program &program,
                       const std::vector<int64_t> &bufferBytes,
                       const std::vector<void *> &constants);

/// The planner's invariant on a finished \p plan of \p program: a kernel
/// step the compiler does not declare elementwise reads and writes only
/// plain buffers. Empty where it holds, else what breaks it ("step 3, kernel
/// main_k0 (not elementwise): buffer 7 planned nhwc").
std::string plainKernelViolation(const artifact::Program &program,
                                 const LayoutPlan &plan);

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_PLAN_H
