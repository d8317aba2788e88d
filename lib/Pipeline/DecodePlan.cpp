//===- DecodePlan.cpp - Choosing how ranks share a decode step ------------===//
//
// Part of Loom. See DecodePlan.h; the model is stated in
// docs/CacheParallel.md "The planner".
//
//===----------------------------------------------------------------------===//

#include "loom/Pipeline/DecodePlan.h"

#include "loom/Cost/CostModel.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <functional>

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;

llvm::Expected<DecoderCost> pipeline::decoderCost(func::FuncOp decode) {
  DecoderCost c;
  bool mixed = false;
  decode.walk([&](Operation *op) {
    if (auto w = dyn_cast<tg::WeightOp>(op)) {
      // A table the step gathers rows of is held, not read in full.
      bool gathered =
          !w->use_empty() && llvm::all_of(w->getUsers(), [&](Operation *user) {
            auto g = dyn_cast<tg::GatherOp>(user);
            return g && g.getData() == w.getResult();
          });
      c.weightBytes += bytesOf(w.getType());
      if (!gathered)
        c.weightBytesRead += bytesOf(w.getType());
    }
    auto attention = dyn_cast<tg::AttentionOp>(op);
    if (!attention)
      return;
    auto q = cast<RankedTensorType>(attention.getQ().getType());
    auto k = cast<RankedTensorType>(attention.getK().getType());
    if (c.layers &&
        (q.getDimSize(1) != c.queryHeads || k.getDimSize(1) != c.kvHeads ||
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
  c.cacheBytesPerPosition =
      2 * c.layers * c.kvHeads * c.headDim * c.elementBytes;
  unsigned logits = 0;
  for (unsigned j = 0; j < decode.getNumResults(); ++j)
    if (auto name = decode.getResultAttrOfType<StringAttr>(j, "tg.name");
        name && name.getValue() == "logits")
      logits = j;
  if (auto t = dyn_cast<RankedTensorType>(
          decode.getFunctionType().getResult(logits));
      t && t.getRank() >= 1)
    c.vocab = t.getShape().back();
  return c;
}

namespace {

/// Reads the keys of a machine file's object, each once; refuses the rest.
class MachineKeys {
public:
  explicit MachineKeys(const llvm::json::Object &o) : object(o) {}

  /// A positive number at \p key (\p required: present), or an error.
  llvm::Error number(llvm::StringRef key, bool required, double &out) {
    seen.push_back(key.str());
    const llvm::json::Value *v = object.get(key);
    if (!v)
      return required ? fail(key, "missing") : llvm::Error::success();
    std::optional<double> d = v->getAsNumber();
    if (!d || !(*d > 0) || *d > 1e30)
      return fail(key, "not a positive number");
    out = *d;
    return llvm::Error::success();
  }

  /// A link `{"bandwidth": bytes/s, "latency": s}` at \p key.
  llvm::Error link(llvm::StringRef key, bool required, Link &out) {
    seen.push_back(key.str());
    const llvm::json::Value *v = object.get(key);
    if (!v)
      return required ? fail(key, "missing") : llvm::Error::success();
    const llvm::json::Object *o = v->getAsObject();
    if (!o)
      return fail(key, "not an object {\"bandwidth\", \"latency\"}");
    MachineKeys inner(*o);
    if (llvm::Error e = inner.number("bandwidth", true, out.bandwidth))
      return fail(key, llvm::toString(std::move(e)));
    if (llvm::Error e = inner.number("latency", true, out.latency))
      return fail(key, llvm::toString(std::move(e)));
    if (llvm::Error e = inner.refuseOthers())
      return fail(key, llvm::toString(std::move(e)));
    return llvm::Error::success();
  }

  void skip(llvm::StringRef key) { seen.push_back(key.str()); }

  /// An error for the first key read by nothing above.
  llvm::Error refuseOthers() {
    for (const auto &kv : object)
      if (!llvm::is_contained(seen, kv.first.str()))
        return fail(kv.first, "not a key of a machine file (" +
                                  llvm::join(seen, ", ") + ")");
    return llvm::Error::success();
  }

private:
  llvm::Error fail(llvm::StringRef key, const llvm::Twine &why) {
    return llvm::createStringError("'" + key + "': " + why);
  }

  const llvm::json::Object &object;
  std::vector<std::string> seen;
};

} // namespace

llvm::Expected<DecodeMachine>
pipeline::readDecodeMachine(llvm::StringRef path) {
  auto in = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!in)
    return llvm::createStringError("cannot read machine file " + path + ": " +
                                   in.getError().message());
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(path + ": " + why);
  };
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*in)->getBuffer());
  if (!json)
    return fail("not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *o = json->getAsObject();
  if (!o)
    return fail("not a JSON object");
  DecodeMachine m;
  m.name = llvm::sys::path::stem(path).str();
  if (const llvm::json::Value *name = o->get("name")) {
    if (!name->getAsString() || name->getAsString()->empty())
      return fail("'name': not a non-empty string");
    m.name = name->getAsString()->str();
  }
  MachineKeys keys(*o);
  keys.skip("name");
  double devices = 0, perHost = 0;
  m.peakFlops = 0;
  m.interHost = Link{0, 0};
  using Read = std::function<llvm::Error()>;
  for (const Read &read : std::initializer_list<Read>{
           [&] { return keys.number("devices", true, devices); },
           [&] { return keys.number("devices_per_host", false, perHost); },
           [&] {
             return keys.number("memory_bandwidth", true, m.memBandwidth);
           },
           [&] {
             return keys.number("cache_bandwidth", false, m.cacheBandwidth);
           },
           [&] { return keys.number("peak_flops", false, m.peakFlops); },
           [&] { return keys.number("memory_bytes", true, m.memoryBytes); },
           [&] { return keys.link("intra_host", true, m.intraHost); },
           [&] { return keys.link("inter_host", false, m.interHost); },
           [&] { return keys.refuseOthers(); }})
    if (llvm::Error e = read())
      return fail(llvm::toString(std::move(e)));
  if (devices != double(int64_t(devices)) || devices > 4096 ||
      perHost != double(int64_t(perHost)) || perHost > devices)
    return fail("'devices' and 'devices_per_host' must be whole, at most "
                "4096, and a host's at most the machine's");
  m.devices = int(devices);
  m.devicesPerHost = perHost > 0 ? int(perHost) : m.devices;
  if (m.interHost.bandwidth == 0)
    m.interHost = m.intraHost;
  return m;
}

llvm::Expected<DecodeMachine> pipeline::decodeMachine(llvm::StringRef name) {
  if (name.ends_with(".json"))
    return readDecodeMachine(name);
  DecodeMachine m;
  m.name = name.str();
  llvm::StringRef device = name.take_while([](char ch) { return ch != 'x'; });
  auto roofline = cost::lookupTarget(device);
  if (device == "cpu" || !roofline) {
    if (!roofline)
      llvm::consumeError(roofline.takeError());
    return llvm::createStringError(
        "unknown machine '" + name.str() +
        "' (h100x8, h100x32, h200x8, or a machine file FILE.json)");
  }
  m.memBandwidth = roofline->memBandwidth;
  m.peakFlops = roofline->peakFlops;
  m.memoryBytes = device == "h200" ? 141e9 : 80e9;
  if (name.ends_with("x8"))
    m.devices = 8;
  else if (name.ends_with("x32"))
    m.devices = 32;
  else
    return llvm::createStringError(
        "unknown machine '" + name.str() +
        "' (h100x8, h100x32, h200x8, or a machine file FILE.json)");
  return m;
}

namespace {

/// The link a group of \p span consecutive devices (a stride apart) uses.
const Link &linkOf(const DecodeMachine &m, int64_t span) {
  return span > m.devicesPerHost ? m.interHost : m.intraHost;
}

DecodeEstimate estimate(const DecoderCost &c, const DecodeMachine &m, int cp,
                        int tp, int pp, int64_t context, int64_t batch) {
  DecodeEstimate e;
  e.cp = cp;
  e.tp = tp;
  e.pp = pp;
  // PP: the batch in `groups` groups in flight (at most one a stage), a
  // group's token passing the stages one after another; over that period
  // every stage serves every group, so the period costs what a step of one
  // group costs without stages, and the stages split the memory.
  int64_t groups = std::min<int64_t>(pp, batch);
  e.groups = groups;
  double group = double(batch) / double(groups);
  // The head stays whole on every rank unless tp divides its columns.
  bool headSplit = c.vocab > 0 && c.vocab % tp == 0;
  double head = headSplit ? 0.0
                          : double(c.queryHeads) * c.headDim * c.vocab *
                                c.elementBytes;
  double weightsRead = (double(c.weightBytesRead) - head) / tp + head;
  double cacheRead = group * double(context) * double(c.cacheBytesPerPosition) /
                     double(cp * tp);
  e.weightsSeconds = weightsRead / m.memBandwidth;
  e.cacheSeconds =
      cacheRead / (m.cacheBandwidth > 0 ? m.cacheBandwidth : m.memBandwidth);
  // Two flops a weight element read a sequence; the scores and the
  // weighted values, two products of D a key and query head.
  double flops = 2.0 * weightsRead / c.elementBytes * group +
                 4.0 * group * c.queryHeads * c.headDim * double(context) *
                     c.layers / double(cp * tp);
  e.computeSeconds = m.peakFlops > 0 ? flops / m.peakFlops : 0;
  // A device sends for its layers (1/pp of them) and every group.
  double hidden = group * c.queryHeads * c.headDim * c.elementBytes;
  double layersHere = double(c.layers) / pp;
  // TP: two all-reduces of the hidden state a layer within a group of tp
  // neighbouring devices, each Loom's (--tg-tensor-parallel): every rank's
  // partial sums to every other rank of the group (one loomrt.all_gather),
  // summed in rank order; and, where tp divides the head's columns, one
  // gather of the logits (the last stage's).
  if (tp > 1) {
    const Link &l = linkOf(m, tp);
    double reduce = l.latency + (tp - 1) * hidden / l.bandwidth;
    e.messageSeconds += 2.0 * c.layers * reduce;
    e.bytesSentPerToken += groups * 2.0 * layersHere * (tp - 1) * hidden;
    if (headSplit) {
      double logits = group * double(c.vocab) / tp * c.elementBytes;
      e.messageSeconds += l.latency + (tp - 1) * logits / l.bandwidth;
      e.bytesSentPerToken += groups * (tp - 1) * logits;
    }
  }
  // CP: one gather a layer of every rank's (output, log-sum-exp) for its
  // tp-th of the query heads, Loom's exchange (each rank's block to every
  // other rank of its group: loomrt.all_gather).
  if (cp > 1) {
    double block =
        group * (c.queryHeads / tp) * (c.headDim + 1) * c.elementBytes;
    const Link &l = linkOf(m, int64_t(cp) * tp);
    e.messageSeconds += c.layers * (l.latency + (cp - 1) * block / l.bandwidth);
    e.bytesSentPerToken += groups * layersHere * (cp - 1) * block;
  }
  // PP: each stage's hidden state to the next (the last stage's token back
  // to the first: a latency), across every device the split uses.
  if (pp > 1) {
    const Link &l = linkOf(m, int64_t(cp) * tp * pp);
    e.messageSeconds += pp * l.latency + (pp - 1) * hidden / l.bandwidth;
    e.bytesSentPerToken += groups * hidden;
  }
  e.seconds = std::max(e.weightsSeconds + e.cacheSeconds, e.computeSeconds) +
              e.messageSeconds;
  e.memoryBytes = ((double(c.weightBytes) - head) / tp + head) / pp +
                  double(batch) * double(context) *
                      double(c.cacheBytesPerPosition) / double(cp * tp * pp);
  e.fits = e.memoryBytes <= m.memoryBytes;
  return e;
}

} // namespace

std::vector<DecodeEstimate> pipeline::estimateDecode(const DecoderCost &c,
                                                     const DecodeMachine &m,
                                                     int64_t context,
                                                     int64_t batch) {
  // Powers of two (the machines' device counts are); tp divides the
  // key/value heads, pp at most the layers.
  std::vector<DecodeEstimate> all;
  for (int cp = 1; cp <= m.devices; cp *= 2)
    for (int tp = 1; cp * tp <= m.devices; tp *= 2)
      for (int pp = 1; cp * tp * pp <= m.devices && pp <= c.layers; pp *= 2)
        if (c.kvHeads % tp == 0)
          all.push_back(estimate(c, m, cp, tp, pp, context, batch));
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
