//===- StageListener.cpp - Where a served pipeline's ranks connect --------===//
//
// Part of Loom. See StageListener.h.
//
//===----------------------------------------------------------------------===//

#include "StageListener.h"

#include <cstdio>

using namespace loom;
using namespace loom::serve;
using namespace loom::serve::stage;
namespace comm = loom::rt::comm;

llvm::Expected<std::unique_ptr<StageListener>>
StageListener::start(const std::string &host, int port,
                     std::vector<StagePipeline *> pipelines) {
  std::unique_ptr<StageListener> l(new StageListener());
  if (rt::Error e = comm::listenOn(host, port, l->listener, l->bound))
    return llvm::createStringError("--stage-port: " + e.message);
  l->pipelines = std::move(pipelines);
  l->thread = std::thread([raw = l.get()] { raw->acceptRanks(); });
  return std::move(l);
}

StageListener::~StageListener() {
  stopping = true;
  if (thread.joinable())
    thread.join();
}

void StageListener::acceptRanks() {
  while (!stopping) {
    comm::Socket socket;
    // A short deadline, so that the thread sees `stopping` soon.
    if (comm::acceptBefore(listener,
                           comm::Clock::now() + std::chrono::milliseconds(100),
                           socket))
      continue;
    admit(std::move(socket));
  }
}

void StageListener::admit(comm::Socket socket) {
  Frame frame;
  std::string why;
  if (rt::Error e = readFrame(socket, frame,
                              comm::Clock::now() + std::chrono::seconds(5),
                              "a connecting rank", kMaxMessageBytes)) {
    why = e.message;
  } else if (frame.kind != FrameKind::Hello) {
    why = "its first frame is not a hello";
  } else if (auto hello = decodeHello(frame.payload); !hello) {
    why = llvm::toString(hello.takeError());
  } else {
    auto it = std::find_if(pipelines.begin(), pipelines.end(),
                           [&](StagePipeline *p) {
                             return p->artifactHash() == hello->artifactHash;
                           });
    if (it == pipelines.end())
      why = "rank " + std::to_string(hello->rank) +
            " loaded an artifact that no served pipeline is";
    else if (llvm::Error e = (*it)->attach(socket, *hello))
      why = llvm::toString(std::move(e));
    else
      return;
  }
  std::fprintf(stderr, "loom-serve: a rank was turned away: %s\n",
               why.c_str());
  std::fflush(stderr);
  // Tells the rank why, if it still listens; it exits with that message.
  std::vector<uint8_t> text(why.begin(), why.end());
  (void)writeFrame(socket, FrameKind::Refusal, 0, {&text},
                   comm::Clock::now() + std::chrono::seconds(1), "the rank");
}
