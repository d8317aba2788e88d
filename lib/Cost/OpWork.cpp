//===- OpWork.cpp - FLOPs and bytes of each tg op ---------------------------===//
//
// Part of Loom. The work of every tg op, written once; both cost models and
// the search reports use it. Conventions: a multiply-add is 2 FLOPs; an
// elementwise op built from transcendental functions counts
// kTranscendentalFlops per element; data movement is 0 FLOPs; every operand
// is read once and every result written once.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/CostModel.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace loom;
using namespace loom::cost;

namespace {

/// FLOPs charged per element for exp/log/tanh/erf-based functions.
constexpr double kTranscendentalFlops = 8;

double numElements(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return double(shaped.getNumElements());
}

double bytesOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  unsigned bits = shaped.getElementTypeBitWidth();
  return numElements(type) * double((bits + 7) / 8);
}

double resultElements(Operation *op) {
  double n = 0;
  for (Type t : op->getResultTypes())
    n += numElements(t);
  return n;
}

} // namespace

OpWork cost::workOf(Operation *op) {
  OpWork work;
  if (!isa<tg::TGDialect>(op->getDialect())) {
    work.kernel = false;
    return work;
  }
  for (Type t : op->getOperandTypes())
    work.bytesRead += bytesOf(t);
  for (Type t : op->getResultTypes())
    work.bytesWritten += bytesOf(t);
  double out = resultElements(op);

  llvm::TypeSwitch<Operation *>(op)
      .Case<tg::ConstantOp, tg::WeightOp, tg::ReshapeOp, tg::SplitOp>(
          [&](Operation *) {
            // Metadata only: no kernel, nothing moved. A split's pieces are
            // strided views that consumers read in place (as TASO assumes:
            // "split cost is zero"; GEMMs take a leading dimension).
            work = OpWork();
            work.kernel = false;
          })
      .Case([&](tg::MatmulOp m) {
        int64_t k = m.getLhs().getType().getShape().back();
        work.flops = 2.0 * out * double(k);
      })
      .Case([&](tg::Conv2dOp c) {
        auto f = c.getFilter().getType().getShape();
        double macsPerOutput = double(f[1]) * double(f[2]) * double(f[3]);
        work.flops = 2.0 * out * macsPerOutput;
        if (c.getBias())
          work.flops += out;
        if (c.getActivation() == tg::Activation::Relu)
          work.flops += out;
        else if (c.getActivation() != tg::Activation::None)
          work.flops += kTranscendentalFlops * out;
      })
      .Case<tg::MaxPool2dOp, tg::AvgPool2dOp>([&](auto p) {
        auto k = p.getKernelSize();
        work.flops = out * double(k[0]) * double(k[1]);
      })
      .Case([&](tg::GlobalAvgPoolOp g) {
        work.flops = numElements(g.getInput().getType());
      })
      .Case<tg::AddOp, tg::SubOp, tg::MulOp, tg::DivOp, tg::MaxOp, tg::MinOp,
            tg::ReluOp, tg::NegOp, tg::ClipOp, tg::HardSigmoidOp,
            tg::HardSwishOp>([&](Operation *) { work.flops = out; })
      .Case<tg::PowOp, tg::SigmoidOp, tg::TanhOp, tg::ExpOp, tg::LogOp,
            tg::SqrtOp, tg::RsqrtOp, tg::ErfOp, tg::GeluOp>(
          [&](Operation *) { work.flops = kTranscendentalFlops * out; })
      .Case<tg::ReduceSumOp, tg::ReduceMeanOp, tg::ReduceMaxOp>(
          [&](Operation *r) { work.flops = numElements(r->getOperand(0).getType()); })
      .Case([&](tg::SoftmaxOp) { work.flops = (kTranscendentalFlops + 4) * out; })
      .Case([&](tg::LayerNormOp) { work.flops = 8 * out; })
      .Case([&](tg::BatchNormOp) { work.flops = 2 * out; })
      // Data movement: transpose, concat, slice, pad, enlarge, broadcast_to,
      // gather, cast, resize: bytes only.
      .Default([&](Operation *) {});
  return work;
}
