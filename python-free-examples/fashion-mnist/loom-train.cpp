//===- loom-train.cpp - Train on Fashion-MNIST with a compiled step -------===//
//
// Part of Loom. Trains a network on Fashion-MNIST with a training step that
// --tg-autodiff built and loom-compile compiled, through libloomrt's C API:
// README.md beside this file has the commands, docs/Training.md the details.
//
//===----------------------------------------------------------------------===//
#include "FashionMNIST.h"
#include "Plot.h"
#include "TrainStep.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace loom::train;

namespace {

const char *kUsage = R"(loom-train: train a network on Fashion-MNIST with a compiled training step

usage: loom-train --artifact=MODEL.so [options]

The artifact holds a training step built by loom-opt --tg-autodiff and an
evaluation function whose weights are arguments (--tg-weights-to-arguments),
both compiled by loom-compile; python-free-examples/fashion-mnist/README.md
has the commands. Parameters are initialised as PyTorch does (uniform in
+-1/sqrt(fan_in), docs/Training.md gives the fan-in rule), optimizer state at
zero; the training images are shuffled every epoch.

options (--name=value or --name value):
  --artifact=FILE      the compiled artifact (required)
  --train-entry=NAME   the training step entry (default: loss_train_step)
  --eval-entry=NAME    the evaluation entry returning logits (default: logits)
  --data=DIR           the IDX files, gzip'd or not (default:
                       /usr/share/datasets/fashion-mnist, Debian package
                       dataset-fashion-mnist)
  --epochs=N           epochs (default: 5)
  --limit=K            train on the first K training images only (default: all
                       60000); the last partial batch of every epoch is skipped
                       (the step is compiled for one batch size)
  --test-limit=K       evaluate the first K test images only (default: all
                       10000); the last partial batch is padded with zeros and
                       only its real images are counted
  --seed=S             seed of the initialisation and the shuffling (default: 0)
  --num-threads=N      threads of the runtime (default: 0, the hardware's)
  --normalize=MODE     standard (default): pixels in [0, 1], then minus the
                       training set's mean, over its standard deviation;
                       unit: pixels in [0, 1] only
  --train-accuracy=B   measure the accuracy on the training images after every
                       epoch (default: true; false saves one forward pass
                       over them per epoch)
  --progress=MODE      the progress bar on stderr: auto (default: when stderr
                       is a terminal), always, never
  --plot=FILE          write the training curve (loss per step and its moving
                       average, accuracy per epoch) as SVG
  --smoothing=N        steps of the plot's moving average (default: 1/50 of all
                       steps, at least 1)
  --json=FILE          write a summary: settings, per epoch loss, accuracies,
                       time and images/s, and the loss of every step
  --help               this text

Prints one line per epoch on stdout: the mean training loss of its steps, the
train and test accuracy, the test loss, the time of the steps and images/s.
Exit status 1 on an error (a missing dataset names the package to install; an
artifact whose entries break the training-step contract names the entry and
the input), 2 on a bad option.
)";

struct Options {
  std::string artifact, trainEntry = "loss_train_step", evalEntry = "logits";
  std::string data = kDefaultDataDir, plot, json, normalize = "standard",
              progress = "auto";
  int64_t epochs = 5, limit = -1, testLimit = -1, smoothing = 0;
  uint64_t seed = 0;
  int numThreads = 0;
  bool trainAccuracy = true;
};

[[noreturn]] void usageError(const std::string &msg) {
  std::fprintf(stderr, "loom-train: %s (see --help)\n", msg.c_str());
  std::exit(2);
}

int64_t parseInt(const std::string &name, const std::string &v, int64_t min) {
  char *end = nullptr;
  errno = 0;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || x < min)
    usageError("--" + name + "=" + v + ": expected an integer >= " + std::to_string(min));
  return x;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0)
      usageError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2), value;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      usageError("--" + name + " needs a value");
    }
    if (name == "artifact") o.artifact = value;
    else if (name == "train-entry") o.trainEntry = value;
    else if (name == "eval-entry") o.evalEntry = value;
    else if (name == "data") o.data = value;
    else if (name == "epochs") o.epochs = parseInt(name, value, 1);
    else if (name == "limit") o.limit = parseInt(name, value, 1);
    else if (name == "test-limit") o.testLimit = parseInt(name, value, 1);
    else if (name == "seed") o.seed = uint64_t(parseInt(name, value, 0));
    else if (name == "num-threads") o.numThreads = int(parseInt(name, value, 0));
    else if (name == "smoothing") o.smoothing = parseInt(name, value, 1);
    else if (name == "plot") o.plot = value;
    else if (name == "json") o.json = value;
    else if (name == "normalize") {
      if (value != "standard" && value != "unit")
        usageError("--normalize=" + value + ": expected standard or unit");
      o.normalize = value;
    } else if (name == "progress") {
      if (value != "auto" && value != "always" && value != "never")
        usageError("--progress=" + value + ": expected auto, always or never");
      o.progress = value;
    } else if (name == "train-accuracy") {
      if (value != "true" && value != "false")
        usageError("--train-accuracy=" + value + ": expected true or false");
      o.trainAccuracy = value == "true";
    } else
      usageError("unknown option --" + name);
  }
  if (o.artifact.empty())
    usageError("--artifact is required");
  return o;
}

[[noreturn]] void fatal(const std::string &msg) {
  std::fprintf(stderr, "loom-train: error: %s\n", msg.c_str());
  std::exit(1);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Evaluation {
  int64_t images = 0, correct = 0;
  double loss = 0; // mean cross-entropy
  double accuracy() const { return images ? double(correct) / double(images) : 0; }
};

/// Runs the eval entry over the first `count` images of `split` in batches of
/// its batch size; the last partial batch is padded with zeros and only its
/// real images are counted.
Evaluation evaluate(TrainStep &ts, const Split &split, int64_t count) {
  Evaluation ev;
  int64_t B = ts.evalBatch(), P = ts.imageElements(), C = ts.classes();
  std::vector<float> batch(size_t(B * P)), logits(size_t(B * C));
  std::string error;
  for (int64_t start = 0; start < count; start += B) {
    int64_t real = std::min(B, count - start);
    std::copy_n(split.images.data() + start * P, real * P, batch.data());
    std::fill(batch.begin() + real * P, batch.end(), 0.0f);
    if (!ts.logits(batch.data(), logits.data(), error))
      fatal(error);
    for (int64_t i = 0; i < real; ++i) {
      const float *row = logits.data() + i * C;
      int64_t label = split.labels[size_t(start + i)];
      int64_t best = std::max_element(row, row + C) - row;
      ev.correct += best == label;
      double mx = *std::max_element(row, row + C), sum = 0;
      for (int64_t c = 0; c < C; ++c)
        sum += std::exp(double(row[c]) - mx);
      ev.loss += std::log(sum) + mx - row[label];
    }
    ev.images += real;
  }
  if (ev.images)
    ev.loss /= double(ev.images);
  return ev;
}

std::string jsonString(const std::string &s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') r += '\\', r += char(c);
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      r += buf;
    } else r += char(c);
  }
  return r + "\"";
}

std::string jsonNumber(double x) {
  if (!std::isfinite(x))
    return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

struct EpochResult {
  int epoch;
  double loss, seconds, imagesPerSecond, trainAccuracy = -1, testAccuracy, testLoss;
};

class ProgressBar {
public:
  explicit ProgressBar(bool on) : on_(on) {}
  void update(int64_t epoch, int64_t epochs, int64_t step, int64_t steps, double loss,
              double imagesPerSecond, bool force = false) {
    if (!on_)
      return;
    double t = now();
    if (!force && t - last_ < 0.1)
      return;
    last_ = t;
    const int width = 30;
    int filled = steps ? int(width * step / steps) : width;
    std::string bar(size_t(filled), '=');
    if (filled < width)
      bar += '>' + std::string(size_t(width - filled - 1), ' ');
    std::fprintf(stderr, "\repoch %lld/%lld [%s] %lld/%lld  loss %.4f  %.0f images/s ",
                 (long long)epoch, (long long)epochs, bar.c_str(), (long long)step,
                 (long long)steps, loss, imagesPerSecond);
    std::fflush(stderr);
  }
  void finish() {
    if (on_)
      std::fputs("\n", stderr);
  }

private:
  bool on_;
  double last_ = 0;
};

} // namespace

int main(int argc, char **argv) {
  Options opt = parseOptions(argc, argv);

  // The artifact first: its contract errors need no dataset.
  std::string error;
  TrainStep ts;
  if (!ts.open(opt.artifact, opt.trainEntry, opt.evalEntry, opt.numThreads, error))
    fatal(error);
  Dataset data;
  if (!loadDataset(opt.data, data, error))
    fatal(error);
  if (ts.imageElements() != data.train.pixels())
    fatal(opt.artifact + ": entry '" + opt.trainEntry + "' takes images of " +
          std::to_string(ts.imageElements()) + " elements, the dataset's have " +
          std::to_string(data.train.pixels()));
  if (ts.classes() != 10)
    fatal(opt.artifact + ": entry '" + opt.evalEntry + "' returns " +
          std::to_string(ts.classes()) + " logits per image, Fashion-MNIST has 10 classes");

  int64_t trainCount = opt.limit > 0 ? std::min(opt.limit, data.train.count) : data.train.count;
  int64_t testCount = opt.testLimit > 0 ? std::min(opt.testLimit, data.test.count) : data.test.count;
  int64_t B = ts.batch(), P = ts.imageElements();
  int64_t steps = trainCount / B;
  if (steps == 0)
    fatal("--limit=" + std::to_string(trainCount) + " is less than one batch of " +
          std::to_string(B));

  // Normalise with statistics of the images trained on.
  double mean = 0, stddev = 1;
  if (opt.normalize == "standard") {
    Split used;
    used.images.assign(data.train.images.begin(), data.train.images.begin() + trainCount * P);
    meanStd(used, mean, stddev);
    standardize(data.train, mean, stddev);
    standardize(data.test, mean, stddev);
  }
  if (!ts.initialize(opt.seed, error))
    fatal(error);

  int64_t numParams = 0;
  for (const TensorInfo &p : ts.parameters())
    numParams += p.elements();
  std::printf("loom-train: %s, entries %s and %s\n", opt.artifact.c_str(),
              opt.trainEntry.c_str(), opt.evalEntry.c_str());
  std::printf("  %lld parameters in %zu tensors, %zu optimizer state tensors (zero), seed %llu\n",
              (long long)numParams, ts.parameters().size(), ts.state().size(),
              (unsigned long long)opt.seed);
  std::printf("  train: %lld images, %lld steps of %lld per epoch (%lld skipped: the last partial batch)\n",
              (long long)trainCount, (long long)steps, (long long)B,
              (long long)(trainCount - steps * B));
  std::printf("  test: %lld images in batches of %lld (%s)\n", (long long)testCount,
              (long long)ts.evalBatch(),
              testCount % ts.evalBatch() ? "the last padded with zeros, only its real images counted"
                                         : "no partial batch");
  if (opt.normalize == "standard")
    std::printf("  pixels: [0, 1], then (x - %.4f) / %.4f\n", mean, stddev);
  else
    std::printf("  pixels: [0, 1]\n");
  std::fflush(stdout);

  std::mt19937_64 shuffleRng(opt.seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<int64_t> order(static_cast<size_t>(trainCount));
  std::iota(order.begin(), order.end(), 0);
  std::vector<float> images(static_cast<size_t>(B * P));
  std::vector<int64_t> labels(static_cast<size_t>(B));
  std::vector<float> stepLoss;
  std::vector<EpochResult> results;
  std::vector<EpochAccuracy> curve;
  ProgressBar bar(opt.progress == "always" || (opt.progress == "auto" && isatty(2)));
  double totalStepSeconds = 0;

  for (int64_t epoch = 1; epoch <= opt.epochs; ++epoch) {
    // Fisher-Yates with our own draws, so the order is the same on every library.
    for (int64_t i = trainCount - 1; i > 0; --i)
      std::swap(order[size_t(i)], order[size_t(shuffleRng() % uint64_t(i + 1))]);
    double seconds = 0, lossSum = 0;
    for (int64_t s = 0; s < steps; ++s) {
      for (int64_t b = 0; b < B; ++b) {
        int64_t idx = order[size_t(s * B + b)];
        std::copy_n(data.train.images.data() + idx * P, P, images.data() + b * P);
        labels[size_t(b)] = data.train.labels[size_t(idx)];
      }
      float loss = 0;
      double t0 = now();
      if (!ts.step(images.data(), labels.data(), loss, error))
        fatal("step " + std::to_string(s + 1) + " of epoch " + std::to_string(epoch) + ": " + error);
      seconds += now() - t0;
      if (!std::isfinite(loss)) {
        bar.finish();
        fatal("the loss is " + std::to_string(loss) + " at step " + std::to_string(s + 1) +
              " of epoch " + std::to_string(epoch));
      }
      stepLoss.push_back(loss);
      lossSum += loss;
      bar.update(epoch, opt.epochs, s + 1, steps, loss, double((s + 1) * B) / seconds,
                 s + 1 == steps);
    }
    bar.finish();
    totalStepSeconds += seconds;
    EpochResult r{int(epoch), lossSum / double(steps), seconds, double(steps * B) / seconds, -1, 0, 0};
    if (opt.trainAccuracy)
      r.trainAccuracy = evaluate(ts, data.train, trainCount).accuracy();
    Evaluation test = evaluate(ts, data.test, testCount);
    r.testAccuracy = test.accuracy();
    r.testLoss = test.loss;
    results.push_back(r);
    curve.push_back({r.epoch, std::max(0.0, r.trainAccuracy), r.testAccuracy});
    std::printf("epoch %d/%lld: loss %.4f", r.epoch, (long long)opt.epochs, r.loss);
    if (opt.trainAccuracy)
      std::printf(", train accuracy %.2f%%", 100 * r.trainAccuracy);
    std::printf(", test accuracy %.2f%% (test loss %.4f), %.1f s, %.0f images/s\n",
                100 * r.testAccuracy, r.testLoss, r.seconds, r.imagesPerSecond);
    std::fflush(stdout);
  }

  int64_t smoothing = opt.smoothing > 0
                          ? opt.smoothing
                          : std::max<int64_t>(1, int64_t(stepLoss.size()) / 50);
  if (!opt.plot.empty()) {
    std::string base = opt.artifact.substr(opt.artifact.find_last_of('/') + 1);
    std::string title = "Fashion-MNIST: " + base + " (" + opt.trainEntry + "), batch " +
                        std::to_string(B) + ", seed " + std::to_string(opt.seed);
    if (!writeTrainingCurve(opt.plot, title, stepLoss, steps, smoothing, curve, error))
      fatal(error);
    std::printf("wrote %s\n", opt.plot.c_str());
  }
  if (!opt.json.empty()) {
    FILE *f = std::fopen(opt.json.c_str(), "w");
    if (!f)
      fatal(opt.json + ": cannot write");
    std::fprintf(f, "{\n  \"artifact\": %s,\n  \"train_entry\": %s,\n  \"eval_entry\": %s,\n",
                 jsonString(opt.artifact).c_str(), jsonString(opt.trainEntry).c_str(),
                 jsonString(opt.evalEntry).c_str());
    std::fprintf(f, "  \"seed\": %llu,\n  \"num_threads\": %d,\n  \"batch\": %lld,\n",
                 (unsigned long long)opt.seed, opt.numThreads, (long long)B);
    std::fprintf(f, "  \"train_images\": %lld,\n  \"steps_per_epoch\": %lld,\n  \"test_images\": %lld,\n",
                 (long long)trainCount, (long long)steps, (long long)testCount);
    std::fprintf(f, "  \"normalize\": %s,\n  \"pixel_mean\": %s,\n  \"pixel_std\": %s,\n",
                 jsonString(opt.normalize).c_str(), jsonNumber(mean).c_str(),
                 jsonNumber(stddev).c_str());
    std::fprintf(f, "  \"parameters\": %lld,\n", (long long)numParams);
    std::fprintf(f, "  \"step_seconds\": %s,\n  \"epochs\": [\n",
                 jsonNumber(totalStepSeconds).c_str());
    for (size_t i = 0; i < results.size(); ++i) {
      const EpochResult &r = results[i];
      std::fprintf(f,
                   "    {\"epoch\": %d, \"loss\": %s, \"train_accuracy\": %s, \"test_accuracy\": %s, "
                   "\"test_loss\": %s, \"seconds\": %s, \"images_per_second\": %s}%s\n",
                   r.epoch, jsonNumber(r.loss).c_str(),
                   r.trainAccuracy < 0 ? "null" : jsonNumber(r.trainAccuracy).c_str(),
                   jsonNumber(r.testAccuracy).c_str(), jsonNumber(r.testLoss).c_str(),
                   jsonNumber(r.seconds).c_str(), jsonNumber(r.imagesPerSecond).c_str(),
                   i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ],\n  \"step_loss\": [");
    for (size_t i = 0; i < stepLoss.size(); ++i)
      std::fprintf(f, "%s%s", i ? ", " : "", jsonNumber(stepLoss[i]).c_str());
    std::fprintf(f, "]\n}\n");
    if (std::fclose(f) != 0)
      fatal(opt.json + ": write failed");
    std::printf("wrote %s\n", opt.json.c_str());
  }
  return 0;
}
