//===- Routes.cpp - loom-serve's HTTP endpoints ---------------------------===//
//
// Part of Loom. See Routes.h.
//
//===----------------------------------------------------------------------===//

#include "Routes.h"
#include "Protocol.h"

#include "llvm/Support/FormatVariadic.h"

using namespace loom::serve;

static const char *kJson = "application/json";

Service::Service(Metrics &metrics,
                 std::vector<std::unique_ptr<ServedModel>> served,
                 std::vector<std::unique_ptr<StagePipeline>> pipelines,
                 std::vector<std::unique_ptr<LanguageModel>> languages,
                 std::chrono::microseconds maxQueueDelay, size_t maxBodyBytes,
                 size_t maxWaiting)
    : metrics(metrics), maxBodyBytes(maxBodyBytes) {
  for (std::unique_ptr<ServedModel> &m : served) {
    std::string name = m->name();
    auto batcher = std::make_unique<Batcher>(*m, metrics, maxQueueDelay);
    models[name] = {std::move(m), std::move(batcher), nullptr};
  }
  for (std::unique_ptr<StagePipeline> &p : pipelines) {
    std::string name = p->name();
    models[name] = {nullptr, nullptr, std::move(p)};
  }
  for (std::unique_ptr<LanguageModel> &m : languages) {
    std::string name = m->name();
    auto scheduler = std::make_unique<Scheduler>(*m, metrics, maxWaiting);
    languageModels[name] = {std::move(m), std::move(scheduler)};
  }
}

Service::~Service() {
  // Each batcher runs what it queued, each scheduler every sequence it
  // accepted, before its model is freed.
  for (auto &[name, served] : models) {
    served.batcher.reset();
    served.pipeline.reset();
  }
  for (auto &[name, language] : languageModels)
    language.scheduler.reset();
}

void Service::flush() {
  for (auto &[name, served] : models)
    if (served.batcher)
      served.batcher->flush();
}

std::optional<std::string> Service::notReady() const {
  for (const auto &[name, served] : models)
    if (std::optional<std::string> why = served.notReady())
      return why;
  return std::nullopt;
}

Service::Served *Service::find(const std::string &name) {
  auto it = models.find(name);
  return it == models.end() ? nullptr : &it->second;
}

Service::Language *Service::findLanguage(const std::string &name) {
  auto it = languageModels.find(name);
  return it == languageModels.end() ? nullptr : &it->second;
}

void Service::answer(httplib::Response &res, const std::string &model,
                     int status, const std::string &message) {
  res.status = status;
  res.set_content(errorBody(message), kJson);
  metrics.countRequest(model, status);
  ++numAnswered;
}

void Service::infer(const httplib::Request &req, httplib::Response &res) {
  std::string name = req.matches[1];
  Served *served = find(name);
  if (!served && findLanguage(name))
    return answer(res, name, 400,
                  "model '" + name +
                      "' is a language model (a decoder artifact): POST "
                      "/v1/completions serves it");
  if (!served)
    return answer(res, "", 404, "unknown model '" + name + "'");
  // The header's value is a copy: headerLength refers to it.
  std::string headerText;
  std::optional<llvm::StringRef> headerLength;
  if (req.has_header("Inference-Header-Content-Length")) {
    headerText = req.get_header_value("Inference-Header-Content-Length");
    headerLength = headerText;
  }
  InferRequest request;
  if (std::optional<HttpError> e = parseInferRequest(
          served->signature(), req.body, headerLength, request))
    return answer(res, name, e->status, e->message);
  if (std::optional<std::string> why = served->notReady())
    return answer(res, name, 503, "model '" + name + "' is not ready: " + *why);
  std::future<BatchResult> pending =
      served->pipeline
          ? served->pipeline->submit(std::move(request.inputs))
          : served->batcher->submit(request.rows, std::move(request.inputs));
  BatchResult result = pending.get();
  if (!result.error.empty())
    return answer(res, name, result.status,
                  (result.status == 503 ? "the model cannot run it now: "
                                        : "the run failed: ") +
                      result.error);
  HttpBody body =
      formatInferResponse(served->signature(), request, result.outputs);
  if (body.headerLength)
    res.set_header("Inference-Header-Content-Length",
                   std::to_string(*body.headerLength));
  res.set_content(std::move(body.body), body.contentType.c_str());
  metrics.countRequest(name, 200);
  ++numAnswered;
}

void Service::install(httplib::Server &server) {
  server.set_payload_max_length(maxBodyBytes);
  // SO_REUSEADDR only (a restart binds while old connections linger), not
  // the library's default SO_REUSEPORT, with which a second server on a
  // taken port would bind too and silently share its connections.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.Get("/v2/health/live",
             [](const httplib::Request &, httplib::Response &res) {
               res.set_content("{\"live\":true}", kJson);
             });
  // Ready while every model can take requests (a served pipeline: every
  // stage has a live rank); 503 with the reason when not.
  server.Get("/v2/health/ready",
             [this](const httplib::Request &, httplib::Response &res) {
               std::optional<std::string> why = notReady();
               res.status = why ? 503 : 200;
               res.set_content(readyBody("", why), kJson);
             });
  server.Get("/v2", [](const httplib::Request &, httplib::Response &res) {
    res.set_content("{\"name\":\"loom-serve\",\"version\":\"1\","
                    "\"extensions\":[\"binary_tensor_data\"]}",
                    kJson);
  });
  installModelRoutes(server);
  server.Post(R"(/v2/models/([^/]+)(?:/versions/[^/]+)?/infer)",
              [this](const httplib::Request &req, httplib::Response &res) {
                infer(req, res);
              });
  installCompletionRoutes(server);
  server.Get("/metrics",
             [this](const httplib::Request &, httplib::Response &res) {
               res.set_content(metrics.render(), "text/plain; version=0.0.4");
             });
  // What the library answers itself (no such route, a body over
  // --max-body-bytes) gets a JSON error too.
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request &req, httplib::Response &res) {
        if (!res.body.empty())
          return httplib::Server::HandlerResponse::Unhandled;
        std::string message;
        if (res.status == 413) {
          message = llvm::formatv("the request body is larger than "
                                  "--max-body-bytes ({0} bytes)",
                                  maxBodyBytes);
          // Refused before routing: counted without its model.
          metrics.countRequest("", 413);
          ++numAnswered;
        } else if (res.status == 404)
          message = "no endpoint " + req.method + " " + req.path;
        else
          message = "HTTP status " + std::to_string(res.status);
        bool openAI = llvm::StringRef(req.path).starts_with("/v1/");
        res.set_content(openAI ? openAIError(message) : errorBody(message),
                        kJson);
        return httplib::Server::HandlerResponse::Handled;
      }));
}

void Service::installModelRoutes(httplib::Server &server) {
  server.Get(
      R"(/v2/models/([^/]+)(?:/versions/[^/]+)?)",
      [this](const httplib::Request &req, httplib::Response &res) {
        std::string name = req.matches[1];
        if (Served *served = find(name))
          return res.set_content(modelMetadata(served->signature()),
                                 kJson);
        if (Language *language = findLanguage(name))
          return res.set_content(
              languageModelMetadata(name, language->model->contract()), kJson);
        res.status = 404;
        res.set_content(errorBody("unknown model '" + name + "'"), kJson);
      });
  server.Get(R"(/v2/models/([^/]+)(?:/versions/[^/]+)?/ready)",
             [this](const httplib::Request &req, httplib::Response &res) {
               std::string name = req.matches[1];
               Served *served = find(name);
               if (!served && !findLanguage(name)) {
                 res.status = 404;
                 return res.set_content(
                     errorBody("unknown model '" + name + "'"), kJson);
               }
               std::optional<std::string> why =
                   served ? served->notReady() : std::nullopt;
               res.status = why ? 503 : 200;
               res.set_content(readyBody(name, why), kJson);
             });
}
