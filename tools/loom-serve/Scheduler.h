//===- Scheduler.h - Continuous batching of one language model --*- C++ -*-===//
//
// Part of Loom. Orca-style iteration-level scheduling for one
// LanguageModel (docs/tools/loom-serve.md "Completions"): the decode entry
// runs B sequences, one per slot, each at its own position. One thread owns
// the model's context (the caches of every slot); a sequence waits in a
// bounded queue for a free slot, joins between two iterations (its prompt
// prefilled into its slot, the other slots' caches untouched), and each
// iteration runs one decode call for every sequence in a slot; a sequence
// leaves its slot at max_tokens, at a stop token or stop string, or when
// its client has gone. With the model's tokenizer, each sequence's text is
// decoded as its tokens come (loom::tokenizer::TextStream).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_SCHEDULER_H
#define LOOM_TOOLS_LOOMSERVE_SCHEDULER_H

#include "Completions.h"
#include "LanguageModel.h"
#include "Metrics.h"

#include "Sampler.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace loom::serve {

/// What the scheduler has generated for one completion request so far:
/// filled by the scheduler's thread, read by the HTTP worker that waits on
/// it (under its mutex; `changed` is notified at every token).
struct CompletionJob {
  explicit CompletionJob(size_t choices) : choices(choices) {}
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<ChoiceResult> choices;
  size_t finished = 0;
  /// Non-empty: a run failed; the job is over.
  std::string error;
  /// The client went away (a stream whose write failed): its sequences
  /// leave their slots at the next iteration.
  bool cancelled = false;
  bool done() const { return !error.empty() || finished == choices.size(); }
};

class Scheduler {
public:
  /// At most B + \p maxWaiting sequences of \p model at once.
  Scheduler(LanguageModel &model, Metrics &metrics, size_t maxWaiting);
  /// Stops once every sequence accepted has finished.
  ~Scheduler();

  /// Queues one sequence per prompt of \p request, filling \p job; a 503
  /// when the model holds too many sequences already.
  std::optional<HttpError> submit(const CompletionRequest &request,
                                  std::shared_ptr<CompletionJob> job);

private:
  struct Sequence {
    std::vector<int64_t> prompt;
    int64_t maxTokens = 0;
    generate::SamplingOptions sampling;
    std::vector<int64_t> stopTokenIds;
    std::shared_ptr<CompletionJob> job;
    size_t choice = 0;
    /// The text so far, with the model's tokenizer.
    std::shared_ptr<tokenizer::TextStream> text;
  };
  struct Slot {
    std::optional<Sequence> sequence; // none: the slot is free
    std::optional<generate::Sampler> sampler;
    /// Tokens generated, the last of them (fed to the next decode), and
    /// the positions in the slot's cache (where that token goes).
    int64_t generated = 0, last = 0, position = 0;
  };
  void work();
  bool mayPrefill() const;
  std::vector<size_t> admit();
  void prefill(const std::vector<size_t> &admitted);
  void decode();
  void take(size_t slot, int64_t token);
  void release(size_t slot);
  void fail(const std::vector<size_t> &slots, const std::string &message);
  void dropAbandoned();
  size_t activeSlots() const;

  LanguageModel &model;
  Metrics &metrics;
  size_t maxWaiting;
  /// The worker's own: the slots and what is in them.
  std::vector<Slot> slots;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Sequence> queue;
  /// Sequences in slots, for submit's bound (the worker writes it under
  /// the mutex).
  size_t occupied = 0;
  bool stopping = false;
  std::thread worker;
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_SCHEDULER_H
