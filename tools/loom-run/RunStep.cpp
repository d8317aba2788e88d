//===- RunStep.cpp - loom-run on a multi-rank artifact's step -------------===//
//
// Part of Loom. `loom-run model.so` on an artifact compiled from a
// partitioned module (docs/Pipelines.md "Running on ranks"): runs its
// pipelined step with every rank a thread of this process, --repeat steps,
// and with --check --reference=partitioned.mlir compares the parameter
// gradients gathered on rank 0 with the unpartitioned step's, computed by
// the reference executor on the same micro-batches; an artifact whose ranks
// update their parameters (loom-compile --optimizer) compares the
// parameters after the steps with the unpartitioned steps' updates.
//
//===----------------------------------------------------------------------===//

#include "HostTensor.h"
#include "RunArtifact.h"
#include "RunSupport.h"

#include "loom/Autodiff/Autodiff.h"
#include "loom/Dialect/Pipe/IR/PipeDialect.h"
#include "loom/Dialect/Pipe/IR/PipeOps.h"
#include "loom/Dialect/TG/IR/TGDialect.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Support/SafeTensors.h"
#include "loom/Pipeline/Executor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <random>

using namespace mlir;
using namespace loom;
using namespace loom::run;
using namespace loom::tools;

namespace {

/// The reference executor's run of the partitioned module \p path: the
/// micro-batches' inputs and the unpartitioned step's gradients, with the
/// weights of \p weightsFile (empty: the module's); \p weightsPath (when
/// given) gets the module's weights file.
FailureOr<pipeline::ExecutionResult>
reference(const ArtifactRunOptions &o, const std::string &weightsFile = "",
          std::string *weightsPath = nullptr) {
  DialectRegistry registry;
  registry.insert<tg::TGDialect, func::FuncDialect, pipe::PipeDialect>();
  tg::registerTGGradientInterfaceModels(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(o.reference, sourceMgr, &context);
  if (!module)
    return failure();
  auto schedules = llvm::to_vector(module->getOps<pipe::ScheduleOp>());
  if (schedules.size() != 1) {
    fail("--reference: " + o.reference + " has " +
         llvm::Twine(schedules.size()) +
         " pipe.schedule ops; expected the one partitioned module the "
         "artifact was compiled from");
    return failure();
  }
  pipeline::ExecutorOptions eo;
  eo.seed = o.seed;
  eo.keepTensors = true;
  eo.weightsFile = weightsFile;
  if (weightsPath) {
    FailureOr<std::string> path = tg::resolveWeightsPath(*module, "");
    if (failed(path))
      return failure();
    *weightsPath = *path;
  }
  return pipeline::executeSchedule(*module, schedules.front(), eo);
}

/// The step's inputs of every micro-batch: the reference's, or (none)
/// uniform in [-1, 1) from the seed for floats and 0 for integers.
int makeStepInputs(const ArtifactRunOptions &o, loom_model *model,
                   const pipeline::ExecutionResult *ref,
                   std::vector<HostTensor> &out) {
  int64_t m = loom_step_num_micro_batches(model);
  int64_t n = loom_step_num_inputs(model);
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t mb = 0; mb < m; ++mb)
    for (int64_t k = 0; k < n; ++k) {
      HostTensor t;
      if (loom_step_input(model, k, &t.desc) != LOOM_OK)
        return fail(loom_last_error());
      int64_t elements = 1;
      for (int64_t d : t.shape())
        elements *= d;
      std::vector<double> values(elements, 0.0);
      bool isFloat = t.desc.dtype[0] == 'f' || t.desc.dtype[0] == 'b';
      if (ref && (mb >= int64_t(ref->inputs.size()) ||
                  k >= int64_t(ref->inputs[mb].size()) ||
                  int64_t(ref->inputs[mb][k].size()) != elements))
        return fail("--reference: the module's micro-batches are not the "
                    "artifact's step inputs (input " +
                    std::string(t.desc.name) + ")");
      if (ref)
        values = ref->inputs[mb][k];
      else if (isFloat)
        for (double &v : values)
          v = uniform(rng);
      if (!fromDoubles(t, values))
        return fail("step input '" + std::string(t.desc.name) +
                    "': unsupported dtype " + t.desc.dtype);
      out.push_back(std::move(t));
    }
  return 0;
}

using Tensors = std::map<std::string, std::vector<double>>;

/// The gathered \p what (gradients, parameters) against the reference's
/// \p want: one row per parameter.
int compare(const ArtifactRunOptions &o, const Tensors &want,
            const std::vector<HostTensor> &grads, const std::string &what) {
  llvm::outs() << llvm::format("  %-40s %s\n", "parameter",
                               (what + " error vs unpartitioned").c_str());
  double worst = 0;
  for (const HostTensor &g : grads) {
    auto it = want.find(g.desc.name);
    if (it == want.end())
      return fail("--reference: the unpartitioned step has no parameter '" +
                  std::string(g.desc.name) + "'");
    std::vector<double> got = toDoubles(g);
    double err = 0;
    for (size_t i = 0; i < got.size(); ++i)
      err = std::max(err, std::abs(got[i] - it->second[i]) /
                              std::max(1.0, std::abs(it->second[i])));
    llvm::outs() << llvm::format("  %-40s %.3g\n", g.desc.name, err);
    worst = std::max(worst, err);
  }
  if (grads.size() != want.size())
    return fail("the step computes " + llvm::Twine(grads.size()) +
                " parameter gradients; the unpartitioned step has " +
                llvm::Twine(want.size()));
  llvm::outs() << llvm::format("  largest error %.3g (tolerance %.3g)\n",
                               worst, o.tolerance);
  if (!(worst <= o.tolerance))
    return fail("the ranks' " + what + "s differ from the unpartitioned "
                "step's");
  return 0;
}

/// One update of \p params by \p opt from \p grads (in f64), as a rank's
/// update action makes it (RankStep::update); \p t counts from 1.
void update(const loom_step_optimizer_desc &opt, int64_t t, Tensors &params,
            const Tensors &grads, Tensors &m, Tensors &v) {
  std::string kind = opt.kind;
  for (auto &[name, p] : params) {
    const std::vector<double> &g = grads.at(name);
    std::vector<double> &s0 = m[name], &s1 = v[name];
    s0.resize(p.size(), 0.0);
    s1.resize(p.size(), 0.0);
    for (size_t k = 0; k < p.size(); ++k) {
      double d = g[k] + opt.weight_decay * p[k];
      if (kind == "sgd") {
        if (opt.momentum != 0)
          d = s0[k] = opt.momentum * s0[k] + d;
        p[k] -= opt.lr * d;
        continue;
      }
      s0[k] = opt.beta1 * s0[k] + (1 - opt.beta1) * d;
      s1[k] = opt.beta2 * s1[k] + (1 - opt.beta2) * d * d;
      double c1 = 1 - std::pow(opt.beta1, double(t));
      double c2 = 1 - std::pow(opt.beta2, double(t));
      p[k] -= opt.lr / c1 * s0[k] / (std::sqrt(s1[k] / c2) + opt.eps);
    }
  }
}

/// The one-process training the ranks' must equal: \p steps steps of the
/// unpartitioned step on the reference's micro-batches, each from the
/// parameters the previous update left (stored as the weights file stores
/// them, for the reference executor to read), its gradients in f64;
/// \p first is the first step's run.
int trainReference(const ArtifactRunOptions &o,
                   const loom_step_optimizer_desc &opt,
                   const pipeline::ExecutionResult &first,
                   const std::string &weightsPath, int64_t steps,
                   Tensors &params) {
  auto file = safetensors::File::open(weightsPath);
  if (!file)
    return fail("--reference: " + llvm::toString(file.takeError()));
  for (const auto &[name, g] : first.reference) {
    auto values = file->readAsDouble(name);
    if (!values)
      return fail("--reference: " + llvm::toString(values.takeError()));
    params[name] = std::move(*values);
  }
  llvm::SmallString<128> tmp;
  if (steps > 1)
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "loom-run-weights", "safetensors", tmp))
      return fail("a temporary weights file: " + ec.message());
  Tensors grads = first.reference, m, v;
  int rc = 0;
  for (int64_t t = 1; t <= steps && rc == 0; ++t) {
    if (t > 1) {
      safetensors::Writer w;
      for (const safetensors::TensorInfo &info : file->tensors()) {
        auto it = params.find(info.name);
        llvm::Error e =
            it != params.end()
                ? w.add(info.name, info.dtype, info.shape, it->second)
                : w.addRaw(info.name, info.dtype, info.shape,
                           file->rawBytes(info));
        if (!e)
          continue;
        rc = fail("--reference: " + llvm::toString(std::move(e)));
        break;
      }
      if (llvm::Error e = rc ? llvm::Error::success() : w.write(tmp))
        rc = fail("--reference: " + llvm::toString(std::move(e)));
      auto r = rc ? FailureOr<pipeline::ExecutionResult>(failure())
                  : reference(o, tmp.str().str());
      if (failed(r)) {
        rc = 1;
        break;
      }
      grads = std::move(r->reference);
    }
    update(opt, t, params, grads, m, v);
  }
  if (!tmp.empty())
    llvm::sys::fs::remove(tmp);
  return rc;
}

} // namespace

int loom::run::runStep(const ArtifactRunOptions &o, loom_model *model) {
  if (o.check && o.reference.empty())
    return fail("--check on a multi-rank artifact compares with the "
                "reference executor: give the partitioned module it was "
                "compiled from with --reference=FILE.mlir");
  if (o.warmup)
    return fail("--warmup: a multi-rank artifact times its --repeat steps "
                "as one pipelined run; warm-up steps would change its "
                "parameters and gradients");
  loom_step_optimizer_desc opt = {};
  if (loom_step_optimizer(model, &opt) != LOOM_OK)
    return fail(loom_last_error());
  bool trains = std::string(opt.kind) != "none";
  std::optional<pipeline::ExecutionResult> ref;
  std::string weightsPath;
  if (o.check) {
    auto r = reference(o, "", &weightsPath);
    if (failed(r))
      return 1;
    ref = std::move(*r);
  }
  std::vector<HostTensor> inputs, grads;
  if (int rc = makeStepInputs(o, model, ref ? &*ref : nullptr, inputs))
    return rc;
  std::vector<const void *> in;
  for (const HostTensor &t : inputs)
    in.push_back(t.bytes.data());
  std::vector<void *> out, paramsOut;
  std::vector<HostTensor> params;
  for (int64_t g = 0; g < loom_step_num_gradients(model); ++g) {
    grads.emplace_back();
    if (loom_step_gradient(model, g, &grads.back().desc) != LOOM_OK)
      return fail(loom_last_error());
    grads.back().bytes.assign(grads.back().desc.bytes, 0);
    out.push_back(grads.back().bytes.data());
    params.push_back(grads.back());
    paramsOut.push_back(params.back().bytes.data());
  }
  loom_step_options so = {};
  so.timeout_seconds = o.timeout;
  so.steps = o.repeat;
  so.profile_path = o.stepProfile.empty() ? nullptr : o.stepProfile.c_str();
  if (trains && ref)
    so.parameters = paramsOut.data();
  loom_step_info info = {};
  auto start = std::chrono::steady_clock::now();
  if (loom_step_run(model, in.data(), out.data(), &so, &info) != LOOM_OK)
    return fail(loom_last_error());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // Under a launcher rank 0 speaks for the job (it holds the gradients).
  if (info.rank > 0)
    return 0;
  llvm::outs() << "loom-run: " << o.path << ": pipelined step of "
               << info.world_size << " ranks ("
               << (info.rank < 0 ? "threads of one process"
                                 : "processes over " +
                                       std::string(info.transport))
               << "), " << loom_step_num_micro_batches(model)
               << " micro-batches, " << grads.size()
               << " parameter gradients\n";
  llvm::outs() << llvm::format("%u step(s): %.3f ms per step\n", o.repeat,
                               seconds * 1e3 / std::max(1u, o.repeat));
  if (!ref)
    return 0;
  llvm::outs() << "check against the reference executor on " << o.reference
               << ":\n";
  if (!trains)
    return compare(o, ref->reference, grads, "gradient");
  // The parameters after the steps against the unpartitioned steps'.
  Tensors want;
  if (int rc = trainReference(o, opt, *ref, weightsPath,
                              std::max(1u, o.repeat), want))
    return rc;
  llvm::outs() << "  (" << opt.kind << ", " << std::max(1u, o.repeat)
               << " step(s))\n";
  return compare(o, want, params, "parameter");
}
