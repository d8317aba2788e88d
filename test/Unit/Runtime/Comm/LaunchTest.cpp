//===- LaunchTest.cpp - A rank's place in the world, from its launcher ----===//
//
// Part of Loom. readLaunchInfo on environments given as maps: each
// launcher's variables, launchers that agree or disagree, malformed values.
//
//===----------------------------------------------------------------------===//

#include "../../../../lib/Runtime/Comm/Launch.h"

#include <gtest/gtest.h>

using namespace loom::rt;
using namespace loom::rt::comm;

namespace {

LaunchInfo read(const Environment &env) {
  LaunchInfo info;
  Error e = readLaunchInfo(env, info);
  EXPECT_FALSE(e) << e.message;
  return info;
}

std::string refused(const Environment &env) {
  LaunchInfo info;
  Error e = readLaunchInfo(env, info);
  EXPECT_EQ(e.status, LOOM_ERROR_INVALID_ARGUMENT);
  return e.message;
}

TEST(Launch, NoLauncherIsOneRank) {
  LaunchInfo info = read({{"PATH", "/bin"}});
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.size, 1);
  EXPECT_EQ(info.source, "none");
  EXPECT_FALSE(info.mpi);
  EXPECT_TRUE(info.storeHost.empty());
}

TEST(Launch, Mpirun) {
  LaunchInfo info = read({{"OMPI_COMM_WORLD_RANK", "3"},
                          {"OMPI_COMM_WORLD_SIZE", "4"},
                          {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.size, 4);
  EXPECT_EQ(info.localRank, 1);
  EXPECT_EQ(info.source, "mpirun");
  EXPECT_TRUE(info.mpi);
}

TEST(Launch, Slurm) {
  LaunchInfo info = read({{"SLURM_PROCID", "5"},
                          {"SLURM_NTASKS", "8"},
                          {"SLURM_LOCALID", "1"}});
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.size, 8);
  EXPECT_EQ(info.localRank, 1);
  EXPECT_EQ(info.source, "slurm");
  EXPECT_FALSE(info.mpi);
}

TEST(Launch, TorchrunWithItsStore) {
  LaunchInfo info = read({{"RANK", "1"},
                          {"WORLD_SIZE", "2"},
                          {"LOCAL_RANK", "1"},
                          {"MASTER_ADDR", "node7"},
                          {"MASTER_PORT", "29500"}});
  EXPECT_EQ(info.rank, 1);
  EXPECT_EQ(info.size, 2);
  EXPECT_EQ(info.source, "torchrun");
  EXPECT_EQ(info.storeHost, "node7");
  EXPECT_EQ(info.storePort, 29500);
  EXPECT_FALSE(info.launcherHostsStore);
}

TEST(Launch, LoomLaunch) {
  LaunchInfo info = read({{"LOOM_RANK", "2"},
                          {"LOOM_WORLD_SIZE", "4"},
                          {"LOOM_LOCAL_RANK", "2"},
                          {"LOOM_STORE", "127.0.0.1:4242"}});
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.source, "loom-launch");
  EXPECT_EQ(info.storeHost, "127.0.0.1");
  EXPECT_EQ(info.storePort, 4242);
  EXPECT_TRUE(info.launcherHostsStore);
}

TEST(Launch, LocalRankDefaultsToRank) {
  EXPECT_EQ(read({{"RANK", "3"}, {"WORLD_SIZE", "4"}}).localRank, 3);
}

TEST(Launch, SourcesThatAgree) {
  // srun starting OpenMPI's ranks sets both.
  LaunchInfo info = read({{"OMPI_COMM_WORLD_RANK", "1"},
                          {"OMPI_COMM_WORLD_SIZE", "2"},
                          {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                          {"SLURM_PROCID", "1"},
                          {"SLURM_NTASKS", "2"},
                          {"SLURM_LOCALID", "0"}});
  EXPECT_EQ(info.source, "mpirun+slurm");
  EXPECT_TRUE(info.mpi);
}

TEST(Launch, SourcesThatDisagree) {
  EXPECT_EQ(refused({{"OMPI_COMM_WORLD_RANK", "1"},
                     {"OMPI_COMM_WORLD_SIZE", "4"},
                     {"RANK", "0"},
                     {"WORLD_SIZE", "2"}}),
            "launch: mpirun says rank 1 of 4 (local rank 1; "
            "OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, "
            "OMPI_COMM_WORLD_LOCAL_RANK) but torchrun says rank 0 of 2 "
            "(local rank 0; RANK, WORLD_SIZE, LOCAL_RANK)");
  EXPECT_EQ(refused({{"SLURM_PROCID", "1"},
                     {"SLURM_NTASKS", "2"},
                     {"SLURM_LOCALID", "0"},
                     {"LOOM_RANK", "1"},
                     {"LOOM_WORLD_SIZE", "2"},
                     {"LOOM_LOCAL_RANK", "1"}}),
            "launch: slurm says rank 1 of 2 (local rank 0; SLURM_PROCID, "
            "SLURM_NTASKS, SLURM_LOCALID) but loom-launch says rank 1 of 2 "
            "(local rank 1; LOOM_RANK, LOOM_WORLD_SIZE, LOOM_LOCAL_RANK)");
}

TEST(Launch, MalformedValues) {
  EXPECT_EQ(refused({{"RANK", "x"}, {"WORLD_SIZE", "2"}}),
            "launch: RANK=x is not an integer in [0, 1]");
  EXPECT_EQ(refused({{"RANK", "2"}, {"WORLD_SIZE", "2"}}),
            "launch: RANK=2 is not an integer in [0, 1]");
  EXPECT_EQ(refused({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
            "launch: WORLD_SIZE=0 is not an integer in [1, 1048576]");
  EXPECT_EQ(refused({{"SLURM_PROCID", "0"}}),
            "launch: slurm variables without SLURM_NTASKS");
  EXPECT_EQ(refused({{"LOOM_RANK", "0"},
                     {"LOOM_WORLD_SIZE", "2"},
                     {"LOOM_STORE", "localhost"}}),
            "launch: LOOM_STORE=localhost is not HOST:PORT with a port in "
            "[1, 65535]");
  EXPECT_EQ(refused({{"RANK", "0"},
                     {"WORLD_SIZE", "2"},
                     {"MASTER_ADDR", "h"},
                     {"MASTER_PORT", "70000"}}),
            "launch: MASTER_ADDR=h MASTER_PORT=70000 is not HOST:PORT with a "
            "port in [1, 65535]");
}

} // namespace
