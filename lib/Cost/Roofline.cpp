//===- Roofline.cpp - Analytic roofline cost model --------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/CostModel.h"

#include "loom/Interpreter/Kernels.h"

#include <algorithm>
#include <chrono>
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
    return std::max(w.flops / target.peakFlops,
                    w.bytes() / target.memBandwidth) +
           target.launchOverhead;
  }

private:
  RooflineTarget target;
};

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

RooflineTarget cost::calibrateCPU() {
  static RooflineTarget cached;
  static std::once_flag once;
  std::call_once(once, [] {
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
    cached.name = "cpu";
    cached.peakFlops = 2.0 * 384 * 384 * 384 / gemm;
    cached.memBandwidth = 3.0 * double(4 << 20) * 4 / stream;
    cached.launchOverhead = tiny;
    cached.description =
        "this machine, measured with the reference interpreter's f32 kernels "
        "on " +
        std::to_string(interp::getNumThreads()) + " thread(s)";
  });
  return cached;
}

llvm::Expected<RooflineTarget> cost::lookupTarget(llvm::StringRef name) {
  if (name == "cpu")
    return calibrateCPU();
  // NVIDIA H100 SXM5: 67 TFLOP/s fp32 (non-tensor), 3.35 TB/s HBM3; H200:
  // same compute, 4.8 TB/s HBM3e. Kernel launch ~5 us (CUDA driver figures).
  if (name == "h100")
    return RooflineTarget{"h100", 67e12, 3.35e12, 5e-6,
                          "NVIDIA H100 SXM5 datasheet: 67 TFLOP/s fp32, "
                          "3.35 TB/s; 5 us launch"};
  if (name == "h200")
    return RooflineTarget{"h200", 67e12, 4.8e12, 5e-6,
                          "NVIDIA H200 SXM datasheet: 67 TFLOP/s fp32, "
                          "4.8 TB/s; 5 us launch"};
  return llvm::createStringError("unknown cost target '" + name.str() +
                                 "' (expected cpu, h100 or h200)");
}
