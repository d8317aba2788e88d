//===- Report.cpp - loom-bench-serve's rows, as a table and JSON ----------===//
//
// Part of Loom. See Report.h.
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "BenchSupport.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace loom::bench {
namespace {

json::Value orNull(std::optional<double> v) {
  return v ? json::Value(*v) : json::Value(nullptr);
}

json::Value stringOrNull(const std::string &s) {
  return s.empty() ? json::Value(nullptr) : json::Value(s);
}

std::string fixed(std::optional<double> v, int digits) {
  if (!v)
    return "n/a";
  std::string text;
  raw_string_ostream(text) << format("%.*f", digits, *v);
  return text;
}

/// The unbatched row of the same concurrency, if measured.
const LevelRow *unbatchedPeer(const std::vector<LevelRow> &rows,
                              const LevelRow &r) {
  for (const LevelRow &u : rows)
    if (u.mode == ServeMode::Unbatched && u.concurrency == r.concurrency)
      return &u;
  return nullptr;
}

std::optional<double> speedup(const std::vector<LevelRow> &rows,
                              const LevelRow &r) {
  const LevelRow *u = unbatchedPeer(rows, r);
  if (r.mode != ServeMode::Batched || !u || u->load.requestsPerSecond() <= 0)
    return std::nullopt;
  return r.load.requestsPerSecond() / u->load.requestsPerSecond();
}

json::Object rowJSON(const std::vector<LevelRow> &rows, const LevelRow &r) {
  const LoadResult &l = r.load;
  return json::Object{{"mode", modeName(r.mode)},
                      {"concurrency", r.concurrency},
                      {"requests", l.sent},
                      {"answered", l.answered},
                      {"errors", l.errors},
                      {"wrong", l.wrong},
                      {"warmup_requests", l.warmupSent},
                      {"seconds", l.seconds},
                      {"requests_per_second", l.requestsPerSecond()},
                      {"p50_ms", l.percentileMs(50)},
                      {"p90_ms", l.percentileMs(90)},
                      {"p99_ms", l.percentileMs(99)},
                      {"max_ms", l.percentileMs(100)},
                      {"mean_batch", orNull(r.meanBatch)},
                      {"mean_queue_ms", orNull(r.meanQueueMs)},
                      {"mean_run_ms", orNull(r.meanRunMs)},
                      {"server_requests", orNull(r.serverRequests)},
                      {"connections", l.connections},
                      {"speedup_over_unbatched", orNull(speedup(rows, r))},
                      {"worst_relative_difference", l.worstDifference},
                      {"first_error", stringOrNull(l.firstError)},
                      {"first_wrong", stringOrNull(l.firstWrong)}};
}

json::Object floorJSON(const FloorRow &f) {
  return json::Object{{"batch", f.batch},
                      {"entry", stringOrNull(f.entry)},
                      {"median_ms", orNull(f.medianMs)},
                      {"best_ms", orNull(f.bestMs)},
                      {"p99_ms", orNull(f.p99Ms)},
                      {"rows_per_second", orNull(f.rowsPerSecond())},
                      {"reason", stringOrNull(f.reason)}};
}

json::Object serverJSON(const RunSummary::Server &s) {
  return json::Object{{"mode", modeName(s.mode)},
                      {"command", s.command},
                      {"stopped_cleanly", s.stop.clean},
                      {"answered", s.stop.answered},
                      {"sent", s.sent},
                      {"problem", stringOrNull(s.stop.problem)}};
}

void printFloor(const RunSummary &run) {
  outs() << "\nloom-run on the same artifact (no HTTP, no queue): the "
            "floor\n\n| batch | entry | median ms | best ms | p99 ms | rows/s "
            "at that latency |\n|---|---|---|---|---|---|\n";
  for (const FloorRow &f : run.floor) {
    outs() << formatv("| {0} | {1} | {2} | {3} | {4} | {5} |\n", f.batch,
                      f.entry.empty() ? "n/a" : f.entry, fmtMs(f.medianMs),
                      fmtMs(f.bestMs), fmtMs(f.p99Ms),
                      fixed(f.rowsPerSecond(), 0));
    if (!f.reason.empty())
      outs() << "    (batch " << f.batch << ": " << f.reason << ")\n";
  }
}

} // namespace

void printReport(const std::vector<LevelRow> &rows, const RunSummary &run) {
  outs() << "\n| mode | clients | requests | req/s | p50 ms | p90 ms | "
            "p99 ms | mean batch | queue ms | run ms | errors | wrong | "
            "connections | batched / unbatched |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const LevelRow &r : rows) {
    const LoadResult &l = r.load;
    outs() << formatv("| {0} | {1} | {2} | {3:f1} | {4} | {5} | {6} | {7} | "
                      "{8} | {9} | {10} | {11} | {12} | {13} |\n",
                      modeName(r.mode), r.concurrency, l.sent,
                      l.requestsPerSecond(), fmtMs(l.percentileMs(50)),
                      fmtMs(l.percentileMs(90)), fmtMs(l.percentileMs(99)),
                      fixed(r.meanBatch, 2), fmtMs(r.meanQueueMs),
                      fmtMs(r.meanRunMs), l.errors, l.wrong, l.connections,
                      fixed(speedup(rows, r), 2));
    if (!l.firstError.empty())
      outs() << "    (first error: " << l.firstError << ")\n";
    if (!l.firstWrong.empty())
      outs() << "    (first wrong answer: " << l.firstWrong << ")\n";
  }
  printFloor(run);
  for (const RunSummary::Server &s : run.servers)
    outs() << formatv(
        "{0} server: {1}; sent {2} inference requests, it "
        "answered {3}{4}\n",
        modeName(s.mode),
        s.stop.clean ? "stopped cleanly on SIGTERM" : s.stop.problem, s.sent,
        s.stop.answered, s.sent == s.stop.answered ? "" : " (differ)");
  for (const std::string &n : run.notes)
    outs() << "note: " << n << "\n";
}

json::Value reportJSON(const ServeOptions &o, const std::vector<LevelRow> &rows,
                       const RunSummary &run, json::Object machine) {
  json::Array rowList, floorList, serverList, notes, batchSizes, levels;
  for (const LevelRow &r : rows)
    rowList.push_back(rowJSON(rows, r));
  for (const FloorRow &f : run.floor)
    floorList.push_back(floorJSON(f));
  for (const RunSummary::Server &s : run.servers)
    serverList.push_back(serverJSON(s));
  for (const std::string &n : run.notes)
    notes.push_back(n);
  for (int64_t b : run.batchSizes)
    batchSizes.push_back(b);
  for (int64_t c : o.concurrency)
    levels.push_back(c);
  return json::Object{
      {"machine", std::move(machine)},
      {"settings",
       json::Object{{"concurrency", std::move(levels)},
                    {"duration_s", o.requests ? json::Value(nullptr)
                                              : json::Value(o.durationSeconds)},
                    {"requests_per_level", o.requests ? json::Value(o.requests)
                                                      : json::Value(nullptr)},
                    {"warmup_requests_per_client", o.warmupRequests},
                    {"inputs", o.inputs},
                    {"seed", o.seed},
                    {"encoding", encodingName(o.encoding)},
                    {"threads", o.threads},
                    {"http_threads", o.httpThreads},
                    {"max_queue_delay_us",
                     o.maxQueueDelayUs < 0 ? json::Value(nullptr)
                                           : json::Value(o.maxQueueDelayUs)},
                    {"tolerance", o.tolerance},
                    {"repeat", o.repeat}}},
      {"model", json::Object{{"model", run.model},
                             {"artifact", run.artifact},
                             {"compile_seconds", run.compileSeconds},
                             {"max_batch", run.maxBatch},
                             {"batch_sizes", std::move(batchSizes)}}},
      {"floor", std::move(floorList)},
      {"servers", std::move(serverList)},
      {"notes", std::move(notes)},
      {"rows", std::move(rowList)}};
}

} // namespace loom::bench
