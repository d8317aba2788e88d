//===- Floor.cpp - loom-run's latency of the served artifact --------------===//
//
// Part of Loom. See Floor.h.
//
//===----------------------------------------------------------------------===//

#include "Floor.h"

#include "BenchSupport.h"

#include "loom-c/Runtime.h"

#include "llvm/ADT/StringRef.h"

using namespace llvm;

namespace loom::bench {

std::optional<double> FloorRow::rowsPerSecond() const {
  if (!medianMs || *medianMs <= 0)
    return std::nullopt;
  return double(batch) * 1000 / *medianMs;
}

namespace {

/// Whether `entry`'s inputs are `meta`'s by name, in order, each with
/// dimension 0 equal to `batch`.
bool entryOfBatch(const loom_model *model, int64_t entry, const ModelMeta &meta,
                  int64_t batch) {
  if (loom_entry_num_inputs(model, entry) != int64_t(meta.inputs.size()))
    return false;
  for (size_t i = 0; i < meta.inputs.size(); ++i) {
    loom_tensor_desc d;
    if (loom_entry_input(model, entry, int64_t(i), &d) != LOOM_OK ||
        d.rank == 0 || d.shape[0] != batch ||
        StringRef(d.name) != meta.inputs[i].name)
      return false;
  }
  return true;
}

/// The names of the entries of each batch ("" where none has it).
Expected<std::vector<std::string>> entryNames(const std::string &artifact,
                                              const ModelMeta &meta,
                                              ArrayRef<int64_t> batches) {
  loom_model_options options = {};
  options.num_threads = 1;
  loom_model *model = nullptr;
  if (loom_model_load(artifact.c_str(), &options, &model) != LOOM_OK)
    return createStringError(loom_last_error());
  std::vector<std::string> names;
  for (int64_t batch : batches) {
    names.emplace_back();
    for (int64_t e = 0; e < loom_model_num_entries(model); ++e)
      if (entryOfBatch(model, e, meta, batch)) {
        names.back() = loom_model_entry_name(model, e);
        break;
      }
  }
  loom_model_free(model);
  return names;
}

/// "time: 0.003180 s (best of 10; median 0.003255 s; p99 0.0034 s) ..." ->
/// best, median, p99 (one run: all three the one time).
bool parseTime(StringRef out, FloorRow &row) {
  size_t at = out.find("time: ");
  if (at == StringRef::npos)
    return false;
  StringRef line = out.substr(at + 6).split('\n').first;
  double best, median, p99;
  if (line.split(' ').first.getAsDouble(best))
    return false;
  if (line.split("median ").second.split(' ').first.getAsDouble(median))
    median = best;
  if (line.split("p99 ").second.split(' ').first.getAsDouble(p99))
    p99 = median;
  row.bestMs = best * 1000;
  row.medianMs = median * 1000;
  row.p99Ms = p99 * 1000;
  return true;
}

} // namespace

std::vector<FloorRow> measureFloor(const ServeOptions &o,
                                   const std::string &artifact,
                                   const ModelMeta &meta, int64_t maxBatch) {
  std::vector<int64_t> batches = {1};
  if (maxBatch > 1)
    batches.push_back(maxBatch);
  std::vector<FloorRow> rows;
  std::string loadFailure;
  auto names = entryNames(artifact, meta, batches);
  if (!names) {
    loadFailure = "cannot load the artifact: " + toString(names.takeError());
    names = std::vector<std::string>(batches.size());
  }
  for (size_t i = 0; i < batches.size(); ++i) {
    FloorRow row;
    row.batch = batches[i];
    if (!loadFailure.empty()) {
      row.reason = loadFailure;
    } else if ((*names)[i].empty()) {
      row.reason = "no entry of batch " + std::to_string(row.batch);
    } else {
      row.entry = (*names)[i];
      ProcessResult r =
          runProcess(o.runBin,
                     {artifact, "--entry", row.entry, "--warmup", "3",
                      "--repeat", std::to_string(o.repeat), "--num-threads",
                      std::to_string(o.threads), "--print-values", "0"},
                     o.timeoutSeconds * 10);
      if (!r.succeeded())
        row.reason = "loom-run: " + r.summary();
      else if (!parseTime(r.out, row))
        row.reason = "loom-run printed no time: line";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

} // namespace loom::bench
