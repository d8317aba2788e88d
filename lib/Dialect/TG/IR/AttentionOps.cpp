//===- AttentionOps.cpp - Facts of tg.attention
//----------------------------===//
//
// Part of Loom. tg.attention (TGOps.td): its shape rule (inferAttention in
// TypeInference.cpp), evaluation (loom/Interpreter/AttentionKernel.h), work
// and ONNX export (none: opset 17 has no attention operator).
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"
#include "loom/Dialect/TG/IR/TypeInference.h"
#include "loom/Interpreter/AttentionKernel.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

// The frames are instantiated here too (as in DynamicOps.cpp): clang 22
// otherwise emits the vtables of the frames' shared_ptr control blocks in
// this file without their members, and this file links first.
template class loom::interp::TypedFrame<loom::interp::F32Domain>;
template class loom::interp::TypedFrame<loom::interp::F64Domain>;
template class loom::interp::TypedFrame<loom::interp::ModPDomain>;

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Value length = adaptor.getLength();
  return inferAttention(
      location, adaptor.getQ().getType(), adaptor.getK().getType(),
      adaptor.getV().getType(), length ? length.getType() : Type(),
      adaptor.getScale().convertToDouble(), adaptor.getCausal(), inferred);
}

LogicalResult AttentionOp::evaluate(interp::EvalFrame &frame) {
  interp::AttentionParams p;
  p.scale = getScale().convertToDouble();
  p.causal = getCausal();
  int64_t batch = cast<RankedTensorType>(getQ().getType()).getDimSize(0);
  return frame.visit([&](auto &f) -> LogicalResult {
    interp::AttentionParams q = p;
    if (const auto *length = f.inOrNull(3)) {
      using D = typename std::decay_t<decltype(*length)>::Domain;
      for (int64_t b = 0; b < batch; ++b)
        q.lengths.push_back(static_cast<int64_t>(
            D::toDouble(length->data[length->rank() == 0 ? 0 : b])));
    }
    return f.push(interp::attention(f.in(0), f.in(1), f.in(2), q));
  });
}

OpWork tg::attentionWork(Operation *op, RankedTensorType q,
                         RankedTensorType k) {
  double scores = double(q.getDimSize(0)) * q.getDimSize(1) * q.getDimSize(2) *
                  k.getDimSize(2);
  OpWork w = streamingWork(op, 0);
  w.flops = scores * (4.0 * q.getDimSize(3) + kTranscendentalFlops + 2);
  return w;
}

OpWork AttentionOp::getWork() {
  return attentionWork(*this, cast<RankedTensorType>(getQ().getType()),
                       cast<RankedTensorType>(getK().getType()));
}

LogicalResult AttentionOp::exportONNX(ONNXEmitter &) {
  return emitOpError("has no ONNX export (opset 17 has no attention "
                     "operator)");
}
