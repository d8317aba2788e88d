//===- RunMode.cpp - loom-bench-pipeline --run: measured pipelined steps --===//
//
// Part of Loom. For each small zoo model, rank count and schedule: partition
// the training step with loom-opt --pipe-partition (target cpu, a memory
// limit searched so that the plan has one stage per rank, one device each;
// fed with the step profile of a pilot 1F1B run of that rank count, so that
// every planner prices its candidates with this machine's measured message
// costs and compute), compile it, and time it under loom-launch with one kernel thread per rank;
// beside it the unpartitioned step (the same micro-batches, one stage on one
// device) in one process with the same total threads, and the simulator's
// makespan for the cpu target, raw and calibrated by the measured
// unpartitioned step at one thread, and fed with the run's own step
// profiles (its measured action times). docs/benchmarks/pipeline.md
// records results.
//
//===----------------------------------------------------------------------===//

#include "BenchPipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace llvm;
using namespace loom::bench::pipeline;

namespace {

/// Seconds any one loom-run (or loom-launch job) may take.
constexpr unsigned kRunLimitSeconds = 120;

/// The small variants the ranks tests use (test/Pipeline/ranks-*.test).
std::optional<std::vector<std::string>> zooArgs(StringRef model) {
  if (model == "candle-uno")
    return std::vector<std::string>{"candle-uno", "--hidden", "16",
                                    "--layers",   "2",        "--batch",
                                    "4"};
  if (model == "bert-base")
    return std::vector<std::string>{"bert-base", "--seq", "8", "--layers",
                                    "2",         "--vocab", "50"};
  return std::nullopt;
}

std::string path(StringRef dir, const Twine &name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return std::string(p);
}

/// The first "error: ..." line of a stderr file, else `fallback`.
std::string firstError(StringRef errPath, StringRef fallback) {
  auto text = MemoryBuffer::getFile(errPath);
  StringRef msg = text ? (*text)->getBuffer() : "";
  size_t at = msg.find("error: ");
  return at == StringRef::npos ? fallback.str()
                               : msg.substr(at + 7).split('\n').first.str();
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  llvm::sort(v);
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// One artifact to time: how loom-run is started, and its samples (ms/step).
struct Timed {
  std::string label, artifact, error;
  int ranks = 1, threads = 1; ///< Processes (1: no launcher), threads each.
  std::vector<double> ms;
  /// Whether each run writes a step profile; the profiles written.
  bool profile = false;
  std::vector<std::string> profiles;
};

/// Runs `t` once; appends its ms per step, or sets its error.
void timeOnce(Timed &t, const RunOptions &o, StringRef dir) {
  std::vector<std::string> args;
  std::string program = tool("loom-run", o.argv0);
  if (t.ranks > 1) {
    args = {"-n", std::to_string(t.ranks), "--", program};
    program = tool("loom-launch", o.argv0);
  }
  for (std::string a : {t.artifact, std::string("--repeat"),
                        std::to_string(o.repeat), std::string("--num-threads"),
                        std::to_string(t.threads), std::string("--timeout"),
                        std::to_string(kRunLimitSeconds / 2)})
    args.push_back(a);
  std::string profile =
      path(dir, formatv("{0}.{1}.json", t.label, t.profiles.size()));
  if (t.profile)
    args.push_back("--step-profile=" + profile);
  std::string out = path(dir, "run.out"), err = path(dir, "run.err");
  int rc = run(program, args, err, out, kRunLimitSeconds);
  auto text = MemoryBuffer::getFile(out);
  StringRef s = text ? (*text)->getBuffer() : "";
  size_t at = s.find(" ms per step");
  double ms = 0;
  if (rc != 0 || at == StringRef::npos ||
      s.substr(0, at).rsplit(' ').second.getAsDouble(ms)) {
    t.error = t.label + ": " + firstError(err, "loom-run failed (exit " +
                                                   std::to_string(rc) + ")");
    return;
  }
  t.ms.push_back(ms);
  if (t.profile)
    t.profiles.push_back(profile);
}

/// One row of the table: a pipelined artifact and its plan.
struct Row {
  std::string model, schedule, note;
  int ranks = 0, stages = 0;
  double memoryGiB = 0, simMs = 0;
  int timed = -1; ///< Index into the timed artifacts (-1: not compiled).
  /// Partitioned fed with a pilot's step profile: simMs is then the fed
  /// partitioner's makespan, which no calibration applies to.
  bool fed = false;
  std::string plan; ///< The partitioned module.
  /// Per run: the simulation fed with its step profile, and what it
  /// measured: the median step (span over the ranks) and the period.
  std::vector<double> fedMs, stepMs, periodMs;
  std::string fedError;
};

/// The largest memory limit (a fraction of the unpartitioned stage's peak,
/// in steps of 2%: the window of 4 one-device stages can be that narrow)
/// under which the plan has `ranks` stages of one device each; 0 if none.
double memoryForRanks(const std::string &opt, StringRef mlir, int ranks,
                      double peakGiB, const RunOptions &o, StringRef dir) {
  for (int pct = 98; pct >= 2; pct -= 2) {
    PartitionRequest q{ranks, o.microBatches, peakGiB * pct / 100, "cpu",
                       "1f1b", ""};
    Result r = partition(opt, mlir, q, dir);
    if (r.ok && r.stages == ranks && !r.replicated)
      return q.memoryGiB;
  }
  return 0;
}

/// Partitions and compiles one row's artifact, the partitioner fed with
/// the step profile `pilot` when there is one; fills `row`, adds to `timed`.
void buildRow(Row &row, const std::string &mlir, const RunOptions &o,
              StringRef dir, std::vector<Timed> &timed,
              const std::string &pilot) {
  std::string base = formatv("{0}-{1}-{2}", row.model, row.ranks, row.schedule);
  PartitionRequest q{row.ranks, o.microBatches, row.memoryGiB, "cpu",
                     row.schedule, path(dir, base + ".mlir"), pilot};
  Result r = partition(tool("loom-opt", o.argv0), mlir, q, dir);
  if (!r.ok) {
    row.note = "not partitioned: " + r.error;
    return;
  }
  row.stages = r.stages;
  row.simMs = r.makespan * 1e3;
  row.fed = !pilot.empty();
  if (r.stages != row.ranks || r.replicated) {
    row.note = "plan is not one device per stage";
    return;
  }
  std::string so = path(dir, base + ".so"), err = path(dir, "compile.err");
  if (run(tool("loom-compile", o.argv0), {q.output, "-o", so}, err) != 0) {
    row.note = "not compiled: " + firstError(err, "loom-compile failed");
    return;
  }
  row.timed = timed.size();
  row.plan = q.output;
  timed.push_back(Timed{base, so, "", row.ranks, 1, {}, true, {}});
}

/// The pilot run of `ranks` ranks: the 1F1B plan under `memory`, compiled
/// and run once with a step profile, whose path it returns (empty, said on
/// stderr, when it fails). Every row's partition of that rank count is fed
/// with it (--pipe-partition's profile=: the measured message costs and
/// compute), so that the graph planner and the sequential ones price their
/// candidates alike, with what this machine's ranks measured.
std::string pilotProfile(StringRef model, const std::string &mlir, int ranks,
                         double memory, const RunOptions &o, StringRef dir) {
  Row pilot{model.str(), "1f1b", "", ranks, 0, memory, 0, -1, false, "",
            {},          {},     {}, ""};
  std::vector<Timed> timed;
  buildRow(pilot, mlir, o, dir, timed, "");
  if (timed.empty()) {
    errs() << "loom-bench-pipeline: " << model << " on " << ranks
           << " ranks: no pilot run, the partitions are not fed: "
           << pilot.note << "\n";
    return "";
  }
  timed.front().label += "-pilot";
  timeOnce(timed.front(), o, dir);
  if (!timed.front().error.empty()) {
    errs() << "loom-bench-pipeline: no pilot profile, the partitions are not "
              "fed: "
           << timed.front().error << "\n";
    return "";
  }
  return timed.front().profiles.front();
}

/// Simulates `row`'s plan fed with the step profile of each of its runs
/// (loom-opt --pipe-simulate="profile=FILE"), each run's prediction beside
/// what that run measured; or sets its fedError.
void feed(Row &row, const Timed &t, const RunOptions &o, StringRef dir) {
  std::string report = path(dir, "fed.json"), err = path(dir, "fed.err");
  for (const std::string &profile : t.profiles) {
    std::string pass =
        "--pipe-simulate=print=0 report=" + report + " profile=" + profile;
    if (run(tool("loom-opt", o.argv0), {row.plan, pass, "-o", "/dev/null"},
            err) != 0) {
      row.fedError = firstError(err, "loom-opt --pipe-simulate failed");
      return;
    }
    auto text = MemoryBuffer::getFile(report);
    auto value = text ? json::parse((*text)->getBuffer())
                      : Expected<json::Value>(createStringError("no report"));
    const json::Object *fed = nullptr;
    if (value && value->getAsObject())
      fed = value->getAsObject()->getObject("fed");
    if (!value || !fed) {
      row.fedError = value ? "the report has no \"fed\""
                           : toString(value.takeError());
      return;
    }
    row.fedMs.push_back(
        value->getAsObject()->getNumber("makespan_s").value_or(0) * 1e3);
    row.stepMs.push_back(fed->getNumber("measured_step_s").value_or(0) * 1e3);
    row.periodMs.push_back(
        fed->getNumber("measured_period_s").value_or(0) * 1e3);
  }
}

/// The unpartitioned step of one model: its artifact and simulated ms.
struct Unpartitioned {
  std::string so;
  double simMs = 0, peakGiB = 0;
};

std::optional<Unpartitioned> unpartitioned(StringRef model,
                                           const std::string &mlir,
                                           const RunOptions &o,
                                           StringRef dir) {
  PartitionRequest q{1, o.microBatches, 0, "cpu", "gpipe",
                     path(dir, model + "-1.mlir")};
  Result r = partition(tool("loom-opt", o.argv0), mlir, q, dir);
  std::string so = path(dir, model + "-1.so"), err = path(dir, "compile.err");
  if (!r.ok) {
    errs() << "loom-bench-pipeline: " << model << " on 1 device: " << r.error
           << "\n";
    return std::nullopt;
  }
  if (run(tool("loom-compile", o.argv0), {q.output, "-o", so}, err) != 0) {
    errs() << "loom-bench-pipeline: " << model << " on 1 device: "
           << firstError(err, "loom-compile failed") << "\n";
    return std::nullopt;
  }
  return Unpartitioned{so, r.makespan * 1e3, r.stagePeakGiB};
}

} // namespace

namespace {

/// One model's measurements: its unpartitioned step at 1 thread (the
/// simulator's calibration) and at each rank count's threads, and its rows.
struct ModelRuns {
  std::string model;
  double simUnpartitionedMs = 0;
  int oneThread = -1;
  std::map<int, int> sameThreads; ///< Ranks -> index into the timed.
  std::vector<Row> rows;
};

/// Builds every artifact of one model; false on a hard failure.
bool buildModel(ModelRuns &m, const RunOptions &o, StringRef dir,
                std::vector<Timed> &timed) {
  auto args = zooArgs(m.model);
  if (!args) {
    errs() << "loom-bench-pipeline: --run knows candle-uno and bert-base, not '"
           << m.model << "'\n";
    return false;
  }
  std::string mlir = path(dir, m.model + ".mlir");
  args->insert(args->end(),
               {"-o", mlir, "--weights", path(dir, m.model + ".safetensors")});
  if (run(tool("loom-zoo", o.argv0), *args, path(dir, "zoo.err")) != 0) {
    errs() << "loom-bench-pipeline: loom-zoo " << m.model << " failed\n";
    return false;
  }
  auto u = unpartitioned(m.model, mlir, o, dir);
  if (!u)
    return false;
  m.simUnpartitionedMs = u->simMs;
  m.oneThread = timed.size();
  timed.push_back(Timed{m.model + "-1x1", u->so, "", 1, 1, {}, false, {}});
  std::string opt = tool("loom-opt", o.argv0);
  for (int ranks : o.ranks) {
    m.sameThreads[ranks] = timed.size();
    timed.push_back(Timed{formatv("{0}-1x{1}", m.model, ranks), u->so, "", 1,
                          ranks, {}, false, {}});
    double memory = memoryForRanks(opt, mlir, ranks, u->peakGiB, o, dir);
    std::string pilot = memory == 0 || !o.feedPartitions
                            ? ""
                            : pilotProfile(m.model, mlir, ranks, memory, o, dir);
    for (StringRef s : o.schedules) {
      Row row{m.model, s.str(), "", ranks, 0,  memory, 0,
              -1,      false,   "", {},    {}, {},      ""};
      if (memory == 0)
        row.note = formatv("no plan of {0} one-device stages", ranks);
      else
        buildRow(row, mlir, o, dir, timed, pilot);
      m.rows.push_back(row);
    }
  }
  return true;
}

/// Relative error of a prediction against a measurement.
double relError(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured : 0;
}

json::Array array(const std::vector<double> &v) {
  json::Array out;
  for (double x : v)
    out.push_back(x);
  return out;
}

/// Prints one model's rows and appends them to `out`.
void report(const ModelRuns &m, const std::vector<Timed> &timed,
            json::Array &out) {
  double oneMs = median(timed[m.oneThread].ms);
  double scale = m.simUnpartitionedMs > 0 ? oneMs / m.simUnpartitionedMs : 0;
  for (const Row &r : m.rows) {
    double sameMs = median(timed[m.sameThreads.at(r.ranks)].ms);
    json::Object j{{"model", r.model},         {"ranks", r.ranks},
                   {"schedule", r.schedule},   {"stages", r.stages},
                   {"memory_gib", r.memoryGiB}, {"one_process_ms", sameMs},
                   {"one_process_threads", r.ranks},
                   {"one_thread_ms", oneMs},   {"simulated_ms", r.simMs}};
    if (r.timed < 0) {
      // The table shows the reason's start; the JSON has all of it.
      StringRef note = r.note;
      outs() << formatv("{0,-11} {1,5} {2,-8} {3}{4}\n", r.model, r.ranks,
                        r.schedule, note.take_front(72),
                        note.size() > 72 ? "..." : "");
      j["note"] = r.note;
      out.push_back(std::move(j));
      continue;
    }
    const Timed &t = timed[r.timed];
    double ms = median(t.ms);
    double calibrated = r.simMs * scale;
    outs() << formatv("{0,-11} {1,5} {2,-8} {3,6} {4,10:f2} {5,10:f2} "
                      "{6,7:f2}x {7,9:f3} {8,7:f0}%",
                      r.model, r.ranks, r.schedule, r.stages, ms, sameMs,
                      ms > 0 ? sameMs / ms : 0, r.simMs,
                      100 * relError(r.simMs, ms));
    // A fed partition's makespan is already in measured times.
    if (r.fed)
      outs() << formatv(" {0,9} {1,8}", "-", "-");
    else
      outs() << formatv(" {0,9:f2} {1,7:f0}%", calibrated,
                        100 * relError(calibrated, ms));
    std::vector<double> fedErrors;
    for (size_t i = 0; i < r.fedMs.size(); ++i)
      fedErrors.push_back(relError(r.fedMs[i], r.periodMs[i]));
    if (r.fedError.empty())
      outs() << formatv(" {0,8:f2} {1,8:f2} {2,7:f0}%\n", median(r.periodMs),
                        median(r.fedMs), 100 * median(fedErrors));
    else
      outs() << "  fed: " << r.fedError << "\n";
    j["measured_ms"] = ms;
    j["samples_ms"] = array(t.ms);
    j["simulated_error"] = relError(r.simMs, ms);
    j["partition_fed"] = r.fed;
    if (!r.fed) {
      j["calibrated_ms"] = calibrated;
      j["calibrated_error"] = relError(calibrated, ms);
    }
    if (r.fedError.empty()) {
      j["profiled_step_ms"] = array(r.stepMs);
      j["profiled_period_ms"] = array(r.periodMs);
      j["fed_ms"] = array(r.fedMs);
      j["fed_error"] = median(fedErrors);
      j["fed_errors"] = array(fedErrors);
    } else {
      j["fed_note"] = r.fedError;
    }
    out.push_back(std::move(j));
  }
}

} // namespace

int loom::bench::pipeline::runPipelines(const RunOptions &o) {
  SmallString<256> dir;
  if (sys::fs::createUniqueDirectory("loom-bench-pipeline-run", dir)) {
    errs() << "loom-bench-pipeline: cannot create a temporary directory\n";
    return 1;
  }
  std::vector<ModelRuns> models;
  std::vector<Timed> timed;
  for (StringRef name : o.models) {
    models.push_back(ModelRuns{name.str(), 0, -1, {}, {}});
    if (!buildModel(models.back(), o, dir, timed)) {
      sys::fs::remove_directories(dir);
      return 1;
    }
  }
  // Every artifact once per trial, in turn, so that a slow spell of the
  // machine falls on all of them alike.
  for (unsigned trial = 0; trial < o.trials; ++trial)
    for (Timed &t : timed)
      if (t.error.empty())
        timeOnce(t, o, dir);
  for (ModelRuns &m : models)
    for (Row &r : m.rows)
      if (r.timed >= 0 && timed[r.timed].error.empty())
        feed(r, timed[r.timed], o, dir);
  sys::fs::remove_directories(dir);
  for (const Timed &t : timed)
    if (!t.error.empty()) {
      errs() << "loom-bench-pipeline: " << t.error << "\n";
      return 1;
    }
  outs() << formatv("measured: {0} micro-batches per step, mean of {1} steps "
                    "per run, median of {2} runs; ranks under loom-launch with "
                    "1 thread each; 1 process: the unpartitioned step with as "
                    "many threads as ranks; sim: the partitioner's makespan "
                    "(the cpu target's, or fed with the pilot's profile), "
                    "calibrated (not fed): times (unpartitioned 1-thread ms / "
                    "its simulated ms); period: a step's period in a run's "
                    "step profile (the first step left out), fed: the "
                    "simulation fed with that profile, its error against "
                    "that period (medians over the runs){3}\n",
                    o.microBatches, o.repeat, o.trials,
                    o.feedPartitions
                        ? "; every plan partitioned fed with the step profile "
                          "of a pilot 1F1B run of its rank count "
                          "(--pipe-partition profile=)"
                        : "");
  outs() << formatv("{0,-11} {1,5} {2,-8} {3,6} {4,10} {5,10} {6,8} {7,9} "
                    "{8,8} {9,9} {10,8} {11,8} {12,8} {13,8}\n",
                    "model", "ranks", "schedule", "stages", "ms/step",
                    "1 proc ms", "speedup", "sim ms", "sim err", "calib ms",
                    "cal err", "period", "fed ms", "fed err");
  json::Array rows;
  for (const ModelRuns &m : models)
    report(m, timed, rows);
  if (o.json.empty())
    return 0;
  std::error_code ec;
  raw_fd_ostream os(o.json, ec);
  if (ec) {
    errs() << "loom-bench-pipeline: cannot write " << o.json << "\n";
    return 1;
  }
  os << formatv("{0:2}", json::Value(json::Object{
                             {"benchmark", "loom-bench-pipeline --run"},
                             {"target", "cpu"},
                             {"micro_batches", o.microBatches},
                             {"repeat", o.repeat},
                             {"trials", o.trials},
                             {"rows", std::move(rows)}}))
     << "\n";
  return 0;
}
