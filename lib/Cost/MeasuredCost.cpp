//===- MeasuredCost.cpp - Cost database and measured cost model -------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/CostModel.h"
#include "loom/Support/Files.h"

#include "loom/Interpreter/Interpreter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace mlir;
using namespace loom;
using namespace loom::cost;

llvm::Expected<CostDatabase> CostDatabase::load(llvm::StringRef path) {
  CostDatabase db;
  db.filePath = path.str();
  if (!llvm::sys::fs::exists(path))
    return db;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError(path + ": cannot read cost database: " +
                                   buffer.getError().message());
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return llvm::createStringError(path + ": malformed cost database: " +
                                   llvm::toString(json.takeError()));
  auto *root = json->getAsObject();
  auto *entries = root ? root->getObject("entries") : nullptr;
  auto version = root ? root->getInteger("version") : std::nullopt;
  if (!entries || version != 1)
    return llvm::createStringError(
        path + ": not a Loom cost database (need {\"version\": 1, "
               "\"entries\": {...}})");
  for (auto &[key, value] : *entries) {
    auto seconds = value.getAsNumber();
    if (!seconds || *seconds < 0)
      return llvm::createStringError(path + ": entry '" + key.str() +
                                     "' is not a non-negative number");
    db.entries[key.str()] = *seconds;
  }
  return db;
}

llvm::Error CostDatabase::save() const {
  llvm::json::Object entriesObj;
  std::vector<std::string> keys;
  for (auto &e : entries)
    keys.push_back(e.getKey().str());
  std::sort(keys.begin(), keys.end());
  for (const std::string &k : keys)
    entriesObj[k] = entries.lookup(k);
  llvm::json::Object root{{"version", 1}, {"entries", std::move(entriesObj)}};
  std::string tmp = partialPathFor(filePath, ".tmp");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return llvm::createStringError(tmp + ": cannot write: " + ec.message());
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  }
  if (std::error_code ec = moveIntoPlace(tmp, filePath))
    return llvm::createStringError(filePath + ": cannot write: " +
                                   ec.message());
  return llvm::Error::success();
}

std::optional<double> CostDatabase::lookup(llvm::StringRef key) const {
  auto it = entries.find(key);
  if (it == entries.end())
    return std::nullopt;
  return it->second;
}

void CostDatabase::record(llvm::StringRef key, double seconds) {
  entries[key] = seconds;
}

std::string cost::opSignature(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName() << "(";
  llvm::interleaveComma(op->getOperandTypes(), os);
  os << ") -> (";
  llvm::interleaveComma(op->getResultTypes(), os);
  os << ") " << op->getAttrDictionary();
  return s;
}

namespace {

constexpr llvm::StringLiteral kBackend = "interp-f32";

class MeasuredModel : public CostModel {
public:
  MeasuredModel(CostDatabase &db, std::unique_ptr<CostModel> fallback)
      : db(db), fallback(std::move(fallback)) {}

  std::string name() const override {
    return "measured:" + kBackend.str();
  }

  double opCost(Operation *op) override {
    if (!workOf(op).kernel)
      return 0;
    std::string key = (kBackend + "|" + opSignature(op)).str();
    if (auto cached = db.lookup(key))
      return *cached;
    if (auto seconds = measure(op)) {
      db.record(key, *seconds);
      return *seconds;
    }
    return fallback->opCost(op);
  }

private:
  /// Times `op` alone in a fresh function, on random float inputs (integer
  /// operands are zeros, valid indices for gather): median of 5 runs after
  /// one warm-up.
  std::optional<double> measure(Operation *op) {
    MLIRContext *ctx = op->getContext();
    if (!ctx->getLoadedDialect<func::FuncDialect>())
      return std::nullopt;
    Location loc = op->getLoc();
    OpBuilder b(ctx);
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    auto fnType = b.getFunctionType(op->getOperandTypes(), op->getResultTypes());
    b.setInsertionPointToEnd(module->getBody());
    auto fn = func::FuncOp::create(b, loc, "main", fnType);
    Block *block = fn.addEntryBlock();
    b.setInsertionPointToStart(block);
    IRMapping map;
    map.map(op->getOperands(), block->getArguments());
    Operation *clone = b.clone(*op, map);
    func::ReturnOp::create(b, loc, clone->getResults());

    using T = interp::Tensor<interp::F32Domain>;
    std::vector<T> args;
    for (auto [i, type] : llvm::enumerate(op->getOperandTypes())) {
      auto rt = dyn_cast<RankedTensorType>(type);
      if (!rt || !rt.hasStaticShape())
        return std::nullopt;
      std::vector<int64_t> shape(rt.getShape().begin(), rt.getShape().end());
      if (rt.getElementType().isInteger())
        args.push_back(T(shape));
      else
        args.push_back(T::random(shape, 17 + i));
    }
    // Diagnostics from a failed run (should not happen for verified ops)
    // are swallowed; the fallback model answers instead.
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
    interp::Interpreter<interp::F32Domain> interp(*module);
    std::vector<double> times;
    for (int i = 0; i < 6; ++i) {
      auto start = std::chrono::steady_clock::now();
      if (failed(interp.run(fn, args)))
        return std::nullopt;
      if (i > 0)
        times.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

  CostDatabase &db;
  std::unique_ptr<CostModel> fallback;
};

} // namespace

std::unique_ptr<CostModel>
cost::createMeasuredModel(CostDatabase &db,
                          std::unique_ptr<CostModel> fallback) {
  return std::make_unique<MeasuredModel>(db, std::move(fallback));
}

llvm::Error CostModelHandle::saveDatabase() const {
  return db ? db->save() : llvm::Error::success();
}

llvm::Expected<CostModelHandle>
cost::createCostModel(llvm::StringRef target, llvm::StringRef costDbPath) {
  CostModelHandle handle;
  if (target == "measured") {
    if (costDbPath.empty())
      return llvm::createStringError("target=measured needs cost-db=FILE");
    auto loaded = CostDatabase::load(costDbPath);
    if (!loaded)
      return loaded.takeError();
    handle.db = std::make_unique<CostDatabase>(std::move(*loaded));
    handle.model = createMeasuredModel(*handle.db,
                                       createRooflineModel(calibrateCPU()));
    return handle;
  }
  auto t = lookupTarget(target);
  if (!t)
    return t.takeError();
  handle.model = createRooflineModel(*t);
  return handle;
}
