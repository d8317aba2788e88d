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
#include <set>
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
  --trials=N           train N trials at once with a step fused by loom-opt
                       --tg-fuse-trials="trials=N" (entries default to
                       loss_train_step_trials and logits_trials): each trial
                       starts from the same initialisation (--seed) and sees
                       the same batches, with its own hyper-parameters
  --hyper=NAME=LIST    a hyper-parameter input of the step (built with
                       --tg-autodiff's hyper-parameter-arguments=true): one
                       value, or one per trial separated by commas; every
                       hyper-parameter input must be given
  --lr=LIST, --momentum=LIST, --weight-decay=LIST, --beta1=LIST, --beta2=LIST
                       --hyper=lr=LIST and so on (weight_decay)
  --eval-artifact=FILE the evaluation entry's artifact when --artifact is a
                       pipelined step across ranks (loom-compile of a
                       partitioned @loss with --optimizer): the model compiled
                       for one process; rank 0 evaluates the parameters it
                       gathers. Every rank is a thread of this process, or a
                       process each under mpirun, loom-launch, srun or
                       torchrun-style variables (only rank 0 prints and writes)
  --help               this text

Prints one line per epoch on stdout: the mean training loss of its steps, the
train and test accuracy, the test loss, the time of the steps and images/s;
with --trials, one line per trial and epoch, then a table of the trials. The
plot and the JSON summary then hold every trial (one SVG per trial: FILE with
.trialT before its extension).
Exit status 1 on an error (a missing dataset names the package to install; an
artifact whose entries break the training-step contract names the entry and
the input), 2 on a bad option.
)";

struct Options {
  std::string artifact, trainEntry = "loss_train_step", evalEntry = "logits", evalArtifact;
  std::string data = kDefaultDataDir, plot, json, normalize = "standard",
              progress = "auto";
  int64_t epochs = 5, limit = -1, testLimit = -1, smoothing = 0, trials = 0;
  /// --hyper (and its shorthands) in the order given: name, values.
  std::vector<std::pair<std::string, std::vector<float>>> hyper;
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

/// A comma-separated list of numbers.
std::vector<float> parseList(const std::string &name, const std::string &v) {
  std::vector<float> out;
  size_t start = 0;
  while (true) {
    size_t comma = v.find(',', start);
    std::string item = v.substr(start, comma == std::string::npos ? comma : comma - start);
    char *end = nullptr;
    errno = 0;
    double x = std::strtod(item.c_str(), &end);
    if (item.empty() || *end || errno || !std::isfinite(x))
      usageError("--" + name + "=" + v + ": expected numbers separated by commas");
    out.push_back(float(x));
    if (comma == std::string::npos)
      return out;
    start = comma + 1;
  }
}

/// Records hyper-parameter `name`'s values (given once).
void addHyper(Options &o, const std::string &option, const std::string &name,
              const std::string &list) {
  for (const auto &h : o.hyper)
    if (h.first == name)
      usageError("hyper-parameter '" + name + "' given twice");
  o.hyper.emplace_back(name, parseList(option, list));
}

Options parseOptions(int argc, char **argv) {
  Options o;
  std::set<std::string> given;
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
    given.insert(name);
    if (name == "artifact") o.artifact = value;
    else if (name == "train-entry") o.trainEntry = value;
    else if (name == "eval-entry") o.evalEntry = value;
    else if (name == "eval-artifact") o.evalArtifact = value;
    else if (name == "data") o.data = value;
    else if (name == "epochs") o.epochs = parseInt(name, value, 1);
    else if (name == "limit") o.limit = parseInt(name, value, 1);
    else if (name == "test-limit") o.testLimit = parseInt(name, value, 1);
    else if (name == "seed") o.seed = uint64_t(parseInt(name, value, 0));
    else if (name == "num-threads") o.numThreads = int(parseInt(name, value, 0));
    else if (name == "smoothing") o.smoothing = parseInt(name, value, 1);
    else if (name == "trials") o.trials = parseInt(name, value, 1);
    else if (name == "hyper") {
      size_t at = value.find('=');
      if (at == std::string::npos || at == 0)
        usageError("--hyper=" + value + ": expected NAME=LIST");
      addHyper(o, name, value.substr(0, at), value.substr(at + 1));
    } else if (name == "lr" || name == "momentum" || name == "beta1" || name == "beta2")
      addHyper(o, name, name, value);
    else if (name == "weight-decay") addHyper(o, name, "weight_decay", value);
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
  if (o.trials > 0 && !given.count("train-entry"))
    o.trainEntry = "loss_train_step_trials";
  if (o.trials > 0 && !given.count("eval-entry"))
    o.evalEntry = "logits_trials";
  for (const auto &h : o.hyper)
    if (h.second.size() != 1 && int64_t(h.second.size()) != std::max<int64_t>(o.trials, 1))
      usageError("hyper-parameter '" + h.first + "': " + std::to_string(h.second.size()) +
                 " values for " + std::to_string(std::max<int64_t>(o.trials, 1)) +
                 " trial(s) (give one, or one per trial)");
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
/// real images are counted. One evaluation per trial.
std::vector<Evaluation> evaluate(TrainStep &ts, const Split &split, int64_t count) {
  int64_t T = ts.trials(), B = ts.evalBatch(), P = ts.imageElements(), C = ts.classes();
  std::vector<Evaluation> evs(static_cast<size_t>(T));
  std::vector<float> batch(size_t(B * P)), logits(size_t(T * B * C));
  std::string error;
  for (int64_t start = 0; start < count; start += B) {
    int64_t real = std::min(B, count - start);
    std::copy_n(split.images.data() + start * P, real * P, batch.data());
    std::fill(batch.begin() + real * P, batch.end(), 0.0f);
    if (!ts.logits(batch.data(), logits.data(), error))
      fatal(error);
    for (int64_t t = 0; t < T; ++t) {
      Evaluation &ev = evs[size_t(t)];
      for (int64_t i = 0; i < real; ++i) {
        const float *row = logits.data() + (t * B + i) * C;
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
  }
  for (Evaluation &ev : evs)
    if (ev.images)
      ev.loss /= double(ev.images);
  return evs;
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

/// One trial's record: the loss of every step, and every epoch.
struct TrialRecord {
  std::vector<float> stepLoss;
  std::vector<EpochResult> results;
  std::vector<EpochAccuracy> curve;
};

/// What the run trains on and with.
struct Setup {
  int64_t trainCount = 0, testCount = 0, steps = 0;
  double mean = 0, stddev = 1;
};

/// Sets every hyper-parameter input of the step from the options (one value
/// for every trial, or one per trial); a missing or unknown one is an error.
void setHyperParameters(TrainStep &ts, const Options &opt) {
  std::string error;
  for (const auto &h : opt.hyper) {
    std::vector<float> values = h.second;
    if (values.size() == 1)
      values.assign(size_t(ts.trials()), values[0]);
    if (!ts.setHyperParameter(h.first, values, error))
      fatal(opt.artifact + ": " + error);
  }
  for (const TensorInfo &t : ts.hyperParameters())
    if (std::none_of(opt.hyper.begin(), opt.hyper.end(),
                     [&](const auto &h) { return h.first == t.name; }))
      fatal(opt.artifact + ": entry '" + opt.trainEntry + "' takes the hyper-parameter '" +
            t.name + "': give it with --hyper=" + t.name + "=VALUE[,VALUE...]");
}

/// "lr=0.1 momentum=0.9": trial t's hyper-parameters.
std::string hyperString(const Options &opt, int64_t t) {
  std::string s;
  for (const auto &h : opt.hyper) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s=%g", s.empty() ? "" : " ", h.first.c_str(),
                  double(h.second[h.second.size() == 1 ? 0 : size_t(t)]));
    s += buf;
  }
  return s;
}

/// Opens the artifact and the dataset, checks one against the other,
/// normalises the images and initialises the parameters.
Setup prepare(TrainStep &ts, Dataset &data, const Options &opt) {
  // The artifact first: its contract errors need no dataset.
  std::string error;
  if (!ts.open(opt.artifact, opt.trainEntry, opt.evalEntry, opt.numThreads, error, opt.trials,
               opt.evalArtifact))
    fatal(error);
  if (ts.acrossRanks() && !opt.hyper.empty())
    fatal(opt.artifact + ": the pipelined step's optimizer and its hyper-parameters are "
          "compiled in (loom-compile --optimizer=" + ts.optimizer() + "): --" +
          opt.hyper[0].first + " does not apply");
  // Only rank 0 of a step across processes prints.
  if (!ts.isRoot() && !std::freopen("/dev/null", "w", stdout))
    fatal("cannot silence stdout on rank " + std::to_string(ts.rank()));
  setHyperParameters(ts, opt);
  if (!loadDataset(opt.data, data, error))
    fatal(error);
  if (ts.imageElements() != data.train.pixels())
    fatal(opt.artifact + ": entry '" + opt.trainEntry + "' takes images of " +
          std::to_string(ts.imageElements()) + " elements, the dataset's have " +
          std::to_string(data.train.pixels()));
  if (ts.classes() != 10)
    fatal(opt.artifact + ": entry '" + opt.evalEntry + "' returns " +
          std::to_string(ts.classes()) + " logits per image, Fashion-MNIST has 10 classes");
  Setup su;
  su.trainCount = opt.limit > 0 ? std::min(opt.limit, data.train.count) : data.train.count;
  su.testCount = opt.testLimit > 0 ? std::min(opt.testLimit, data.test.count) : data.test.count;
  int64_t B = ts.batch(), P = ts.imageElements();
  su.steps = su.trainCount / B;
  if (su.steps == 0)
    fatal("--limit=" + std::to_string(su.trainCount) + " is less than one batch of " +
          std::to_string(B));
  // Normalise with statistics of the images trained on.
  if (opt.normalize == "standard") {
    Split used;
    used.images.assign(data.train.images.begin(),
                       data.train.images.begin() + su.trainCount * P);
    meanStd(used, su.mean, su.stddev);
    standardize(data.train, su.mean, su.stddev);
    standardize(data.test, su.mean, su.stddev);
  }
  if (!ts.initialize(opt.seed, error))
    fatal(error);
  return su;
}

void printHeader(const TrainStep &ts, const Setup &su, const Options &opt) {
  int64_t numParams = 0;
  for (const TensorInfo &p : ts.parameters())
    numParams += p.elements();
  if (ts.acrossRanks())
    std::printf("loom-train: %s, a pipelined step on %lld ranks (%s), %lld micro-batches "
                "of %lld, %s on the ranks; evaluation: %s, entry %s\n",
                opt.artifact.c_str(), (long long)ts.worldSize(),
                ts.rank() < 0 ? "threads of one process" : ("processes over " + ts.transport()).c_str(),
                (long long)ts.microBatches(), (long long)(ts.batch() / ts.microBatches()),
                ts.optimizer().c_str(), opt.evalArtifact.c_str(), opt.evalEntry.c_str());
  else
    std::printf("loom-train: %s, entries %s and %s\n", opt.artifact.c_str(),
                opt.trainEntry.c_str(), opt.evalEntry.c_str());
  std::string state = ts.acrossRanks()
                          ? "the optimizer state on the ranks"
                          : std::to_string(ts.state().size()) + " optimizer state tensors (zero)";
  std::printf("  %lld parameters%s in %zu tensors, %s, seed %llu\n",
              (long long)(numParams / ts.trials()), opt.trials > 0 ? " per trial" : "",
              ts.parameters().size(), state.c_str(), (unsigned long long)opt.seed);
  if (opt.trials > 0)
    for (int64_t t = 0; t < ts.trials(); ++t)
      std::printf("  trial %lld: %s\n", (long long)t, hyperString(opt, t).c_str());
  int64_t B = ts.batch();
  std::printf("  train: %lld images, %lld steps of %lld per epoch (%lld skipped: the last partial batch)\n",
              (long long)su.trainCount, (long long)su.steps, (long long)B,
              (long long)(su.trainCount - su.steps * B));
  std::printf("  test: %lld images in batches of %lld (%s)\n", (long long)su.testCount,
              (long long)ts.evalBatch(),
              su.testCount % ts.evalBatch() ? "the last padded with zeros, only its real images counted"
                                            : "no partial batch");
  if (opt.normalize == "standard")
    std::printf("  pixels: [0, 1], then (x - %.4f) / %.4f\n", su.mean, su.stddev);
  else
    std::printf("  pixels: [0, 1]\n");
  std::fflush(stdout);
}

/// Runs one epoch's steps over `order`; appends each trial's step losses.
/// Returns the seconds the steps took.
double trainEpoch(TrainStep &ts, const Dataset &data, const Setup &su,
                  const std::vector<int64_t> &order, int64_t epoch, const Options &opt,
                  ProgressBar &bar, std::vector<TrialRecord> &trials) {
  int64_t B = ts.batch(), P = ts.imageElements(), T = ts.trials();
  std::vector<float> images(static_cast<size_t>(B * P)), loss(static_cast<size_t>(T));
  std::vector<int64_t> labels(static_cast<size_t>(B));
  std::string error;
  double seconds = 0;
  for (int64_t s = 0; s < su.steps; ++s) {
    for (int64_t b = 0; b < B; ++b) {
      int64_t idx = order[size_t(s * B + b)];
      std::copy_n(data.train.images.data() + idx * P, P, images.data() + b * P);
      labels[size_t(b)] = data.train.labels[size_t(idx)];
    }
    double t0 = now();
    if (!ts.step(images.data(), labels.data(), loss.data(), error))
      fatal("step " + std::to_string(s + 1) + " of epoch " + std::to_string(epoch) + ": " + error);
    seconds += now() - t0;
    for (int64_t t = 0; t < T; ++t) {
      if (!std::isfinite(loss[size_t(t)])) {
        bar.finish();
        fatal("the loss is " + std::to_string(loss[size_t(t)]) + " at step " +
              std::to_string(s + 1) + " of epoch " + std::to_string(epoch) +
              (opt.trials > 0 ? " (trial " + std::to_string(t) + ")" : ""));
      }
      trials[size_t(t)].stepLoss.push_back(loss[size_t(t)]);
    }
    bar.update(epoch, opt.epochs, s + 1, su.steps, loss[0], double((s + 1) * B) / seconds,
               s + 1 == su.steps);
  }
  bar.finish();
  return seconds;
}

/// Evaluates every trial after epoch `epoch` and prints its line(s).
void finishEpoch(TrainStep &ts, const Dataset &data, const Setup &su, int64_t epoch,
                 double seconds, const Options &opt, std::vector<TrialRecord> &trials) {
  int64_t T = ts.trials(), B = ts.batch();
  std::vector<Evaluation> train, test = evaluate(ts, data.test, su.testCount);
  if (opt.trainAccuracy)
    train = evaluate(ts, data.train, su.trainCount);
  double ips = double(su.steps * B) / seconds;
  for (int64_t t = 0; t < T; ++t) {
    TrialRecord &tr = trials[size_t(t)];
    double lossSum = 0;
    for (int64_t s = 0; s < su.steps; ++s)
      lossSum += tr.stepLoss[tr.stepLoss.size() - size_t(su.steps - s)];
    EpochResult r{int(epoch), lossSum / double(su.steps), seconds, ips, -1, 0, 0};
    if (opt.trainAccuracy)
      r.trainAccuracy = train[size_t(t)].accuracy();
    r.testAccuracy = test[size_t(t)].accuracy();
    r.testLoss = test[size_t(t)].loss;
    tr.results.push_back(r);
    tr.curve.push_back({r.epoch, std::max(0.0, r.trainAccuracy), r.testAccuracy});
    std::printf("epoch %d/%lld", r.epoch, (long long)opt.epochs);
    if (opt.trials > 0)
      std::printf(" trial %lld", (long long)t);
    std::printf(": loss %.4f", r.loss);
    if (opt.trainAccuracy)
      std::printf(", train accuracy %.2f%%", 100 * r.trainAccuracy);
    std::printf(", test accuracy %.2f%% (test loss %.4f)", 100 * r.testAccuracy, r.testLoss);
    if (opt.trials == 0)
      std::printf(", %.1f s, %.0f images/s", r.seconds, r.imagesPerSecond);
    std::printf("\n");
  }
  if (opt.trials > 0)
    std::printf("epoch %d/%lld: %lld trials, %.1f s, %.0f images/s per trial, %.0f in all\n",
                int(epoch), (long long)opt.epochs, (long long)T, seconds, ips, ips * double(T));
  std::fflush(stdout);
}

/// The final table of the trials: hyper-parameters, last epoch's figures.
void printTrialTable(const Options &opt, const std::vector<TrialRecord> &trials) {
  std::printf("trial  %-36s %8s %10s %10s\n", "hyper-parameters", "loss", "train acc", "test acc");
  for (size_t t = 0; t < trials.size(); ++t) {
    const EpochResult &r = trials[t].results.back();
    char train[16] = "-";
    if (r.trainAccuracy >= 0)
      std::snprintf(train, sizeof train, "%.2f%%", 100 * r.trainAccuracy);
    std::printf("%5zu  %-36s %8.4f %10s %9.2f%%\n", t, hyperString(opt, int64_t(t)).c_str(),
                r.loss, train, 100 * r.testAccuracy);
  }
}

void writeEpochs(FILE *f, const TrialRecord &tr, const char *indent) {
  std::fprintf(f, "%s\"epochs\": [\n", indent);
  for (size_t i = 0; i < tr.results.size(); ++i) {
    const EpochResult &r = tr.results[i];
    std::fprintf(f,
                 "%s  {\"epoch\": %d, \"loss\": %s, \"train_accuracy\": %s, \"test_accuracy\": %s, "
                 "\"test_loss\": %s, \"seconds\": %s, \"images_per_second\": %s}%s\n",
                 indent, r.epoch, jsonNumber(r.loss).c_str(),
                 r.trainAccuracy < 0 ? "null" : jsonNumber(r.trainAccuracy).c_str(),
                 jsonNumber(r.testAccuracy).c_str(), jsonNumber(r.testLoss).c_str(),
                 jsonNumber(r.seconds).c_str(), jsonNumber(r.imagesPerSecond).c_str(),
                 i + 1 < tr.results.size() ? "," : "");
  }
  std::fprintf(f, "%s],\n%s\"step_loss\": [", indent, indent);
  for (size_t i = 0; i < tr.stepLoss.size(); ++i)
    std::fprintf(f, "%s%s", i ? ", " : "", jsonNumber(tr.stepLoss[i]).c_str());
  std::fprintf(f, "]");
}

/// The JSON summary: the settings, then the epochs and step losses (of each
/// trial, under "trials", with --trials).
void writeJson(const Options &opt, const TrainStep &ts, const Setup &su, double stepSeconds,
               const std::vector<TrialRecord> &trials) {
  FILE *f = std::fopen(opt.json.c_str(), "w");
  if (!f)
    fatal(opt.json + ": cannot write");
  int64_t numParams = 0;
  for (const TensorInfo &p : ts.parameters())
    numParams += p.elements();
  std::fprintf(f, "{\n  \"artifact\": %s,\n  \"train_entry\": %s,\n  \"eval_entry\": %s,\n",
               jsonString(opt.artifact).c_str(), jsonString(opt.trainEntry).c_str(),
               jsonString(opt.evalEntry).c_str());
  std::fprintf(f, "  \"seed\": %llu,\n  \"num_threads\": %d,\n  \"batch\": %lld,\n",
               (unsigned long long)opt.seed, opt.numThreads, (long long)ts.batch());
  std::fprintf(f, "  \"train_images\": %lld,\n  \"steps_per_epoch\": %lld,\n  \"test_images\": %lld,\n",
               (long long)su.trainCount, (long long)su.steps, (long long)su.testCount);
  std::fprintf(f, "  \"normalize\": %s,\n  \"pixel_mean\": %s,\n  \"pixel_std\": %s,\n",
               jsonString(opt.normalize).c_str(), jsonNumber(su.mean).c_str(),
               jsonNumber(su.stddev).c_str());
  std::fprintf(f, "  \"parameters\": %lld,\n", (long long)numParams);
  std::fprintf(f, "  \"step_seconds\": %s,\n", jsonNumber(stepSeconds).c_str());
  if (opt.trials == 0) {
    writeEpochs(f, trials[0], "  ");
  } else {
    std::fprintf(f, "  \"trials\": [\n");
    for (size_t t = 0; t < trials.size(); ++t) {
      std::fprintf(f, "    {\n      \"hyper_parameters\": {");
      for (size_t h = 0; h < opt.hyper.size(); ++h) {
        const auto &[name, values] = opt.hyper[h];
        std::fprintf(f, "%s%s: %s", h ? ", " : "", jsonString(name).c_str(),
                     jsonNumber(values[values.size() == 1 ? 0 : t]).c_str());
      }
      std::fprintf(f, "},\n");
      writeEpochs(f, trials[t], "      ");
      std::fprintf(f, "\n    }%s\n", t + 1 < trials.size() ? "," : "");
    }
    std::fprintf(f, "  ]");
  }
  std::fprintf(f, "\n}\n");
  if (std::fclose(f) != 0)
    fatal(opt.json + ": write failed");
  std::printf("wrote %s\n", opt.json.c_str());
}

/// The training curve of each trial (FILE, or FILE with .trialT before its
/// extension with --trials).
void writePlots(const Options &opt, const TrainStep &ts, int64_t stepsPerEpoch,
                const std::vector<TrialRecord> &trials) {
  std::string base = opt.artifact.substr(opt.artifact.find_last_of('/') + 1);
  for (size_t t = 0; t < trials.size(); ++t) {
    std::string path = opt.plot, title = "Fashion-MNIST: " + base + " (" + opt.trainEntry +
                                          "), batch " + std::to_string(ts.batch()) +
                                          ", seed " + std::to_string(opt.seed);
    if (opt.trials > 0) {
      size_t dot = path.find_last_of('.'), slash = path.find_last_of('/');
      if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
        dot = path.size();
      path.insert(dot, ".trial" + std::to_string(t));
      title += ", trial " + std::to_string(t) + " (" + hyperString(opt, int64_t(t)) + ")";
    }
    const std::vector<float> &loss = trials[t].stepLoss;
    int64_t smoothing = opt.smoothing > 0 ? opt.smoothing
                                          : std::max<int64_t>(1, int64_t(loss.size()) / 50);
    std::string error;
    if (!writeTrainingCurve(path, title, loss, stepsPerEpoch, smoothing, trials[t].curve, error))
      fatal(error);
    std::printf("wrote %s\n", path.c_str());
  }
}

} // namespace

int main(int argc, char **argv) {
  Options opt = parseOptions(argc, argv);
  TrainStep ts;
  Dataset data;
  Setup su = prepare(ts, data, opt);
  printHeader(ts, su, opt);

  std::mt19937_64 shuffleRng(opt.seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<int64_t> order(static_cast<size_t>(su.trainCount));
  std::iota(order.begin(), order.end(), 0);
  std::vector<TrialRecord> trials(size_t(ts.trials()));
  ProgressBar bar(ts.isRoot() &&
                  (opt.progress == "always" || (opt.progress == "auto" && isatty(2))));
  double totalStepSeconds = 0;
  for (int64_t epoch = 1; epoch <= opt.epochs; ++epoch) {
    // Fisher-Yates with our own draws, so the order is the same on every library.
    for (int64_t i = su.trainCount - 1; i > 0; --i)
      std::swap(order[size_t(i)], order[size_t(shuffleRng() % uint64_t(i + 1))]);
    double seconds = trainEpoch(ts, data, su, order, epoch, opt, bar, trials);
    totalStepSeconds += seconds;
    finishEpoch(ts, data, su, epoch, seconds, opt, trials);
  }
  if (opt.trials > 0)
    printTrialTable(opt, trials);
  if (!opt.plot.empty() && ts.isRoot())
    writePlots(opt, ts, su.steps, trials);
  if (!opt.json.empty() && ts.isRoot())
    writeJson(opt, ts, su, totalStepSeconds, trials);
  return 0;
}
