//===- loom-plan-decode.cpp - How devices should share a decode step ------===//
//
// Part of Loom. `loom-plan-decode model.mlir --machine h100x8 --contexts
// 8k,1m --batch 1,16`: for a decoder program (docs/Decoding.md), every split
// of the machine's devices into cache parallelism x tensor parallelism
// estimated per context length and batch (include/loom/Pipeline/
// DecodePlan.h), each candidate's parts and memory, and the fastest that
// fits (docs/tools/loom-plan-decode.md).
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Pipeline/DecodePlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace loom;
using namespace loom::pipeline;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("loom-plan-decode options");
cl::opt<std::string> input(cl::Positional, cl::desc("<decoder.mlir>"),
                           cl::Required, cl::cat(category));
cl::opt<std::string> machineName(
    "machine",
    cl::desc("h100x8 (one host of 8 H100 over NVLink), h100x32 (4 hosts of "
             "8 over 400 Gb/s), h200x8, or a machine file FILE.json of "
             "measured figures (docs/tools/loom-plan-decode.md)"),
    cl::init("h100x8"), cl::cat(category));
cl::opt<std::string>
    contextList("contexts", cl::desc("Context lengths, e.g. 8k,32k,128k,1m"),
                cl::init("8k,32k,128k,1m"), cl::cat(category));
cl::opt<std::string> batchList("batch", cl::desc("Batches, e.g. 1,16"),
                               cl::init("1,16"), cl::cat(category));
cl::opt<std::string> entry("entry",
                           cl::desc("The decode function (default decode)"),
                           cl::init("decode"), cl::cat(category));
cl::opt<std::string> jsonPath("json", cl::desc("Write every estimate here"),
                              cl::value_desc("file"), cl::cat(category));

int fail(const llvm::Twine &message) {
  llvm::errs() << "loom-plan-decode: error: " << message << "\n";
  return 1;
}

/// "8k,1m" -> {8192, 1048576}: positive, k and m suffixes.
llvm::Expected<std::vector<int64_t>> parseList(llvm::StringRef text,
                                               llvm::StringRef option) {
  std::vector<int64_t> out;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  for (llvm::StringRef part : parts) {
    llvm::StringRef digits = part.trim();
    int64_t scale = 1;
    if (digits.consume_back("k") || digits.consume_back("K"))
      scale = 1 << 10;
    else if (digits.consume_back("m") || digits.consume_back("M"))
      scale = 1 << 20;
    int64_t v;
    if (digits.getAsInteger(10, v) || v < 1 || v > (int64_t(1) << 30) / scale)
      return llvm::createStringError("--" + option + ": '" + part +
                                     "' is not a count in 1..1G");
    out.push_back(v * scale);
  }
  return out;
}

std::string gib(double bytes) {
  return llvm::formatv("{0:F1}", bytes / double(int64_t(1) << 30)).str();
}

/// How Loom compiles and runs split \p e at batch \p batch: a line.
std::string howToRun(const pipeline::DecodeEstimate &e, int64_t batch) {
  std::string flags;
  if (e.tp > 1)
    flags += " --tensor-parallel=" + std::to_string(e.tp);
  if (e.cp > 1)
    flags += " --cache-parallel=" + std::to_string(e.cp);
  if (e.pp > 1)
    flags += " --pipeline-stages=" + std::to_string(e.pp);
  if (flags.empty())
    return "run: one process (loom-compile, loom-generate)\n";
  std::string line = "run: loom-compile" + flags;
  if (e.groups > 1)
    line += "; loom-generate --groups=" + std::to_string(e.groups) +
            " over the program at batch " +
            std::to_string((batch + e.groups - 1) / e.groups);
  return line + "\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-plan-decode: how a machine's devices should share a decoder's "
      "decode step (cache parallelism x tensor parallelism x pipeline "
      "stages), estimated per "
      "context length and batch (docs/tools/loom-plan-decode.md)\n");
  auto start = std::chrono::steady_clock::now();
  auto machine = decodeMachine(machineName);
  if (!machine)
    return fail(llvm::toString(machine.takeError()));
  auto contexts = parseList(contextList, "contexts");
  if (!contexts)
    return fail(llvm::toString(contexts.takeError()));
  auto batches = parseList(batchList, "batch");
  if (!batches)
    return fail(llvm::toString(batches.takeError()));
  MLIRContext context;
  context.loadDialect<tg::TGDialect, func::FuncDialect>();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(input, sourceMgr, &context);
  if (!module)
    return 1;
  auto decode = module->lookupSymbol<func::FuncOp>(entry);
  if (!decode)
    return fail(input + " has no function @" + entry);
  auto model = decoderCost(decode);
  if (!model)
    return fail(llvm::toString(model.takeError()));
  llvm::outs() << llvm::formatv(
      "loom-plan-decode: {0}: {1} layers, {2} query heads over {3} key/value "
      "heads of {4}, {5} GiB of weights ({10} GiB read a token), {6} KiB of "
      "cache a position; {7}: {8} devices, {9} a host\n",
      input, model->layers, model->queryHeads, model->kvHeads, model->headDim,
      gib(double(model->weightBytes)),
      llvm::formatv("{0:F1}", model->cacheBytesPerPosition / 1024.0).str(),
      machine->name, machine->devices, machine->devicesPerHost,
      gib(double(model->weightBytesRead)));
  llvm::json::Array rows;
  for (int64_t batch : *batches)
    for (int64_t ctx : *contexts) {
      std::vector<DecodeEstimate> all =
          estimateDecode(*model, *machine, ctx, batch);
      const DecodeEstimate *best = bestDecode(all);
      llvm::outs() << llvm::formatv(
          "\nbatch {0}, context {1}: {2}\n{3}"
          "| cp x tp x pp | ms/token | weights ms | cache ms | compute ms | "
          "messages ms | GiB/device | sent KiB/token | |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
          batch, ctx,
          best ? llvm::formatv("cp {0} x tp {1} x pp {2}", best->cp, best->tp,
                               best->pp)
                     .str()
               : std::string("no split fits the devices' memory"),
          best ? howToRun(*best, batch) : std::string());
      for (const DecodeEstimate &e : all) {
        llvm::outs() << llvm::formatv(
            "| {0} x {1} x {10} | {2:F3} | {3:F3} | {4:F3} | {5:F3} | {6:F3} | "
            "{7} | {8:F1} | {9} |\n",
            e.cp, e.tp, e.seconds * 1e3, e.weightsSeconds * 1e3,
            e.cacheSeconds * 1e3, e.computeSeconds * 1e3,
            e.messageSeconds * 1e3, gib(e.memoryBytes),
            e.bytesSentPerToken / 1024.0,
            !e.fits ? "does not fit" : (&e == best ? "chosen" : ""), e.pp);
        rows.push_back(
            llvm::json::Object{{"batch", batch},
                               {"context", ctx},
                               {"cp", e.cp},
                               {"tp", e.tp},
                               {"pp", e.pp},
                               {"ms_per_token", e.seconds * 1e3},
                               {"weights_ms", e.weightsSeconds * 1e3},
                               {"cache_ms", e.cacheSeconds * 1e3},
                               {"compute_ms", e.computeSeconds * 1e3},
                               {"messages_ms", e.messageSeconds * 1e3},
                               {"memory_bytes_per_device", e.memoryBytes},
                               {"bytes_sent_per_token", e.bytesSentPerToken},
                               {"groups", e.groups},
                               {"fits", e.fits},
                               {"chosen", &e == best}});
      }
    }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  llvm::outs() << llvm::formatv("\nplanned in {0:F2} s\n", seconds);
  if (!jsonPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(jsonPath, ec);
    if (ec)
      return fail("cannot write " + jsonPath + ": " + ec.message());
    os << llvm::formatv(
        "{0:2}\n",
        llvm::json::Value(llvm::json::Object{
            {"model", input},
            {"machine", machine->name},
            {"decoder",
             llvm::json::Object{
                 {"layers", model->layers},
                 {"query_heads", model->queryHeads},
                 {"kv_heads", model->kvHeads},
                 {"head_dim", model->headDim},
                 {"weight_bytes", model->weightBytes},
                 {"weight_bytes_read", model->weightBytesRead},
                 {"cache_bytes_per_position", model->cacheBytesPerPosition}}},
            {"estimates", std::move(rows)}}));
  }
  return 0;
}
