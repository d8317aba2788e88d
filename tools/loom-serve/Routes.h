//===- Routes.h - loom-serve's HTTP endpoints -------------------*- C++ -*-===//
//
// Part of Loom. The KServe v2 endpoints (health, server and model metadata,
// model readiness, inference), /metrics, and a JSON error body for every
// 4xx the HTTP library answers itself (no route, an oversized body), on a
// cpp-httplib server; each model's requests go through its Batcher.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TOOLS_LOOMSERVE_ROUTES_H
#define LOOM_TOOLS_LOOMSERVE_ROUTES_H

#include "Batcher.h"
#include "Metrics.h"
#include "ServedModel.h"

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
  Service(std::vector<std::unique_ptr<ServedModel>> models,
          std::chrono::microseconds maxQueueDelay, size_t maxBodyBytes);
  /// Drains every batcher.
  ~Service();

  /// Runs every queued request without waiting for the queue delay: the
  /// server is stopping.
  void flush();
  /// Installs the endpoints on \p server.
  void install(httplib::Server &server);
  /// Inference requests answered so far (any status).
  uint64_t answered() const { return numAnswered; }

private:
  struct Served {
    std::unique_ptr<ServedModel> model;
    std::unique_ptr<Batcher> batcher;
  };
  Served *find(const std::string &name);
  void infer(const httplib::Request &req, httplib::Response &res);
  void answer(httplib::Response &res, const std::string &model, int status,
              const std::string &message);

  Metrics metrics;
  std::map<std::string, Served> models;
  size_t maxBodyBytes;
  std::atomic<uint64_t> numAnswered{0};
};

} // namespace loom::serve

#endif // LOOM_TOOLS_LOOMSERVE_ROUTES_H
