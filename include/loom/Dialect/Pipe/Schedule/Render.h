//===- Render.h - Pictures of a pipeline schedule ----------------*- C++ -*-===//
//
// Part of Loom. Hand-written SVG and Graphviz, no dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_SCHEDULE_RENDER_H
#define LOOM_DIALECT_PIPE_SCHEDULE_RENDER_H

#include "loom/Dialect/Pipe/Schedule/Schedule.h"
#include "loom/Dialect/Pipe/Schedule/Simulator.h"

#include "llvm/Support/raw_ostream.h"

namespace loom::pipe {

/// The simulated schedule as a timeline: one row per device (the first
/// `maxDevices`), F/B/I/W boxes in distinct colours with their micro-batch
/// numbers, sends as thin lines from sender to receiver. `sim` must have
/// been run with `recordTimes`.
void writeTimelineSVG(llvm::raw_ostream &os, const Schedule &schedule,
                      const Simulation &sim, int maxDevices = 64);

/// The stage DAG: one node per stage (its costs and devices), one cluster per
/// device that holds stages of its own, edges labelled with their bytes.
void writeStageDot(llvm::raw_ostream &os, const Schedule &schedule);

} // namespace loom::pipe

#endif // LOOM_DIALECT_PIPE_SCHEDULE_RENDER_H
