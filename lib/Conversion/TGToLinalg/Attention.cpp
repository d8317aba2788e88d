//===- Attention.cpp - tg.attention and the world ops have no generated code ===//
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

Lowered lowerShardAttention(ShardAttentionOp op, OpBuilder &) {
  return op.emitOpError(
      "has no generated-code form: on the CPU it runs as libloomrt's "
      "loomrt.attention step (f32 operands, the loomrt backend)");
}

// The rank and the gather are the runtime's (loomrt.world_rank,
// loomrt.all_gather over the context's world): no kernel computes them.
Lowered lowerWorldRank(WorldRankOp op, OpBuilder &) {
  return op.emitOpError("has no generated-code form: it is the runtime's "
                        "loomrt.world_rank step");
}

Lowered lowerAllGather(AllGatherOp op, OpBuilder &) {
  return op.emitOpError("has no generated-code form: it is the runtime's "
                        "loomrt.all_gather step");
}

} // namespace

void lowering::attachAttentionModels(MLIRContext *context) {
  attach<AttentionOp, lowerAttention>(context);
  attach<ShardAttentionOp, lowerShardAttention>(context);
  attach<WorldRankOp, lowerWorldRank>(context);
  attach<AllGatherOp, lowerAllGather>(context);
}
