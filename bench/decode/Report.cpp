//===- Report.cpp - The rows of loom-bench-decode, as a table and JSON ----===//
//
// Part of Loom. See Report.h.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "BenchSupport.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace loom::bench {

void SideResult::keepBest(std::optional<double> decode,
                          std::optional<double> ttft) {
  auto best = [](std::optional<double> &have, std::optional<double> got) {
    if (got && (!have || *got < *have))
      have = got;
  };
  best(decodeMs, decode);
  best(ttftMs, ttft);
}

std::optional<double> Row::readGBps() const {
  if (!loom.decodeMs || weightBytesRead == 0)
    return std::nullopt;
  return readGBpsAt(*loom.decodeMs);
}

double Row::readGBpsAt(double decodeMs) const {
  return double(weightBytesRead + cacheBytesRead) / (decodeMs * 1e6);
}

std::optional<double> Row::pairedFraction() const {
  if (pairedFractions.empty())
    return std::nullopt;
  std::vector<double> sorted = pairedFractions;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

namespace {

std::string ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b <= 0)
    return "n/a";
  return formatv("{0:f2}", *a / *b).str();
}

json::Value orNull(std::optional<double> v) {
  return v ? json::Value(*v) : json::Value(nullptr);
}

/// A bandwidth, null where it was not measured (0).
json::Value positiveOrNull(double gbps) {
  return gbps > 0 ? json::Value(gbps) : json::Value(nullptr);
}

/// read / limit, null where either is missing.
json::Value fraction(std::optional<double> read, double limit) {
  return read && limit > 0 ? json::Value(*read / limit) : json::Value(nullptr);
}

std::string reasons(const Row &r) {
  std::string out;
  for (auto [name, side] :
       {std::pair{"loom", &r.loom}, {"ort", &r.ort}, {"torch", &r.torch}})
    if (!side->reason.empty())
      out +=
          (out.empty() ? "" : "; ") + std::string(name) + ": " + side->reason;
  return out;
}

json::Array pairedRounds(const Row &r) {
  json::Array rounds;
  for (double f : r.pairedFractions)
    rounds.push_back(f);
  return rounds;
}

json::Object rowJSON(const Row &r) {
  std::optional<double> read = r.readGBps();
  std::string why = reasons(r);
  return json::Object{
      {"model", r.model},
      {"context", r.context},
      {"capacity", r.capacity},
      {"prompt_bound", r.promptBound},
      {"loom_ms_per_token", orNull(r.loom.decodeMs)},
      {"ort_ms_per_token", orNull(r.ort.decodeMs)},
      {"torch_ms_per_token", orNull(r.torch.decodeMs)},
      {"loom_ttft_ms", orNull(r.loom.ttftMs)},
      {"ort_ttft_ms", orNull(r.ort.ttftMs)},
      {"torch_ttft_ms", orNull(r.torch.ttftMs)},
      {"weight_bytes_read", r.weightBytesRead},
      {"cache_bytes_read", r.cacheBytesRead},
      {"read_gbps", orNull(read)},
      {"copy_gbps", positiveOrNull(r.copy.copyGBps)},
      {"read_fraction", fraction(read, r.copy.copyGBps)},
      {"stream_gbps", positiveOrNull(r.copy.readGBps)},
      {"read_fraction_of_stream", fraction(read, r.copy.readGBps)},
      {"read_fraction_paired", orNull(r.pairedFraction())},
      {"read_fraction_paired_rounds", pairedRounds(r)},
      {"reason", why.empty() ? json::Value(nullptr) : json::Value(why)}};
}

json::Object modelJSON(const ModelSummary &m) {
  json::Object agreement;
  for (const auto &[pair, error] : m.agreement)
    agreement[pair] = error;
  json::Array capacity;
  for (const auto &[cap, ms] : m.capacityMs) {
    auto paired = m.capacityPairedRatio.find(cap);
    capacity.push_back(
        json::Object{{"capacity", cap},
                     {"loom_ms_per_token", ms},
                     {"paired_ratio", paired == m.capacityPairedRatio.end()
                                          ? json::Value(nullptr)
                                          : json::Value(paired->second)}});
  }
  json::Array notes;
  for (const std::string &n : m.notes)
    notes.push_back(n);
  return json::Object{{"model", m.model},
                      {"capacity", m.capacity},
                      {"prompt_bound", m.promptBound},
                      {"weight_bytes", m.weightBytes},
                      {"decode_weight_bytes", m.decodeWeightBytes},
                      {"cache_bytes", m.cacheBytes},
                      {"compile_seconds", m.compileSeconds},
                      {"compile_peak_rss_kb", m.compilePeakRssKb},
                      {"peak_rss_kb", json::Object{{"loom", m.loomPeakKb},
                                                   {"ort", m.ortPeakKb},
                                                   {"torch", m.torchPeakKb}}},
                      {"agreement_tokens", m.agreementTokens},
                      {"agreement_max_abs", std::move(agreement)},
                      {"capacity_live", m.capacityLive},
                      {"capacity_check", std::move(capacity)},
                      {"notes", std::move(notes)}};
}

void printSummary(const ModelSummary &m) {
  outs() << formatv("\n{0}: capacity {1}, prompt bound {2}; weights {3:f1} MB "
                    "({4:f1} MB read by a decode step), cache {5:f1} MB\n",
                    m.model, m.capacity, m.promptBound, m.weightBytes / 1e6,
                    m.decodeWeightBytes / 1e6, m.cacheBytes / 1e6);
  double budget = (m.weightBytes + m.cacheBytes) / 1024.0;
  outs() << formatv("peak memory: Loom {0:f0} MB ({1:f2}x weights + cache), "
                    "ONNX Runtime {2:f0} MB, PyTorch {3:f0} MB\n",
                    m.loomPeakKb / 1024.0,
                    budget > 0 ? m.loomPeakKb / budget : 0.0,
                    m.ortPeakKb / 1024.0, m.torchPeakKb / 1024.0);
  if (!m.agreement.empty()) {
    outs() << "logits of a " << m.agreementTokens
           << "-token prompt, largest |difference|:";
    for (const auto &[pair, error] : m.agreement)
      outs() << formatv(" {0} {1:e2}", pair, error);
    outs() << "\n";
  }
  if (!m.capacityMs.empty()) {
    outs() << "capacity at live length " << m.capacityLive << ":";
    double first = m.capacityMs.begin()->second;
    for (const auto &[cap, ms] : m.capacityMs) {
      outs() << formatv(" C={0} {1:f2} ms ({2:f3}x", cap, ms, ms / first);
      auto paired = m.capacityPairedRatio.find(cap);
      if (paired != m.capacityPairedRatio.end())
        outs() << formatv("; paired {0:f3}x", paired->second);
      outs() << ")";
    }
    outs() << "\n";
  }
  for (const std::string &n : m.notes)
    outs() << "note: " << n << "\n";
}

} // namespace

void printReport(const std::vector<Row> &rows,
                 const std::vector<ModelSummary> &models) {
  outs() << formatv("\n| model | context | Loom ms/token | ORT | torch | "
                    "Loom/ORT | Loom TTFT ms | ORT TTFT | torch TTFT | "
                    "Loom/ORT TTFT | read GB/s | copy GB/s | read / copy | "
                    "stream GB/s | read / stream | paired read / copy |\n");
  outs() << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
            "---|\n";
  for (const Row &r : rows) {
    std::optional<double> read = r.readGBps();
    outs() << formatv("| {0} | {1} | {2} | {3} | {4} | {5} | {6} | {7} | {8} "
                      "| {9} | {10} | {11:f1} | {12} | {13:f1} | {14} | "
                      "{15} |\n",
                      r.model, r.context, fmtMs(r.loom.decodeMs),
                      fmtMs(r.ort.decodeMs), fmtMs(r.torch.decodeMs),
                      ratio(r.loom.decodeMs, r.ort.decodeMs),
                      fmtMs(r.loom.ttftMs), fmtMs(r.ort.ttftMs),
                      fmtMs(r.torch.ttftMs), ratio(r.loom.ttftMs, r.ort.ttftMs),
                      read ? formatv("{0:f1}", *read).str() : "n/a",
                      r.copy.copyGBps, ratio(read, r.copy.copyGBps),
                      r.copy.readGBps, ratio(read, r.copy.readGBps),
                      r.pairedFraction()
                          ? formatv("{0:f2}", *r.pairedFraction()).str()
                          : "n/a");
    if (std::string why = reasons(r); !why.empty())
      outs() << "    (" << r.context << ": " << why << ")\n";
  }
  for (const ModelSummary &m : models)
    printSummary(m);
}

json::Value reportJSON(const DecodeOptions &o, const std::vector<Row> &rows,
                       const std::vector<ModelSummary> &models,
                       const Bandwidth &bw, json::Object machine) {
  json::Array rowList, modelList;
  for (const Row &r : rows)
    rowList.push_back(rowJSON(r));
  for (const ModelSummary &m : models)
    modelList.push_back(modelJSON(m));
  return json::Object{
      {"machine", std::move(machine)},
      {"settings", json::Object{{"threads", o.threads},
                                {"rounds", o.rounds},
                                {"warmup", o.warmup},
                                {"steps", o.steps},
                                {"prefill_repeat", o.prefillRepeat},
                                {"seed", o.seed}}},
      {"bandwidth", json::Object{{"bytes", bw.bytes},
                                 {"threads", bw.threads},
                                 {"repeat", bw.repeat},
                                 {"copy_gbps", bw.copyGBps},
                                 {"copied_gbps", bw.copiedGBps},
                                 {"read_gbps", bw.readGBps}}},
      {"models", std::move(modelList)},
      {"rows", std::move(rowList)}};
}

} // namespace loom::bench
