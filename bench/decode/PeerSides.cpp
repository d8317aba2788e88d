//===- PeerSides.cpp - ONNX Runtime and PyTorch columns -------------------===//
//
// Part of Loom. See PeerSides.h.
//
//===----------------------------------------------------------------------===//

#include "PeerSides.h"

#include "BenchSupport.h"
#include "Peers.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

using namespace llvm;

namespace loom::bench {

const char *peerName(Peer p) {
  switch (p) {
  case Peer::Ort:
    return "ort";
  case Peer::Torch:
    return "torch";
  }
  return "?";
}

static constexpr unsigned kTimeoutSeconds = 3600;

Error checkPeer(Peer p, const DecodeOptions &o) {
  switch (p) {
  case Peer::Ort: {
    OrtOptions ort;
    ort.node = o.node;
    ort.script = o.ortScript;
    ort.package = o.ortPackage;
    return checkOrt(ort);
  }
  case Peer::Torch: {
    ProcessResult r = runProcess(o.python, {"-c", "import torch, onnx"}, 120);
    if (!r.succeeded())
      return createStringError(o.python + " cannot import torch and onnx (" +
                               r.summary() + ")");
    return Error::success();
  }
  }
  return Error::success();
}

/// The command line of one request to `p`.
static std::vector<std::string> peerArgs(Peer p, const DecodeOptions &o,
                                         const PeerModel &m,
                                         const PeerRequest &r) {
  std::vector<std::string> args;
  if (p == Peer::Ort)
    args = {o.ortScript, "--ort", o.ortPackage, "--model", m.onnx};
  else
    args = {o.torchScript, "--export-script", o.exportScript,
            "--weights",   m.weights,         "--arch",
            m.arch,        "--capacity",      std::to_string(m.capacity)};
  auto add = [&](const char *name, std::string value) {
    args.push_back(name);
    args.push_back(std::move(value));
  };
  add("--threads", std::to_string(o.threads));
  add("--context", std::to_string(r.context));
  add("--steps", std::to_string(o.steps));
  add("--warmup", std::to_string(o.warmup));
  add("--prefill-length", std::to_string(r.prefillLength));
  add("--prefill-repeat", std::to_string(o.prefillRepeat));
  if (!r.promptIds.empty()) {
    add("--prompt-ids",
        join(
            map_range(r.promptIds, [](int64_t i) { return std::to_string(i); }),
            ","));
    add("--logits-out", r.logitsOut);
  }
  return args;
}

Expected<Bandwidth> measureBandwidthInChild(const DecodeOptions &o) {
  ProcessResult run =
      runProcess(o.self,
                 {"--bandwidth-only", "--threads", std::to_string(o.threads),
                  "--copy-mib", std::to_string(o.copyMiB), "--copy-repeat",
                  std::to_string(o.copyRepeat)},
                 kTimeoutSeconds);
  if (!run.succeeded())
    return createStringError("bandwidth: " + run.summary());
  Expected<json::Value> parsed = json::parse(StringRef(run.out).trim());
  if (!parsed)
    return parsed.takeError();
  const json::Object *report = parsed->getAsObject();
  std::optional<double> copy = report ? report->getNumber("copy_gbps")
                                      : std::nullopt,
                        copied = report ? report->getNumber("copied_gbps")
                                        : std::nullopt,
                        read = report ? report->getNumber("read_gbps")
                                      : std::nullopt;
  if (!copy || !copied || !read)
    return createStringError("bandwidth: the child printed no figures");
  Bandwidth bw;
  bw.bytes = o.copyMiB << 20;
  bw.threads = o.threads;
  bw.repeat = o.copyRepeat;
  bw.copyGBps = *copy, bw.copiedGBps = *copied, bw.readGBps = *read;
  return bw;
}

PeerResult runPeer(Peer p, const DecodeOptions &o, const PeerModel &m,
                   const PeerRequest &r) {
  PeerResult result;
  std::string program = p == Peer::Ort ? o.node : o.python;
  ProcessResult run =
      runProcess(program, peerArgs(p, o, m, r), kTimeoutSeconds);
  // The child's own peak comes from its report: the rusage of a child that
  // failed carries this process's high-water mark (fork copies it).
  if (!run.succeeded()) {
    result.failure = run.summary();
    return result;
  }
  Expected<json::Value> parsed = json::parse(StringRef(run.out).trim());
  json::Object *report = parsed ? parsed->getAsObject() : nullptr;
  if (!report) {
    if (!parsed)
      consumeError(parsed.takeError());
    result.failure = std::string(peerName(p)) + " printed no JSON object";
    return result;
  }
  result.decodeMs = report->getNumber("decode_ms");
  result.prefillMs = report->getNumber("prefill_ms");
  result.peakRssKb = report->getInteger("peak_rss_kb").value_or(0);
  result.baselineRssKb = report->getInteger("baseline_rss_kb").value_or(0);
  return result;
}

Error exportOnnx(const DecodeOptions &o, const PeerModel &m, StringRef out) {
  ProcessResult run =
      runProcess(o.python,
                 {o.exportScript, "--weights", m.weights, "--arch", m.arch,
                  "--capacity", std::to_string(m.capacity), "-o", out.str()},
                 kTimeoutSeconds);
  if (!run.succeeded())
    return createStringError("scripts/export-decoder.py: " + run.summary());
  return Error::success();
}

} // namespace loom::bench
