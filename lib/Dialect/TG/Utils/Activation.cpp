//===- Activation.cpp - tg.conv's fused activation as its own op ----------===//
//
// Part of Loom. See Activation.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/Utils/Activation.h"

using namespace mlir;

namespace loom::tg {

Value applyActivation(OpBuilder &b, Location loc, Activation act, Value v) {
  switch (act) {
  case Activation::None:
    return v;
  case Activation::Relu:
    return ReluOp::create(b, loc, v.getType(), v);
  case Activation::Sigmoid:
    return SigmoidOp::create(b, loc, v.getType(), v);
  case Activation::Tanh:
    return TanhOp::create(b, loc, v.getType(), v);
  }
  llvm_unreachable("unknown tg.conv activation");
}

} // namespace loom::tg
