//===- FedPlan.h - The planner fed by the rank sweep's runs -----*- C++ -*-===//
//
// Part of Loom. loom-bench-decode --ranks feeds the decode planner
// (loom-plan-decode, include/loom/Pipeline/DecodePlan.h) with what it
// measured, and sets the planner's estimate beside every row
// (docs/benchmarks/cache-parallel.md "The fed planner"):
//
// - a device of T threads is fitted on the one-process rows of T threads:
//   their decode times against the context, least squares, give the
//   intercept (the weights read a token, over the device's weight rate) and
//   the slope (a position of cache, over its cache rate);
// - the links between ranks are measured: the exchange of a profiled
//   generation on the ranks (loomrt.all_gather's time: the latency) and a
//   one-thread copy (the bandwidth);
// - each becomes a machine file, and loom-plan-decode's estimates on it
//   are the rows' simulated times: the one-thread device's for the ranks
//   of one thread each (cache parallelism, predicted from rows of one
//   process: out of sample), a T-thread device's for the one-process rows
//   of T threads (fitted on them: in sample).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BENCH_DECODE_FEDPLAN_H
#define LOOM_BENCH_DECODE_FEDPLAN_H

#include "Options.h"
#include "RankSweep.h"

#include <map>
#include <string>
#include <vector>

namespace loom::bench {

/// The planner's choice for P ranks (a machine of P one-thread devices) at
/// a context, among the splits the sweep measured (cache or tensor
/// parallelism of 1 to P ranks: "cp 2", "tp 2"), and the measured faster of
/// them.
struct PlanChoice {
  int64_t ranks = 0, context = 0;
  std::string planned, measured;
  /// The planner's choice among every split it prices (products of the
  /// splits with pipeline stages included, which the sweep does not run).
  int64_t overallCp = 0, overallTp = 0, overallPp = 0;
};

/// Fills the rows' simulatedMs from loom-plan-decode on machines fitted to
/// \p rows (files in \p dir); \p source is the decoder program, and
/// \p artifacts its artifacts by split and rank count (2 and more). Returns
/// the choices per rank count and context, and prints what it fitted; an
/// error when the planner cannot run (the rows keep no estimate).
llvm::Expected<std::vector<PlanChoice>>
feedPlanner(const DecodeOptions &o, llvm::StringRef source, llvm::StringRef dir,
            const RankArtifacts &artifacts,
            std::vector<RanksRow> &rows);

/// The choices' table.
void printPlanChoices(const std::vector<PlanChoice> &choices);

} // namespace loom::bench

#endif // LOOM_BENCH_DECODE_FEDPLAN_H
