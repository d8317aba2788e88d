//===- loom-gpu-run.cpp - Run an artifact against reference outputs -------===//
//
// Part of Loom. See docs/tools/loom-gpu-run.md. Runs an entry of an
// artifact through libloomrt's C API on inputs read from a safetensors file
// and compares its outputs with a reference safetensors file (outputs the
// interpreter computed elsewhere, by scripts/gpu-check.sh prepare); an
// artifact of several ranks runs every rank as a thread of a world, or,
// under a launcher, this process's rank of the launcher's world. It
// needs libloomrt and the artifact library alone (no MLIR or LLVM), so that
// it builds on a GPU machine that has only CMake and a C++ compiler.
//
//===----------------------------------------------------------------------===//

#include "loom-c/Runtime.h"
#include "loom/Artifact/Json.h"
#include "loom/Support/NarrowFloats.h"
#include "loom/Support/ScaledError.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

int fail(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "loom-gpu-run: error: %s\n", message.c_str());
  return 1;
}

/// The tensors of a safetensors file: name -> (dtype, bytes).
struct Tensor {
  std::string dtype;
  std::string bytes;
};

bool readSafetensors(const std::string &path,
                     std::map<std::string, Tensor> &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  uint64_t n = 0;
  if (!in || data.size() < 8 ||
      (std::memcpy(&n, data.data(), 8), n > data.size() - 8)) {
    error = path + ": not a safetensors file";
    return false;
  }
  loom::artifact::Json header;
  if (!loom::artifact::Json::parse(std::string_view(data).substr(8, n),
                                   header, error) ||
      !header.isObject()) {
    error = path + ": bad header: " + error;
    return false;
  }
  for (const auto &[name, t] : header.object()) {
    const loom::artifact::Json *dtype = t.get("dtype"),
                               *offsets = t.get("data_offsets");
    if (name == "__metadata__")
      continue;
    if (!dtype || !offsets || !offsets->isArray() ||
        offsets->array().size() != 2 ||
        offsets->array()[1].integer() > int64_t(data.size() - 8 - n) ||
        offsets->array()[0].integer() > offsets->array()[1].integer()) {
      error = path + ": tensor '" + name + "' has a bad entry";
      return false;
    }
    int64_t begin = offsets->array()[0].integer(),
            end = offsets->array()[1].integer();
    out[name] = {dtype->string(), data.substr(8 + n + begin, end - begin)};
  }
  return true;
}

/// The largest scaledError of two float tensors (f32, f64, f16, bf16:
/// loom-run's measure and --tolerance; the same non-finite value on both
/// sides is no error), or 0 / infinity for others (bytes equal or not).
double largestError(const std::string &dtype, const std::string &got,
                    const std::string &want) {
  double worst = 0;
  // Each element of type T read as a double by value.
  auto compare = [&](auto zero, auto value) {
    using T = decltype(zero);
    for (size_t i = 0; i + sizeof(T) <= want.size(); i += sizeof(T)) {
      T g, w;
      std::memcpy(&g, got.data() + i, sizeof(T));
      std::memcpy(&w, want.data() + i, sizeof(T));
      worst = std::max(worst, loom::scaledError(value(g), value(w)));
    }
  };
  if (dtype == "f32")
    compare(0.0f, [](float v) { return double(v); });
  else if (dtype == "f64")
    compare(0.0, [](double v) { return v; });
  else if (dtype == "f16")
    compare(uint16_t(0), [](uint16_t v) {
      return double(loom::safetensors::halfToFloat(v));
    });
  else if (dtype == "bf16")
    compare(uint16_t(0), [](uint16_t v) {
      return double(loom::safetensors::bfloat16ToFloat(v));
    });
  else
    worst = got == want ? 0 : INFINITY;
  return worst;
}

struct Options {
  std::string model, inputs, compare, device, entry = "main";
  double tolerance = 1e-4;
  int repeat = 1;
  /// The file's state fills the context's, which the runs then carry.
  bool keepState = false;
  /// The inputs and outputs where they were read (pageable memory), not
  /// in the context's host memory (loom_context_host_alloc).
  bool pageable = false;
};

int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag, std::string &out) {
      size_t n = std::strlen(flag);
      if (a.compare(0, n, flag) != 0 || a.size() <= n || a[n] != '=')
        return false;
      out = a.substr(n + 1);
      return true;
    };
    std::string number;
    if (a == "--keep-state" || a == "--pageable") {
      (a == "--pageable" ? o.pageable : o.keepState) = true;
      continue;
    }
    if (value("--inputs", o.inputs) || value("--compare", o.compare) ||
        value("--device", o.device) || value("--entry", o.entry))
      continue;
    if (value("--tolerance", number))
      o.tolerance = std::atof(number.c_str());
    else if (value("--repeat", number))
      o.repeat = std::max(1, std::atoi(number.c_str()));
    else if (a.rfind("--", 0) != 0 && o.model.empty())
      o.model = a;
    else
      return fail("unknown argument '" + a +
                  "' (usage: loom-gpu-run MODEL.so --inputs=FILE "
                  "[--compare=FILE] [--device=KIND[:N]] [--entry=NAME] "
                  "[--tolerance=X] [--repeat=N] [--keep-state] [--pageable])");
  }
  if (o.model.empty() || o.inputs.empty())
    return fail("usage: loom-gpu-run MODEL.so --inputs=FILE [--compare=FILE] "
                "[--device=KIND[:N]] [--entry=NAME] [--tolerance=X] "
                "[--repeat=N] [--keep-state] [--pageable]");
  return 0;
}

/// The entry's tensors: \p inputs from \p file (by name, their sizes
/// checked), \p outputs allocated. State (an input an output is tied to)
/// that the file does not hold, or every state with \p keepState, is the
/// context's own (\p state: its pointer is null), kept between runs:
/// zero-filled, or with \p keepState filled from the file by fillState.
int bindTensors(const loom_model *model, int64_t entry,
                const std::map<std::string, Tensor> &file, bool keepState,
                std::vector<std::string> &inputs,
                std::vector<std::string> &outputs, std::vector<bool> &state) {
  std::vector<bool> tied(size_t(loom_entry_num_inputs(model, entry)), false);
  for (int64_t o = 0; o < loom_entry_num_outputs(model, entry); ++o)
    if (int64_t i = loom_entry_output_tied_input(model, entry, o); i >= 0)
      tied[size_t(i)] = true;
  for (int64_t i = 0; i < loom_entry_num_inputs(model, entry); ++i) {
    loom_tensor_desc d;
    loom_entry_input(model, entry, i, &d);
    auto it = file.find(d.name);
    state.push_back((it == file.end() || keepState) && tied[size_t(i)]);
    if (state.back() && it == file.end()) {
      inputs.emplace_back();
      continue;
    }
    if (it == file.end())
      return fail("the inputs file has no tensor '" + std::string(d.name) +
                  "'");
    if (int64_t(it->second.bytes.size()) != d.bytes)
      return fail("input '" + std::string(d.name) + "' has " +
                  std::to_string(it->second.bytes.size()) +
                  " bytes; the entry wants " + std::to_string(d.bytes));
    inputs.push_back(it->second.bytes);
  }
  for (int64_t i = 0; i < loom_entry_num_outputs(model, entry); ++i) {
    loom_tensor_desc d;
    loom_entry_output(model, entry, i, &d);
    int64_t tiedTo = loom_entry_output_tied_input(model, entry, i);
    outputs.emplace_back(tiedTo >= 0 ? 0 : size_t(d.bytes), '\0');
  }
  return 0;
}

/// Calls \p visit(input index, descriptor, data, bytes) with the context's
/// copy (loom_context_state) of each input \p state marks.
template <typename Visit>
int forEachState(const loom_model *model, int64_t entry,
                 loom_context *context, const std::vector<bool> &state,
                 Visit visit) {
  for (size_t i = 0; i < state.size(); ++i) {
    if (!state[i])
      continue;
    loom_tensor_desc d;
    loom_entry_input(model, entry, int64_t(i), &d);
    void *data = nullptr;
    int64_t bytes = 0;
    if (loom_context_state(context, d.name, &data, &bytes) != LOOM_OK)
      return fail(loom_last_error());
    visit(i, d, data, bytes);
  }
  return 0;
}

/// Copies each state tensor \p inputs holds (bindTensors with keepState)
/// into \p context's own state.
int fillState(const loom_model *model, int64_t entry, loom_context *context,
              const std::vector<std::string> &inputs,
              const std::vector<bool> &state) {
  return forEachState(model, entry, context, state,
                      [&](size_t i, const loom_tensor_desc &, void *data,
                          int64_t bytes) {
                        if (!inputs[i].empty())
                          std::memcpy(data, inputs[i].data(), size_t(bytes));
                      });
}

/// Prints each state the runs carried (\p state), read back from where
/// they ran (loom_context_state): its dtype, size and, for f32, its mean.
int printState(const loom_model *model, int64_t entry, loom_context *context,
               const std::vector<bool> &state) {
  return forEachState(
      model, entry, context, state,
      [](size_t, const loom_tensor_desc &d, void *data, int64_t bytes) {
        std::printf("state %s: %s, %lld bytes", d.name, d.dtype,
                    (long long)bytes);
        if (std::strcmp(d.dtype, "f32") == 0 && bytes >= 4) {
          double sum = 0;
          for (int64_t k = 0; k < bytes / 4; ++k)
            sum += static_cast<const float *>(data)[k];
          std::printf(", mean %g", sum / double(bytes / 4));
        }
        std::printf("\n");
      });
}

/// The pointers loom_run gets in \p in and \p out: the inputs' and
/// outputs' bytes where they were read with \p pageable, else copies in the
/// context's host memory (loom_context_host_alloc: page-locked on a CUDA
/// device, so that the runs' copies are DMA transfers). A state input is
/// null, a tied output its input's pointer (or null).
int bindBuffers(const loom_model *model, int64_t entry, loom_context *context,
                bool pageable, std::vector<std::string> &inputs,
                std::vector<std::string> &outputs,
                const std::vector<bool> &state, std::vector<const void *> &in,
                std::vector<void *> &out) {
  auto place = [&](std::string &bytes, void *&at) {
    if (pageable) {
      at = bytes.data();
      return true;
    }
    if (loom_context_host_alloc(context, bytes.size(), &at) != LOOM_OK)
      return false;
    std::memcpy(at, bytes.data(), bytes.size());
    return true;
  };
  std::vector<void *> placed(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!state[i] && !place(inputs[i], placed[i]))
      return fail(loom_last_error());
  in.assign(placed.begin(), placed.end());
  out.assign(outputs.size(), nullptr);
  for (size_t i = 0; i < outputs.size(); ++i) {
    int64_t tiedTo = loom_entry_output_tied_input(model, entry, int64_t(i));
    // A tied output is its input updated in place: null, or the input's.
    if (tiedTo >= 0)
      out[i] = placed[size_t(tiedTo)];
    else if (!place(outputs[i], out[i]))
      return fail(loom_last_error());
  }
  return 0;
}

/// The largest error of each output against the reference's tensor of its
/// name (\p want), in \p worst.
int compareOutputs(const loom_model *model, int64_t entry,
                   const std::map<std::string, Tensor> &want,
                   const std::vector<std::string> &outputs, double &worst) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    // State updated in place after --repeat runs is not one run's output.
    if (loom_entry_output_tied_input(model, entry, int64_t(i)) >= 0)
      continue;
    loom_tensor_desc d;
    loom_entry_output(model, entry, int64_t(i), &d);
    auto it = want.find(d.name);
    if (it == want.end() || it->second.bytes.size() != outputs[i].size())
      return fail("the reference has no tensor '" + std::string(d.name) +
                  "' of " + std::to_string(d.bytes) + " bytes");
    worst = std::max(worst, largestError(d.dtype, outputs[i],
                                         it->second.bytes));
  }
  return 0;
}

/// What one rank's runs gave: the outputs of the last, each run's time.
struct RankRun {
  int64_t entry = -1;
  std::vector<std::string> outputs;
  std::vector<double> ms;
};

/// Runs \p run.entry --repeat times in a context of its own (joined to
/// \p world where there is one) on the inputs of \p file; \p report: this
/// rank prints what it used (rank 0, or the only one).
int runRank(const loom_model *model, const Options &o,
            const std::map<std::string, Tensor> &file, loom_world *world,
            bool report, RankRun &run) {
  std::vector<std::string> inputs;
  std::vector<bool> state;
  if (int rc = bindTensors(model, run.entry, file, o.keepState, inputs,
                           run.outputs, state))
    return rc;
  loom_context *context = nullptr;
  if (loom_context_create(model, &context) != LOOM_OK)
    return fail(loom_last_error());
  std::unique_ptr<loom_context, void (*)(loom_context *)> owned(
      context, loom_context_free);
  if (world && loom_context_join_world(context, world) != LOOM_OK)
    return fail(loom_last_error());
  if (int rc = fillState(model, run.entry, context, inputs, state))
    return rc;
  std::vector<const void *> in;
  std::vector<void *> out;
  if (int rc = bindBuffers(model, run.entry, context, o.pageable, inputs,
                           run.outputs, state, in, out))
    return rc;
  if (report)
    std::printf("host memory: %s\n",
                o.pageable ? "pageable (--pageable)"
                           : "the context's (loom_context_host_alloc)");
  for (int r = 0; r < o.repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (loom_run(context, run.entry, in.data(), out.data()) != LOOM_OK)
      return fail(loom_last_error());
    run.ms.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count());
  }
  if (o.keepState && report)
    if (int rc = printState(model, run.entry, context, state))
      return rc;
  for (size_t i = 0; i < run.outputs.size(); ++i)
    if (out[i] != run.outputs[i].data() &&
        loom_entry_output_tied_input(model, run.entry, int64_t(i)) < 0)
      std::memcpy(run.outputs[i].data(), out[i], run.outputs[i].size());
  return 0;
}

/// The entry named \p name as world rank \p rank runs it: \p name where
/// that rank runs it, else a tensor-parallel artifact's `<name>.rank<t>`
/// that it runs (include/loom-c/Runtime.h); -1 when neither.
int64_t entryOnRank(const loom_model *model, const std::string &name,
                    int64_t rank) {
  for (int64_t e = 0; e < loom_model_num_entries(model); ++e) {
    std::string entry = loom_model_entry_name(model, e);
    if ((entry == name || entry.rfind(name + ".rank", 0) == 0) &&
        loom_model_entry_runs_on(model, e, rank))
      return e;
  }
  return -1;
}

using WorldPtr = std::unique_ptr<loom_world, void (*)(loom_world *)>;

/// How long a rank waits for a peer at a collective.
constexpr double kWorldTimeoutSeconds = 120;

/// This process's rank of a launcher's world (\p world) on the inputs of
/// \p file; \p run: its own. A rank that fails aborts the world, so that
/// its peers stop at once, and the launcher ends the job.
int runLaunchedRank(const loom_model *model, const Options &o,
                    const std::map<std::string, Tensor> &file,
                    loom_world *world, RankRun &run, int64_t &bytesSent) {
  int64_t rank = loom_world_rank(world);
  if (runRank(model, o, file, world, rank == 0, run) != 0) {
    loom_world_abort(world);
    return fail("world rank " + std::to_string(rank) + " failed");
  }
  bytesSent = loom_world_bytes_sent(world);
  return 0;
}

/// Every rank of the artifact's world a thread of this process with a
/// context of its own on the model's device (joined to a world of
/// threads: the world's steps as loom-generate runs them), all on the
/// inputs of \p file; \p runs: each rank's.
int runRanks(const loom_model *model, const Options &o,
             const std::map<std::string, Tensor> &file,
             std::vector<RankRun> &runs, int64_t &bytesSent) {
  int64_t ranks = loom_model_world_ranks(model);
  runs.assign(size_t(ranks), RankRun{});
  for (int64_t r = 0; r < ranks; ++r)
    if ((runs[r].entry = entryOnRank(model, o.entry, r)) < 0)
      return fail("no entry '" + o.entry + "' (or '" + o.entry +
                  ".rank<t>') runs on world rank " + std::to_string(r));
  std::vector<loom_world *> worlds(size_t(ranks), nullptr);
  if (loom_world_open_threads(ranks, kWorldTimeoutSeconds, worlds.data()) !=
      LOOM_OK)
    return fail(loom_last_error());
  std::vector<int> status(size_t(ranks), 0);
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      status[r] = runRank(model, o, file, worlds[r], r == 0, runs[r]);
      // Its peers see it gone instead of waiting to their deadline.
      if (status[r])
        loom_world_abort(worlds[r]);
    });
  for (std::thread &t : threads)
    t.join();
  bytesSent = loom_world_bytes_sent(worlds[0]);
  for (loom_world *w : worlds)
    loom_world_free(w);
  for (int64_t r = 0; r < ranks; ++r)
    if (status[r])
      return fail("world rank " + std::to_string(r) + " failed");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int rc = parse(argc, argv, o))
    return rc;
  loom_model_options mo = {};
  mo.device = o.device.empty() ? nullptr : o.device.c_str();
  loom_model *model = nullptr;
  if (loom_model_load(o.model.c_str(), &mo, &model) != LOOM_OK)
    return fail(loom_last_error());
  std::unique_ptr<loom_model, void (*)(loom_model *)> owned(model,
                                                            loom_model_free);
  int64_t ranks = loom_model_world_ranks(model);
  // Under a launcher (mpirun, Slurm, torchrun-style variables,
  // loom-launch) an artifact of several ranks runs one rank in this
  // process; rank 0 reports.
  WorldPtr launched(nullptr, loom_world_free);
  int64_t rank = 0;
  if (ranks > 1) {
    loom_world *world = nullptr;
    if (loom_world_open(kWorldTimeoutSeconds, &world) != LOOM_OK)
      return fail(loom_last_error());
    launched.reset(world);
    if (loom_world_size(world) == 1)
      launched.reset();
    else if (loom_world_size(world) != ranks)
      return fail("the artifact runs on a world of " + std::to_string(ranks) +
                  " ranks; the launcher's has " +
                  std::to_string(loom_world_size(world)));
    else
      rank = loom_world_rank(world);
  }
  int64_t entry = entryOnRank(model, o.entry, rank);
  if (entry < 0)
    return fail("the artifact has no entry '" + o.entry + "'" +
                (launched ? " that world rank " + std::to_string(rank) + " runs"
                          : std::string()));
  loom_device_desc device;
  loom_model_device(model, 0, &device);
  if (rank == 0)
    std::printf("loom-gpu-run: %s @%s on %s:%lld\n", o.model.c_str(),
                o.entry.c_str(), device.kind, (long long)device.ordinal);
  std::map<std::string, Tensor> file;
  std::string error;
  if (!readSafetensors(o.inputs, file, error))
    return fail(error);
  std::vector<RankRun> runs(1);
  runs[0].entry = entry;
  if (ranks == 1) {
    if (int rc = runRank(model, o, file, /*world=*/nullptr, true, runs[0]))
      return rc;
  } else if (launched) {
    int64_t bytes = 0;
    if (int rc =
            runLaunchedRank(model, o, file, launched.get(), runs[0], bytes))
      return rc;
    if (rank == 0)
      std::printf("ranks: %lld (launcher, each a process with its context on "
                  "%s:%lld); rank 0 sent %lld bytes\n",
                  (long long)ranks, device.kind, (long long)device.ordinal,
                  (long long)bytes);
  } else {
    int64_t bytes = 0;
    if (int rc = runRanks(model, o, file, runs, bytes))
      return rc;
    std::printf("ranks: %lld (threads, each its own context on %s:%lld); "
                "rank 0 sent %lld bytes\n",
                (long long)ranks, device.kind, (long long)device.ordinal,
                (long long)bytes);
  }
  std::vector<double> ms = runs[0].ms;
  double first = ms.front();
  std::sort(ms.begin(), ms.end());
  if (rank == 0)
    std::printf("time: %d run(s), median %.3f ms, first %.3f ms\n", o.repeat,
                ms[ms.size() / 2], first);
  if (o.compare.empty())
    return 0;
  std::map<std::string, Tensor> want;
  if (!readSafetensors(o.compare, want, error))
    return fail(error);
  // Every rank's outputs against the reference (each computes them all);
  // under a launcher each process checks its own rank's.
  double worst = 0;
  for (const RankRun &run : runs)
    if (int rc = compareOutputs(model, run.entry, want, run.outputs, worst))
      return rc;
  if (rank != 0)
    return worst <= o.tolerance
               ? 0
               : fail("world rank " + std::to_string(rank) +
                      ": the results differ by more than --tolerance");
  std::printf("check: largest error %.3g (tolerance %.3g)%s\n", worst,
              o.tolerance,
              ranks == 1 ? ""
              : launched ? ", rank 0 (each rank checks its own)"
                         : ", every rank");
  if (!(worst <= o.tolerance))
    return fail("the results differ by more than --tolerance");
  return 0;
}
