//===- Attention.cpp - tg.attention has no generated-code form -----------===//
//
// Part of Loom. tg.attention is not lowered to linalg: on the CPU the
// loomrt backend (lib/Compiler/Backends/Dynamic.cpp) gives it to
// libloomrt's attention step, whose kernel streams the live keys once and
// never materialises the score matrix (docs/Runtime.md "Attention"), which
// a lowering through linalg would. An attention that reaches generated code
// (an f64 one, a GPU target) is an error at the op naming why.
//
//===----------------------------------------------------------------------===//

#include "LoweringSupport.h"

using namespace mlir;
using namespace loom::tg;
using namespace loom::tg::lowering;

namespace {

Lowered lowerAttention(AttentionOp op, OpBuilder &) {
  return op.emitOpError(
      "has no generated-code form: on the CPU it runs as libloomrt's "
      "loomrt.attention step (f32 operands, the loomrt backend)");
}

} // namespace

void lowering::attachAttentionModels(MLIRContext *context) {
  attach<AttentionOp, lowerAttention>(context);
}
