//===- ThreadsTest.cpp - The threads communicator -------------------------===//
//
// Part of Loom. The semantics every communicator shares (lib/Runtime/Comm),
// checked on ranks that are threads of this process: ordered batched
// exchanges, sizes checked, deadlines honoured, collectives and splits, a
// rank that aborts or leaves.
//
//===----------------------------------------------------------------------===//

#include "../../../../lib/Runtime/Comm/Peer.h"

#include <gtest/gtest.h>

#include <functional>
#include <thread>

using namespace loom::rt;
using namespace loom::rt::comm;
using namespace std::chrono_literals;

namespace {

using RankBody = std::function<void(Communicator &)>;

/// Runs \p body on every rank of a threads world of \p size.
void runWorld(int size, const RankBody &body) {
  std::vector<std::unique_ptr<Communicator>> world;
  createThreadWorld(size, world);
  std::vector<std::thread> threads;
  for (auto &comm : world)
    threads.emplace_back([&body, &comm] { body(*comm); });
  for (auto &t : threads)
    t.join();
}

Deadline after(std::chrono::milliseconds ms) { return Clock::now() + ms; }

TEST(ThreadsComm, RingOfBatchedExchangesMatchesInOrder) {
  runWorld(4, [](Communicator &c) {
    int n = c.size(), r = c.rank();
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    // Two messages to the same peer in one batch arrive in posted order.
    int out[2] = {r * 10, r * 10 + 1}, in[2] = {-1, -1};
    std::vector<Message> batch = {
        {Message::Direction::Recv, prev, &in[0], sizeof(int)},
        {Message::Direction::Send, next, &out[0], sizeof(int)},
        {Message::Direction::Recv, prev, &in[1], sizeof(int)},
        {Message::Direction::Send, next, &out[1], sizeof(int)}};
    Error e = c.exchange(batch, after(2000ms));
    ASSERT_FALSE(e) << e.message;
    EXPECT_EQ(in[0], prev * 10);
    EXPECT_EQ(in[1], prev * 10 + 1);
  });
}

TEST(ThreadsComm, SizeMismatchNamesBothRanks) {
  std::string messages[2];
  runWorld(2, [&](Communicator &c) {
    char buf[8] = {};
    std::vector<Message> batch;
    if (c.rank() == 0)
      batch.push_back({Message::Direction::Send, 1, buf, 4});
    else
      batch.push_back({Message::Direction::Recv, 0, buf, 8});
    messages[c.rank()] = c.exchange(batch, after(2000ms)).message;
  });
  EXPECT_EQ(messages[0], "");
  EXPECT_EQ(messages[1],
            "exchange: rank 1 expects 8 bytes from rank 0, which sent 4");
}

TEST(ThreadsComm, DeadlineHonoured) {
  std::vector<std::unique_ptr<Communicator>> world;
  createThreadWorld(2, world);
  int value = 0;
  std::vector<Message> batch = {
      {Message::Direction::Recv, 1, &value, sizeof(value)}};
  auto start = Clock::now();
  Error e = world[0]->exchange(batch, after(200ms));
  auto waited = Clock::now() - start;
  EXPECT_EQ(e.status, LOOM_ERROR_COMMUNICATION);
  EXPECT_EQ(e.message, "exchange: rank 0: deadline passed waiting for rank 1");
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 1000ms);
}

TEST(ThreadsComm, AbortedPeerEndsTheWaitAtOnce) {
  std::vector<std::unique_ptr<Communicator>> world;
  createThreadWorld(2, world);
  std::thread aborter([&] {
    std::this_thread::sleep_for(50ms);
    world[1]->abort();
  });
  int value = 0;
  std::vector<Message> batch = {
      {Message::Direction::Recv, 1, &value, sizeof(value)}};
  auto start = Clock::now();
  Error e = world[0]->exchange(batch, after(10000ms));
  aborter.join();
  EXPECT_LT(Clock::now() - start, 2000ms);
  EXPECT_EQ(e.message, "exchange: rank 0 waits for rank 1: rank 1 aborted");
}

TEST(ThreadsComm, CollectivesAndSplit) {
  runWorld(4, [](Communicator &c) {
    int r = c.rank();
    float values[3] = {float(r), 1.0f, float(r * r)};
    Error e = c.allReduceSum(values, 3, after(2000ms));
    ASSERT_FALSE(e) << e.message;
    EXPECT_EQ(values[0], 6.0f);
    EXPECT_EQ(values[1], 4.0f);
    EXPECT_EQ(values[2], 14.0f);

    int64_t word = r == 2 ? 42 : -1;
    e = c.broadcast(&word, sizeof(word), 2, after(2000ms));
    ASSERT_FALSE(e) << e.message;
    EXPECT_EQ(word, 42);
    ASSERT_FALSE(c.barrier(after(2000ms)));

    // Odd and even ranks, ordered by a key that reverses them.
    std::unique_ptr<Communicator> half;
    e = c.split(r % 2, -r, after(2000ms), half);
    ASSERT_FALSE(e) << e.message;
    ASSERT_TRUE(half);
    EXPECT_EQ(half->size(), 2);
    EXPECT_EQ(half->rank(), r < 2 ? 1 : 0);
    float mine = float(r);
    ASSERT_FALSE(half->allReduceSum(&mine, 1, after(2000ms)));
    EXPECT_EQ(mine, r % 2 ? 4.0f : 2.0f);

    // A negative color gives no communicator; the others still form one.
    std::unique_ptr<Communicator> some;
    ASSERT_FALSE(c.split(r == 0 ? -1 : 0, 0, after(2000ms), some));
    EXPECT_EQ(bool(some), r != 0);
    if (some)
      EXPECT_EQ(some->size(), 3);
  });
}

TEST(ThreadsComm, BadMessagesRefused) {
  std::vector<std::unique_ptr<Communicator>> world;
  createThreadWorld(2, world);
  std::vector<Message> batch = {{Message::Direction::Send, 2, nullptr, 0}};
  Error e = world[0]->exchange(batch, after(100ms));
  EXPECT_EQ(e.status, LOOM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(e.message,
            "exchange: rank 0: a message to or from rank 2 of 2 with 0 bytes");
}

} // namespace
