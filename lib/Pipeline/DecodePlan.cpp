//===- DecodePlan.cpp - Choosing how ranks share a decode step ------------===//
//
// Part of Loom. See DecodePlan.h; the model is stated in
// docs/CacheParallel.md "The planner".
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/DecodePlan.h"

#include "loom/Cost/CostModel.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include <algorithm>

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;

llvm::Expected<DecoderCost> pipeline::decoderCost(func::FuncOp decode) {
  DecoderCost c;
  bool mixed = false;
  decode.walk([&](Operation *op) {
    if (auto w = dyn_cast<tg::WeightOp>(op))
      c.weightBytes += bytesOf(w.getType());
    auto attention = dyn_cast<tg::AttentionOp>(op);
    if (!attention)
      return;
    auto q = cast<RankedTensorType>(attention.getQ().getType());
    auto k = cast<RankedTensorType>(attention.getK().getType());
    if (c.layers && (q.getDimSize(1) != c.queryHeads ||
                     k.getDimSize(1) != c.kvHeads ||
                     q.getDimSize(3) != c.headDim))
      mixed = true;
    ++c.layers;
    c.queryHeads = q.getDimSize(1);
    c.kvHeads = k.getDimSize(1);
    c.headDim = q.getDimSize(3);
    c.elementBytes = (q.getElementTypeBitWidth() + 7) / 8;
  });
  if (!c.layers)
    return llvm::createStringError(
        "@" + decode.getName().str() +
        " has no tg.attention: not a decoder program (docs/Decoding.md)");
  if (mixed)
    return llvm::createStringError(
        "@" + decode.getName().str() +
        "'s attentions differ in heads or head size: the planner models "
        "layers of one shape");
  c.cacheBytesPerPosition = 2 * c.layers * c.kvHeads * c.headDim *
                            c.elementBytes;
  return c;
}

llvm::Expected<DecodeMachine> pipeline::decodeMachine(llvm::StringRef name) {
  DecodeMachine m;
  m.name = name.str();
  llvm::StringRef device = name.take_while([](char ch) { return ch != 'x'; });
  auto roofline = cost::lookupTarget(device);
  if (device == "cpu" || !roofline) {
    if (!roofline)
      llvm::consumeError(roofline.takeError());
    return llvm::createStringError("unknown machine '" + name.str() +
                                   "' (h100x8, h100x32, h200x8)");
  }
  m.memBandwidth = roofline->memBandwidth;
  m.peakFlops = roofline->peakFlops;
  m.memoryBytes = device == "h200" ? 141e9 : 80e9;
  if (name.ends_with("x8"))
    m.devices = 8;
  else if (name.ends_with("x32"))
    m.devices = 32;
  else
    return llvm::createStringError("unknown machine '" + name.str() +
                                   "' (h100x8, h100x32, h200x8)");
  return m;
}

namespace {

/// The link a group of \p span consecutive devices (a stride apart) uses.
const Link &linkOf(const DecodeMachine &m, int64_t span) {
  return span > m.devicesPerHost ? m.interHost : m.intraHost;
}

DecodeEstimate estimate(const DecoderCost &c, const DecodeMachine &m, int cp,
                        int tp, int64_t context, int64_t batch) {
  DecodeEstimate e;
  e.cp = cp;
  e.tp = tp;
  double weights = double(c.weightBytes) / tp;
  double cache = double(batch) * double(context) *
                 double(c.cacheBytesPerPosition) / double(cp * tp);
  e.weightsSeconds = weights / m.memBandwidth;
  e.cacheSeconds = cache / m.memBandwidth;
  // Two flops a weight element a sequence; the scores and the weighted
  // values, two products of D a key and query head.
  double flops = 2.0 * double(c.weightBytes) / c.elementBytes * batch / tp +
                 4.0 * batch * c.queryHeads * c.headDim * double(context) *
                     c.layers / double(cp * tp);
  e.computeSeconds = flops / m.peakFlops;
  // TP: two ring all-reduces of the hidden state a layer, within a group
  // of tp neighbouring devices.
  if (tp > 1) {
    double hidden = double(batch) * c.queryHeads * c.headDim * c.elementBytes;
    const Link &l = linkOf(m, tp);
    double ring = 2.0 * (tp - 1) * (l.latency + hidden / tp / l.bandwidth);
    e.messageSeconds += 2.0 * c.layers * ring;
    e.bytesSentPerToken += 2.0 * c.layers * 2.0 * (tp - 1) / tp * hidden;
  }
  // CP: one gather a layer of every rank's (output, log-sum-exp) for its
  // tp-th of the query heads, Loom's exchange (each rank's block to every
  // other rank of its group: loomrt.all_gather).
  if (cp > 1) {
    double block = double(batch) * (c.queryHeads / tp) * (c.headDim + 1) *
                   c.elementBytes;
    const Link &l = linkOf(m, int64_t(cp) * tp);
    e.messageSeconds +=
        c.layers * (l.latency + (cp - 1) * block / l.bandwidth);
    e.bytesSentPerToken += double(c.layers) * (cp - 1) * block;
  }
  e.seconds = std::max(e.weightsSeconds + e.cacheSeconds, e.computeSeconds) +
              e.messageSeconds;
  e.memoryBytes = weights + cache;
  e.fits = e.memoryBytes <= m.memoryBytes;
  return e;
}

} // namespace

std::vector<DecodeEstimate>
pipeline::estimateDecode(const DecoderCost &c, const DecodeMachine &m,
                         int64_t context, int64_t batch) {
  // Powers of two (the machines' device counts are).
  std::vector<DecodeEstimate> all;
  for (int cp = 1; cp <= m.devices; cp *= 2)
    for (int tp = 1; cp * tp <= m.devices; tp *= 2)
      if (c.kvHeads % tp == 0)
        all.push_back(estimate(c, m, cp, tp, context, batch));
  return all;
}

const DecodeEstimate *
pipeline::bestDecode(const std::vector<DecodeEstimate> &all) {
  const DecodeEstimate *best = nullptr;
  for (const DecodeEstimate &e : all)
    if (e.fits && (!best || e.seconds < best->seconds))
      best = &e;
  return best;
}
