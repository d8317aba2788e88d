//===- Report.cpp - What loom-generate prints and writes ------------------===//
//
// Part of Loom. See Report.h.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace loom::generate;
namespace json = llvm::json;

namespace {

/// The nearest-rank percentile \p p of sorted \p v.
double percentile(const std::vector<double> &v, double p) {
  size_t rank = size_t(std::ceil(p / 100.0 * double(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

json::Array idsJson(llvm::ArrayRef<int64_t> ids) {
  json::Array a;
  for (int64_t id : ids)
    a.push_back(id);
  return a;
}

/// The generated ids of sequence \p b.
std::vector<int64_t> generated(const LoopResult &r, int64_t b) {
  std::vector<int64_t> ids;
  for (const std::vector<int64_t> &step : r.tokens)
    ids.push_back(step[b]);
  return ids;
}

json::Object settingsJson(const RunReport &r) {
  const SamplingOptions &s = r.loop->sampling;
  json::Object o{{"tokens", r.loop->tokens},
                 {"sampling", s.sample ? "sample" : "greedy"},
                 {"threads", r.threads}};
  if (s.sample) {
    o["temperature"] = s.temperature;
    o["top_k"] = s.topK;
    o["top_p"] = s.topP;
    o["seed"] = int64_t(s.seed);
  }
  return o;
}

json::Value checkJson(const std::optional<CheckResult> &c) {
  if (!c)
    return nullptr;
  json::Object o{{"passed", c->passed()},
                 {"tokens_identical", c->tokensIdentical()},
                 {"steps_compared", c->stepsCompared},
                 {"max_abs_error", c->maxAbsError},
                 {"max_scaled_error", c->maxScaledError},
                 {"worst_step", c->worstStep},
                 {"worst_sequence", c->worstSequence},
                 {"tolerance", c->tolerance}};
  if (!c->tokensIdentical())
    o["first_mismatch"] = json::Object{{"step", c->mismatchStep},
                                       {"sequence", c->mismatchSequence},
                                       {"artifact", c->artifactToken},
                                       {"interpreter", c->referenceToken}};
  return o;
}

} // namespace

Timings loom::generate::summarize(const LoopResult &result, int64_t real,
                                  double wallSeconds) {
  Timings t;
  t.ttftMs = result.prefillSeconds * 1e3;
  std::vector<double> ms;
  for (double s : result.decodeSeconds)
    ms.push_back(s * 1e3);
  std::sort(ms.begin(), ms.end());
  double decodeMs = std::accumulate(ms.begin(), ms.end(), 0.0);
  t.decodeSteps = int64_t(ms.size());
  if (!ms.empty()) {
    t.p50Ms = percentile(ms, 50);
    t.p90Ms = percentile(ms, 90);
    t.p99Ms = percentile(ms, 99);
    t.meanMs = decodeMs / double(ms.size());
    if (decodeMs > 0)
      t.decodeTokensPerSecond = double(real * t.decodeSteps) / decodeMs * 1e3;
  }
  double totalMs = t.ttftMs + decodeMs;
  if (wallSeconds > 0) {
    totalMs = wallSeconds * 1e3;
    int64_t steps = int64_t(result.tokens.size()) - 1;
    t.decodeTokensPerSecond =
        totalMs > t.ttftMs && steps > 0
            ? double(real * steps) / (totalMs - t.ttftMs) * 1e3
            : 0;
  }
  if (totalMs > 0)
    t.tokensPerSecond =
        double(real * int64_t(result.tokens.size())) / totalMs * 1e3;
  return t;
}

void loom::generate::printTokens(llvm::raw_ostream &os, const RunReport &r) {
  for (int64_t b = 0; b < r.batch->real; ++b) {
    std::vector<int64_t> ids = generated(*r.result, b);
    for (size_t i = 0; i < ids.size(); ++i)
      os << (i ? "," : "") << ids[i];
    os << "\n";
  }
}

void loom::generate::printSummary(llvm::raw_ostream &os, const RunReport &r) {
  const Timings &t = r.timings;
  os << "loom-generate: " << r.batch->real << " sequence(s)";
  if (r.groups > 1)
    os << " in " << r.groups << " groups of the artifact's batch of "
       << r.contract->batch << ", run at once (a group's decode steps "
       << "below)";
  else if (r.batch->real < r.contract->batch)
    os << " (the artifact's batch of " << r.contract->batch
       << " padded with copies of the first)";
  os << ", " << r.loop->tokens << " token(s) each, "
     << (r.loop->sampling.sample ? "sampled" : "greedy") << "\n";
  os << llvm::format("time to first token: %.3f ms (prefill)\n", t.ttftMs);
  if (t.decodeSteps)
    os << llvm::format("decode: %lld step(s), p50 %.3f ms, p90 %.3f ms, "
                       "p99 %.3f ms, mean %.3f ms\n",
                       (long long)t.decodeSteps, t.p50Ms, t.p90Ms, t.p99Ms,
                       t.meanMs);
  os << llvm::format("tokens/s: %.1f (prefill included)", t.tokensPerSecond);
  if (t.decodeSteps)
    os << llvm::format(", %.1f in decode", t.decodeTokensPerSecond);
  os << "\n";
  if (const std::optional<CheckResult> &c = r.check) {
    os << "check: " << c->stepsCompared << " step(s) x " << r.batch->real
       << " sequence(s): tokens "
       << (c->tokensIdentical() ? "identical" : "differ")
       << " to the interpreter's; "
       << llvm::format(
              "logits: largest error %.3g (scaled, at step %lld, "
              "sequence %lld), largest absolute %.3g, tolerance %.3g\n",
              c->maxScaledError, (long long)c->worstStep,
              (long long)c->worstSequence, c->maxAbsError, c->tolerance);
  }
}

llvm::Error loom::generate::writeJson(llvm::StringRef path,
                                      const RunReport &r) {
  const DecoderContract &c = *r.contract;
  json::Array prompts, tokens;
  for (int64_t b = 0; b < r.batch->real; ++b) {
    prompts.push_back(idsJson(r.batch->prompts[b]));
    tokens.push_back(idsJson(generated(*r.result, b)));
  }
  const Timings &t = r.timings;
  json::Object decode{{"steps", t.decodeSteps},
                      {"p50_ms", t.p50Ms},
                      {"p90_ms", t.p90Ms},
                      {"p99_ms", t.p99Ms},
                      {"mean_ms", t.meanMs}};
  json::Object root{
      {"model", r.model},
      {"artifact", json::Object{{"batch", c.batch},
                                {"prompt_bound", c.promptBound},
                                {"vocab", c.vocab},
                                {"capacity", c.capacity}}},
      {"settings", settingsJson(r)},
      {"groups", r.groups},
      {"prompts", std::move(prompts)},
      {"tokens", std::move(tokens)},
      {"timings",
       json::Object{{"ttft_ms", t.ttftMs},
                    {"decode", std::move(decode)},
                    {"tokens_per_second", t.tokensPerSecond},
                    {"decode_tokens_per_second",
                     t.decodeSteps ? json::Value(t.decodeTokensPerSecond)
                                   : json::Value(nullptr)}}},
      {"check", checkJson(r.check)}};
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError("--json " + path + ": " + ec.message());
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
  return llvm::Error::success();
}
