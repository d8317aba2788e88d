//===- Plot.h - The training curve as a hand-written SVG ---------*- C++ -*-===//
#ifndef LOOM_EXAMPLES_PLOT_H
#define LOOM_EXAMPLES_PLOT_H

#include <cstdint>
#include <string>
#include <vector>

namespace loom::train {

struct EpochAccuracy {
  int epoch = 0;
  double train = 0, test = 0; // fractions in [0, 1]
};

/// Writes two panels: the loss of every step (light) and its moving average
/// over `smoothing` steps (dark), with the epoch boundaries dashed; and the
/// train and test accuracy per epoch. No dependencies: SVG text.
bool writeTrainingCurve(const std::string &path, const std::string &title,
                        const std::vector<float> &stepLoss, int64_t stepsPerEpoch,
                        int64_t smoothing, const std::vector<EpochAccuracy> &epochs,
                        std::string &error);

/// The moving average (trailing, over up to `window` steps) used by the plot.
std::vector<double> movingAverage(const std::vector<float> &v, int64_t window);

} // namespace loom::train

#endif
