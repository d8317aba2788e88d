//===- Threads.cpp - The CPU device's thread policy for library steps -----===//
//
// Part of Loom. See Threads.h. Layer 2 of lib/Runtime/CPU's library steps.
//
//===----------------------------------------------------------------------===//

#include "CPU/Threads.h"
#include "CPU/Layouts.h"

#include <optional>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

TeamSize::TeamSize(int n) : before(omp_get_max_threads()) {
  if (before != n)
    omp_set_num_threads(n);
}

TeamSize::~TeamSize() {
  if (omp_get_max_threads() != before)
    omp_set_num_threads(before);
}

namespace {

/// A step run on the calling thread alone (made there too, so that its
/// primitive plans for one thread: oneDNN's convolutions fix their thread
/// count when made, its other primitives read OpenMP's when run).
class OnOneThread final : public LibraryStep {
public:
  explicit OnOneThread(std::unique_ptr<PreparedStep> step)
      : step(std::move(step)) {}
  StepDescription describe() const override {
    StepDescription d = step->describe();
    d.threads = "1";
    return d;
  }
  Error run(Stream &s, void *const *buffers) const override {
    TeamSize one(1);
    return static_cast<const LibraryStep &>(*step).run(s, buffers);
  }

private:
  std::unique_ptr<PreparedStep> step;
};

/// A oneDNN step's work in bytes: the f32 bytes of its operands plus its
/// FLOPs / 8 (oneDNN's kernels do about 8 FLOPs in the time they move a
/// byte of cache-resident data on this VM: a depthwise 3x3 convolution of
/// 116 channels at 14x14, 0.24 MB of work, took 6.2 us on one thread, a
/// 1x1 convolution 116 -> 116 at 14x14, 0.9 MB, 22.6 us). nullopt for the
/// steps never run alone (filter gradients: a training step's, large).
std::optional<double> libraryWork(const art::Step &step) {
  auto bytes = [](std::initializer_list<const std::vector<int64_t> *> v) {
    double n = 0;
    for (const std::vector<int64_t> *shape : v)
      n += 4.0 * double(elements(*shape));
    return n;
  };
  if (const auto *s = step.getIf<art::Conv2dStep>()) {
    double flops = 2.0 * double(elements(s->dstShape)) *
                   double(elements(s->weightsShape) / s->weightsShape[0]);
    return bytes({&s->srcShape, &s->weightsShape, &s->dstShape}) + flops / 8;
  }
  if (const auto *s = step.getIf<art::MatmulStep>()) {
    double flops =
        2.0 * double(elements(s->dstShape)) * double(s->srcShape.back());
    return bytes({&s->srcShape, &s->weightsShape, &s->dstShape}) + flops / 8;
  }
  if (const auto *s = step.getIf<art::Pool2dStep>())
    return bytes({&s->srcShape, &s->dstShape}) +
           double(elements(s->dstShape) * elements(s->kernel)) / 8;
  if (const auto *s = step.getIf<art::BinaryStep>())
    return bytes({&s->dstShape, &s->src1Shape, &s->dstShape}) +
           (s->shift != -1 ? bytes({&s->shiftShape}) : 0.0);
  if (const auto *s = step.getIf<art::ConcatStep>())
    return bytes({&s->dstShape, &s->dstShape});
  return std::nullopt;
}

/// The work below which a oneDNN step runs on the calling thread alone:
/// about 6 us of one core, which a second thread does not shorten once it
/// is woken and joined (2 threads against 1, best of 3000 runs, this VM:
/// that depthwise convolution 6.1 against 6.2 us; one of 232 channels at
/// 7x7, 0.12 MB, 3.7 against 2.7 us; a 1x1 convolution 96 -> 4 on one
/// pixel 1.1 against 0.4 us; a 3x3 convolution 128 -> 32 at 7x7, 0.63 MB,
/// 8.8 against 11.6 us). Each such step is also one fork and join fewer
/// that waits when the second core is busy.
constexpr double kWorkAlone = 262144;

} // namespace

bool cpu::runsAlone(const art::Step &step, const CpuPolicy &policy) {
  if (policy.threads <= 1 || !policy.smallStepsAlone)
    return false;
  std::optional<double> work = libraryWork(step);
  return work && *work < kWorkAlone;
}

std::unique_ptr<PreparedStep>
cpu::onOneThread(std::unique_ptr<PreparedStep> step) {
  return std::make_unique<OnOneThread>(std::move(step));
}
