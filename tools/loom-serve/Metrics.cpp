//===- Metrics.cpp - loom-serve's Prometheus metrics ----------------------===//
//
// Part of Loom. See Metrics.h.
//
//===----------------------------------------------------------------------===//

#include "Metrics.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace loom::serve;

static constexpr int64_t kBatchBounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};

void Metrics::countRequest(const std::string &model, int code) {
  std::lock_guard<std::mutex> lock(mutex);
  ++requests[{model, code}];
}

void Metrics::countRun(const std::string &model, int64_t rows,
                       const std::vector<double> &queueSeconds,
                       double computeSeconds) {
  std::lock_guard<std::mutex> lock(mutex);
  ModelStats &m = models[model];
  m.batchBuckets.resize(std::size(kBatchBounds), 0);
  for (size_t i = 0; i < std::size(kBatchBounds); ++i)
    m.batchBuckets[i] += rows <= kBatchBounds[i];
  ++m.runs;
  m.rows += rows;
  for (double q : queueSeconds)
    m.queueSeconds += q;
  m.queued += queueSeconds.size();
  m.computeSeconds += computeSeconds;
}

template <class F>
void Metrics::writeSummary(llvm::raw_ostream &os, llvm::StringRef name,
                           llvm::StringRef help, F sumAndCount) const {
  os << "# HELP " << name << " " << help << "\n# TYPE " << name << " summary\n";
  for (const auto &[model, m] : models) {
    auto [sum, count] = sumAndCount(m);
    os << name << "_sum{model=\"" << model << "\"} "
       << llvm::format("%.6f", sum) << "\n"
       << name << "_count{model=\"" << model << "\"} " << count << "\n";
  }
}

void Metrics::setQueued(const std::string &model, size_t requests) {
  std::lock_guard<std::mutex> lock(mutex);
  models[model].waiting = requests;
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mutex);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# HELP loom_serve_requests_total Inference requests answered, by "
        "model and HTTP status code.\n"
        "# TYPE loom_serve_requests_total counter\n";
  for (const auto &[key, count] : requests)
    os << "loom_serve_requests_total{model=\"" << key.first << "\",code=\""
       << key.second << "\"} " << count << "\n";
  os << "# HELP loom_serve_batch_size Rows of each run of a model (the "
        "requests the dynamic batcher joined).\n"
        "# TYPE loom_serve_batch_size histogram\n";
  for (const auto &[model, m] : models) {
    for (size_t i = 0; i < m.batchBuckets.size(); ++i)
      os << "loom_serve_batch_size_bucket{model=\"" << model << "\",le=\""
         << kBatchBounds[i] << "\"} " << m.batchBuckets[i] << "\n";
    os << "loom_serve_batch_size_bucket{model=\"" << model << "\",le=\"+Inf\"} "
       << m.runs << "\n";
    os << "loom_serve_batch_size_sum{model=\"" << model << "\"} " << m.rows
       << "\n";
    os << "loom_serve_batch_size_count{model=\"" << model << "\"} " << m.runs
       << "\n";
  }
  writeSummary(os, "loom_serve_queue_seconds",
               "Time requests waited for their run.", [](const ModelStats &m) {
                 return std::make_pair(m.queueSeconds, m.queued);
               });
  writeSummary(os, "loom_serve_compute_seconds", "Time of the runs.",
               [](const ModelStats &m) {
                 return std::make_pair(m.computeSeconds, m.runs);
               });
  os << "# HELP loom_serve_queue_requests Requests waiting for their run "
        "now.\n# TYPE loom_serve_queue_requests gauge\n";
  for (const auto &[model, m] : models)
    os << "loom_serve_queue_requests{model=\"" << model << "\"} " << m.waiting
       << "\n";
  renderCompletions(os);
  renderStages(os);
  return text;
}

void Metrics::countStageFailure(const std::string &model, int64_t stage) {
  std::lock_guard<std::mutex> lock(mutex);
  ++stageFailures[{model, stage}];
}

void Metrics::setStageRanks(const std::string &model, int64_t stage,
                            size_t live) {
  std::lock_guard<std::mutex> lock(mutex);
  stageRanks[{model, stage}] = live;
  stageFailures.try_emplace({model, stage}, 0);
}

void Metrics::renderStages(llvm::raw_ostream &os) const {
  if (stageRanks.empty())
    return;
  os << "# HELP loom_serve_stage_ranks Live ranks of a served pipeline's "
        "stage (serving and standing by).\n"
        "# TYPE loom_serve_stage_ranks gauge\n";
  for (const auto &[key, live] : stageRanks)
    os << "loom_serve_stage_ranks{model=\"" << key.first << "\",stage=\""
       << key.second << "\"} " << live << "\n";
  os << "# HELP loom_serve_stage_failures_total Ranks of a served pipeline's "
        "stage that failed (died, hung, or broke the protocol).\n"
        "# TYPE loom_serve_stage_failures_total counter\n";
  for (const auto &[key, count] : stageFailures)
    os << "loom_serve_stage_failures_total{model=\"" << key.first
       << "\",stage=\"" << key.second << "\"} " << count << "\n";
}

void Metrics::countCompletion(const std::string &model, int code) {
  std::lock_guard<std::mutex> lock(mutex);
  ++completions[{model, code}];
}

void Metrics::countPrefill(const std::string &model, uint64_t tokens) {
  std::lock_guard<std::mutex> lock(mutex);
  languageModels[model].promptTokens += tokens;
}

void Metrics::countGenerated(const std::string &model, uint64_t tokens) {
  std::lock_guard<std::mutex> lock(mutex);
  languageModels[model].generated += tokens;
}

void Metrics::countDecodeStep(const std::string &model, uint64_t rows) {
  std::lock_guard<std::mutex> lock(mutex);
  LanguageStats &m = languageModels[model];
  ++m.decodeSteps;
  m.decodeRows += rows;
}

void Metrics::setSlots(const std::string &model, size_t active,
                       size_t waiting) {
  std::lock_guard<std::mutex> lock(mutex);
  LanguageStats &m = languageModels[model];
  m.active = active;
  m.waiting = waiting;
}

/// The language models' metrics (the mutex held).
void Metrics::renderCompletions(llvm::raw_ostream &os) const {
  os << "# HELP loom_serve_completion_requests_total Completion requests "
        "answered, by model and HTTP status code.\n"
        "# TYPE loom_serve_completion_requests_total counter\n";
  for (const auto &[key, count] : completions)
    os << "loom_serve_completion_requests_total{model=\"" << key.first
       << "\",code=\"" << key.second << "\"} " << count << "\n";
  struct Family {
    const char *name, *type, *help;
    uint64_t LanguageStats::*field;
  } families[] = {
      {"loom_serve_prompt_tokens_total", "counter",
       "Prompt tokens prefilled into slots.", &LanguageStats::promptTokens},
      {"loom_serve_completion_tokens_total", "counter",
       "Tokens generated for completions.", &LanguageStats::generated},
      {"loom_serve_decode_steps_total", "counter",
       "Decode calls (one per scheduler iteration with a sequence in a "
       "slot).",
       &LanguageStats::decodeSteps},
      {"loom_serve_decode_rows_total", "counter",
       "Sequences the decode calls ran (their rows that were not free "
       "slots).",
       &LanguageStats::decodeRows},
      {"loom_serve_active_slots", "gauge", "Sequences in a slot now.",
       &LanguageStats::active},
      {"loom_serve_waiting_sequences", "gauge",
       "Sequences waiting for a free slot now.", &LanguageStats::waiting},
  };
  for (const Family &f : families) {
    os << "# HELP " << f.name << " " << f.help << "\n# TYPE " << f.name << " "
       << f.type << "\n";
    for (const auto &[model, m] : languageModels)
      os << f.name << "{model=\"" << model << "\"} " << m.*f.field << "\n";
  }
}
