//===- Peers.cpp - ONNX Runtime and compiled columns of loom-bench-cpu ----===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "Peers.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

using namespace llvm;

namespace loom::bench {

//===----------------------------------------------------------------------===//
// ONNX Runtime
//===----------------------------------------------------------------------===//

Error checkOrt(const OrtOptions &options) {
  if (options.node.empty() || !sys::fs::can_execute(options.node))
    return createStringError(
        "node not found (install Debian's nodejs, or give --node): "
        "ONNX Runtime runs through onnxruntime-node");
  if (!sys::fs::exists(options.script))
    return createStringError("cannot find the ONNX Runtime driver " +
                             options.script + " (give --ort-script)");
  SmallString<256> manifest(options.package);
  sys::path::append(manifest, "package.json");
  if (!sys::fs::exists(manifest))
    return createStringError("onnxruntime-node is not installed at " +
                             options.package +
                             ": run scripts/setup-bench.sh with "
                             "LOOM_BUILD_DIR set to this build (or give "
                             "--ort-package)");
  return Error::success();
}

Expected<OrtResult> runOrt(const OrtOptions &options, StringRef model,
                           StringRef inputsPath, StringRef outputsPath,
                           StringRef profilePath) {
  std::vector<std::string> args = {options.script,
                                   "--ort",
                                   options.package,
                                   "--model",
                                   model.str(),
                                   "--inputs",
                                   inputsPath.str(),
                                   "--outputs",
                                   outputsPath.str(),
                                   "--threads",
                                   std::to_string(options.threads),
                                   "--warmup",
                                   std::to_string(options.warmup),
                                   "--repeat",
                                   std::to_string(options.repeat)};
  if (!profilePath.empty()) {
    args.push_back("--profile");
    args.push_back(profilePath.str());
  }
  ProcessResult run = runProcess(options.node, args, options.timeoutSeconds);
  if (!run.succeeded())
    return createStringError("ONNX Runtime: " + run.summary());
  Expected<json::Value> parsed = json::parse(StringRef(run.out).trim());
  if (!parsed)
    return createStringError("ONNX Runtime: ort-run.js printed no JSON (" +
                             toString(parsed.takeError()) + ")");
  json::Object *report = parsed->getAsObject();
  if (!report)
    return createStringError("ONNX Runtime: ort-run.js printed no object");
  OrtResult r;
  r.version = report->getString("ort_version").value_or("unknown").str();
  r.sessionMs = report->getNumber("session_ms").value_or(0);
  r.medianMs = report->getNumber("median_ms").value_or(0);
  r.minMs = report->getNumber("min_ms").value_or(0);
  r.p90Ms = report->getNumber("p90_ms").value_or(0);
  r.peakRssKb = report->getInteger("peak_rss_kb").value_or(run.peakRssKb);
  r.baselineRssKb = report->getInteger("baseline_rss_kb").value_or(0);
  r.report = std::move(*report);
  auto values = readTensors(outputsPath);
  if (!values)
    return createStringError("ONNX Runtime: " + toString(values.takeError()));
  r.values = std::move(*values);
  return r;
}

//===----------------------------------------------------------------------===//
// Loom's compiled path
//===----------------------------------------------------------------------===//

std::optional<double> parseLoomRunTime(StringRef output) {
  // time: 0.031 s (best of 10; median 0.032 s; p99 0.035 s) on 2 ...
  static const Regex line("^time: ([0-9.eE+-]+) (s|ms|us)( \\(best of "
                          "[0-9]+; median ([0-9.eE+-]+) (s|ms|us)(; p99 "
                          "[0-9.eE+-]+ (s|ms|us))?\\))?",
                          Regex::Newline);
  SmallVector<StringRef> m;
  if (!line.match(output, &m))
    return std::nullopt;
  auto seconds = [](StringRef value, StringRef unit) -> std::optional<double> {
    double v;
    if (value.getAsDouble(v))
      return std::nullopt;
    return unit == "s" ? v : unit == "ms" ? v * 1e-3 : v * 1e-6;
  };
  if (!m[4].empty())
    return seconds(m[4], m[5]);
  return seconds(m[1], m[2]);
}

/// loom-compile and loom-run in `binDir`.
static std::string tool(StringRef binDir, StringRef name) {
  SmallString<256> path(binDir);
  sys::path::append(path, name);
  return std::string(path);
}

/// `name` in the directory `dir`.
static std::string inDir(StringRef dir, StringRef name) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  return std::string(path);
}

bool compileModel(const CompiledOptions &options, StringRef model,
                  ArrayRef<std::string> compileArgs, StringRef workDir,
                  CompiledResult &r) {
  std::string compiler = tool(options.binDir, "loom-compile");
  if (!sys::fs::can_execute(compiler)) {
    r.status = CompiledResult::Status::Unavailable;
    r.note = "no loom-compile in " + options.binDir;
    return false;
  }
  r.status = CompiledResult::Status::Failed;
  if (std::error_code ec = sys::fs::create_directories(workDir)) {
    r.note = "cannot create " + workDir.str() + ": " + ec.message();
    return false;
  }
  std::vector<std::string> args = {model.str(), "-o",
                                   inDir(workDir, "model.so")};
  llvm::append_range(args, compileArgs);
  ProcessResult compiled =
      runProcess(compiler, args, options.timeoutSeconds, options.env);
  r.compileSeconds = compiled.seconds;
  r.compileLog = compiled.err;
  r.compilePeakRssKb = compiled.peakRssKb;
  if (!compiled.succeeded()) {
    r.note = "loom-compile: " + compiled.summary();
    return false;
  }
  return true;
}

CompiledResult runCompiled(const CompiledOptions &options, StringRef model,
                           ArrayRef<std::string> compileArgs,
                           StringRef workDir, StringRef inputsPath,
                           const RunTensors &interpreterValues) {
  CompiledResult r;
  if (compileModel(options, model, compileArgs, workDir, r))
    runArtifact(options, workDir, inputsPath, interpreterValues, r);
  return r;
}

void runArtifact(const CompiledOptions &options, StringRef workDir,
                 StringRef inputsPath, const RunTensors &interpreterValues,
                 CompiledResult &r) {
  r.status = CompiledResult::Status::Failed;
  std::string runner = tool(options.binDir, "loom-run");
  std::string artifact = inDir(workDir, "model.so");
  std::string outputs = inDir(workDir, "compiled.safetensors");
  std::vector<std::string> runArgs = {artifact,
                                      "--inputs",
                                      inputsPath.str(),
                                      "--outputs",
                                      outputs,
                                      "--warmup",
                                      std::to_string(options.warmup),
                                      "--repeat",
                                      std::to_string(options.repeat),
                                      "--num-threads",
                                      std::to_string(options.threads)};
  ProcessResult ran =
      runProcess(runner, runArgs, options.timeoutSeconds, options.env);
  r.peakRssKb = ran.peakRssKb;
  if (!ran.succeeded()) {
    r.note = "loom-run: " + ran.summary();
    return;
  }
  std::optional<double> seconds = parseLoomRunTime(ran.out);
  if (!seconds) {
    r.note = "loom-run printed no 'time:' line";
    return;
  }
  r.latencyMs = *seconds * 1e3;
  // loom-run's own peak (VmHWM): the process statistics of a spawned child
  // carry this process's high-water mark (the interpreter's).
  static const Regex memory("^memory: peak resident ([0-9]+) KiB",
                            Regex::Newline);
  SmallVector<StringRef> m;
  int64_t kb;
  if (memory.match(ran.out, &m) && !m[1].getAsInteger(10, kb))
    r.peakRssKb = kb;
  auto values = readTensors(outputs);
  if (!values) {
    r.note = toString(values.takeError());
    return;
  }
  r.errorVsInterpreter = compareOutputs(interpreterValues, *values);
  r.status = CompiledResult::Status::Measured;
}

Error profileArtifact(const CompiledOptions &options, StringRef workDir,
                      StringRef inputsPath, StringRef profilePath) {
  std::string runner = tool(options.binDir, "loom-run");
  std::vector<std::string> runArgs = {inDir(workDir, "model.so"),
                                      "--inputs",
                                      inputsPath.str(),
                                      "--repeat",
                                      std::to_string(options.repeat),
                                      "--num-threads",
                                      std::to_string(options.threads)};
  std::vector<std::string> env = options.env;
  env.push_back("LOOM_PROFILE=" + profilePath.str());
  ProcessResult ran = runProcess(runner, runArgs, options.timeoutSeconds, env);
  if (!ran.succeeded())
    return createStringError("loom-run with LOOM_PROFILE: " + ran.summary());
  if (!sys::fs::exists(profilePath))
    return createStringError("loom-run wrote no profile " + profilePath);
  return Error::success();
}

} // namespace loom::bench
