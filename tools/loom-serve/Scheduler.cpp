//===- Scheduler.cpp - Continuous batching of one language model ----------===//
//
// Part of Loom. See Scheduler.h. A prompt is prefilled into its slot by a
// prefill call of the whole batch: the slots of sequences in flight run a
// chunk of one token, their pending one, at their own position (the first
// position their cache does not hold yet), so that the call writes only
// positions past their live length, which their next decode step
// overwrites before any query reads them; free slots run a token at 0. A
// prefill therefore waits while a sequence in flight is within P positions
// of the cache's end (its chunk would not fit: the runtime would clamp the
// write onto positions it holds); such a sequence has fewer than P tokens
// left, so the wait is at most P - 1 iterations.
//
//===----------------------------------------------------------------------===//

#include "Scheduler.h"

#include "TokenLoop.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace loom;
using namespace loom::serve;

namespace {

bool abandoned(const std::shared_ptr<CompletionJob> &job) {
  std::lock_guard<std::mutex> lock(job->mutex);
  return job->cancelled || !job->error.empty();
}

} // namespace

Scheduler::Scheduler(LanguageModel &model, Metrics &metrics, size_t maxWaiting)
    : model(model), metrics(metrics), maxWaiting(maxWaiting),
      slots(model.contract().batch) {
  metrics.setSlots(model.name(), 0, 0);
  worker = std::thread([this] { work(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  worker.join();
}

std::optional<HttpError> Scheduler::submit(const CompletionRequest &request,
                                           std::shared_ptr<CompletionJob> job) {
  size_t n = request.prompts.size();
  // Made before the lock: a sequence's text stream decodes its prompt's
  // context.
  std::vector<Sequence> fresh;
  for (size_t i = 0; i < n; ++i) {
    Sequence s{request.prompts[i], request.maxTokens, request.sampling,
               request.stopTokenIds, job, i, nullptr};
    s.sampling.seed = request.sampling.seed + i;
    if (const tokenizer::Tokenizer *t = model.tokenizer())
      s.text = std::make_shared<tokenizer::TextStream>(
          *t, request.prompts[i], request.stopStrings);
    fresh.push_back(std::move(s));
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    size_t limit = slots.size() + maxWaiting;
    if (occupied + queue.size() + n > limit)
      return HttpError{
          503, llvm::formatv("model '{0}' holds {1} sequence(s) ({2} in its "
                             "{3} slots, {4} waiting) and at most {5} (the "
                             "slots and --max-waiting {6}): the request's {7} "
                             "do not fit; try again later",
                             model.name(), occupied + queue.size(), occupied,
                             slots.size(), queue.size(), limit, maxWaiting, n)};
    for (Sequence &s : fresh)
      queue.push_back(std::move(s));
    metrics.setSlots(model.name(), occupied, queue.size());
  }
  wake.notify_all();
  return std::nullopt;
}

void Scheduler::work() {
  while (true) {
    // Before admitting: a slot freed now is free for this iteration, and a
    // sequence admitted is never dropped before its prefill.
    dropAbandoned();
    std::vector<size_t> admitted;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock,
                [&] { return stopping || !queue.empty() || occupied > 0; });
      if (queue.empty() && occupied == 0)
        return; // stopping, and every sequence accepted has finished
      admitted = admit();
    }
    if (!admitted.empty())
      prefill(admitted);
    if (activeSlots() > 0)
      decode();
  }
}

size_t Scheduler::activeSlots() const {
  return llvm::count_if(slots,
                        [](const Slot &s) { return s.sequence.has_value(); });
}

/// Whether a prefill call leaves every sequence in flight intact (the
/// file's header): each has room for a chunk at its position, or, where
/// prefill takes no positions (it writes from 0), none is in flight.
bool Scheduler::mayPrefill() const {
  const generate::DecoderContract &c = model.contract();
  for (const Slot &s : slots)
    if (s.sequence && (!c.chunked() || s.position + c.promptBound > c.capacity))
      return false;
  return true;
}

/// Moves waiting sequences into free slots, in arrival order (the mutex
/// held); those whose request is over are dropped.
std::vector<size_t> Scheduler::admit() {
  std::vector<size_t> admitted;
  if (!mayPrefill())
    return admitted;
  for (size_t s = 0; s < slots.size() && !queue.empty(); ++s) {
    if (slots[s].sequence)
      continue;
    while (!queue.empty() && abandoned(queue.front().job))
      queue.pop_front();
    if (queue.empty())
      break;
    Slot &slot = slots[s];
    slot.sequence = std::move(queue.front());
    queue.pop_front();
    slot.sampler.emplace(slot.sequence->sampling);
    slot.generated = 0;
    slot.position = 0;
    admitted.push_back(s);
    ++occupied;
  }
  metrics.setSlots(model.name(), occupied, queue.size());
  return admitted;
}

/// The prompts of the \p admitted slots, in chunks as loom-generate runs
/// them (a slot with fewer chunks repeats its last); every other slot
/// runs one token that writes nothing its sequence holds (the header).
void Scheduler::prefill(const std::vector<size_t> &admitted) {
  const generate::DecoderContract &c = model.contract();
  int64_t b = c.batch, p = c.promptBound;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> chunks(b);
  size_t rounds = 1;
  for (size_t s : admitted) {
    chunks[s] =
        generate::promptChunks(int64_t(slots[s].sequence->prompt.size()), p);
    rounds = std::max(rounds, chunks[s].size());
  }
  std::vector<float> out, rows(b * c.vocab);
  for (size_t round = 0; round < rounds; ++round) {
    std::vector<int64_t> ids(b * p, 0), positions(b, 0), lengths(b, 1);
    for (int64_t s = 0; s < b; ++s) {
      const Slot &slot = slots[s];
      if (!chunks[s].empty()) {
        auto [start, take] = chunks[s][std::min(round, chunks[s].size() - 1)];
        const std::vector<int64_t> &prompt = slot.sequence->prompt;
        std::copy(prompt.begin() + start, prompt.begin() + start + take,
                  ids.begin() + s * p);
        positions[s] = start;
        lengths[s] = take;
      } else if (slot.sequence) {
        ids[s * p] = slot.last;
        positions[s] = slot.position;
      }
    }
    if (llvm::Error e = model.steps().prefill({ids, positions, lengths}, out)) {
      std::vector<size_t> all;
      for (size_t s = 0; s < slots.size(); ++s)
        if (slots[s].sequence)
          all.push_back(s);
      return fail(all, llvm::toString(std::move(e)));
    }
    for (size_t s : admitted)
      if (round == chunks[s].size() - 1)
        std::copy(out.begin() + s * c.vocab, out.begin() + (s + 1) * c.vocab,
                  rows.begin() + s * c.vocab);
  }
  uint64_t promptTokens = 0;
  for (size_t s : admitted) {
    Slot &slot = slots[s];
    slot.position = int64_t(slot.sequence->prompt.size());
    promptTokens += slot.position;
    take(s, slot.sampler->next(
                llvm::ArrayRef<float>(rows).slice(s * c.vocab, c.vocab)));
  }
  metrics.countPrefill(model.name(), promptTokens);
}

/// One decode call: every sequence in a slot its next token; free slots
/// run a token at 0.
void Scheduler::decode() {
  const generate::DecoderContract &c = model.contract();
  std::vector<int64_t> ids(c.batch, 0), positions(c.batch, 0);
  std::vector<size_t> active;
  for (size_t s = 0; s < slots.size(); ++s) {
    if (!slots[s].sequence)
      continue;
    ids[s] = slots[s].last;
    positions[s] = slots[s].position;
    active.push_back(s);
  }
  std::vector<float> logits;
  if (llvm::Error e = model.steps().decode(ids, positions, logits))
    return fail(active, llvm::toString(std::move(e)));
  metrics.countDecodeStep(model.name(), active.size());
  for (size_t s : active) {
    Slot &slot = slots[s];
    ++slot.position;
    take(s, slot.sampler->next(
                llvm::ArrayRef<float>(logits).slice(s * c.vocab, c.vocab)));
  }
}

/// Gives slot \p s's sequence \p token; it leaves its slot at a stop token
/// or stop string, at max_tokens, or with no position left to feed the
/// token back.
void Scheduler::take(size_t s, int64_t token) {
  Slot &slot = slots[s];
  Sequence &seq = *slot.sequence;
  slot.last = token;
  ++slot.generated;
  std::string piece;
  if (seq.text) {
    // A token the tokenizer lacks (a model's vocabulary may be padded
    // past it) adds no text.
    if (auto settled = seq.text->push(token))
      piece = std::move(*settled);
    else
      llvm::consumeError(settled.takeError());
  }
  const char *finish = nullptr;
  if (llvm::is_contained(seq.stopTokenIds, token) ||
      (seq.text && seq.text->stopped()))
    finish = "stop";
  else if (slot.generated >= seq.maxTokens ||
           slot.position >= model.contract().capacity)
    finish = "length";
  if (finish && seq.text)
    piece += seq.text->finish();
  {
    std::lock_guard<std::mutex> lock(seq.job->mutex);
    ChoiceResult &choice = seq.job->choices[seq.choice];
    choice.tokens.push_back(token);
    if (seq.text)
      choice.pieces.push_back(std::move(piece));
    if (finish) {
      choice.finishReason = finish;
      ++seq.job->finished;
    }
  }
  seq.job->changed.notify_all();
  metrics.countGenerated(model.name(), 1);
  if (finish)
    release(s);
}

void Scheduler::release(size_t s) {
  slots[s].sequence.reset();
  slots[s].sampler.reset();
  std::lock_guard<std::mutex> lock(mutex);
  --occupied;
  metrics.setSlots(model.name(), occupied, queue.size());
}

/// A run failed: the sequences of \p failed end with its message (their
/// caches may be half written).
void Scheduler::fail(const std::vector<size_t> &failed,
                     const std::string &message) {
  for (size_t s : failed) {
    std::shared_ptr<CompletionJob> job = slots[s].sequence->job;
    {
      std::lock_guard<std::mutex> lock(job->mutex);
      if (job->error.empty())
        job->error = "the run failed: " + message;
    }
    job->changed.notify_all();
    release(s);
  }
}

/// Sequences whose request is over (its client gone, or another of its
/// sequences failed) leave their slots.
void Scheduler::dropAbandoned() {
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].sequence && abandoned(slots[s].sequence->job))
      release(s);
}
