//===- BenchDecode.cpp - loom-bench-decode --------------------------------===//
//
// Part of Loom. A decoder's per-token decode latency and time to first
// token against context length: Loom's artifact through the C API beside
// ONNX Runtime on the same model's past/present export and PyTorch 1.13
// eager on the same torch.nn module, the sides alternating within a row;
// and the bytes a decode step reads over its time against this machine's
// copy bandwidth, measured in the same run (docs/benchmarks/decode.md).
//
//   loom-bench-decode --model zoo:gpt2-small --contexts 128,512,1k,32k
//       --threads 2 --capacity-check 2048,32768 --json decode.json
//
//===----------------------------------------------------------------------===//

#include "Bandwidth.h"
#include "FedPlan.h"
#include "LoomSide.h"
#include "Options.h"
#include "PeerSides.h"
#include "Prepare.h"
#include "RankSweep.h"
#include "Report.h"

#include "BenchSupport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

using namespace llvm;
using namespace loom::bench;

namespace {

int fail(const Twine &message) {
  errs() << "loom-bench-decode: error: " << message << "\n";
  return 1;
}

/// Waits (up to o.waitSeconds) for the 1-minute load to fall to o.maxLoad.
void waitForIdle(const DecodeOptions &o) {
  auto load = [] {
    double v = 0;
    StringRef(loadAverage()).split(' ').first.getAsDouble(v);
    return v;
  };
  for (unsigned waited = 0; load() > o.maxLoad && waited < o.waitSeconds;
       waited += 10) {
    outs() << formatv("load average {0} above {1:f2}: waiting\n", loadAverage(),
                      o.maxLoad);
    outs().flush();
    std::this_thread::sleep_for(std::chrono::seconds(10));
  }
}

std::optional<double> median(Expected<std::vector<double>> times,
                             std::string &reason) {
  if (!times) {
    reason = toString(times.takeError());
    return std::nullopt;
  }
  return loom::bench::median(*times);
}

/// The largest |a - b| over the first min(size) elements.
double maxAbs(ArrayRef<double> a, ArrayRef<double> b) {
  double worst = a.size() == b.size() ? 0 : INFINITY;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

/// The logits of a prompt on each side that runs, compared pairwise.
void measureAgreement(const DecodeOptions &o, LoomDecoder &loom,
                      const PreparedModel &pm, StringRef dir,
                      ModelSummary &summary) {
  if (o.agreeTokens == 0)
    return;
  std::mt19937_64 rng(o.seed + 1);
  PeerRequest request;
  for (int64_t i = 0; i < o.agreeTokens; ++i)
    request.promptIds.push_back(
        int64_t(rng() % uint64_t(loom.contract().vocab)));
  summary.agreementTokens = o.agreeTokens;
  std::map<std::string, std::vector<double>> logits;
  if (auto l = loom.prefillLogits(request.promptIds))
    logits["loom"] = std::vector<double>(l->begin(), l->end());
  else
    summary.notes.push_back("agreement: loom: " + toString(l.takeError()));
  for (Peer p : {Peer::Ort, Peer::Torch}) {
    bool runs = p == Peer::Ort ? o.runOrt && pm.ortReason.empty()
                               : o.runTorch && pm.torchReason.empty();
    if (!runs)
      continue;
    SmallString<256> out(dir);
    sys::path::append(out, std::string(peerName(p)) + "-logits.safetensors");
    request.logitsOut = std::string(out);
    PeerResult r = runPeer(p, o, pm.peer, request);
    auto read = r.failure.empty()
                    ? readTensors(out)
                    : Expected<RunTensors>(createStringError(r.failure));
    if (read && read->count("logits"))
      logits[peerName(p)] = (*read)["logits"].values;
    else
      summary.notes.push_back(
          std::string("agreement: ") + peerName(p) + ": " +
          (read ? "no logits" : toString(read.takeError())));
  }
  for (auto [a, b] :
       {std::pair{"loom", "torch"}, {"loom", "ort"}, {"ort", "torch"}})
    if (logits.count(a) && logits.count(b))
      summary.agreement[std::string(a) + "-" + b] =
          maxAbs(logits[a], logits[b]);
}

/// One row: the sides alternating, o.rounds times.
Row measureRow(const DecodeOptions &o, LoomDecoder &loom,
               const PreparedModel &pm, int64_t context,
               ModelSummary &summary) {
  Row row;
  row.model = o.model.text;
  row.context = context;
  row.capacity = pm.capacity;
  row.promptBound = pm.promptBound;
  row.weightBytesRead = pm.decodeWeightBytes;
  row.cacheBytesRead = loom.cacheBytesPerPosition() * context;
  bool prefill = context <= pm.promptBound;
  std::string ttftReason = "a prompt of " + std::to_string(context) +
                           " tokens is past the prompt bound " +
                           std::to_string(pm.promptBound);
  for (unsigned round = 0; round < o.rounds; ++round) {
    double copyNow = 0;
    if (Expected<Bandwidth> copy = measureBandwidthInChild(o)) {
      copyNow = copy->copyGBps;
      if (copy->copyGBps > row.copy.copyGBps)
        row.copy = *copy;
    } else {
      summary.notes.push_back(toString(copy.takeError()));
    }
    std::string reason;
    std::optional<double> decode =
        median(loom.decodeTimes(context, o.warmup, o.steps), reason);
    if (decode && copyNow > 0)
      row.pairedFractions.push_back(row.readGBpsAt(*decode) / copyNow);
    std::optional<double> ttft =
        prefill ? median(loom.prefillTimes(context, o.prefillRepeat), reason)
                : std::nullopt;
    row.loom.keepBest(decode, ttft);
    row.loom.reason = !reason.empty() ? reason : prefill ? "" : ttftReason;
    for (Peer p : {Peer::Ort, Peer::Torch}) {
      SideResult &side = p == Peer::Ort ? row.ort : row.torch;
      const std::string &why = p == Peer::Ort ? pm.ortReason : pm.torchReason;
      bool wanted = p == Peer::Ort ? o.runOrt : o.runTorch;
      if (!wanted || !why.empty()) {
        side.reason = wanted ? why : "not run (--peers)";
        continue;
      }
      PeerRequest request;
      request.context = context;
      request.prefillLength = prefill ? context : 0;
      PeerResult r = runPeer(p, o, pm.peer, request);
      side.keepBest(r.decodeMs, r.prefillMs);
      side.reason = !r.failure.empty() ? r.failure : prefill ? "" : ttftReason;
      int64_t &peak = p == Peer::Ort ? summary.ortPeakKb : summary.torchPeakKb;
      peak = std::max(peak, r.peakRssKb);
    }
  }
  return row;
}

/// Where the model at capacity `cap` is made: the main model's directory
/// when it has that capacity.
std::string capacityDir(const DecodeOptions &o, StringRef workDir,
                        int64_t cap) {
  SmallString<256> dir(workDir);
  sys::path::append(dir, cap == o.capacity ? std::string("main")
                                           : "capacity-" + std::to_string(cap));
  return std::string(dir);
}

/// Loom's decode at o.capacityLive on artifacts of each o.capacityCheck,
/// alternating o.capacityRounds times: the best round's median of each,
/// and the median over rounds of each one's against the first's.
void measureCapacities(const DecodeOptions &o, StringRef workDir,
                       ModelSummary &summary) {
  std::vector<std::pair<int64_t, std::unique_ptr<LoomDecoder>>> decoders;
  for (int64_t cap : o.capacityCheck) {
    auto pm = prepareModel(o, cap, capacityDir(o, workDir, cap),
                           /*withOnnx=*/false);
    if (!pm || !pm->loomReason.empty()) {
      summary.notes.push_back("capacity " + std::to_string(cap) + ": " +
                              (pm ? pm->loomReason : toString(pm.takeError())));
      return;
    }
    auto d = LoomDecoder::load(pm->artifact, o.threads);
    if (!d) {
      summary.notes.push_back(toString(d.takeError()));
      return;
    }
    decoders.emplace_back(cap, std::move(*d));
  }
  summary.capacityLive = o.capacityLive;
  std::map<int64_t, std::vector<double>> ratios;
  for (unsigned round = 0; round < o.capacityRounds; ++round) {
    std::optional<double> first;
    for (auto &[cap, d] : decoders) {
      std::string reason;
      std::optional<double> ms =
          median(d->decodeTimes(o.capacityLive, o.warmup, o.steps), reason);
      if (!ms)
        continue;
      if (!summary.capacityMs.count(cap) || *ms < summary.capacityMs[cap])
        summary.capacityMs[cap] = *ms;
      if (cap == decoders.front().first)
        first = ms;
      else if (first)
        ratios[cap].push_back(*ms / *first);
    }
  }
  for (auto &[cap, r] : ratios) {
    std::sort(r.begin(), r.end());
    summary.capacityPairedRatio[cap] = r[r.size() / 2];
  }
}

} // namespace

int runBench(const DecodeOptions &o, StringRef workDir, std::vector<Row> &rows,
             std::vector<ModelSummary> &models);

/// --ranks: the parallel sweep instead of the peers (RankSweep.h).
int runSweep(const DecodeOptions &o) {
  if (!o.prepareOnly)
    waitForIdle(o);
  json::Object machine{{"cpu", cpuModelName()},
                       {"load_before", loadAverage()},
                       {"cores", int64_t(std::thread::hardware_concurrency())}};
  outs() << "loom-bench-decode: " << o.model.text << " on " << cpuModelName()
         << ", ranks " << o.ranks.size()
         << " count(s), --parallel=" << llvm::join(o.parallels, ",")
         << "; load average before: " << loadAverage() << "\n";
  SmallString<256> work(o.workDir);
  bool temporary = work.empty();
  if (temporary && sys::fs::createUniqueDirectory("loom-bench-decode", work))
    return fail("cannot create a temporary directory");
  std::vector<RanksRow> rows;
  std::vector<PlanChoice> choices;
  int status = runRanksSweep(o, work, rows, choices);
  if (temporary)
    sys::fs::remove_directories(work);
  if (status || o.prepareOnly)
    return status;
  printRanksTable(rows);
  printPlanChoices(choices);
  machine["load_after"] = loadAverage();
  outs() << "load average after: " << loadAverage() << "\n";
  if (!o.json.empty())
    if (Error e = writeJSONFile(
            o.json, ranksJSON(o, rows, choices, std::move(machine))))
      return fail(toString(std::move(e)));
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  auto options = parseOptions(argc, argv);
  if (!options)
    return fail(toString(options.takeError()));
  DecodeOptions &o = *options;
  if (o.bandwidthOnly) {
    Bandwidth bw = measureBandwidth(o.copyMiB << 20, o.threads, o.copyRepeat);
    outs() << formatv("{0}\n",
                      json::Value(json::Object{{"copy_gbps", bw.copyGBps},
                                               {"copied_gbps", bw.copiedGBps},
                                               {"read_gbps", bw.readGBps}}));
    return 0;
  }
  if (!o.ranks.empty())
    return runSweep(o);
  for (Peer p : {Peer::Ort, Peer::Torch})
    if ((p == Peer::Ort ? o.runOrt : o.runTorch))
      if (Error e = checkPeer(p, o))
        return fail(toString(std::move(e)) + " (or leave it out with --peers)");
  if (!o.prepareOnly)
    waitForIdle(o);
  json::Object machine{{"cpu", cpuModelName()},
                       {"load_before", loadAverage()},
                       {"threads", o.threads}};
  Bandwidth bw;
  if (!o.prepareOnly) {
    outs() << "loom-bench-decode: " << o.model.text << " on " << cpuModelName()
           << ", " << o.threads
           << " thread(s); load average before: " << loadAverage() << "\n";
    bw = measureBandwidth(o.copyMiB << 20, o.threads, o.copyRepeat);
    outs() << formatv("memcpy of {0} MiB on {1} thread(s), best of {2}: "
                      "{3:f1} GB/s (read + written; {4:f1} GB/s copied); "
                      "read-only stream {5:f1} GB/s\n",
                      o.copyMiB, o.threads, o.copyRepeat, bw.copyGBps,
                      bw.copiedGBps, bw.readGBps);
  }
  std::vector<Row> rows;
  std::vector<ModelSummary> models;
  SmallString<256> work(o.workDir);
  bool temporary = work.empty();
  if (temporary && sys::fs::createUniqueDirectory("loom-bench-decode", work))
    return fail("cannot create a temporary directory");
  int status = runBench(o, work, rows, models);
  if (temporary)
    sys::fs::remove_directories(work);
  if (status || o.prepareOnly)
    return status;
  printReport(rows, models);
  machine["load_after"] = loadAverage();
  outs() << "load average after: " << loadAverage() << "\n";
  if (!o.json.empty())
    if (Error e = writeJSONFile(
            o.json, reportJSON(o, rows, models, bw, std::move(machine))))
      return fail(toString(std::move(e)));
  return 0;
}

int runBench(const DecodeOptions &o, StringRef workDir, std::vector<Row> &rows,
             std::vector<ModelSummary> &models) {
  SmallString<256> dir(workDir);
  sys::path::append(dir, "main");
  auto pm = prepareModel(o, o.capacity, dir, o.runOrt);
  if (!pm)
    return fail(toString(pm.takeError()));
  if (!pm->loomReason.empty())
    return fail(pm->loomReason);
  if (o.prepareOnly) {
    for (int64_t cap : o.capacityCheck) {
      if (auto cm = prepareModel(o, cap, capacityDir(o, workDir, cap),
                                 /*withOnnx=*/false);
          !cm)
        return fail(toString(cm.takeError()));
    }
    outs() << "prepared in " << workDir << "\n";
    return 0;
  }
  ModelSummary summary;
  summary.model = o.model.text;
  summary.capacity = pm->capacity;
  summary.promptBound = pm->promptBound;
  summary.weightBytes = pm->weightBytes;
  summary.decodeWeightBytes = pm->decodeWeightBytes;
  summary.compileSeconds = pm->compileSeconds;
  summary.compilePeakRssKb = pm->compilePeakRssKb;
  if (!pm->ortReason.empty())
    summary.notes.push_back("ort: " + pm->ortReason);
  resetPeakRss();
  {
    auto loom = LoomDecoder::load(pm->artifact, o.threads);
    if (!loom)
      return fail(toString(loom.takeError()));
    summary.cacheBytes = (*loom)->cacheBytes();
    measureAgreement(o, **loom, *pm, dir, summary);
    for (int64_t c : o.contexts) {
      rows.push_back(measureRow(o, **loom, *pm, c, summary));
      outs() << formatv("  {0}: Loom {1} ms, ORT {2} ms, torch {3} ms\n", c,
                        fmtMs(rows.back().loom.decodeMs),
                        fmtMs(rows.back().ort.decodeMs),
                        fmtMs(rows.back().torch.decodeMs));
      outs().flush();
    }
    summary.loomPeakKb = peakRssKb();
  }
  if (!o.capacityCheck.empty())
    measureCapacities(o, workDir, summary);
  models.push_back(std::move(summary));
  return 0;
}
