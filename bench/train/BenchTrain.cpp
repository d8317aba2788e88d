//===- BenchTrain.cpp - Time per training step: Loom and PyTorch ----------===//
//
// Part of Loom. loom-bench-train times one training step (forward, backward,
// optimizer update) of the Fashion-MNIST CNN and MLP
// (python-free-examples/fashion-mnist) at their batch size, three ways:
//
//   compiled     loom-opt --tg-autodiff | loom-compile, run through
//                libloomrt's C API (the binding loom-train uses)
//   interpreted  the same training-step function on Loom's reference
//                interpreter (in this process)
//   PyTorch      torch_step.py beside this file: the same network, batch,
//                loss and optimizer in PyTorch (Debian's python3-torch) on the
//                same number of threads, a child process driven over a pipe
//
// The columns are measured in turn, round after round (the machine is
// shared and noisy): in each round, --steps compiled steps, one interpreted
// step (while within --interp-budget) and --steps PyTorch steps. A round's
// sample is the mean time per step of its steps; the table gives the median
// over rounds and their spread (min-max). Before timing, the compiled step is
// checked against the interpreter on the same state (loss and updated
// tensors). docs/benchmarks/train.md records results.
//
//===----------------------------------------------------------------------===//

#include "TrainStep.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Interpreter/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;
using namespace loom;

namespace {

cl::OptionCategory benchCat("loom-bench-train options");
cl::opt<std::string> modelList("models", cl::desc("Comma-separated models: cnn, mlp"),
                               cl::init("cnn,mlp"), cl::cat(benchCat));
cl::opt<unsigned> threads("num-threads",
                          cl::desc("Threads of every column (libloomrt, the "
                                   "interpreter's kernels, torch.set_num_threads)"),
                          cl::init(2), cl::cat(benchCat));
cl::opt<unsigned> rounds("rounds", cl::desc("Rounds of measurement, the columns in turn"),
                         cl::init(10), cl::cat(benchCat));
cl::opt<unsigned> steps("steps",
                        cl::desc("Compiled and PyTorch steps per round (a round's sample "
                                 "is their mean)"),
                        cl::init(20), cl::cat(benchCat));
cl::opt<unsigned> warmup("warmup", cl::desc("Untimed steps of each column before the rounds"),
                         cl::init(5), cl::cat(benchCat));
cl::opt<double> pause("pause",
                      cl::desc("Seconds to sleep between columns, so that one column's "
                               "OpenMP threads have stopped spinning before the next runs"),
                      cl::init(0.2), cl::cat(benchCat));
cl::opt<double> interpBudget("interp-budget",
                             cl::desc("Seconds of interpreted steps per model; once spent, "
                                      "later rounds skip the interpreter (at least one "
                                      "timed step is made)"),
                             cl::init(60), cl::cat(benchCat));
cl::opt<std::string> optimizer("optimizer", cl::desc("adam or sgd (momentum 0.9)"),
                               cl::init("adam"), cl::cat(benchCat));
cl::opt<double> lr("lr", cl::desc("Learning rate"), cl::init(0.001), cl::cat(benchCat));
cl::opt<bool> noTorch("no-torch", cl::desc("Do not run PyTorch"), cl::init(false),
                      cl::cat(benchCat));
cl::opt<bool> noInterp("no-interp", cl::desc("Do not run the interpreter"), cl::init(false),
                       cl::cat(benchCat));
cl::opt<std::string> python("python",
                            cl::desc("The Python that has torch (default: Debian's "
                                     "/usr/bin/python3, where python3-torch installs)"),
                            cl::init("/usr/bin/python3"), cl::cat(benchCat));
cl::opt<std::string> jsonFile("json", cl::desc("Write the results as JSON"), cl::init(""),
                              cl::cat(benchCat));
cl::opt<std::string> workDir("workdir",
                             cl::desc("Where the training steps are written and compiled "
                                      "(default: a new temporary directory)"),
                             cl::init(""), cl::cat(benchCat));
cl::opt<std::string> binDir("bin-dir",
                            cl::desc("Where loom-opt and loom-compile are (default: beside "
                                     "this executable)"),
                            cl::init(""), cl::cat(benchCat));
cl::opt<std::string> modelDir("model-dir",
                              cl::desc("Where cnn.mlir and mlp.mlir are"),
                              cl::init(LOOM_BENCH_TRAIN_MODEL_DIR), cl::cat(benchCat));
cl::opt<std::string> torchScript("torch-script", cl::desc("PyTorch's side"),
                                 cl::init(LOOM_BENCH_TRAIN_TORCH_SCRIPT), cl::cat(benchCat));

[[noreturn]] void fail(const Twine &msg) {
  errs() << "loom-bench-train: error: " << msg << "\n";
  std::exit(1);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void rest() {
  if (pause > 0)
    usleep(useconds_t(pause * 1e6));
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string firstLine(const std::string &path, const std::string &prefix) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(prefix, 0) == 0) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? line : std::string(StringRef(line).substr(colon + 1).trim());
    }
  return "unknown";
}

/// Runs a tool, failing with its stderr.
void runTool(const std::string &program, ArrayRef<std::string> args) {
  SmallString<128> errPath;
  sys::fs::createTemporaryFile("loom-bench-train", "err", errPath);
  std::vector<StringRef> argv = {program};
  for (const std::string &a : args)
    argv.push_back(a);
  std::optional<StringRef> redirects[] = {std::nullopt, std::nullopt, StringRef(errPath)};
  std::string message;
  int rc = sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0, 0, &message);
  if (rc != 0) {
    auto err = MemoryBuffer::getFile(errPath);
    std::string cmd = program;
    for (const std::string &a : args)
      cmd += " " + a;
    fail(cmd + " failed (" + (message.empty() ? "exit " + std::to_string(rc) : message) +
         "): " + (err ? (*err)->getBuffer().trim().str() : ""));
  }
  sys::fs::remove(errPath);
}

/// PyTorch's side: torch_step.py, driven over its stdin and stdout.
class TorchPeer {
public:
  bool start(const std::string &model, std::string &error) {
    int toChild[2], fromChild[2];
    if (pipe(toChild) || pipe(fromChild)) {
      error = "pipe failed";
      return false;
    }
    std::vector<std::string> args = {python, torchScript, "--model", model,
                                     "--threads", std::to_string(threads), "--optimizer",
                                     optimizer, "--lr", std::to_string(lr), "--warmup",
                                     std::to_string(warmup)};
    pid_ = fork();
    if (pid_ == 0) {
      dup2(toChild[0], 0);
      dup2(fromChild[1], 1);
      close(toChild[1]);
      close(fromChild[0]);
      std::vector<char *> argv;
      for (std::string &a : args)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(python.c_str(), argv.data());
      std::fprintf(stderr, "cannot run %s\n", python.c_str());
      _exit(127);
    }
    close(toChild[0]);
    close(fromChild[1]);
    in_ = fdopen(toChild[1], "w");
    out_ = fdopen(fromChild[0], "r");
    std::string line;
    if (!readLine(line) || line.rfind("ready ", 0) != 0) {
      error = "torch_step.py did not start (" + python +
              " needs torch: apt-get install python3-torch; its stderr is above)";
      return false;
    }
    auto info = json::parse(line.substr(6));
    if (info)
      info_ = std::move(*info);
    return true;
  }
  /// Seconds of each of `n` steps.
  bool run(unsigned n, std::vector<double> &seconds, std::string &error) {
    std::fprintf(in_, "run %u\n", n);
    std::fflush(in_);
    std::string line;
    auto parsed = readLine(line) ? json::parse(line) : Expected<json::Value>(createStringError("EOF"));
    if (!parsed) {
      error = "torch_step.py stopped: " + toString(parsed.takeError());
      return false;
    }
    seconds.clear();
    if (auto *obj = parsed->getAsObject())
      if (auto *arr = obj->getArray("seconds"))
        for (const json::Value &v : *arr)
          if (auto d = v.getAsNumber())
            seconds.push_back(*d);
    return seconds.size() == n;
  }
  const json::Value &info() const { return info_; }
  ~TorchPeer() {
    if (in_) {
      std::fputs("quit\n", in_);
      std::fclose(in_);
    }
    if (out_)
      std::fclose(out_);
    if (pid_ > 0)
      waitpid(pid_, nullptr, 0);
  }

private:
  bool readLine(std::string &line) {
    line.clear();
    int c;
    while ((c = std::fgetc(out_)) != EOF && c != '\n')
      line += char(c);
    return c == '\n';
  }
  pid_t pid_ = -1;
  FILE *in_ = nullptr, *out_ = nullptr;
  json::Value info_ = nullptr;
};

struct Column {
  std::vector<double> samples; // seconds per step, one per round
  std::string note;
  bool ran() const { return !samples.empty(); }
};

struct ModelResult {
  std::string name;
  int64_t batch = 0, parameters = 0;
  double compileSeconds = 0;
  double checkLossDiff = -1, checkMaxDiff = -1, checkScale = 0;
  std::string checkWorst;
  Column compiled, interpreted, torch;
};

/// The interpreter on the training step, from the compiled step's state.
class Interpreted {
public:
  bool load(const std::string &path, const std::string &entry, std::string &error) {
    registry_.insert<tg::TGDialect, mlir::func::FuncDialect>();
    context_ = std::make_unique<mlir::MLIRContext>(registry_);
    context_->loadAllAvailableDialects();
    context_->printOpOnDiagnostic(false);
    module_ = mlir::parseSourceFile<mlir::ModuleOp>(path, context_.get());
    if (!module_) {
      error = "cannot parse " + path;
      return false;
    }
    fn_ = module_->lookupSymbol<mlir::func::FuncOp>(entry);
    if (!fn_) {
      error = path + ": no function @" + entry;
      return false;
    }
    interp_ = std::make_unique<interp::Interpreter<interp::F32Domain>>(*module_);
    return true;
  }
  /// Arguments: images, labels, then the train step's current values by name.
  bool setArguments(const float *images, const std::vector<int64_t> &labels,
                    const train::TrainStep &ts, std::string &error) {
    args_.clear();
    for (unsigned i = 0; i < fn_.getNumArguments(); ++i) {
      auto type = mlir::cast<mlir::RankedTensorType>(fn_.getArgument(i).getType());
      std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
      std::vector<double> values(size_t(type.getNumElements()));
      if (i == 0) {
        std::copy(images, images + values.size(), values.begin());
      } else if (i == 1) {
        std::copy(labels.begin(), labels.end(), values.begin());
      } else {
        auto name = fn_.getArgAttrOfType<mlir::StringAttr>(i, "tg.name");
        const float *v = name ? ts.value(name.str()) : nullptr;
        if (!v) {
          error = "argument " + std::to_string(i) + " of @" + fn_.getName().str() +
                  " is not an input of the compiled entry";
          return false;
        }
        std::copy(v, v + values.size(), values.begin());
      }
      args_.push_back(interp::Tensor<interp::F32Domain>::fromDoubles(shape, values));
    }
    return true;
  }
  bool run(std::vector<interp::Tensor<interp::F32Domain>> &results) {
    auto r = interp_->run(fn_, args_);
    if (mlir::failed(r))
      return false;
    results = std::move(*r);
    return true;
  }
  std::string resultName(unsigned i) {
    auto name = fn_.getResultAttrOfType<mlir::StringAttr>(i, "tg.name");
    return name ? name.str() : "result" + std::to_string(i);
  }

private:
  mlir::DialectRegistry registry_;
  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::func::FuncOp fn_;
  std::unique_ptr<interp::Interpreter<interp::F32Domain>> interp_;
  std::vector<interp::Tensor<interp::F32Domain>> args_;
};

ModelResult benchModel(const std::string &model, const std::string &dir,
                       const std::string &bin) {
  ModelResult res;
  res.name = model;
  std::string src = modelDir + "/" + model + ".mlir";
  std::string step = dir + "/" + model + "-step.mlir", so = dir + "/" + model + ".so";
  std::string opt = "function=loss optimizer=" + optimizer + " lr=" + std::to_string(lr);
  if (optimizer == "sgd")
    opt += " momentum=0.9";
  double t0 = now();
  runTool(bin + "/loom-opt", {src, "--tg-autodiff=" + opt,
                              "--tg-weights-to-arguments=function=logits",
                              "--tg-weights-to-arguments=function=loss", "-o", step});
  runTool(bin + "/loom-compile", {step, "-o", so});
  res.compileSeconds = now() - t0;

  std::string error;
  train::TrainStep ts;
  if (!ts.open(so, "loss_train_step", "logits", int(threads), error) ||
      !ts.initialize(0, error))
    fail(error);
  res.batch = ts.batch();
  for (const train::TensorInfo &p : ts.parameters())
    res.parameters += p.elements();

  // Fixed inputs: images in [0, 1), labels in [0, classes).
  std::mt19937_64 rng(1);
  std::vector<float> images(size_t(ts.batch() * ts.imageElements()));
  for (float &x : images)
    x = float(double(rng() >> 11) * 0x1.0p-53);
  std::vector<int64_t> labels(static_cast<size_t>(ts.batch()));
  for (int64_t &l : labels)
    l = int64_t(rng() % uint64_t(ts.classes()));

  std::optional<Interpreted> interp;
  if (!noInterp) {
    interp::setNumThreads(threads);
    interp.emplace();
    if (!interp->load(step, "loss_train_step", error) ||
        !interp->setArguments(images.data(), labels, ts, error))
      fail(error);
    // The check: one step from the same state, interpreted and compiled.
    std::vector<interp::Tensor<interp::F32Domain>> expected;
    if (!interp->run(expected))
      fail("the interpreter failed on " + step);
    float loss = 0;
    if (!ts.step(images.data(), labels.data(), &loss, error))
      fail(error);
    res.checkLossDiff = std::fabs(double(loss) - expected[0].toDoubles()[0]);
    res.checkMaxDiff = 0;
    for (unsigned i = 1; i < expected.size(); ++i) {
      std::string name = interp->resultName(i);
      const float *got = ts.value(name);
      if (!got)
        fail("compiled entry has no tensor '" + name + "'");
      std::vector<double> want = expected[i].toDoubles();
      double diff = 0, scale = 0;
      for (size_t k = 0; k < want.size(); ++k) {
        diff = std::max(diff, std::fabs(double(got[k]) - want[k]));
        scale = std::max(scale, std::fabs(want[k]));
      }
      if (diff > res.checkMaxDiff) {
        res.checkMaxDiff = diff;
        res.checkWorst = name;
        res.checkScale = scale;
      }
    }
  }

  std::optional<TorchPeer> torch;
  if (!noTorch) {
    torch.emplace();
    if (!torch->start(model, error)) {
      res.torch.note = error;
      torch.reset();
    }
  }

  float loss = 0;
  for (unsigned w = 0; w < warmup; ++w)
    if (!ts.step(images.data(), labels.data(), &loss, error))
      fail(error);

  rest();
  double interpSpent = 0;
  for (unsigned r = 0; r < rounds; ++r) {
    double start = now();
    for (unsigned s = 0; s < steps; ++s)
      if (!ts.step(images.data(), labels.data(), &loss, error))
        fail(error);
    res.compiled.samples.push_back((now() - start) / steps);
    rest();

    if (interp && (interpSpent < interpBudget || res.interpreted.samples.empty())) {
      if (!interp->setArguments(images.data(), labels, ts, error))
        fail(error);
      std::vector<interp::Tensor<interp::F32Domain>> out;
      double t = now();
      if (!interp->run(out))
        fail("the interpreter failed on " + step);
      double spent = now() - t;
      interpSpent += spent;
      res.interpreted.samples.push_back(spent);
      rest();
    }

    if (torch) {
      std::vector<double> sec;
      if (!torch->run(steps, sec, error)) {
        res.torch.note = error;
        torch.reset();
      } else {
        double sum = 0;
        for (double s : sec)
          sum += s;
        res.torch.samples.push_back(sum / double(sec.size()));
      }
      rest();
    }
    errs() << "  " << model << " round " << (r + 1) << "/" << rounds << ": compiled "
           << format("%.3f", res.compiled.samples.back() * 1e3) << " ms";
    if (!res.interpreted.samples.empty())
      errs() << ", interpreted " << format("%.1f", res.interpreted.samples.back() * 1e3) << " ms";
    if (!res.torch.samples.empty())
      errs() << ", PyTorch " << format("%.3f", res.torch.samples.back() * 1e3) << " ms";
    errs() << "\n";
  }
  if (interp && res.interpreted.samples.size() < rounds)
    res.interpreted.note = "budget: " + std::to_string(res.interpreted.samples.size()) + " rounds";
  return res;
}

std::string cell(const Column &c) {
  if (!c.ran())
    return "n/a";
  auto [lo, hi] = std::minmax_element(c.samples.begin(), c.samples.end());
  double m = median(c.samples) * 1e3;
  const char *f = m < 10 ? "%.3f (%.3f-%.3f)" : m < 1000 ? "%.1f (%.1f-%.1f)" : "%.0f (%.0f-%.0f)";
  return formatv("{0}", format(f, m, *lo * 1e3, *hi * 1e3)).str();
}

json::Value columnJSON(const Column &c) {
  json::Object o;
  if (c.ran()) {
    auto [lo, hi] = std::minmax_element(c.samples.begin(), c.samples.end());
    o["median_ms"] = median(c.samples) * 1e3;
    o["min_ms"] = *lo * 1e3;
    o["max_ms"] = *hi * 1e3;
    json::Array s;
    for (double x : c.samples)
      s.push_back(x * 1e3);
    o["samples_ms"] = std::move(s);
  }
  if (!c.note.empty())
    o["note"] = c.note;
  return json::Value(std::move(o));
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(benchCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-bench-train: time per training step of the Fashion-MNIST CNN and MLP: Loom "
      "compiled, Loom interpreted and PyTorch (CPU), measured in turn\n");
  if (optimizer != "adam" && optimizer != "sgd")
    fail("--optimizer=" + optimizer + ": expected adam or sgd");
  if (rounds == 0 || steps == 0)
    fail("--rounds and --steps must be at least 1");
  std::signal(SIGPIPE, SIG_IGN);

  std::string bin = binDir;
  if (bin.empty())
    bin = sys::path::parent_path(sys::fs::getMainExecutable(argv[0], (void *)&fail)).str();
  std::string dir = workDir;
  if (dir.empty()) {
    SmallString<128> tmp;
    if (sys::fs::createUniqueDirectory("loom-bench-train", tmp))
      fail("cannot create a temporary directory");
    dir = tmp.str().str();
  } else if (sys::fs::create_directories(dir)) {
    fail("cannot create " + dir);
  }

  std::string cpu = firstLine("/proc/cpuinfo", "model name");
  std::string load = firstLine("/proc/loadavg", "");
  outs() << "loom-bench-train: " << cpu << ", " << threads << " threads, batch 64, "
         << optimizer << " lr " << format("%g", double(lr)) << "; " << rounds << " rounds of " << steps
         << " compiled and PyTorch steps and 1 interpreted step, in turn\n";
  outs() << "load average at start: " << load << "\n";
  outs().flush();

  std::vector<ModelResult> results;
  for (StringRef m : split(StringRef(modelList), ',')) {
    m = m.trim();
    if (m != "cnn" && m != "mlp")
      fail("unknown model '" + m + "' (cnn, mlp)");
    results.push_back(benchModel(m.str(), dir, bin));
  }

  outs() << "\ntime per training step, ms: median over rounds (min-max)\n";
  outs() << format("%-5s %6s %9s  %-24s %-24s %-24s %s\n", "model", "batch", "params",
                   "Loom compiled", "Loom interpreted", "PyTorch", "PyTorch / compiled");
  for (const ModelResult &r : results) {
    std::string ratio = "n/a";
    if (r.compiled.ran() && r.torch.ran())
      ratio = formatv("{0}x", format("%.2f", median(r.torch.samples) / median(r.compiled.samples)));
    outs() << format("%-5s %6lld %9lld  %-24s %-24s %-24s %s\n", r.name.c_str(),
                     (long long)r.batch, (long long)r.parameters, cell(r.compiled).c_str(),
                     cell(r.interpreted).c_str(), cell(r.torch).c_str(), ratio.c_str());
  }
  for (const ModelResult &r : results) {
    if (r.checkMaxDiff >= 0)
      outs() << r.name << ": one step from the same state, compiled vs interpreted: |loss diff| "
             << format("%.2e", r.checkLossDiff) << ", max |diff| of the updated tensors "
             << format("%.2e", r.checkMaxDiff) << " (" << r.checkWorst << ", whose largest |value| is "
             << format("%.3g", r.checkScale) << ")\n";
    for (const Column *c : {&r.interpreted, &r.torch})
      if (!c->note.empty())
        outs() << r.name << ": " << (c == &r.torch ? "PyTorch" : "interpreter") << ": " << c->note
               << "\n";
  }
  outs() << "load average at end: " << firstLine("/proc/loadavg", "") << "\n";

  if (!jsonFile.empty()) {
    json::Array models;
    for (const ModelResult &r : results) {
      json::Object o{{"model", r.name},
                     {"batch", r.batch},
                     {"parameters", r.parameters},
                     {"compile_seconds", r.compileSeconds},
                     {"compiled", columnJSON(r.compiled)},
                     {"interpreted", columnJSON(r.interpreted)},
                     {"pytorch", columnJSON(r.torch)}};
      if (r.checkMaxDiff >= 0)
        o["check"] = json::Object{{"loss_abs_diff", r.checkLossDiff},
                                  {"max_abs_diff", r.checkMaxDiff},
                                  {"worst", r.checkWorst},
                                  {"max_abs_value", r.checkScale}};
      models.push_back(std::move(o));
    }
    json::Object root{{"benchmark", "loom-bench-train"},
                      {"cpu", cpu},
                      {"threads", int64_t(threads)},
                      {"optimizer", optimizer.getValue()},
                      {"lr", lr.getValue()},
                      {"rounds", int64_t(rounds)},
                      {"steps_per_round", int64_t(steps)},
                      {"load_average_start", load},
                      {"models", std::move(models)}};
    std::error_code ec;
    raw_fd_ostream f(jsonFile, ec);
    if (ec)
      fail(jsonFile + ": " + ec.message());
    f << formatv("{0:2}", json::Value(std::move(root))) << "\n";
  }
  return 0;
}
