//===- Client.cpp - One keep-alive HTTP connection to loom-serve ----------===//
//
// Part of Loom. See Client.h.
//
//===----------------------------------------------------------------------===//

#include "Client.h"

#include <httplib.h>

using namespace llvm;

namespace loom::bench {

Connection::Connection(const std::string &host, int port,
                       unsigned timeoutSeconds)
    : client(std::make_unique<httplib::Client>(host, port)),
      connections(std::make_shared<std::atomic<int64_t>>(0)) {
  client->set_keep_alive(true);
  // A request's headers and body are two writes: without TCP_NODELAY the
  // second waits for the first's acknowledgement (Nagle).
  client->set_tcp_nodelay(true);
  client->set_connection_timeout(timeoutSeconds);
  client->set_read_timeout(timeoutSeconds);
  client->set_write_timeout(timeoutSeconds);
  auto count = connections;
  client->set_socket_options([count](socket_t) { ++*count; });
}

Connection::~Connection() = default;

Expected<std::string> Connection::get(const std::string &path) {
  httplib::Result r = client->Get(path);
  if (!r)
    return createStringError("GET " + path + ": " +
                             httplib::to_string(r.error()));
  if (r->status != 200)
    return createStringError("GET " + path + ": HTTP " +
                             std::to_string(r->status) + ": " + r->body);
  return std::move(r->body);
}

Answer Connection::post(const std::string &path,
                        const EncodedRequest &request) {
  httplib::Headers headers;
  if (request.headerLength)
    headers.emplace("Inference-Header-Content-Length",
                    std::to_string(*request.headerLength));
  httplib::Result r =
      client->Post(path, headers, request.body, request.contentType);
  Answer a;
  if (!r) {
    a.failure = "no answer: " + httplib::to_string(r.error());
    return a;
  }
  a.status = r->status;
  a.body = std::move(r->body);
  if (r->has_header("Inference-Header-Content-Length"))
    a.headerLength = r->get_header_value("Inference-Header-Content-Length");
  return a;
}

Expected<Tensors> decodeAnswer(const Answer &answer) {
  if (!answer.failure.empty())
    return createStringError(answer.failure);
  if (answer.status != 200)
    return createStringError("HTTP " + std::to_string(answer.status) + ": " +
                             StringRef(answer.body).take_front(300));
  std::optional<StringRef> header;
  if (answer.headerLength)
    header = StringRef(*answer.headerLength);
  return decodeResponse(answer.body, header);
}

} // namespace loom::bench
