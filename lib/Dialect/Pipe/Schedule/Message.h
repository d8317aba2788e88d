//===- Message.h - The identity of a send/receive pair -----------*- C++ -*-===//
//
// Part of Loom. Private to lib/Dialect/Pipe/Schedule.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_PIPE_SCHEDULE_MESSAGE_H
#define LOOM_LIB_DIALECT_PIPE_SCHEDULE_MESSAGE_H

#include "loom/Dialect/Pipe/Schedule/Schedule.h"

#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/Hashing.h"

namespace loom::pipe {

/// A message: the activation (or its gradient) of edge fromStage -> toStage
/// for one micro-batch, from one device to another. A SEND_F and the
/// RECV_F it matches (and a SEND_B and its RECV_B) have the same key.
struct MessageKey {
  int32_t backward = 0, fromStage = 0, toStage = 0, microBatch = 0;
  int32_t sender = 0, receiver = 0;

  /// The key of a send or receive action of device `device`.
  static MessageKey of(const Action &a, int device) {
    MessageKey k;
    k.microBatch = a.microBatch;
    switch (a.kind) {
    case ActionKind::SendF: // stage -> peer, device -> peer
      k = {0, a.stage, a.peerStage, a.microBatch, device, a.peerDevice};
      break;
    case ActionKind::RecvF: // peer -> stage, peer -> device
      k = {0, a.peerStage, a.stage, a.microBatch, a.peerDevice, device};
      break;
    case ActionKind::SendB: // gradient of peer -> stage, device -> peer
      k = {1, a.peerStage, a.stage, a.microBatch, device, a.peerDevice};
      break;
    case ActionKind::RecvB: // gradient of stage -> peer, peer -> device
      k = {1, a.stage, a.peerStage, a.microBatch, a.peerDevice, device};
      break;
    default:
      break;
    }
    return k;
  }
  bool operator==(const MessageKey &o) const {
    return backward == o.backward && fromStage == o.fromStage &&
           toStage == o.toStage && microBatch == o.microBatch &&
           sender == o.sender && receiver == o.receiver;
  }
};

} // namespace loom::pipe

template <> struct llvm::DenseMapInfo<loom::pipe::MessageKey> {
  static loom::pipe::MessageKey getEmptyKey() { return {-1, 0, 0, 0, 0, 0}; }
  static loom::pipe::MessageKey getTombstoneKey() {
    return {-2, 0, 0, 0, 0, 0};
  }
  static unsigned getHashValue(const loom::pipe::MessageKey &k) {
    return llvm::hash_combine(k.backward, k.fromStage, k.toStage, k.microBatch,
                              k.sender, k.receiver);
  }
  static bool isEqual(const loom::pipe::MessageKey &a,
                      const loom::pipe::MessageKey &b) {
    return a == b;
  }
};

#endif // LOOM_LIB_DIALECT_PIPE_SCHEDULE_MESSAGE_H
