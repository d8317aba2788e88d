//===- CostModel.h - Costs of tg ops -----------------------------*- C++ -*-===//
//
// Part of Loom. One interface for the cost of a tg op, with two kinds of
// models behind it:
//
//  * an analytic roofline per named target: time = max(flops / peak,
//    bytes / bandwidth) + launch overhead, for `cpu` (calibrated on this
//    machine by a short micro-benchmark), `h100` and `h200`;
//  * measured costs: a database of per-op timings keyed by op, types,
//    attributes and backend, filled by timing the op on this machine and
//    cached in a JSON file. Until compiled kernels exist, the measured backend
//    is `interp-f32`: the reference interpreter's f32 kernels.
//
// The work of each op (FLOPs, bytes) is written once, beside the op (its
// WorkOpInterface), and serves both models (and the search engines' reports
// and the rule generator's orientation of rules).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COST_COSTMODEL_H
#define LOOM_COST_COSTMODEL_H

#include "loom/Dialect/TG/IR/TGInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace loom::cost {

/// What one op does (FLOPs, bytes, whether it launches a kernel): each tg
/// op's WorkOpInterface.
using OpWork = tg::OpWork;

/// The work of \p op: its WorkOpInterface. Ops of other dialects
/// (func.return, ...) get zero work and no kernel; a tg op without the
/// interface is an error (reported, and the op's work counts as zero).
OpWork workOf(mlir::Operation *op);

/// An analytic machine description.
struct RooflineTarget {
  std::string name;
  double peakFlops = 0;       // FLOP/s
  double memBandwidth = 0;    // bytes/s
  double launchOverhead = 0;  // seconds per kernel
  std::string description;    // where the numbers come from
  /// Dense tensor-core FLOP/s of products on bf16 or f16 operands, and on
  /// TF32 ones (tensorCoreType); 0 where the target has none (the CPU).
  double narrowFlops = 0, tf32Flops = 0;
};

/// The published figures of an NVIDIA H100 SXM (fp32 non-tensor peak,
/// dense tensor-core peaks) and H200; `cpu` is measured on the running
/// machine (see calibrateCPU).
llvm::Expected<RooflineTarget> lookupTarget(llvm::StringRef name);

/// What \p op's products are multiplied in on tensor cores: bf16 or f16
/// (a tg.matmul's two operands, a tg.conv's input and filter, both of that
/// type: --precision=bf16|f16), tf32 (both f32, each holding TF32 values:
/// a tg.round_tf32's result or a weight folded from one,
/// tg::holdsTF32Values; --precision=tf32), else null (f32 products, and
/// every other op).
mlir::Type tensorCoreType(mlir::Operation *op);

/// The FLOP/s \p target peaks at on \p op: the tensor-core rate of its
/// tensorCoreType where \p tensorCores (the code that runs it uses them)
/// and the target has one, else peakFlops.
double peakFlopsOf(mlir::Operation *op, const RooflineTarget &target,
                   bool tensorCores);

/// Measures this machine: GEMM FLOP/s of the interpreter's f32 kernels on
/// all threads, streaming bandwidth, and the per-op overhead of the
/// interpreter. Takes 0.1-0.6 s (most of what loom-compile's default
/// rewriting added to a model no rule fires on), so it is measured once per
/// machine: kept per process, and across processes in the file
/// calibrationCachePath() names.
RooflineTarget calibrateCPU();

/// The calibration of this machine (host CPU name and interpreter threads)
/// read from the JSON file \p cachePath, or measured and added to it
/// (written atomically; a file that cannot be read or written is measured
/// around). Empty \p cachePath: always measured.
RooflineTarget calibrateCPU(llvm::StringRef cachePath);

/// Where calibrateCPU() keeps its calibration: $LOOM_ROOFLINE_CACHE when set
/// (empty: nowhere, measured in every process), else
/// <user cache directory>/loom/roofline-cpu.json ($XDG_CACHE_HOME or
/// ~/.cache). Deleting the file measures again.
std::string calibrationCachePath();

class CostModel {
public:
  virtual ~CostModel();
  /// A short name for reports, e.g. "roofline:h100" or "measured:interp-f32".
  virtual std::string name() const = 0;
  /// Estimated seconds to run `op` once (0 for ops that launch no kernel).
  virtual double opCost(mlir::Operation *op) = 0;
  /// Sum of opCost over the ops of `fn`'s body.
  double funcCost(mlir::func::FuncOp fn);
};

std::unique_ptr<CostModel> createRooflineModel(RooflineTarget target);

/// Per-op timings keyed by (backend, op signature), persisted as JSON:
/// {"version": 1, "entries": {"<backend>|<signature>": seconds, ...}}.
class CostDatabase {
public:
  /// Loads `path` if it exists (an absent file is an empty database); a
  /// malformed file is an error.
  static llvm::Expected<CostDatabase> load(llvm::StringRef path);
  /// Writes the database to its path (atomically: temp file + rename).
  llvm::Error save() const;

  std::optional<double> lookup(llvm::StringRef key) const;
  void record(llvm::StringRef key, double seconds);
  size_t size() const { return entries.size(); }
  llvm::StringRef path() const { return filePath; }

private:
  std::string filePath;
  llvm::StringMap<double> entries;
};

/// The key of an op in a cost database: its name, operand and result types
/// and attributes, printed (`tg.conv(tensor<...>, ...) -> ... {strides=...}`).
std::string opSignature(mlir::Operation *op);

/// A model that times each distinct op signature once on this machine with
/// the reference interpreter (median of several runs on random inputs) and
/// remembers it in `db`. Ops it cannot time fall back to `fallback`.
std::unique_ptr<CostModel>
createMeasuredModel(CostDatabase &db, std::unique_ptr<CostModel> fallback);

/// A cost model chosen by name, owning its cost database when it has one.
struct CostModelHandle {
  std::unique_ptr<CostDatabase> db; // only for "measured"
  std::unique_ptr<CostModel> model;
  /// Persists the database (a no-op without one).
  llvm::Error saveDatabase() const;
};

/// The model named `target`: `cpu`, `h100`, `h200` (rooflines) or `measured`
/// (timed with the interpreter, cached in the JSON file `costDbPath`, which
/// it requires; the calibrated cpu roofline is its fallback).
llvm::Expected<CostModelHandle> createCostModel(llvm::StringRef target,
                                                llvm::StringRef costDbPath);

} // namespace loom::cost

#endif // LOOM_COST_COSTMODEL_H
