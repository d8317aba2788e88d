//===- Options.cpp - The command line of loom-bench-decode ----------------===//
//
// Part of Loom. See Options.h.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>

using namespace llvm;

namespace loom::bench {
namespace {

cl::OptionCategory cat("loom-bench-decode options");

cl::opt<std::string> model("model",
                           cl::desc("zoo:gpt2-small, zoo:tinyllama or an "
                                    "ONNX export FILE.onnx (past/present)"),
                           cl::init(""), cl::cat(cat));
cl::opt<std::string> contexts("contexts",
                              cl::desc("Live lengths, e.g. 128,512,1k,32k"),
                              cl::init("128,512,1024"), cl::cat(cat));
cl::opt<int64_t> capacity("capacity",
                          cl::desc("Cache capacity (default: the largest "
                                   "context)"),
                          cl::init(0), cl::cat(cat));
cl::opt<int64_t> promptBound("prompt-bound",
                             cl::desc("Prefill's prompt bound P; TTFT is "
                                      "measured at contexts <= P"),
                             cl::init(1024), cl::cat(cat));
cl::opt<int64_t> layers("layers", cl::desc("loom-zoo --layers"), cl::init(0),
                        cl::cat(cat));
cl::opt<int64_t> hidden("hidden", cl::desc("loom-zoo --hidden"), cl::init(0),
                        cl::cat(cat));
cl::opt<int64_t> vocab("vocab", cl::desc("loom-zoo --vocab"), cl::init(0),
                       cl::cat(cat));
cl::opt<unsigned> seed("seed", cl::desc("Weights' and prompts' seed"),
                       cl::init(0), cl::cat(cat));
cl::opt<unsigned> threads("threads", cl::desc("Threads of every side"),
                          cl::init(2), cl::cat(cat));
cl::opt<unsigned> rounds("rounds",
                         cl::desc("Rounds per row, the sides alternating "
                                  "(the best round's median is kept)"),
                         cl::init(2), cl::cat(cat));
cl::opt<unsigned> warmup("warmup", cl::desc("Untimed decode steps"),
                         cl::init(3), cl::cat(cat));
cl::opt<unsigned> steps("steps", cl::desc("Timed decode steps (>= 20)"),
                        cl::init(20), cl::cat(cat));
cl::opt<unsigned> prefillRepeat("prefill-repeat",
                                cl::desc("Timed prefills per round"),
                                cl::init(3), cl::cat(cat));
cl::opt<std::string> capacityCheck(
    "capacity-check",
    cl::desc("Capacities to compare at --capacity-live, e.g. 2048,32768"),
    cl::init(""), cl::cat(cat));
cl::opt<int64_t> capacityLive("capacity-live",
                              cl::desc("Live length of --capacity-check"),
                              cl::init(1024), cl::cat(cat));
cl::opt<unsigned> capacityRounds(
    "capacity-rounds",
    cl::desc("Alternations of the --capacity-check artifacts (default 9): "
             "each capacity's best median, and the median over alternations "
             "of each one's step against the first capacity's just before"),
    cl::init(9), cl::cat(cat));
cl::opt<int64_t> agreeTokens("agree-tokens",
                             cl::desc("Prompt of the logits agreement check "
                                      "(0: none; default 32, at most "
                                      "--prompt-bound)"),
                             cl::init(32), cl::cat(cat));
cl::opt<std::string> peers("peers",
                           cl::desc("ort,torch (default), ort, torch or none"),
                           cl::init("ort,torch"), cl::cat(cat));
cl::opt<int64_t> copyMiB("copy-mib", cl::desc("MiB of the copy benchmark"),
                         cl::init(512), cl::cat(cat));
cl::opt<unsigned> copyRepeat("copy-repeat",
                             cl::desc("Copies (the best is kept)"), cl::init(5),
                             cl::cat(cat));
cl::opt<std::string> ranks(
    "ranks",
    cl::desc("Rank counts, e.g. 1,2,4: instead of the peers, time the decode "
             "step of artifacts compiled for each count (--parallel), its "
             "ranks threads of this process with one runtime thread each, "
             "beside one process of as many threads (docs/CacheParallel.md)"),
    cl::init(""), cl::cat(cat));
cl::opt<std::string> parallel(
    "parallel",
    cl::desc("With --ranks: how the ranks split the work, one or both of "
             "cp (the caches sharded by position, loom-compile "
             "--cache-parallel), tp (heads and feed-forward columns, "
             "loom-compile --tensor-parallel), cptp (both: 2 cache shards "
             "x ranks/2 tensor-parallel ranks, at even counts of 4 and "
             "more) and pp (pipeline stages of contiguous layers, "
             "loom-compile --pipeline-stages), e.g. cp,tp,pp"),
    cl::init("cp"), cl::cat(cat));
cl::opt<double> maxLoad("max-load", cl::desc("The 1-minute load to wait for"),
                        cl::init(1.5), cl::cat(cat));
cl::opt<unsigned> waitSeconds("wait-idle",
                              cl::desc("Seconds to wait for --max-load before "
                                       "measuring anyway (0: do not wait)"),
                              cl::init(0), cl::cat(cat));
cl::opt<bool> reuse("reuse",
                    cl::desc("Reuse the weights, artifacts and exports "
                             "already in --workdir"),
                    cl::cat(cat));
cl::opt<bool> bandwidthOnly(
    "bandwidth-only",
    cl::desc("Measure the copy and read-only bandwidth alone (--threads, "
             "--copy-mib, --copy-repeat) and print them as a JSON object: "
             "what each round runs in a child process beside its sides"),
    cl::cat(cat));
cl::opt<bool> prepareOnly("prepare-only",
                          cl::desc("Make the weights, artifacts and exports "
                                   "in --workdir, then stop"),
                          cl::cat(cat));
cl::opt<std::string> json("json", cl::desc("Write the rows to this file"),
                          cl::init(""), cl::cat(cat));
cl::opt<std::string> workDir("workdir",
                             cl::desc("Where the models, artifacts and "
                                      "exports go and stay"),
                             cl::init(""), cl::cat(cat));
cl::opt<std::string> node("node", cl::desc("node (default: on PATH)"),
                          cl::init(""), cl::cat(cat));
cl::opt<std::string>
    ortPackage("ort-package", cl::desc("onnxruntime-node's package directory"),
               cl::init(LOOM_BENCH_DECODE_ORT_PACKAGE), cl::cat(cat));
cl::opt<std::string> python("python", cl::desc("Python with torch 1.13"),
                            cl::init("/usr/bin/python3"), cl::cat(cat));
cl::opt<std::string> binDir("bin-dir",
                            cl::desc("Where loom-zoo and loom-compile are "
                                     "(default: beside this executable)"),
                            cl::init(""), cl::cat(cat));

Expected<ModelSpec> parseModel(StringRef text) {
  ModelSpec m;
  m.text = text.str();
  if (text.consume_front("zoo:")) {
    if (text == "gpt2-small")
      m.arch = "gpt2";
    else if (text == "tinyllama")
      m.arch = "llama";
    else
      return createStringError("unknown zoo decoder '" + text +
                               "' (zoo:gpt2-small or zoo:tinyllama)");
    m.zooName = text.str();
    return m;
  }
  if (text.empty())
    return createStringError("--model is required (zoo:gpt2-small, "
                             "zoo:tinyllama or FILE.onnx)");
  if (!text.ends_with(".onnx"))
    return createStringError("--model " + text +
                             ": not zoo:NAME, and a file must end in .onnx");
  if (!sys::fs::exists(text))
    return createStringError("--model " + text + ": no such file");
  m.onnxFile = text.str();
  return m;
}

Error parsePeers(DecodeOptions &o) {
  o.runOrt = o.runTorch = false;
  if (peers == "none")
    return Error::success();
  SmallVector<StringRef> names;
  StringRef(peers).split(names, ',');
  for (StringRef n : names) {
    if (n == "ort")
      o.runOrt = true;
    else if (n == "torch")
      o.runTorch = true;
    else
      return createStringError("--peers: unknown peer '" + n +
                               "' (ort, torch or none)");
  }
  return Error::success();
}

std::string besideExecutable(const char *argv0, StringRef name) {
  static int anchor;
  SmallString<256> p(
      sys::path::parent_path(sys::fs::getMainExecutable(argv0, &anchor)));
  if (!name.empty())
    sys::path::append(p, name);
  return std::string(p);
}

Error checkRanges(const DecodeOptions &o) {
  if (o.steps < 20)
    return createStringError("--steps must be at least 20");
  if (o.rounds < 1 || o.prefillRepeat < 1 || o.copyRepeat < 1)
    return createStringError(
        "--rounds, --prefill-repeat and --copy-repeat must be at least 1");
  if (o.threads < 1)
    return createStringError("--threads must be at least 1");
  if (o.copyMiB < 1)
    return createStringError("--copy-mib must be at least 1");
  if (o.contexts.back() > o.capacity)
    return createStringError("context " + Twine(o.contexts.back()) +
                             " is past --capacity " + Twine(o.capacity));
  if (o.promptBound < 1)
    return createStringError("--prompt-bound must be at least 1");
  for (int64_t r : o.ranks)
    for (const std::string &kind : o.parallels) {
      int64_t shards = splitOf(kind, r).cp;
      if (shards > 1 && o.capacity % shards)
        return createStringError("--capacity " + Twine(o.capacity) +
                                 " is not a multiple of " + Twine(shards) +
                                 " cache shards (" + kind + " on " + Twine(r) +
                                 " ranks; a shard holds C / P positions)");
    }
  if (o.agreeTokens < 0 || o.agreeTokens > o.promptBound)
    return createStringError("--agree-tokens must be in 0..--prompt-bound");
  if (!o.capacityCheck.empty() && o.capacityRounds < 1)
    return createStringError("--capacity-rounds must be at least 1");
  if (!o.capacityCheck.empty() &&
      (o.capacityLive < 1 || o.capacityLive > o.capacityCheck.front()))
    return createStringError("--capacity-live must be in 1..the smallest "
                             "--capacity-check");
  return Error::success();
}

} // namespace

Expected<std::vector<int64_t>> parseLengths(StringRef text, StringRef option) {
  std::vector<int64_t> out;
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef p : parts) {
    StringRef digits = p.trim();
    int64_t scale = 1;
    if (digits.consume_back("k") || digits.consume_back("K"))
      scale = 1024;
    int64_t v;
    if (digits.getAsInteger(10, v) || v < 1 || v > (int64_t(1) << 20) / scale)
      return createStringError("--" + option + ": '" + p +
                               "' is not a length in 1..1M");
    if (!out.empty() && v * scale <= out.back())
      return createStringError("--" + option + ": lengths must ascend, got " +
                               Twine(v * scale) + " after " +
                               Twine(out.back()));
    out.push_back(v * scale);
  }
  return out;
}

Split splitOf(StringRef kind, int64_t ranks) {
  if (kind == "none")
    return {1, 1, 1};
  if (kind == "cp")
    return {ranks, 1, 1};
  if (kind == "tp")
    return {1, ranks, 1};
  if (kind == "pp")
    return {1, 1, ranks};
  if (kind == "cptp" && ranks >= 4 && ranks % 2 == 0)
    return {2, ranks / 2, 1};
  return {};
}

Expected<DecodeOptions> parseOptions(int argc, char **argv) {
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-bench-decode: a decoder's per-token decode latency and time to "
      "first token against context length, Loom beside ONNX Runtime and "
      "PyTorch, and the read bandwidth against a copy's\n");
  DecodeOptions o;
  o.threads = threads, o.copyMiB = copyMiB, o.copyRepeat = copyRepeat;
  o.self = besideExecutable(argv[0], "loom-bench-decode");
  if (bandwidthOnly) {
    o.bandwidthOnly = true;
    if (o.threads < 1 || o.copyMiB < 1 || o.copyRepeat < 1)
      return createStringError(
          "--threads, --copy-mib and --copy-repeat must be at least 1");
    return o;
  }
  auto m = parseModel(model);
  if (!m)
    return m.takeError();
  o.model = std::move(*m);
  auto lengths = parseLengths(contexts, "contexts");
  if (!lengths)
    return lengths.takeError();
  o.contexts = std::move(*lengths);
  if (!capacityCheck.empty()) {
    auto caps = parseLengths(capacityCheck, "capacity-check");
    if (!caps)
      return caps.takeError();
    o.capacityCheck = std::move(*caps);
  }
  if (Error e = parsePeers(o))
    return std::move(e);
  if (!ranks.empty()) {
    SmallVector<StringRef> parts;
    StringRef(ranks).split(parts, ',');
    for (StringRef p : parts) {
      int64_t r;
      if (p.trim().getAsInteger(10, r) || r < 1 || r > 64 ||
          (!o.ranks.empty() && r <= o.ranks.back()))
        return createStringError("--ranks: '" + p +
                                 "' is not a rank count in 1..64 (ascending)");
      o.ranks.push_back(r);
    }
    SmallVector<StringRef> kinds;
    StringRef(parallel).split(kinds, ',');
    o.parallels.clear();
    for (StringRef k : kinds) {
      if (!llvm::is_contained({"cp", "tp", "cptp", "pp"}, k.trim()) ||
          llvm::is_contained(o.parallels, k.trim()))
        return createStringError("--parallel: '" + k +
                                 "' is not one of cp, tp, cptp and pp (each "
                                 "once)");
      o.parallels.push_back(k.trim().str());
    }
    o.runOrt = o.runTorch = false;
  }
  o.capacity = capacity ? int64_t(capacity) : o.contexts.back();
  o.promptBound = std::min<int64_t>(promptBound, o.capacity);
  o.layers = layers, o.hidden = hidden, o.vocab = vocab, o.seed = seed;
  o.threads = threads, o.rounds = rounds, o.warmup = warmup, o.steps = steps;
  o.prefillRepeat = prefillRepeat, o.capacityLive = capacityLive;
  o.capacityRounds = capacityRounds;
  o.agreeTokens = agreeTokens.getNumOccurrences()
                      ? int64_t(agreeTokens)
                      : std::min<int64_t>(agreeTokens, o.promptBound);
  o.copyMiB = copyMiB, o.copyRepeat = copyRepeat;
  o.maxLoad = maxLoad, o.waitSeconds = waitSeconds;
  o.reuse = reuse, o.prepareOnly = prepareOnly;
  if ((o.reuse || o.prepareOnly) && workDir.empty())
    return createStringError("--reuse and --prepare-only need --workdir");
  o.json = json, o.workDir = workDir, o.ortPackage = ortPackage;
  o.python = python;
  o.ortScript = LOOM_BENCH_DECODE_ORT_SCRIPT;
  o.torchScript = LOOM_BENCH_DECODE_TORCH_SCRIPT;
  o.exportScript = LOOM_BENCH_DECODE_EXPORT_SCRIPT;
  o.binDir = binDir.empty() ? besideExecutable(argv[0], "") : binDir;
  o.node = node;
  if (o.node.empty())
    if (ErrorOr<std::string> found = sys::findProgramByName("node"))
      o.node = *found;
  if (Error e = checkRanges(o))
    return std::move(e);
  return o;
}

} // namespace loom::bench
