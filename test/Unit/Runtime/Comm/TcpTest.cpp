//===- TcpTest.cpp - The store and the TCP communicator -------------------===//
//
// Part of Loom. A store on loopback (set, get waiting for a later set, a
// deadline); TCP worlds whose ranks are threads of this process, each with
// its own sockets as separate processes would have; openWorld's choices.
//
//===----------------------------------------------------------------------===//

#include "../../../../lib/Runtime/Comm/Tcp.h"
#include "../../../../lib/Runtime/Comm/World.h"

#include <gtest/gtest.h>

#include <functional>

using namespace loom::rt;
using namespace loom::rt::comm;
using namespace std::chrono_literals;

namespace {

Deadline after(std::chrono::milliseconds ms) { return Clock::now() + ms; }

TEST(Store, SetGetAndWait) {
  StoreServer server;
  ASSERT_FALSE(server.start("127.0.0.1", 0));
  StoreClient a, b;
  ASSERT_FALSE(a.connect("127.0.0.1", server.port(), after(2000ms)));
  ASSERT_FALSE(b.connect("127.0.0.1", server.port(), after(2000ms)));
  ASSERT_FALSE(a.set("k", std::string("v\0w", 3), after(2000ms)));
  std::string value;
  ASSERT_FALSE(b.get("k", after(2000ms), value));
  EXPECT_EQ(value, std::string("v\0w", 3));
  // A get waits for the set that comes later.
  std::thread late([&] {
    std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(a.set("later", "x", after(2000ms)));
  });
  ASSERT_FALSE(b.get("later", after(2000ms), value));
  late.join();
  EXPECT_EQ(value, "x");
}

TEST(Store, GetHonoursItsDeadline) {
  StoreServer server;
  ASSERT_FALSE(server.start("127.0.0.1", 0));
  StoreClient c;
  ASSERT_FALSE(c.connect("127.0.0.1", server.port(), after(2000ms)));
  std::string value;
  auto start = Clock::now();
  Error e = c.get("never", after(200ms), value);
  EXPECT_LT(Clock::now() - start, 1000ms);
  EXPECT_EQ(e.message, "store at 127.0.0.1:" + std::to_string(server.port()) +
                           ": get 'never': deadline passed receiving from "
                           "the store");
}

TEST(Store, NoServerIsAnErrorByTheDeadline) {
  int port = 0;
  {
    // A port that was free a moment ago.
    Socket s;
    ASSERT_FALSE(listenOn("127.0.0.1", 0, s, port));
  }
  StoreClient c;
  Error e = c.connect("127.0.0.1", port, after(200ms));
  EXPECT_NE(e.message.find("deadline passed connecting to 127.0.0.1:"),
            std::string::npos)
      << e.message;
}

using RankBody = std::function<void(Communicator &)>;

/// Runs \p body on every rank of a TCP world of \p size, one thread each.
void runTcpWorld(int size, const RankBody &body) {
  StoreServer server;
  ASSERT_FALSE(server.start("127.0.0.1", 0));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      std::unique_ptr<Communicator> comm;
      Error e = createTcpWorld(r, size, "127.0.0.1", server.port(), "test",
                               nullptr, after(5000ms), comm);
      ASSERT_FALSE(e) << e.message;
      body(*comm);
    });
  for (auto &t : threads)
    t.join();
}

TEST(TcpComm, ExchangesAndCollectives) {
  runTcpWorld(3, [](Communicator &c) {
    EXPECT_STREQ(c.transport(), "tcp");
    int n = c.size(), r = c.rank();
    // A large message each way: sends never wait for their receiver.
    std::vector<int> out(1 << 20, r), in(1 << 20, -1);
    std::vector<Message> batch = {
        {Message::Direction::Send, (r + 1) % n, out.data(),
         int64_t(out.size() * sizeof(int))},
        {Message::Direction::Recv, (r + n - 1) % n, in.data(),
         int64_t(in.size() * sizeof(int))}};
    Error e = c.exchange(batch, after(5000ms));
    ASSERT_FALSE(e) << e.message;
    EXPECT_EQ(in.front(), (r + n - 1) % n);
    EXPECT_EQ(in.back(), (r + n - 1) % n);
    float v = float(r + 1);
    ASSERT_FALSE(c.allReduceSum(&v, 1, after(5000ms)));
    EXPECT_EQ(v, 6.0f);
    std::unique_ptr<Communicator> pair;
    ASSERT_FALSE(c.split(r == 2 ? -1 : 0, 0, after(5000ms), pair));
    ASSERT_EQ(bool(pair), r != 2);
    if (pair) {
      int token = r == 1 ? 7 : 0;
      ASSERT_FALSE(pair->broadcast(&token, sizeof(token), 1, after(5000ms)));
      EXPECT_EQ(token, 7);
    }
    ASSERT_FALSE(c.barrier(after(5000ms)));
  });
}

TEST(TcpComm, SizeMismatchNamesBothRanks) {
  std::string messages[2];
  runTcpWorld(2, [&](Communicator &c) {
    char buf[8] = {};
    std::vector<Message> batch = {
        {c.rank() == 0 ? Message::Direction::Send : Message::Direction::Recv,
         1 - c.rank(), buf, c.rank() == 0 ? 4 : 8}};
    messages[c.rank()] = c.exchange(batch, after(5000ms)).message;
  });
  EXPECT_EQ(messages[0], "");
  EXPECT_EQ(messages[1],
            "exchange: rank 1 expects 8 bytes from rank 0, which sent 4");
}

TEST(TcpComm, AbortedPeerIsLostAtOnce) {
  std::string message;
  Clock::duration waited{};
  runTcpWorld(2, [&](Communicator &c) {
    if (c.rank() == 1) {
      std::this_thread::sleep_for(50ms);
      c.abort();
      return;
    }
    int value = 0;
    std::vector<Message> batch = {
        {Message::Direction::Recv, 1, &value, sizeof(value)}};
    auto start = Clock::now();
    message = c.exchange(batch, after(10000ms)).message;
    waited = Clock::now() - start;
  });
  EXPECT_EQ(message,
            "exchange: rank 0 waits for rank 1: connection to rank 1 lost");
  EXPECT_LT(waited, 2000ms);
}

TEST(TcpComm, DeadlineHonoured) {
  std::string message;
  runTcpWorld(2, [&](Communicator &c) {
    int value = 0;
    std::vector<Message> batch = {
        {Message::Direction::Recv, 1 - c.rank(), &value, sizeof(value)}};
    if (c.rank() == 0)
      message = c.exchange(batch, after(200ms)).message;
    else
      std::this_thread::sleep_for(400ms);
  });
  EXPECT_EQ(message, "exchange: rank 0: deadline passed waiting for rank 1");
}

} // namespace

namespace {

TEST(World, TorchrunStyleRankZeroHostsTheStore) {
  int port = 0;
  {
    // A port that was free a moment ago: MASTER_PORT.
    Socket s;
    ASSERT_FALSE(listenOn("127.0.0.1", 0, s, port));
  }
  float sums[2] = {0, 0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      LaunchInfo info;
      ASSERT_FALSE(readLaunchInfo({{"RANK", std::to_string(r)},
                                   {"WORLD_SIZE", "2"},
                                   {"MASTER_ADDR", "127.0.0.1"},
                                   {"MASTER_PORT", std::to_string(port)}},
                                  info));
      std::unique_ptr<Communicator> world;
      Error e = openWorld(info, after(5000ms), world);
      ASSERT_FALSE(e) << e.message;
      EXPECT_STREQ(world->transport(), "tcp");
      sums[r] = float(r + 1);
      ASSERT_FALSE(world->allReduceSum(&sums[r], 1, after(5000ms)));
      // Rank 0's store lives as long as its world: let rank 1 finish first.
      ASSERT_FALSE(world->barrier(after(5000ms)));
    });
  for (auto &t : ranks)
    t.join();
  EXPECT_EQ(sums[0], 3.0f);
  EXPECT_EQ(sums[1], 3.0f);
}

TEST(World, NoLauncherIsOneRank) {
  std::unique_ptr<Communicator> world;
  ASSERT_FALSE(openWorld(LaunchInfo(), after(1000ms), world));
  EXPECT_EQ(world->size(), 1);
  float v = 2;
  ASSERT_FALSE(world->allReduceSum(&v, 1, after(1000ms)));
  EXPECT_EQ(v, 2.0f);
}

} // namespace
