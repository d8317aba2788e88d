//===- PhaseTimer.h - A timer that options can hold -------------*- C++ -*-===//
//
// Part of Loom. loom-compile --time-phases times its phases with MLIR's
// timers (mlir/Support/Timing.h, the timers behind --mlir-timing); the
// options structs that hand a timer on to a phase copy and assign like
// values, which mlir::Timer does not (its assignment only moves).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_PHASETIMER_H
#define LOOM_SUPPORT_PHASETIMER_H

#include "mlir/Support/Timing.h"

namespace loom {

/// An mlir::Timer handle that is also copy-assignable. A default one is
/// null: nesting under it gives null timers, and starting or stopping it
/// does nothing, so untimed code pays a pointer test.
class PhaseTimer : public mlir::Timer {
public:
  PhaseTimer() = default;
  PhaseTimer(const mlir::Timer &timer) : mlir::Timer(timer) {}
  PhaseTimer(const PhaseTimer &other) = default;
  PhaseTimer &operator=(const PhaseTimer &other) {
    mlir::Timer::operator=(mlir::Timer(other));
    return *this;
  }
  /// A child timer (see mlir::Timer::nest; may be called from another
  /// thread while this one runs).
  PhaseTimer nest(llvm::StringRef name) const {
    return mlir::Timer(*this).nest(name);
  }
};

} // namespace loom

#endif // LOOM_SUPPORT_PHASETIMER_H
