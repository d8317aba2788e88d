//===- Weights.cpp - tg.weight and safetensors files -----------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/Utils/Weights.h"

#include "loom/Dialect/TG/IR/TGTypes.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/bit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

std::optional<safetensors::DType> tg::dtypeForElementType(Type type) {
  auto kind = elemKindOf(type);
  if (!kind)
    return std::nullopt;
  return elementTypeInfo(*kind).dtype;
}

bool tg::isParameter(Value v) {
  Operation *def = v.getDefiningOp();
  return def &&
         (isa<WeightOp, ConstantOp>(def) ||
          (isa<TGDialect>(def->getDialect()) && def->getNumRegions() == 0 &&
           llvm::all_of(def->getOperands(), isParameter)));
}

void tg::hoistParameter(Value v, Operation *before) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != before->getBlock() ||
      def->isBeforeInBlock(before))
    return;
  for (Value operand : def->getOperands())
    hoistParameter(operand, before);
  def->moveBefore(before);
}

FailureOr<const safetensors::File *> LazyWeights::fileFor(WeightOp op) {
  if (!file) {
    if (failedToOpen)
      return failure();
    auto opened = openWeights(module, override);
    if (failed(opened)) {
      failedToOpen = true;
      return op.emitError("cannot read this weight: the weights file is "
                          "unusable");
    }
    file.emplace(std::move(*opened));
  }
  if (failed(checkWeight(op, *file)))
    return failure();
  return &*file;
}

/// Whether \p value's raw data (repeated for a splat) are its
/// little-endian bytes.
static bool rawIsLittleEndian(DenseElementsAttr value) {
  Type e = value.getElementType();
  // A dense attribute keeps its elements in the host's byte order, packed
  // for whole-byte widths.
  return llvm::endianness::native == llvm::endianness::little &&
         e.isIntOrFloat() && !e.isInteger(1) &&
         e.getIntOrFloatBitWidth() % 8 == 0;
}

std::optional<ArrayRef<char>> tg::littleEndianView(DenseElementsAttr value) {
  if (value.isSplat() || !rawIsLittleEndian(value))
    return std::nullopt;
  return value.getRawData();
}

std::string tg::littleEndianBytes(DenseElementsAttr value) {
  std::string bytes;
  auto appendLE = [&](uint64_t v, unsigned size) {
    for (unsigned b = 0; b < size; ++b)
      bytes.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
  };
  Type e = value.getElementType();
  unsigned width = e.isInteger(1) ? 8 : e.getIntOrFloatBitWidth();
  int64_t n = value.getNumElements();
  // On a little-endian host the raw data (repeated for a splat) is the
  // answer, without an APFloat per element (an 8 MB folded weight took
  // most of a second element by element).
  if (rawIsLittleEndian(value)) {
    ArrayRef<char> raw = value.getRawData();
    if (!value.isSplat())
      return std::string(raw.begin(), raw.end());
    bytes.reserve(raw.size() * n);
    for (int64_t i = 0; i < n; ++i)
      bytes.append(raw.begin(), raw.end());
    return bytes;
  }
  auto at = [&](int64_t i) { return value.isSplat() ? 0 : i; };
  if (isa<FloatType>(e)) {
    auto values = value.getValues<APFloat>();
    for (int64_t i = 0; i < n; ++i)
      appendLE(values[at(i)].bitcastToAPInt().getZExtValue(), width / 8);
  } else if (e.isInteger(1)) {
    auto values = value.getValues<bool>();
    for (int64_t i = 0; i < n; ++i)
      bytes.push_back(values[at(i)] ? 1 : 0);
  } else {
    auto values = value.getValues<APInt>();
    for (int64_t i = 0; i < n; ++i)
      appendLE(values[at(i)].getSExtValue(), width / 8);
  }
  return bytes;
}

bool tg::usesWeights(ModuleOp module) {
  return module
      .walk([](WeightOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

FailureOr<std::string> tg::resolveWeightsPath(ModuleOp module,
                                              StringRef override) {
  if (!override.empty())
    return override.str();
  auto attr = module->getAttrOfType<StringAttr>(TGDialect::kWeightsAttrName);
  if (!attr)
    return module.emitError()
           << "the module uses tg.weight but has no '"
           << TGDialect::kWeightsAttrName
           << "' attribute naming its safetensors file (or pass a weights "
              "file explicitly)";
  StringRef path = attr.getValue();
  if (llvm::sys::path::is_absolute(path))
    return path.str();
  // Relative to the directory of the .mlir file the module came from.
  if (auto fileLoc = dyn_cast<FileLineColLoc>(module.getLoc())) {
    StringRef source = fileLoc.getFilename().getValue();
    if (source != "-" && !source.empty()) {
      SmallString<256> resolved(llvm::sys::path::parent_path(source));
      llvm::sys::path::append(resolved, path);
      return std::string(resolved);
    }
  }
  return path.str();
}

FailureOr<safetensors::File> tg::openWeights(ModuleOp module,
                                             StringRef override) {
  auto path = resolveWeightsPath(module, override);
  if (failed(path))
    return failure();
  auto file = safetensors::File::open(*path);
  if (!file) {
    module.emitError() << "cannot load weights: "
                       << llvm::toString(file.takeError());
    return failure();
  }
  return std::move(*file);
}

LogicalResult tg::checkWeight(WeightOp op, const safetensors::File &file) {
  auto type = op.getType();
  auto dtype = dtypeForElementType(type.getElementType());
  if (!dtype)
    return op.emitOpError("has element type ")
           << type.getElementType() << ", which safetensors cannot hold";
  if (llvm::Error err = file.check(op.getName(), *dtype, type.getShape()))
    return op.emitOpError() << llvm::toString(std::move(err));
  return success();
}

namespace {
/// How a weight is used decides the range of its random values.
enum class WeightRole { Matrix, Filter, NormScale, Variance, Small };

WeightRole roleOf(WeightOp op) {
  for (OpOperand &use : op->getUses()) {
    Operation *user = use.getOwner();
    unsigned idx = use.getOperandNumber();
    if (auto bn = dyn_cast<BatchNormOp>(user)) {
      if (use.get() == bn.getVariance())
        return WeightRole::Variance;
      if (use.get() == bn.getScale())
        return WeightRole::NormScale;
    }
    if (auto ln = dyn_cast<LayerNormOp>(user); ln && use.get() == ln.getScale())
      return WeightRole::NormScale;
    if (isa<ConvOp>(user) && idx == 1)
      return WeightRole::Filter;
    if (isa<MatmulOp>(user))
      return WeightRole::Matrix;
  }
  return op.getType().getRank() >= 2 ? WeightRole::Filter : WeightRole::Small;
}
} // namespace

LogicalResult tg::writeRandomWeights(ModuleOp module, StringRef path,
                                     uint64_t seed) {
  safetensors::Writer writer;
  llvm::StringMap<RankedTensorType> seen;
  std::mt19937_64 rng(seed);
  WalkResult result = module.walk([&](WeightOp op) -> WalkResult {
    auto type = op.getType();
    auto [it, inserted] = seen.try_emplace(op.getName(), type);
    if (!inserted) {
      if (it->second != type)
        return op.emitOpError("names weight '")
               << op.getName() << "' with type " << type
               << ", but another tg.weight names it with type " << it->second;
      return WalkResult::advance();
    }
    auto dtype = dtypeForElementType(type.getElementType());
    if (!dtype)
      return op.emitOpError("has element type ")
             << type.getElementType() << ", which safetensors cannot hold";
    ArrayRef<int64_t> shape = type.getShape();
    double lo = -0.1, hi = 0.1;
    switch (roleOf(op)) {
    case WeightRole::Matrix:
    case WeightRole::Filter: {
      int64_t fanIn = 1;
      if (roleOf(op) == WeightRole::Matrix && shape.size() >= 2)
        fanIn = shape[shape.size() - 2];
      else
        for (int64_t d : shape.drop_front())
          fanIn *= d;
      double bound = std::sqrt(3.0 / double(std::max<int64_t>(fanIn, 1)));
      lo = -bound;
      hi = bound;
      break;
    }
    case WeightRole::NormScale:
    case WeightRole::Variance:
      lo = 0.5;
      hi = 1.5;
      break;
    case WeightRole::Small:
      break;
    }
    bool integral = type.getElementType().isInteger();
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> values(type.getNumElements());
    for (double &v : values)
      v = integral ? 0.0 : dist(rng);
    if (llvm::Error err = writer.add(op.getName(), *dtype, shape, values))
      return op.emitOpError() << llvm::toString(std::move(err));
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  writer.setMetadata("generator", "loom random weights");
  writer.setMetadata("seed", std::to_string(seed));
  if (llvm::Error err = writer.write(path))
    return module.emitError() << "cannot write weights: "
                              << llvm::toString(std::move(err));
  return success();
}
