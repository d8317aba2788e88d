//===- loom-generate.cpp - The token loop of a decoder artifact -----------===//
//
// Part of Loom. `loom-generate MODEL.so --prompt-ids 1,2,3 --tokens 16`:
// runs a decoder artifact's `prefill` entry on a batch of prompts and its
// `decode` entry once per further token, the KV cache kept in the
// context's state (docs/tools/loom-generate.md). Greedy, or sampled with a
// seed; reports time to first token, decode latency percentiles and
// tokens/s; --check runs the same loop in the reference interpreter on the
// artifact's embedded source and compares every token and every step's
// logits.
//
//===----------------------------------------------------------------------===//

#include "ArtifactSteps.h"
#include "Check.h"
#include "Contract.h"
#include "Groups.h"
#include "Prompts.h"
#include "Ranks.h"
#include "ReferenceSteps.h"
#include "Report.h"
#include "ThreadsOption.h"
#include "TokenLoop.h"

#include "loom/Search/Outcome.h"
#include "loom/Tokenizer/Tokenizer.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <unistd.h>

using namespace loom;
using namespace loom::generate;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("loom-generate options");
cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.so>"),
                               cl::Required, cl::cat(category));
cl::list<std::string> promptIds(
    "prompt-ids",
    cl::desc("Token ids of a prompt, separated by ','; sequences of a batch "
             "separated by ';' or given by repeating the option"),
    cl::cat(category));
cl::opt<int64_t> promptLength(
    "prompt-length",
    cl::desc("Prompts of N ids drawn from --seed instead of --prompt-ids"),
    cl::init(0), cl::cat(category));
cl::opt<int64_t> batchPrompts(
    "batch-prompts",
    cl::desc("With --prompt-length: the number of sequences (default: the "
             "artifact's batch, times --groups)"),
    cl::init(0), cl::cat(category));
cl::opt<int64_t> groups(
    "groups",
    cl::desc("G: run G batches of the artifact's batch B at once (G B "
             "sequences, B a group in order), each with its own contexts "
             "and, on ranks, its own copy of the world, so that the groups "
             "pass through pipeline stages one behind another "
             "(docs/CacheParallel.md, \"Groups in flight\"; default 1)"),
    cl::init(1), cl::cat(category));
cl::list<std::string> promptTexts(
    "prompt",
    cl::desc("A prompt as text, encoded by --tokenizer (one sequence each; "
             "repeat for a batch)"),
    cl::cat(category));
cl::opt<std::string> tokenizerPath(
    "tokenizer",
    cl::desc("A HuggingFace tokenizer.json: encodes --prompt, and prints each "
             "sequence's generated text as a JSON string after the ids"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<int64_t> tokens("tokens", cl::desc("Tokens to generate per sequence"),
                        cl::init(16), cl::cat(category));
cl::opt<int64_t> topK("top-k",
                      cl::desc("Sample from the K most probable "
                               "tokens (0: all)"),
                      cl::init(0), cl::cat(category));
cl::opt<double> topP("top-p",
                     cl::desc("Sample from the fewest most probable tokens "
                              "whose probability reaches P"),
                     cl::init(1.0), cl::cat(category));
cl::opt<double> temperature("temperature",
                            cl::desc("Divide the logits by T before sampling "
                                     "(0: greedy)"),
                            cl::init(1.0), cl::cat(category));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed of sampling and of --prompt-length"),
                       cl::init(0), cl::cat(category));
cl::opt<bool> check("check",
                    cl::desc("Run the same greedy loop in the interpreter on "
                             "the embedded source and compare"),
                    cl::cat(category));
cl::opt<double> tolerance("tolerance",
                          cl::desc("--check: the largest scaled error of the "
                                   "logits"),
                          cl::init(1e-4), cl::cat(category));
cl::opt<std::string> jsonPath("json", cl::desc("Write the report here"),
                              cl::value_desc("file"), cl::cat(category));
cl::opt<int64_t> ranksOption(
    "ranks",
    cl::desc("An artifact compiled for a world of P ranks "
             "(loom-compile --cache-parallel=P): run its P ranks as threads "
             "of this process (0, the default: the artifact's count; under "
             "a launcher this process is one rank of the launcher's world)"),
    cl::init(0), cl::cat(category));
cl::opt<double> rankTimeout(
    "rank-timeout",
    cl::desc("Seconds a rank waits for the others at a gather before it "
             "fails (a rank that died or hung)"),
    cl::init(30), cl::cat(category));
cl::opt<bool> progress("progress",
                       cl::desc("A progress line on stderr even when it is "
                                "not a terminal"),
                       cl::cat(category));

/// --threads, registered by main (ThreadsOption.h).
cl::opt<unsigned> *threads = nullptr;

int fail(const llvm::Twine &msg) {
  llvm::outs().flush();
  llvm::errs() << "loom-generate: error: " << msg << "\n";
  return 1;
}

int fail(llvm::Error e) { return fail(llvm::toString(std::move(e))); }

/// The sampling options, checked; greedy unless one of --top-k, --top-p,
/// --temperature is given.
llvm::Expected<SamplingOptions> samplingOptions() {
  SamplingOptions s;
  s.sample = topK.getNumOccurrences() || topP.getNumOccurrences() ||
             temperature.getNumOccurrences();
  s.topK = topK;
  s.topP = topP;
  s.temperature = temperature;
  s.seed = seed;
  if (topK < 0 || !(topP > 0 && topP <= 1) || !(temperature >= 0))
    return llvm::createStringError("--top-k must be at least 0, --top-p in "
                                   "(0, 1], --temperature at least 0");
  if (s.sample && check)
    return llvm::createStringError(
        "--check compares greedy decoding with the interpreter: drop "
        "--top-k, --top-p and --temperature");
  return s;
}

/// Prints "loom-generate: WHAT: token S/N" lines on stderr during a long
/// loop: after 2 s, every 2 s, on a terminal or with --progress.
std::function<void(int64_t)> progressLine(int64_t total, llvm::StringRef what) {
  if (!progress && !isatty(2))
    return nullptr;
  auto line = std::make_shared<search::Progress>(
      [](const std::string &s) { llvm::errs() << s << "\n"; });
  std::string name = what.str();
  return [line, total, name](int64_t step) {
    if (line->due())
      line->print("loom-generate: " + name + ": token " +
                  std::to_string(step + 1) + "/" + std::to_string(total));
  };
}

/// --check: the same loop in the interpreter, compared.
llvm::Expected<CheckResult> checkLoop(const loom_model *model,
                                      const DecoderContract &contract,
                                      const Batch &batch, LoopOptions loop,
                                      const LoopResult &got) {
  auto reference = ReferenceSteps::create(model, contract);
  if (!reference)
    return reference.takeError();
  loop.onStep = progressLine(loop.tokens, "interpreter");
  auto want = runTokenLoop(**reference, batch, loop);
  if (!want)
    return want.takeError();
  return compareLoops(got, *want, batch.real, contract.vocab, tolerance);
}

/// --prompt's texts as --prompt-ids values, encoded by \p tokenizer.
llvm::Expected<std::vector<std::string>>
encodePrompts(const tokenizer::Tokenizer &tokenizer) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < promptTexts.size(); ++i) {
    auto encoded = tokenizer.encode(promptTexts[i]);
    if (!encoded)
      return llvm::createStringError("--prompt " + std::to_string(i) + ": " +
                                     llvm::toString(encoded.takeError()));
    std::string list;
    for (int64_t id : *encoded)
      list += (list.empty() ? "" : ",") + std::to_string(id);
    ids.push_back(list);
  }
  return ids;
}

/// Each sequence's generated text, a JSON string a line.
void printTexts(llvm::raw_ostream &os, const tokenizer::Tokenizer &tokenizer,
                const Batch &batch, const LoopResult &result) {
  for (int64_t b = 0; b < batch.real; ++b) {
    tokenizer::TextStream text(tokenizer, batch.prompts[b]);
    for (const std::vector<int64_t> &step : result.tokens)
      if (auto piece = text.push(step[b]); !piece)
        llvm::consumeError(piece.takeError()); // an id past the tokenizer's
    text.finish();
    os << llvm::json::Value(text.text()) << "\n";
  }
}

int runGenerate(const loom_model *model) {
  auto contract = readContract(model, modelPath);
  if (!contract)
    return fail(contract.takeError());
  auto sampling = samplingOptions();
  if (!sampling)
    return fail(sampling.takeError());
  std::optional<tokenizer::Tokenizer> tok;
  if (!tokenizerPath.empty()) {
    auto loaded = tokenizer::Tokenizer::load(tokenizerPath);
    if (!loaded)
      return fail(loaded.takeError());
    tok.emplace(std::move(*loaded));
  }
  std::vector<std::string> ids = promptIds;
  if (!promptTexts.empty()) {
    if (!tok)
      return fail("--prompt is text: give its --tokenizer");
    if (!promptIds.empty() || promptLength)
      return fail("give prompts as --prompt, --prompt-ids or --prompt-length, "
                  "one of them");
    auto encoded = encodePrompts(*tok);
    if (!encoded)
      return fail(encoded.takeError());
    ids = std::move(*encoded);
  }
  PromptOptions po{ids, promptLength, batchPrompts, seed, tokens, groups};
  auto batches = makeBatches(po, *contract);
  if (!batches)
    return fail(batches.takeError());
  LoopOptions loop{tokens,          contract->promptBound,
                   contract->vocab, *sampling,
                   check,           progressLine(tokens, "artifact")};
  if (!(rankTimeout > 0))
    return fail("--rank-timeout must be above 0 seconds");
  auto ranked =
      runOnRanks(model, *contract, *batches, loop, ranksOption, rankTimeout);
  if (!ranked)
    return fail(ranked.takeError());
  // Every rank computed the same loops: rank 0 reports them, the groups'
  // as one batch.
  if (ranked->rank != 0)
    return 0;
  std::optional<MergedGroups> merged;
  const Batch *batch = &batches->front();
  const LoopResult *result = &ranked->loops.front();
  if (groups > 1) {
    merged = mergeGroups(*batches, ranked->loops);
    batch = &merged->batch;
    result = &merged->loop;
  }
  if (ranked->ranks > 1) {
    int64_t decodes = int64_t(result->decodeSeconds.size());
    llvm::errs() << llvm::formatv(
        "loom-generate: {0} ranks ({1}); rank 0 sent {2} bytes: {3} in the "
        "prefill, {4:F0} a decode step\n",
        ranked->ranks, ranked->world, ranked->bytesSent, ranked->prefillBytes,
        decodes ? double(ranked->bytesSent - ranked->prefillBytes) / decodes
                : 0.0);
  }
  RunReport report{
      modelPath,
      &*contract,
      batch,
      &loop,
      int(*threads),
      result,
      groups,
      summarize(*result, batch->real, groups > 1 ? ranked->wallSeconds : 0),
      std::nullopt};
  if (check) {
    std::vector<CheckResult> checks;
    for (size_t g = 0; g < batches->size(); ++g) {
      auto checked =
          checkLoop(model, *contract, (*batches)[g], loop, ranked->loops[g]);
      if (!checked)
        return fail(checked.takeError());
      checks.push_back(*checked);
    }
    report.check = mergeChecks(*batches, checks);
  }
  printTokens(llvm::outs(), report);
  if (tok)
    printTexts(llvm::outs(), *tok, *batch, *result);
  llvm::outs().flush();
  printSummary(llvm::errs(), report);
  if (!jsonPath.empty())
    if (llvm::Error e = writeJson(jsonPath, report))
      return fail(std::move(e));
  if (report.check && !report.check->tokensIdentical())
    return fail(llvm::formatv(
                    "--check: step {0}, sequence {1}: the artifact "
                    "generates {2}, the interpreter {3}",
                    report.check->mismatchStep, report.check->mismatchSequence,
                    report.check->artifactToken, report.check->referenceToken)
                    .str());
  if (report.check && !report.check->passed())
    return fail(
        llvm::formatv("--check: the logits of step {0}, sequence {1} "
                      "differ by {2} (scaled), more than "
                      "--tolerance {3}",
                      report.check->worstStep, report.check->worstSequence,
                      report.check->maxScaledError, tolerance.getValue())
            .str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  threads = &loom::tools::registerThreadsOption(category);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-generate: the token loop of a decoder artifact "
      "(docs/tools/loom-generate.md)\n");
  loom_model_options options = {};
  options.num_threads = int(*threads);
  loom_model *model = nullptr;
  if (loom_model_load(modelPath.c_str(), &options, &model) != LOOM_OK)
    return fail(loom_last_error());
  int rc = runGenerate(model);
  loom_model_free(model);
  return rc;
}
