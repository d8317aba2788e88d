//===- loom-onnx-conformance.cpp - The ONNX backend tests on Loom --------===//
//
// Part of Loom. Runs the ONNX backend test suite (Debian's libonnx-testdata:
// <root>/<suite>/<case>/model.onnx with test_data_set_N/input_K.pb and
// output_K.pb) through the importer and the reference interpreter and
// compares the results with the expected outputs.
//
// Every case gets one row: pass; fail (the outputs differ: the largest error
// is given; or the imported graph failed to run); or unsupported (the
// importer refused the model: an operator, attribute or element type Loom
// does not support, named in the reason). The rows go to a JSON and a TSV
// file; --emit-supported-ops-md writes docs/ONNX/SupportedOps.md from them.
// With --allowlist, the exit code is 1 when a listed case does not pass.
//
// Tolerance: |got - want| <= atol + rtol * |want| (rtol 1e-3, atol 1e-5),
// NaN matching NaN and infinities matching exactly. Cases with float16 or
// bfloat16 inputs or outputs are compared with rtol 1e-2 and atol 1e-3 (a
// few half-precision ulps): the interpreter evaluates ops on half-precision
// values in float32 and rounds only where the graph casts, and ONNX 1.12's
// reference rounds float to bfloat16 by truncation where Loom (and the later
// ONNX spec) rounds to nearest even, one bfloat16 ulp (2^-8 relative) apart.
//
//===----------------------------------------------------------------------===//

#include "CompiledRun.h"

#include "loom/Compiler/Backend.h"
#include "loom/Compiler/Passes.h"
#include "loom/Conversion/ONNXToTG/ImportONNX.h"
#include "loom/Conversion/TGToONNX/ExportONNX.h"
#include "loom/Dialect/TG/IR/BoundedResults.h"
#include "loom/Interpreter/Interpreter.h"
#include "loom/Interpreter/Kernels.h"
#include "loom/Support/Bounded.h"
#include "loom/Support/SafeTensors.h"
#include "loom/Target/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

using namespace mlir;
using namespace loom;
namespace cl = llvm::cl;
using llvm::StringRef;

static cl::OptionCategory conformanceCat("loom-onnx-conformance options");

static cl::opt<std::string>
    dataRoot("data-root", cl::desc("Directory of the test suites"),
             cl::init("/usr/share/libonnx-testdata/data"),
             cl::cat(conformanceCat));
static cl::list<std::string>
    suites("suite",
           cl::desc("Suite (subdirectory of --data-root) to run; default: "
                    "all of them"),
           cl::cat(conformanceCat));
static cl::opt<std::string>
    filter("filter", cl::desc("Only cases whose suite/name matches this regex"),
           cl::init(""), cl::cat(conformanceCat));
static cl::opt<std::string> jsonFile("json",
                                     cl::desc("Write the table as JSON"),
                                     cl::init(""), cl::cat(conformanceCat));
static cl::opt<std::string> tsvFile("tsv", cl::desc("Write the table as TSV"),
                                    cl::init(""), cl::cat(conformanceCat));
static cl::opt<std::string> supportedOpsFile(
    "emit-supported-ops-md",
    cl::desc("Write the supported-operators page (docs/ONNX/SupportedOps.md)"),
    cl::init(""), cl::cat(conformanceCat));
static cl::opt<std::string>
    allowlistFile("allowlist",
                  cl::desc("Cases (suite/name, one per line) that must pass"),
                  cl::init(""), cl::cat(conformanceCat));
static cl::opt<std::string>
    writeAllowlistFile("write-allowlist",
                       cl::desc("Write the passing cases as an allow-list"),
                       cl::init(""), cl::cat(conformanceCat));
static cl::opt<unsigned> jobs("j", cl::desc("Threads (default: all cores)"),
                              cl::init(0), cl::cat(conformanceCat));
static cl::opt<int64_t> opset("opset",
                              cl::desc("Opset to convert models to (0: keep)"),
                              cl::init(17), cl::cat(conformanceCat));
static cl::opt<double> relTol("rtol", cl::desc("Relative tolerance"),
                              cl::init(1e-3), cl::cat(conformanceCat));
static cl::opt<double> absTol("atol", cl::desc("Absolute tolerance"),
                              cl::init(1e-5), cl::cat(conformanceCat));
static cl::opt<bool> verbose("v", cl::desc("Print every case"),
                             cl::cat(conformanceCat));
static cl::opt<bool> roundTrip(
    "round-trip",
    cl::desc("Export each imported model back to ONNX, import that, and run "
             "it instead (tests the exporter)"),
    cl::cat(conformanceCat));

static cl::opt<bool> compiled(
    "compiled",
    cl::desc("Also compile every case that passes on the interpreter "
             "(loom-compile's driver, default backends) and run it with "
             "libloomrt: the compiled column"),
    cl::cat(conformanceCat));

static cl::opt<std::string> compiledBackends(
    "compiled-backends",
    cl::desc("With --compiled: the fixed backend set to compile with, as "
             "loom-compile --backends (codegen, onednn, openblas,onednn ...; "
             "default: the default backends)"),
    cl::init(""), cl::cat(conformanceCat));

static cl::opt<std::string> compiledTarget(
    "compiled-target",
    cl::desc("With --compiled: the target to compile for, as loom-compile "
             "--target (cpu:x86-64-v3, cpu:x86-64-v2, ...; default: cpu, this "
             "machine); the artifacts run here"),
    cl::init(""), cl::cat(conformanceCat));

namespace {

enum class Status { Pass, Fail, Unsupported };

StringRef statusName(Status s) {
  switch (s) {
  case Status::Pass:
    return "pass";
  case Status::Fail:
    return "fail";
  case Status::Unsupported:
    return "unsupported";
  }
  return "";
}

struct Case {
  std::string suite, name, dir;
  std::string id() const { return suite + "/" + name; }
};

struct Row {
  Case c;
  Status status = Status::Unsupported;
  std::string detail;
  double maxAbsError = 0;
  std::vector<std::string> operators;
  /// Graph inputs bound to their test values at import time.
  std::vector<std::string> bound;
  /// With --compiled, once the interpreter passed: the compiled run.
  std::optional<Status> compiledStatus;
  std::string compiledDetail;
  double compiledMaxAbsError = 0;
};

/// A run's outputs against the expected ones.
struct Verdict {
  Status status = Status::Pass;
  std::string detail;
  double maxAbsError = 0;
};

std::string firstLine(StringRef s) { return s.split('\n').first.str(); }

/// The files of `dir` matching prefix N suffix, by N.
std::vector<std::string> numbered(StringRef dir, StringRef prefix,
                                  StringRef suffix) {
  std::map<int, std::string> found;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef file = llvm::sys::path::filename(it->path());
    if (!file.starts_with(prefix) || !file.ends_with(suffix))
      continue;
    int n;
    if (file.drop_front(prefix.size())
            .drop_back(suffix.size())
            .getAsInteger(10, n))
      continue;
    found[n] = it->path();
  }
  std::vector<std::string> out;
  for (auto &[n, path] : found)
    out.push_back(path);
  return out;
}

llvm::Expected<std::vector<ONNXTensor>> readTensors(StringRef dir,
                                                    StringRef prefix) {
  std::vector<ONNXTensor> out;
  for (const std::string &path : numbered(dir, prefix, ".pb")) {
    auto buf = llvm::MemoryBuffer::getFile(path);
    if (!buf)
      return llvm::createStringError(buf.getError(), "cannot read " + path);
    auto t = readONNXTensor((*buf)->getBuffer(), path);
    if (!t)
      return t.takeError();
    out.push_back(std::move(*t));
  }
  return out;
}

/// Half-precision results get wider bounds (see the file comment).
bool isHalf(int32_t dataType) { return dataType == 10 || dataType == 16; }

/// Compares output \p i (\p shape, \p values) with \p want into
/// \p verdict: the first mismatch fails it; the largest error is kept.
void compareOutput(size_t i, const std::vector<int64_t> &shape,
                   const std::vector<double> &values, const ONNXTensor &want,
                   bool wide, Verdict &verdict) {
  if (verdict.status == Status::Fail)
    return;
  if (shape != want.shape) {
    verdict.status = Status::Fail;
    verdict.detail = "output " + std::to_string(i) + " has shape " +
                     safetensors::formatShape(shape) + ", expected " +
                     safetensors::formatShape(want.shape);
    return;
  }
  double r = relTol, a = absTol;
  if (wide) {
    r = std::max(r, 1e-2);
    a = std::max(a, 1e-3);
  }
  for (size_t k = 0; k < values.size(); ++k) {
    double g = values[k], w = want.values[k];
    // NaN must match NaN, and infinities must be equal.
    bool nan = std::isnan(w) || std::isnan(g);
    if (nan || std::isinf(w) || std::isinf(g)) {
      bool match = nan ? std::isnan(w) == std::isnan(g) : g == w;
      if (!match) {
        verdict.status = Status::Fail;
        verdict.maxAbsError = INFINITY;
        verdict.detail = "output " + std::to_string(i) + " element " +
                         std::to_string(k) + " is " + std::to_string(g) +
                         ", expected " + std::to_string(w);
        return;
      }
      continue;
    }
    double err = std::fabs(g - w);
    verdict.maxAbsError = std::max(verdict.maxAbsError, err);
    if (err > a + r * std::fabs(w) && verdict.status != Status::Fail) {
      verdict.status = Status::Fail;
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "output " << i << " element " << k << " is " << g << ", expected "
         << w;
      verdict.detail = s;
    }
  }
}

template <class D>
void runCase(mlir::ModuleOp module, const std::string &weightsPath,
             const std::vector<ONNXTensor> &inputs,
             const std::vector<ONNXTensor> &outputs, bool wide, Row &row,
             std::string &diagnostics) {
  using namespace loom::interp;
  InterpreterOptions options;
  options.weightsFile = weightsPath;
  Interpreter<D> interpreter(module, options);
  auto fn = *module.getOps<func::FuncOp>().begin();
  std::vector<Tensor<D>> args;
  for (const ONNXTensor &t : inputs)
    args.push_back(Tensor<D>::fromDoubles(t.shape, t.values));
  auto results = interpreter.run(fn, args);
  if (failed(results)) {
    row.status = Status::Fail;
    row.detail = "run failed: " + firstLine(diagnostics);
    return;
  }
  // The graph's outputs come first; the lengths of those of
  // data-dependent length follow them (docs/ONNX/Import.md).
  if (results->size() < outputs.size()) {
    row.status = Status::Fail;
    row.detail = "produced " + std::to_string(results->size()) +
                 " outputs, expected " + std::to_string(outputs.size());
    return;
  }
  Verdict verdict;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::vector<int64_t> shape = (*results)[i].shape;
    std::vector<double> values = (*results)[i].toDoubles();
    if (auto bound = tg::getResultBound(fn, i)) {
      auto length =
          int64_t(D::toDouble((*results)[bound->lengthResult].data[0]));
      cutToValid(values, shape, bound->dim, length);
    }
    compareOutput(i, shape, values, outputs[i], wide, verdict);
  }
  row.status = verdict.status;
  row.detail = verdict.detail;
  row.maxAbsError = verdict.maxAbsError;
}

/// Half-precision test data may be stored as its bits (uint16): decodes `t`
/// when the model declares it float16 or bfloat16.
void decodeHalfBits(ONNXTensor &t, int32_t declared) {
  if (t.dataType != 4 /*uint16*/ || (declared != 10 && declared != 16))
    return;
  for (double &v : t.values) {
    auto bits = static_cast<uint16_t>(v);
    v = declared == 10 ? safetensors::halfToFloat(bits)
                       : safetensors::bfloat16ToFloat(bits);
  }
  t.dataType = declared;
}

/// The inputs and expected outputs of one test data set.
struct DataSet {
  std::vector<ONNXTensor> inputs, outputs;
};

/// Imports and runs every data set of one case into its row.
class CaseRunner {
public:
  CaseRunner(MLIRContext &context, Row &row)
      : context(context), row(row), handler(&context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error) {
            if (!diagnostics.empty())
              diagnostics += "\n";
            diagnostics += diag.str();
          }
          return success();
        }) {}

  void run();

private:
  /// Ends the case with `status` and `detail`; returns false.
  bool stop(Status status, std::string detail);
  /// Imports and runs data set `set`; false when the case ends there.
  bool runDataSet(StringRef set);
  /// The tensors of data set `set`; none (the case ends) when they cannot be
  /// read or do not fit the model.
  std::optional<DataSet> readDataSet(StringRef set);
  /// Imports the model at the shapes of `data`; when the importer needs a
  /// graph input's value at import time (a shape, axes, scales, ...), binds
  /// it to the test's value and tries again. Null when the import fails
  /// (`diagnostics` says why).
  OwningOpRef<ModuleOp> importModel(const DataSet &data,
                                    ONNXImportOptions &options,
                                    safetensors::Writer &writer);
  /// tg -> ONNX -> tg, with the weights going through the exported model
  /// (rewritten to `weightsPath`); null when the case ends.
  OwningOpRef<ModuleOp> roundTripModule(ModuleOp module, StringRef weightsPath,
                                        const ONNXImportOptions &options);
  /// The compiled column: `module` compiled and run on `inputs` of data
  /// set `set`, its outputs compared as the interpreter's were.
  void runCompiled(ModuleOp module, StringRef weightsPath,
                   const std::vector<ONNXTensor> &inputs,
                   const std::vector<ONNXTensor> &outputs, bool wide,
                   StringRef set);

  MLIRContext &context;
  Row &row;
  /// The errors reported since the last clear(), one a line.
  std::string diagnostics;
  ScopedDiagnosticHandler handler;
  llvm::SmallString<256> modelPath;
  std::unique_ptr<llvm::MemoryBuffer> model;
  ONNXModelInfo info;
};

bool CaseRunner::stop(Status status, std::string detail) {
  row.status = status;
  row.detail = std::move(detail);
  return false;
}

void CaseRunner::run() {
  modelPath = row.c.dir;
  llvm::sys::path::append(modelPath, "model.onnx");
  auto buffer = llvm::MemoryBuffer::getFile(modelPath);
  if (!buffer) {
    row.detail = "no model.onnx";
    return;
  }
  model = std::move(*buffer);
  auto described = describeONNXModel(model->getBuffer(), ONNXFormat::Binary);
  if (!described) {
    row.detail = llvm::toString(described.takeError());
    return;
  }
  info = std::move(*described);
  row.operators = info.operators;
  // Sequences and optionals are no tensors: their test data is no
  // TensorProto either.
  for (const auto *values : {&info.inputs, &info.outputs})
    for (const ONNXModelInfo::Input &v : *values)
      if (v.kind != "tensor") {
        row.detail = "graph " +
                     std::string(values == &info.inputs ? "input" : "output") +
                     " '" + v.name + "' has type " + v.kind +
                     "; tg has tensors only";
        return;
      }
  auto dataSets = numbered(row.c.dir, "test_data_set_", "");
  if (dataSets.empty()) {
    row.detail = "no test data";
    return;
  }
  row.status = Status::Pass;
  for (const std::string &set : dataSets)
    if (!runDataSet(set))
      return;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "max abs error " << llvm::format("%.3g", row.maxAbsError);
  if (!row.bound.empty())
    os << "; bound at import: " << llvm::join(row.bound, ", ");
  row.detail = s;
}

std::optional<DataSet> CaseRunner::readDataSet(StringRef set) {
  auto inputs = readTensors(set, "input_");
  auto outputs = readTensors(set, "output_");
  if (!inputs || !outputs) {
    std::string detail = !inputs ? llvm::toString(inputs.takeError())
                                 : llvm::toString(outputs.takeError());
    if (inputs)
      llvm::consumeError(outputs.takeError());
    stop(Status::Unsupported, std::move(detail));
    return std::nullopt;
  }
  if (inputs->size() != info.inputs.size()) {
    stop(Status::Unsupported,
         "the test data has " + std::to_string(inputs->size()) +
             " inputs, the model " + std::to_string(info.inputs.size()));
    return std::nullopt;
  }
  for (size_t i = 0; i < inputs->size(); ++i)
    decodeHalfBits((*inputs)[i], info.inputs[i].dataType);
  for (size_t i = 0; i < outputs->size() && i < info.outputs.size(); ++i)
    decodeHalfBits((*outputs)[i], info.outputs[i].dataType);
  return DataSet{std::move(*inputs), std::move(*outputs)};
}

OwningOpRef<ModuleOp> CaseRunner::importModel(const DataSet &data,
                                              ONNXImportOptions &options,
                                              safetensors::Writer &writer) {
  OwningOpRef<ModuleOp> module;
  static const llvm::Regex needsValue("it is the graph input '([^']*)'");
  for (int attempt = 0; attempt <= static_cast<int>(data.inputs.size());
       ++attempt) {
    writer = safetensors::Writer();
    diagnostics.clear();
    module = importONNX(model->getBuffer(), modelPath, ONNXFormat::Binary,
                        &context, options, writer);
    llvm::SmallVector<StringRef> match;
    if (module || !needsValue.match(diagnostics, &match))
      break;
    bool bound = false;
    for (size_t i = 0; i < data.inputs.size(); ++i)
      if (info.inputs[i].name == match[1] &&
          !options.boundInputs.count(match[1])) {
        options.boundInputs[match[1]] = data.inputs[i];
        options.inputShapes.erase(match[1]);
        if (!llvm::is_contained(row.bound, match[1].str()))
          row.bound.push_back(match[1].str());
        bound = true;
      }
    if (!bound)
      break;
  }
  return module;
}

OwningOpRef<ModuleOp>
CaseRunner::roundTripModule(ModuleOp module, StringRef weightsPath,
                            const ONNXImportOptions &options) {
  ONNXExportOptions exportOptions;
  exportOptions.weightsFile = weightsPath.str();
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  diagnostics.clear();
  if (failed(exportONNX(module, os, exportOptions))) {
    stop(Status::Fail, "export failed: " + firstLine(diagnostics));
    return nullptr;
  }
  ONNXImportOptions again;
  again.weightsAttr = options.weightsAttr;
  safetensors::Writer writer;
  OwningOpRef<ModuleOp> reimported = importONNX(
      bytes, "exported.onnx", ONNXFormat::Binary, &context, again, writer);
  if (!reimported) {
    stop(Status::Fail, "re-import failed: " + firstLine(diagnostics));
    return nullptr;
  }
  if (auto err = writer.write(weightsPath)) {
    stop(Status::Fail, llvm::toString(std::move(err)));
    return nullptr;
  }
  return reimported;
}

bool CaseRunner::runDataSet(StringRef set) {
  std::optional<DataSet> data = readDataSet(set);
  if (!data)
    return false;
  ONNXImportOptions options;
  options.targetOpset = opset;
  bool wide = false, f64 = false;
  for (auto [in, t] : llvm::zip(info.inputs, data->inputs)) {
    options.inputShapes[in.name] =
        llvm::SmallVector<int64_t>(t.shape.begin(), t.shape.end());
    wide |= isHalf(t.dataType);
    f64 |= t.dataType == 11;
  }
  for (const ONNXTensor &t : data->outputs) {
    wide |= isHalf(t.dataType);
    f64 |= t.dataType == 11;
  }
  llvm::SmallString<128> weightsPath;
  if (llvm::sys::fs::createTemporaryFile("loom-conformance", "safetensors",
                                         weightsPath))
    return stop(Status::Fail, "cannot create a temporary file");
  llvm::scope_exit removeWeights([&] { llvm::sys::fs::remove(weightsPath); });
  options.weightsAttr = std::string(weightsPath);
  safetensors::Writer writer;
  OwningOpRef<ModuleOp> module = importModel(*data, options, writer);
  if (!module)
    return stop(StringRef(diagnostics).contains("importer bug")
                    ? Status::Fail
                    : Status::Unsupported,
                firstLine(diagnostics));
  if (auto err = writer.write(weightsPath))
    return stop(Status::Fail, llvm::toString(std::move(err)));
  if (roundTrip) {
    module = roundTripModule(*module, weightsPath, options);
    if (!module)
      return false;
  }
  std::vector<ONNXTensor> args;
  for (auto [in, t] : llvm::zip(info.inputs, data->inputs))
    if (!options.boundInputs.count(in.name))
      args.push_back(t);
  Row setRow;
  setRow.c = row.c;
  if (f64)
    runCase<interp::F64Domain>(*module, std::string(weightsPath), args,
                               data->outputs, wide, setRow, diagnostics);
  else
    runCase<interp::F32Domain>(*module, std::string(weightsPath), args,
                               data->outputs, wide, setRow, diagnostics);
  row.maxAbsError = std::max(row.maxAbsError, setRow.maxAbsError);
  if (setRow.status != Status::Pass)
    return stop(setRow.status,
                llvm::sys::path::filename(set).str() + ": " + setRow.detail);
  if (compiled)
    runCompiled(*module, weightsPath, args, data->outputs, wide, set);
  return true;
}

void CaseRunner::runCompiled(ModuleOp module, StringRef weightsPath,
                             const std::vector<ONNXTensor> &inputs,
                             const std::vector<ONNXTensor> &outputs, bool wide,
                             StringRef set) {
  if (row.compiledStatus == Status::Fail)
    return;
  OwningOpRef<ModuleOp> copy = module.clone();
  diagnostics.clear();
  auto results = conformance::compileAndRun(*copy, weightsPath, inputs,
                                            compiledBackends, compiledTarget);
  Verdict verdict;
  if (!results) {
    verdict.status = Status::Fail;
    verdict.detail = llvm::toString(results.takeError());
    if (!diagnostics.empty())
      verdict.detail += ": " + firstLine(diagnostics);
  } else if (results->size() < outputs.size()) {
    verdict.status = Status::Fail;
    verdict.detail = "produced " + std::to_string(results->size()) +
                     " outputs, expected " + std::to_string(outputs.size());
  } else {
    for (size_t i = 0; i < outputs.size(); ++i)
      compareOutput(i, (*results)[i].shape, (*results)[i].values, outputs[i],
                    wide, verdict);
  }
  row.compiledStatus = verdict.status;
  row.compiledMaxAbsError =
      std::max(row.compiledMaxAbsError, verdict.maxAbsError);
  if (verdict.status == Status::Fail)
    row.compiledDetail =
        llvm::sys::path::filename(set).str() + ": " + verdict.detail;
  else {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "max abs error " << llvm::format("%.3g", row.compiledMaxAbsError);
    row.compiledDetail = s;
  }
}

/// Imports and runs every data set of one case.
void runOne(MLIRContext &context, Row &row) { CaseRunner(context, row).run(); }

std::vector<Case> findCases() {
  std::vector<std::string> names(suites.begin(), suites.end());
  std::error_code ec;
  if (names.empty())
    for (llvm::sys::fs::directory_iterator it(dataRoot, ec), end;
         it != end && !ec; it.increment(ec))
      if (llvm::sys::fs::is_directory(it->path()))
        names.push_back(llvm::sys::path::filename(it->path()).str());
  llvm::sort(names);
  std::optional<llvm::Regex> re;
  if (!filter.empty())
    re.emplace(filter);
  std::vector<Case> cases;
  for (const std::string &suite : names) {
    llvm::SmallString<256> dir(dataRoot.getValue());
    llvm::sys::path::append(dir, suite);
    std::vector<Case> found;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec)) {
      if (!llvm::sys::fs::is_directory(it->path()))
        continue;
      Case c{suite, llvm::sys::path::filename(it->path()).str(), it->path()};
      if (re && !re->match(c.id()))
        continue;
      found.push_back(c);
    }
    llvm::sort(found,
               [](const Case &a, const Case &b) { return a.name < b.name; });
    llvm::append_range(cases, found);
  }
  return cases;
}

std::string escapeTSV(StringRef s) {
  std::string out;
  for (char ch : s)
    out.push_back(ch == '\t' || ch == '\n' ? ' ' : ch);
  return out;
}

/// Shortens an unsupported reason to what it is about, for the summary
/// table: the diagnostic without its location prefix.
std::string reasonOf(StringRef detail) {
  size_t pos = detail.find("error: ");
  if (pos != StringRef::npos)
    detail = detail.drop_front(pos + 7);
  // Test data that cannot be read: name the file, not its directory.
  pos = detail.find(".pb: ");
  if (pos != StringRef::npos) {
    size_t slash = detail.substr(0, pos).rfind('/');
    if (slash != StringRef::npos)
      detail = detail.drop_front(slash + 1);
  }
  return detail.str();
}

/// `s` with each '|' replaced by '/', to sit in a Markdown table cell.
std::string withoutPipes(std::string s) {
  for (char &ch : s)
    if (ch == '|')
      ch = '/';
  return s;
}

/// Cases by result.
struct Counts {
  int pass = 0, fail = 0, unsupported = 0;
  void add(Status status) {
    (status == Status::Pass   ? pass
     : status == Status::Fail ? fail
                              : unsupported)++;
  }
  int total() const { return pass + fail + unsupported; }
};

/// What the page says before its tables: how the cases were run and judged.
void writeIntroduction(llvm::raw_ostream &os, const std::vector<Row> &rows) {
  os << "# Supported ONNX operators\n\n"
     << "<!-- Generated by `loom-onnx-conformance --emit-supported-ops-md`; "
        "test/ONNX/conformance.test checks that it is current. Do not edit. "
        "-->\n\n"
     << "Loom imports ONNX models through `loom-translate --import-onnx` (see "
        "[Import.md](Import.md)). This page is generated from a run of the "
        "ONNX backend test suite (Debian's `libonnx-testdata`, ONNX 1.12) "
        "through the importer and the reference interpreter, opset "
     << opset << " as the conversion target.\n\n"
     << "A case *passes* when every output matches: |got - expected| <= "
        "atol + rtol * |expected| with rtol = "
     << llvm::format("%g", relTol.getValue())
     << " and atol = " << llvm::format("%g", absTol.getValue())
     << " (rtol 1e-2, atol 1e-3, a few half-precision ulps, for cases "
        "with float16 or bfloat16 data: the interpreter evaluates ops on "
        "such values in float32, and ONNX 1.12's reference rounds float to "
        "bfloat16 by truncation where Loom rounds to nearest even, one "
        "bfloat16 ulp apart); NaN must match NaN and infinities must be "
        "equal. It "
        "*fails* when an output differs or the imported graph fails to run. "
        "It is *unsupported* when the importer refuses the model, with a "
        "diagnostic naming the operator, attribute or element type.\n\n";

  int boundCases = 0;
  for (const Row &r : rows)
    boundCases += r.status == Status::Pass && !r.bound.empty();
  os << "Some operators take as inputs what `tg` needs as attributes (a "
        "Reshape's shape, Resize's scales, Pad's pads, reduction axes, ...). "
        "When the importer needs such a graph input to be known, the harness "
        "binds it to the test's value and imports again, as `loom-translate "
        "--bind-input` does; "
     << boundCases
     << " of the passing cases do so (the TSV table names the inputs).\n\n";
}

/// The results per suite directory, and in all.
void writeSuiteTable(llvm::raw_ostream &os, const std::vector<Row> &rows) {
  std::map<std::string, Counts> bySuite;
  for (const Row &r : rows)
    bySuite[r.c.suite].add(r.status);
  os << "## Results per directory\n\n"
     << "| directory | pass | fail | unsupported | total |\n"
     << "| --- | ---: | ---: | ---: | ---: |\n";
  Counts total;
  for (auto &[suite, c] : bySuite) {
    os << "| " << suite << " | " << c.pass << " | " << c.fail << " | "
       << c.unsupported << " | " << c.total() << " |\n";
    total.pass += c.pass;
    total.fail += c.fail;
    total.unsupported += c.unsupported;
  }
  os << "| **all** | " << total.pass << " | " << total.fail << " | "
     << total.unsupported << " | " << total.total() << " |\n\n";
}

/// Every operator the cases use or the importer handles: whether it has a
/// handler, and the results of the cases that use it.
void writeOperatorTable(llvm::raw_ostream &os, const std::vector<Row> &rows,
                        const llvm::StringSet<> &handled) {
  std::map<std::string, Counts> byOp;
  for (const Row &r : rows)
    for (const std::string &op : r.operators)
      byOp[op].add(r.status);
  for (const auto &op : handled)
    byOp[op.getKey().str()];
  llvm::StringSet<> foldOnly;
  for (const std::string &op : getFoldOnlyONNXOperators())
    foldOnly.insert(op);

  os << "## Operators\n\n"
     << "*Handler*: the importer has a handler for the operator (it may "
        "still refuse some attributes or element types; the cases say "
        "which); *known values* means it evaluates the operator only when "
        "its inputs are known at import time (shape computations), as tg "
        "has no such operator. The counts are the backend-test cases whose "
        "graph uses the operator, by result (a case counts for each operator "
        "it uses).\n\n"
     << "| operator | handler | pass | fail | unsupported |\n"
     << "| --- | :---: | ---: | ---: | ---: |\n";
  for (auto &[op, c] : byOp)
    os << "| " << op << " | "
       << (foldOnly.contains(op)  ? "known values"
           : handled.contains(op) ? "yes"
                                  : "no")
       << " | " << c.pass << " | " << c.fail << " | " << c.unsupported
       << " |\n";
}

/// A list item per row that `select` picks, with the `detail` of each;
/// "None." when there is none.
void writeCaseList(llvm::raw_ostream &os, const std::vector<Row> &rows,
                   llvm::function_ref<bool(const Row &)> select,
                   llvm::function_ref<std::string(const Row &)> detail) {
  bool any = false;
  for (const Row &r : rows) {
    if (!select(r))
      continue;
    any = true;
    os << "- `" << r.c.id() << "`: " << withoutPipes(detail(r)) << "\n";
  }
  if (!any)
    os << "None.\n";
}

/// The most common reasons why cases are unsupported, grouped by what the
/// diagnostic says after naming the node.
void writeUnsupportedReasons(llvm::raw_ostream &os,
                             const std::vector<Row> &rows) {
  os << "\n## Why cases are unsupported\n\n"
     << "The most common reasons (the full list is in the TSV table the "
        "harness writes):\n\n"
     << "| reason | cases |\n| --- | ---: |\n";
  std::map<std::string, int> reasons;
  for (const Row &r : rows) {
    if (r.status != Status::Unsupported)
      continue;
    std::string reason = reasonOf(r.detail);
    // Group by the part after the node: "'Op' node 'x' (opset N): why".
    size_t colon = reason.find("): ");
    size_t quote = reason.find("' ");
    if (colon != std::string::npos && quote != std::string::npos &&
        reason[0] == '\'')
      reason = reason.substr(0, quote + 1) + reason.substr(colon + 1);
    reasons[withoutPipes(reason)]++;
  }
  std::vector<std::pair<std::string, int>> sorted(reasons.begin(),
                                                  reasons.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  for (size_t i = 0; i < sorted.size() && i < 40; ++i)
    os << "| " << sorted[i].first << " | " << sorted[i].second << " |\n";
}

/// docs/ONNX/SupportedOps.md.
void writeSupportedOps(llvm::raw_ostream &os, const std::vector<Row> &rows) {
  llvm::StringSet<> handled;
  for (const std::string &op : getSupportedONNXOperators())
    handled.insert(op);
  writeIntroduction(os, rows);
  writeSuiteTable(os, rows);
  writeOperatorTable(os, rows, handled);

  os << "\n## Failing cases\n\n";
  writeCaseList(
      os, rows, [](const Row &r) { return r.status == Status::Fail; },
      [](const Row &r) { return r.detail; });

  os << "\n## Cases whose operators all have handlers but that do not "
        "pass\n\n"
     << "The importer has a handler for every operator of these graphs; "
        "an attribute, an element type or a rank is what it refuses:\n\n";
  writeCaseList(
      os, rows,
      [&](const Row &r) {
        return r.status == Status::Unsupported && !r.operators.empty() &&
               llvm::all_of(r.operators, [&](const std::string &op) {
                 return handled.contains(op);
               });
      },
      [](const Row &r) { return reasonOf(r.detail); });

  writeUnsupportedReasons(os, rows);
}

/// Runs every row's case on `jobs` threads (each with its own context).
void runAll(std::vector<Row> &rows) {
  unsigned threads =
      jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
  std::atomic<size_t> next{0};
  std::mutex printMutex;
  auto worker = [&] {
    DialectRegistry registry;
    registerONNXImportDialects(registry);
    if (compiled) {
      registerAllDialects(registry);
      registerAllExtensions(registry);
    }
    MLIRContext context(registry, MLIRContext::Threading::DISABLED);
    context.loadAllAvailableDialects();
    context.printOpOnDiagnostic(false);
    for (size_t i = next++; i < rows.size(); i = next++) {
      runOne(context, rows[i]);
      if (verbose) {
        std::lock_guard<std::mutex> lock(printMutex);
        llvm::outs() << rows[i].c.id() << "\t" << statusName(rows[i].status)
                     << "\t" << rows[i].detail;
        if (rows[i].compiledStatus)
          llvm::outs() << "\tcompiled " << statusName(*rows[i].compiledStatus)
                       << "\t" << rows[i].compiledDetail;
        llvm::outs() << "\n";
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(worker);
  for (std::thread &t : pool)
    t.join();
}

/// The summary per suite, on standard output.
void printSummary(const std::vector<Row> &rows) {
  std::map<std::string, std::array<int, 3>> counts;
  for (const Row &r : rows)
    counts[r.c.suite][static_cast<int>(r.status)]++;
  for (auto &[suite, c] : counts)
    llvm::outs() << suite << ": " << c[0] << " pass, " << c[1] << " fail, "
                 << c[2] << " unsupported\n";
  if (!compiled)
    return;
  std::map<std::string, std::array<int, 2>> compiledCounts;
  for (const Row &r : rows)
    if (r.status == Status::Pass)
      compiledCounts[r.c.suite][r.compiledStatus == Status::Pass ? 0 : 1]++;
  for (auto &[suite, c] : compiledCounts)
    llvm::outs() << suite << " compiled: " << c[0] << " pass, " << c[1]
                 << " fail (of the " << c[0] + c[1]
                 << " cases that pass on the interpreter)\n";
}

/// The --tsv table: a line per case.
void writeTSV(llvm::raw_ostream &os, const std::vector<Row> &rows) {
  os << "case\tstatus\tmax_abs_error\tdetail\toperators"
     << (compiled ? "\tcompiled\tcompiled_detail" : "") << "\n";
  for (const Row &r : rows) {
    os << r.c.id() << "\t" << statusName(r.status) << "\t";
    if (r.status == Status::Unsupported)
      os << "";
    else
      os << llvm::format("%.3g", r.maxAbsError);
    os << "\t" << escapeTSV(r.detail) << "\t" << llvm::join(r.operators, ",");
    if (compiled)
      os << "\t" << (r.compiledStatus ? statusName(*r.compiledStatus) : "")
         << "\t" << escapeTSV(r.compiledDetail);
    os << "\n";
  }
}

/// The --json table: an object per case.
void writeJSON(llvm::raw_ostream &os, const std::vector<Row> &rows) {
  llvm::json::Array array;
  for (const Row &r : rows) {
    llvm::json::Object o{{"case", r.c.id()},
                         {"status", statusName(r.status)},
                         {"detail", r.detail}};
    if (r.status != Status::Unsupported && std::isfinite(r.maxAbsError))
      o["max_abs_error"] = r.maxAbsError;
    llvm::json::Array ops;
    for (const std::string &op : r.operators)
      ops.push_back(op);
    o["operators"] = std::move(ops);
    if (r.compiledStatus) {
      o["compiled"] = statusName(*r.compiledStatus);
      o["compiled_detail"] = r.compiledDetail;
    }
    array.push_back(std::move(o));
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(array))) << "\n";
}

/// The --write-allowlist file: the passing cases.
void writeAllowlist(llvm::raw_ostream &os, const std::vector<Row> &rows) {
  os << "# ONNX backend-test cases that must pass (suite/case), one per "
        "line.\n# Regenerate with: loom-onnx-conformance "
        "--write-allowlist FILE\n";
  for (const Row &r : rows)
    if (r.status == Status::Pass)
      os << r.c.id() << "\n";
}

/// Writes `path` with `fn`; false (after an error message) when it cannot
/// be opened.
bool writeFile(StringRef path,
               llvm::function_ref<void(llvm::raw_ostream &)> fn) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::WithColor::error(llvm::errs(), "loom-onnx-conformance")
        << "cannot write " << path << ": " << ec.message() << "\n";
    return false;
  }
  fn(os);
  return true;
}

/// Writes the tables that were asked for; false when one cannot be written.
bool writeOutputs(const std::vector<Row> &rows) {
  bool ok = true;
  if (!tsvFile.empty())
    ok &=
        writeFile(tsvFile, [&](llvm::raw_ostream &os) { writeTSV(os, rows); });
  if (!jsonFile.empty())
    ok &= writeFile(jsonFile,
                    [&](llvm::raw_ostream &os) { writeJSON(os, rows); });
  if (!supportedOpsFile.empty())
    ok &= writeFile(supportedOpsFile, [&](llvm::raw_ostream &os) {
      writeSupportedOps(os, rows);
    });
  if (!writeAllowlistFile.empty())
    ok &= writeFile(writeAllowlistFile,
                    [&](llvm::raw_ostream &os) { writeAllowlist(os, rows); });
  return ok;
}

/// Checks that every case of --allowlist passes; false (after naming each
/// regression) when one does not or the list cannot be read.
bool checkAllowlist(const std::vector<Row> &rows) {
  auto buf = llvm::MemoryBuffer::getFile(allowlistFile);
  if (!buf) {
    llvm::WithColor::error(llvm::errs(), "loom-onnx-conformance")
        << "cannot read " << allowlistFile << "\n";
    return false;
  }
  llvm::StringMap<const Row *> byId;
  for (const Row &r : rows)
    byId[r.c.id()] = &r;
  llvm::SmallVector<StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  int regressions = 0, listed = 0;
  for (StringRef line : lines) {
    line = line.split('#').first.trim();
    if (line.empty())
      continue;
    ++listed;
    auto it = byId.find(line);
    if (it == byId.end()) {
      llvm::errs() << "REGRESSION: " << line << ": case not found\n";
      ++regressions;
    } else if (it->second->status != Status::Pass) {
      llvm::errs() << "REGRESSION: " << line << ": "
                   << statusName(it->second->status) << ": "
                   << it->second->detail << "\n";
      ++regressions;
    } else if (compiled && it->second->compiledStatus != Status::Pass) {
      llvm::errs() << "REGRESSION: " << line
                   << ": compiled: " << it->second->compiledDetail << "\n";
      ++regressions;
    }
  }
  llvm::outs() << "allow-list: " << listed - regressions << " of " << listed
               << " pass\n";
  return regressions == 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // The compiled column parses the kernel pipeline from its textual form.
  registerAllPasses();
  compiler::registerCompilerPasses();
  cl::HideUnrelatedOptions(conformanceCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "loom-onnx-conformance: the ONNX backend tests on Loom's importer and "
      "reference interpreter\n");
  if (!compiledTarget.empty()) {
    if (!compiled) {
      llvm::WithColor::error(llvm::errs(), "loom-onnx-conformance")
          << "--compiled-target needs --compiled\n";
      return 1;
    }
    auto target =
        loom::target::TargetRegistry::builtin().create(compiledTarget);
    if (!target) {
      llvm::WithColor::error(llvm::errs(), "loom-onnx-conformance")
          << "--compiled-target: " << llvm::toString(target.takeError())
          << "\n";
      return 1;
    }
  }
  if (!compiledBackends.empty()) {
    if (!compiled) {
      llvm::WithColor::error(llvm::errs(), "loom-onnx-conformance")
          << "--compiled-backends needs --compiled\n";
      return 1;
    }
    auto listed =
        loom::compiler::BackendRegistry::builtin().parseList(compiledBackends);
    if (!listed) {
      llvm::WithColor::error(llvm::errs(), "loom-onnx-conformance")
          << "--compiled-backends: " << llvm::toString(listed.takeError())
          << "\n";
      return 1;
    }
  }

  std::vector<Case> cases = findCases();
  std::vector<Row> rows(cases.size());
  for (size_t i = 0; i < cases.size(); ++i)
    rows[i].c = cases[i];
  interp::setNumThreads(1);
  runAll(rows);
  printSummary(rows);
  if (!writeOutputs(rows))
    return 1;
  if (!allowlistFile.empty() && !checkAllowlist(rows))
    return 1;
  return 0;
}
