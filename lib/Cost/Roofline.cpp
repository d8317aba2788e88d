//===- Roofline.cpp - Analytic roofline cost model --------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/CostModel.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Interpreter/Kernels.h"

#include "loom/Support/Files.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>

using namespace mlir;
using namespace loom;
using namespace loom::cost;

CostModel::~CostModel() = default;

double CostModel::funcCost(func::FuncOp fn) {
  double total = 0;
  fn.walk([&](Operation *op) {
    if (op != fn.getOperation())
      total += opCost(op);
  });
  return total;
}

namespace {

class RooflineModel : public CostModel {
public:
  explicit RooflineModel(RooflineTarget target) : target(std::move(target)) {}
  std::string name() const override { return "roofline:" + target.name; }
  double opCost(Operation *op) override {
    OpWork w = workOf(op);
    if (!w.kernel)
      return 0;
    return std::max(w.flops / peakFlopsOf(op, target, /*tensorCores=*/true),
                    w.bytes() / target.memBandwidth) +
           target.launchOverhead;
  }

private:
  RooflineTarget target;
};

/// The cache file's format (calibrateCPU(StringRef)); a file of another
/// version is measured again and rewritten.
constexpr int64_t kCalibrationVersion = 1;

template <typename F> double bestSeconds(int repeats, F &&fn) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  return best;
}

} // namespace

std::unique_ptr<CostModel> cost::createRooflineModel(RooflineTarget target) {
  return std::make_unique<RooflineModel>(std::move(target));
}

namespace {

/// Measures this machine (calibrateCPU).
RooflineTarget measureCPU() {
  using T = interp::Tensor<interp::F32Domain>;
  // Compute: a 384^3 GEMM (113 MFLOP) through the interpreter's kernels.
  T a = T::random({384, 384}, 1), b = T::random({384, 384}, 2);
  double gemm = bestSeconds(5, [&] { (void)interp::matmul(a, b); });
  // Bandwidth: an elementwise add streaming 3 x 16 MiB.
  T x = T::random({4 << 20}, 3), y = T::random({4 << 20}, 4);
  double stream = bestSeconds(3, [&] {
    (void)interp::binary(interp::BinaryKind::Add, x, y);
  });
  // Overhead: an op on one element.
  T s = T::random({1}, 5);
  double tiny = bestSeconds(50, [&] {
    (void)interp::binary(interp::BinaryKind::Add, s, s);
  });
  RooflineTarget cpu;
  cpu.name = "cpu";
  cpu.peakFlops = 2.0 * 384 * 384 * 384 / gemm;
  cpu.memBandwidth = 3.0 * double(4 << 20) * 4 / stream;
  cpu.launchOverhead = tiny;
  cpu.description =
      "this machine, measured with the reference interpreter's f32 kernels "
      "on " +
      std::to_string(interp::getNumThreads()) + " thread(s)";
  return cpu;
}

/// The key of this machine's calibration in the cache: the CPU LLVM names
/// and the interpreter's threads (the GEMM runs on all of them).
std::string calibrationKey() {
  return llvm::sys::getHostCPUName().str() + "/" +
         std::to_string(interp::getNumThreads()) + "t";
}

/// The calibration \p key in the cache file \p path, if there is one.
std::optional<RooflineTarget> readCalibration(llvm::StringRef path,
                                              llvm::StringRef key) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt;
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    llvm::consumeError(json.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Object *entry =
      root && root->getInteger("version") == kCalibrationVersion
          ? root->getObject(key)
          : nullptr;
  if (!entry)
    return std::nullopt;
  RooflineTarget cpu;
  cpu.name = "cpu";
  auto get = [&](llvm::StringRef field, double &out) {
    std::optional<double> v = entry->getNumber(field);
    if (v && *v > 0)
      out = *v;
    return v && *v > 0;
  };
  if (!get("peak_flops", cpu.peakFlops) ||
      !get("mem_bandwidth", cpu.memBandwidth) ||
      !get("launch_overhead", cpu.launchOverhead))
    return std::nullopt;
  cpu.description = entry->getString("description").value_or("").str() +
                    " (cached in " + path.str() + ")";
  return cpu;
}

/// Adds \p cpu under \p key to the cache file \p path (atomically; a
/// cache that cannot be written is left alone).
void writeCalibration(llvm::StringRef path, llvm::StringRef key,
                      const RooflineTarget &cpu) {
  llvm::json::Object root;
  if (auto buffer = llvm::MemoryBuffer::getFile(path)) {
    auto json = llvm::json::parse((*buffer)->getBuffer());
    if (json && json->getAsObject())
      root = std::move(*json->getAsObject());
    else if (!json)
      llvm::consumeError(json.takeError());
  }
  if (root.getInteger("version") != kCalibrationVersion)
    root = llvm::json::Object{{"version", kCalibrationVersion}};
  root[key] = llvm::json::Object{{"peak_flops", cpu.peakFlops},
                                 {"mem_bandwidth", cpu.memBandwidth},
                                 {"launch_overhead", cpu.launchOverhead},
                                 {"description", cpu.description}};
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
  std::string tmp = partialPathFor(path, ".tmp");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return;
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    if (closeChecked(os)) {
      llvm::sys::fs::remove(tmp);
      return;
    }
  }
  if (moveIntoPlace(tmp, path))
    llvm::sys::fs::remove(tmp);
}

} // namespace

std::string cost::calibrationCachePath() {
  if (const char *given = std::getenv("LOOM_ROOFLINE_CACHE"))
    return given;
  llvm::SmallString<128> path;
  if (!llvm::sys::path::cache_directory(path))
    return "";
  llvm::sys::path::append(path, "loom", "roofline-cpu.json");
  return std::string(path);
}

RooflineTarget cost::calibrateCPU(llvm::StringRef cachePath) {
  std::string key = calibrationKey();
  if (!cachePath.empty())
    if (std::optional<RooflineTarget> cached =
            readCalibration(cachePath, key))
      return *cached;
  RooflineTarget cpu = measureCPU();
  if (!cachePath.empty())
    writeCalibration(cachePath, key, cpu);
  return cpu;
}

RooflineTarget cost::calibrateCPU() {
  static RooflineTarget cached;
  static std::once_flag once;
  std::call_once(once, [] { cached = calibrateCPU(calibrationCachePath()); });
  return cached;
}

Type cost::tensorCoreType(Operation *op) {
  Type type;
  for (OpOperand *operand : tg::multiplicands(op)) {
    Value v = operand->get();
    Type element = getElementTypeOrSelf(v.getType());
    Type multiplied = element.isBF16() || element.isF16() ? element
                      : element.isF32() && tg::holdsTF32Values(v)
                          ? Type(FloatTF32Type::get(op->getContext()))
                          : Type();
    if (!multiplied || (type && type != multiplied))
      return Type();
    type = multiplied;
  }
  return type;
}

double cost::peakFlopsOf(Operation *op, const RooflineTarget &target,
                         bool tensorCores) {
  Type type = tensorCores ? tensorCoreType(op) : Type();
  double rate = !type           ? 0
                : type.isTF32() ? target.tf32Flops
                                : target.narrowFlops;
  return rate > 0 ? rate : target.peakFlops;
}

llvm::Expected<RooflineTarget> cost::lookupTarget(llvm::StringRef name) {
  if (name == "cpu")
    return calibrateCPU();
  // NVIDIA H100 SXM5: 67 TFLOP/s fp32 (non-tensor), 989 TFLOP/s dense
  // bf16/f16 and 495 TF32 on tensor cores, 3.35 TB/s HBM3; H200: same
  // compute, 4.8 TB/s HBM3e. Kernel launch ~5 us (CUDA driver figures).
  if (name == "h100")
    return RooflineTarget{"h100",
                          67e12,
                          3.35e12,
                          5e-6,
                          "NVIDIA H100 SXM5 datasheet: 67 TFLOP/s fp32, 989 "
                          "bf16/f16 and 495 TF32 dense on tensor cores, "
                          "3.35 TB/s; 5 us launch",
                          989e12,
                          495e12};
  if (name == "h200")
    return RooflineTarget{"h200",
                          67e12,
                          4.8e12,
                          5e-6,
                          "NVIDIA H200 SXM datasheet: 67 TFLOP/s fp32, 989 "
                          "bf16/f16 and 495 TF32 dense on tensor cores, "
                          "4.8 TB/s; 5 us launch",
                          989e12,
                          495e12};
  return llvm::createStringError("unknown cost target '" + name.str() +
                                 "' (expected cpu, h100 or h200)");
}
