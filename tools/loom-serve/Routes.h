//===- Routes.h - loom-serve's HTTP endpoints -------------------*- C++ -*-===//
//
// Part of Loom. The KServe v2 endpoints (health, server and model metadata,
// model readiness, inference), OpenAI-style completions and model list for
// language models, /metrics, and a JSON error body for every 4xx the HTTP
// library answers itself (no route, an oversized body), on a cpp-httplib
// server; each model's requests go through its Batcher, each language
// model's through its Scheduler, each served pipeline's through its
// StagePipeline.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_ROUTES_H
#define LOOM_TOOLS_LOOMSERVE_ROUTES_H

#include "Batcher.h"
#include "Completions.h"
#include "LanguageModel.h"
#include "Metrics.h"
#include "Scheduler.h"
#include "ServedModel.h"
#include "StagePipeline.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loom::serve {

class Service {
public:
  /// \p maxWaiting: the sequences of a language model that may wait for a
  /// slot.
  Service(Metrics &metrics, std::vector<std::unique_ptr<ServedModel>> models,
          std::vector<std::unique_ptr<StagePipeline>> pipelines,
          std::vector<std::unique_ptr<LanguageModel>> languageModels,
          std::chrono::microseconds maxQueueDelay, size_t maxBodyBytes,
          size_t maxWaiting);
  /// Drains every batcher, served pipeline and scheduler.
  ~Service();

  /// Runs every queued request without waiting for the queue delay: the
  /// server is stopping.
  void flush();
  /// Installs the endpoints on \p server.
  void install(httplib::Server &server);
  /// Inference and completion requests answered so far (any status).
  uint64_t answered() const { return numAnswered; }

private:
  /// A KServe model: an artifact and its batcher, or a served pipeline.
  struct Served {
    std::unique_ptr<ServedModel> model;
    std::unique_ptr<Batcher> batcher;
    std::unique_ptr<StagePipeline> pipeline;
    const ModelSignature &signature() const {
      return pipeline ? pipeline->signature() : model->signature();
    }
    /// Why it cannot take requests now, or none.
    std::optional<std::string> notReady() const {
      return pipeline ? pipeline->notReady() : std::nullopt;
    }
  };
  /// Why the server is not ready (a model that is not), or none.
  std::optional<std::string> notReady() const;
  struct Language {
    std::unique_ptr<LanguageModel> model;
    std::unique_ptr<Scheduler> scheduler;
  };
  Served *find(const std::string &name);
  Language *findLanguage(const std::string &name);
  void infer(const httplib::Request &req, httplib::Response &res);
  void answer(httplib::Response &res, const std::string &model, int status,
              const std::string &message);
  /// The KServe metadata and readiness of every model, language models
  /// included.
  void installModelRoutes(httplib::Server &server);
  /// POST /v1/completions and GET /v1/models (CompletionRoutes.cpp).
  void installCompletionRoutes(httplib::Server &server);
  void complete(const httplib::Request &req, httplib::Response &res);
  void stream(httplib::Response &res, const CompletionId &id,
              std::shared_ptr<CompletionJob> job);
  void answerCompletion(httplib::Response &res, const std::string &model,
                        int status, const std::string &message,
                        llvm::StringRef type = "invalid_request_error",
                        llvm::StringRef code = "");

  Metrics &metrics;
  std::map<std::string, Served> models;
  std::map<std::string, Language> languageModels;
  std::atomic<uint64_t> numCompletions{0};
  size_t maxBodyBytes;
  std::atomic<uint64_t> numAnswered{0};
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_ROUTES_H
