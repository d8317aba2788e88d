//===- StepProfile.h - The measured times of a pipelined step --*- C++ -*-===//
//
// Part of Loom. loom_step_options.profile_path: every rank records the
// start and end of each action of its program over the steps it runs
// (RankStep::recordTimes), rank 0 gathers them and writes one JSON file
// (docs/Runtime.md "Step profile"): what the pipe simulator is fed with
// (`--pipe-simulate="profile=FILE"`, docs/Dialects/Pipe.md).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_STEPPROFILE_H
#define LOOM_LIB_RUNTIME_STEPPROFILE_H

#include "Comm/Communicator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::rt {

/// One rank's action times: per step, per action, its start and end in
/// nanoseconds of the steady clock (CLOCK_MONOTONIC: one clock for every
/// process of a host, so that the ranks' times compare there).
struct RankTimes {
  int rank = 0;
  std::string host;
  std::vector<int64_t> ns; ///< [step][action][start, end], flattened.
};

/// This process's host name.
std::string hostName();

/// Under a launcher: rank 0 receives every other rank's times into \p all
/// (in rank order, its own \p mine first); the others send theirs.
Error gatherStepProfile(comm::Communicator &comm,
                        const artifact::World &world, int64_t steps,
                        const RankTimes &mine, std::vector<RankTimes> &all,
                        comm::Deadline deadline);

/// Writes the profile of \p ranks (every rank of the world, in order) over
/// \p steps steps to \p path.
Error writeStepProfile(const std::string &path,
                       const artifact::Manifest &manifest, int64_t steps,
                       const std::vector<RankTimes> &ranks);

} // namespace loom::rt

#endif // LOOM_LIB_RUNTIME_STEPPROFILE_H
