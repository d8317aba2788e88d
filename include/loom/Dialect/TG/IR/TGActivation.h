//===- TGActivation.h - tg's activations as Loom's ---------------*- C++ -*-===//
//
// Part of Loom. tg.conv's fused `activation` (the ODS enum tg::Activation)
// is a subset of Loom's one activation vocabulary (loom::Activation,
// loom/Support/Activations.def); toActivation maps each case to the one of
// the same spelling (test/Unit/Dialect/TG/TGOpsTest.cpp checks every case).
// A separate header: code that sees both enums names them qualified.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGACTIVATION_H
#define LOOM_DIALECT_TG_IR_TGACTIVATION_H

#include "loom/Dialect/TG/IR/TGEnums.h"
#include "loom/Support/Activation.h"

namespace loom::tg {

/// The loom::Activation that \p a names.
constexpr loom::Activation toActivation(tg::Activation a) {
  switch (a) {
  case tg::Activation::None:
    return loom::Activation::None;
  case tg::Activation::Relu:
    return loom::Activation::Relu;
  case tg::Activation::Sigmoid:
    return loom::Activation::Sigmoid;
  case tg::Activation::Tanh:
    return loom::Activation::Tanh;
  }
  return loom::Activation::None;
}

} // namespace loom::tg

#endif // LOOM_DIALECT_TG_IR_TGACTIVATION_H
