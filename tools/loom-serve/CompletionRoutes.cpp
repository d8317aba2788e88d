//===- CompletionRoutes.cpp - POST /v1/completions and GET /v1/models -----===//
//
// Part of Loom. See Routes.h. A completion request is read, checked against
// its model's contract, and queued on the model's Scheduler; its HTTP
// worker then waits for every choice to finish (the completion object), or
// streams each token as a server-sent event as the scheduler gives it
// (cpp-httplib's chunked content provider), ending with "data: [DONE]".
//
//===----------------------------------------------------------------------===//

#include "Routes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"

#include <ctime>
#include <random>

using namespace loom::serve;

static const char *kJson = "application/json";

void Service::answerCompletion(httplib::Response &res, const std::string &model,
                               int status, const std::string &message,
                               llvm::StringRef type, llvm::StringRef code) {
  res.status = status;
  res.set_content(openAIError(message, type, code), kJson);
  metrics.countCompletion(model, status);
  ++numAnswered;
}

void Service::complete(const httplib::Request &req, httplib::Response &res) {
  std::random_device device;
  uint64_t randomSeed = (uint64_t(device()) << 32) | device();
  CompletionRequest request;
  std::optional<HttpError> error =
      parseCompletionRequest(req.body, randomSeed, request);
  Language *language = findLanguage(request.model);
  // Metrics name a model the server has, never what a client wrote.
  std::string label = language ? request.model : "";
  if (error)
    return answerCompletion(res, label, error->status, error->message);
  if (!language && find(request.model))
    return answerCompletion(
        res, "", 400,
        "model '" + request.model +
            "' is not a language model (its artifact has no 'prefill' and "
            "'decode' entries): POST /v2/models/" +
            request.model + "/infer serves it");
  if (!language)
    return answerCompletion(res, "", 404,
                            "unknown model '" + request.model + "'",
                            "invalid_request_error", "model_not_found");
  if ((error = applyTokenizer(request, language->model->tokenizer())))
    return answerCompletion(res, label, error->status, error->message);
  if ((error = checkAgainstContract(request, language->model->contract())))
    return answerCompletion(res, label, error->status, error->message);
  auto job = std::make_shared<CompletionJob>(request.prompts.size());
  if ((error = language->scheduler->submit(request, job)))
    return answerCompletion(res, label, error->status, error->message,
                            "server_error");
  CompletionId id{"cmpl-" + llvm::utohexstr(++numCompletions, true),
                  int64_t(std::time(nullptr)), label};
  if (request.stream)
    return stream(res, id, job);
  std::unique_lock<std::mutex> lock(job->mutex);
  job->changed.wait(lock, [&] { return job->done(); });
  if (!job->error.empty()) {
    std::string message = job->error;
    lock.unlock();
    return answerCompletion(res, label, 500, message, "server_error");
  }
  res.set_content(completionBody(id, request, job->choices), kJson);
  lock.unlock();
  metrics.countCompletion(label, 200);
  ++numAnswered;
}

namespace {

/// What a stream has sent of a job: tokens per choice, and whether each
/// choice's finish, and the end, went out.
struct StreamState {
  std::vector<size_t> sentTokens;
  bool ended = false;
};

/// The events for what \p job has that \p state has not sent (the job's
/// mutex held): one per new token, the last of a choice with its finish
/// reason; an error event, then [DONE], when the job is over.
std::string pendingEvents(const CompletionId &id, const CompletionJob &job,
                          StreamState &state) {
  std::string events;
  for (size_t c = 0; c < job.choices.size(); ++c) {
    const ChoiceResult &choice = job.choices[c];
    for (size_t &k = state.sentTokens[c]; k < choice.tokens.size(); ++k) {
      bool last = k + 1 == choice.tokens.size();
      llvm::StringRef text =
          k < choice.pieces.size() ? llvm::StringRef(choice.pieces[k]) : "";
      events += streamChunk(id, int64_t(c), {choice.tokens[k]}, text,
                            last ? llvm::StringRef(choice.finishReason) : "");
    }
  }
  if (!job.error.empty())
    events += "data: " + openAIError(job.error, "server_error") + "\n\n";
  if (job.done()) {
    events += "data: [DONE]\n\n";
    state.ended = true;
  }
  return events;
}

} // namespace

void Service::stream(httplib::Response &res, const CompletionId &id,
                     std::shared_ptr<CompletionJob> job) {
  auto state = std::make_shared<StreamState>();
  state->sentTokens.assign(job->choices.size(), 0);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [id, job, state](size_t, httplib::DataSink &sink) {
        std::string events;
        {
          std::unique_lock<std::mutex> lock(job->mutex);
          job->changed.wait(lock, [&] {
            return job->done() ||
                   llvm::any_of(llvm::seq<size_t>(0, job->choices.size()),
                                [&](size_t c) {
                                  return job->choices[c].tokens.size() >
                                         state->sentTokens[c];
                                });
          });
          events = pendingEvents(id, *job, *state);
        }
        if (!sink.write(events.data(), events.size()))
          return false; // the client went away: the releaser cancels
        if (state->ended)
          sink.done();
        return true;
      },
      [job](bool) {
        // A stream that ended early (its client gone) frees its slots at
        // the scheduler's next iteration; after the end this changes
        // nothing.
        std::lock_guard<std::mutex> lock(job->mutex);
        job->cancelled = true;
      });
  metrics.countCompletion(id.model, 200);
  ++numAnswered;
}

void Service::installCompletionRoutes(httplib::Server &server) {
  server.Post("/v1/completions",
              [this](const httplib::Request &req, httplib::Response &res) {
                complete(req, res);
              });
  server.Get("/v1/models",
             [this](const httplib::Request &, httplib::Response &res) {
               std::vector<std::string> names;
               for (const auto &[name, language] : languageModels)
                 names.push_back(name);
               res.set_content(modelList(names), kJson);
             });
}
