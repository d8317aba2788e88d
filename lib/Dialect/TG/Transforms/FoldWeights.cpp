//===- FoldWeights.cpp - Compute parameter-only ops at compile time -------===//
//
// Part of Loom. See TGFoldWeights in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/Transforms/Passes.h"
#include "loom/Dialect/TG/Utils/CompileTimeEval.h"
#include "loom/Dialect/TG/Utils/Weights.h"
#include "loom/Support/Shapes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Endian.h"

#include <cstring>
#include <functional>

namespace loom::tg {
#define GEN_PASS_DEF_TGFOLDWEIGHTS
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

#include <vector>

using namespace mlir;
using namespace loom;
using namespace loom::tg;

namespace {

using TensorPtr = KnownTensorPtr;

/// A dense attribute of \p type holding \p values, which its element type
/// holds exactly (evaluateAtCompileTime rounded them).
DenseElementsAttr denseOf(RankedTensorType type, ArrayRef<double> values) {
  Type e = type.getElementType();
  // f32 and f64 directly (a C++ conversion rounds to nearest, ties to even,
  // as APFloat's below): a concatenation of eight 512x512 matrices took
  // 1.9 s through APFloat, most of a compilation (NasRNN rewritten).
  if (e.isF32()) {
    std::vector<float> out(values.begin(), values.end());
    return DenseElementsAttr::get(type, ArrayRef<float>(out));
  }
  if (e.isF64())
    return DenseElementsAttr::get(type, values);
  if (auto f = dyn_cast<FloatType>(e)) {
    SmallVector<APFloat> out;
    out.reserve(values.size());
    for (double v : values) {
      APFloat a(v);
      bool lost;
      a.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(a);
    }
    return DenseElementsAttr::get(type, out);
  }
  SmallVector<APInt> out;
  unsigned width = e.getIntOrFloatBitWidth();
  for (double v : values)
    out.push_back(APInt(width, static_cast<int64_t>(v), /*isSigned=*/true,
                        /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, out);
}

/// Row-major strides (in elements) of \p shape.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Writes to \p out the elements (\p elem bytes each) of a tensor of shape
/// \p shape whose element at index i is \p in's element at
/// base + sum(i[d] * step[d]): a strided slice or a permutation of \p in.
void gatherBytes(const char *in, size_t elem, ArrayRef<int64_t> shape,
                 int64_t base, ArrayRef<int64_t> step, char *out) {
  if (llvm::is_contained(shape, 0))
    return;
  size_t rank = shape.size();
  if (rank == 0) {
    std::memcpy(out, in + base * elem, elem);
    return;
  }
  SmallVector<int64_t> index(rank, 0);
  int64_t inner = shape.back(), innerStep = step.back();
  while (true) {
    int64_t from = base;
    for (size_t d = 0; d + 1 < rank; ++d)
      from += index[d] * step[d];
    if (innerStep == 1) {
      std::memcpy(out, in + from * elem, inner * elem);
      out += inner * elem;
    } else {
      for (int64_t i = 0; i < inner; ++i, out += elem)
        std::memcpy(out, in + (from + i * innerStep) * elem, elem);
    }
    size_t d = rank - 1;
    while (d > 0 && ++index[d - 1] == shape[d - 1])
      index[--d] = 0;
    if (d == 0)
      return;
  }
}

/// The tensors of a data-movement op (concatenation, split, slice,
/// transpose, reshape) computed by copying the bytes of \p in, its operands'
/// (row-major, \p elem bytes per element): exactly the interpreter's
/// values, without a double per element. Empty for other ops.
std::vector<std::string> moveBytes(Operation &op,
                                   ArrayRef<ArrayRef<char>> in, size_t elem) {
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  auto sizeOf = [&](Value v) {
    int64_t n = 1;
    for (int64_t d : shapeOf(v))
      n *= d;
    return size_t(n) * elem;
  };
  std::vector<std::string> out;
  for (Value r : op.getResults())
    out.emplace_back(sizeOf(r), '\0');
  auto normalized = [](int64_t axis, size_t rank) {
    return axis < 0 ? axis + int64_t(rank) : axis;
  };
  if (isa<ReshapeOp>(op)) {
    out[0].assign(in[0].begin(), in[0].end());
  } else if (auto concat = dyn_cast<ConcatOp>(op)) {
    ArrayRef<int64_t> shape = shapeOf(concat.getResult());
    int64_t axis = normalized(concat.getAxis(), shape.size()), outer = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    char *to = out[0].data();
    for (int64_t o = 0; o < outer; ++o)
      for (ArrayRef<char> piece : in) {
        size_t chunk = outer ? piece.size() / outer : 0;
        std::memcpy(to, piece.data() + o * chunk, chunk);
        to += chunk;
      }
  } else if (auto split = dyn_cast<SplitOp>(op)) {
    ArrayRef<int64_t> shape = shapeOf(split.getInput());
    SmallVector<int64_t> strides = stridesOf(shape);
    int64_t axis = normalized(split.getAxis(), shape.size()), start = 0;
    for (auto [r, bytes] : llvm::zip(split.getResults(), out)) {
      gatherBytes(in[0].data(), elem, shapeOf(r), start * strides[axis],
                  strides, bytes.data());
      start += shapeOf(r)[axis];
    }
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    SmallVector<int64_t> strides = stridesOf(shapeOf(slice.getInput()));
    int64_t base = 0;
    for (auto [d, start] : llvm::enumerate(slice.getStarts())) {
      base += start * strides[d];
      if (auto steps = slice.getStrides())
        strides[d] *= (*steps)[d];
    }
    gatherBytes(in[0].data(), elem, shapeOf(slice.getResult()), base, strides,
                out[0].data());
  } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
    SmallVector<int64_t> strides = stridesOf(shapeOf(transpose.getInput()));
    SmallVector<int64_t> step;
    for (int64_t p : transpose.getPerm())
      step.push_back(strides[p]);
    gatherBytes(in[0].data(), elem, shapeOf(transpose.getResult()), 0, step,
                out[0].data());
  } else {
    out.clear();
  }
  return out;
}

/// Whether \p op moves bytes (moveBytes folds it by copying them).
bool isDataMovement(Operation *op) {
  return isa<ConcatOp, SplitOp, SliceOp, TransposeOp, ReshapeOp>(op);
}

class WeightFolder {
public:
  WeightFolder(ModuleOp module, const safetensors::File *given,
               StringRef weightsFile, int64_t maxElements,
               int64_t maxMovedBytes,
               std::function<bool(Operation *)> foldsKeptFor)
      : module(module), given(given), lazy(module, weightsFile.str()),
        maxElements(maxElements), maxMovedBytes(maxMovedBytes),
        foldsKeptFor(std::move(foldsKeptFor)) {}

  LogicalResult run() {
    // Every block, the regions of tg.if included (parameters defined
    // outside a region are used inside it).
    SmallVector<Block *> blocks;
    for (auto fn : module.getOps<func::FuncOp>())
      fn->walk<WalkOrder::PreOrder>([&](Block *b) { blocks.push_back(b); });
    for (Block *block : blocks)
      for (Operation &op : llvm::make_early_inc_range(*block))
        if (failed(visit(op)))
          return failure();
    // The data-movement ops folded by bytes become constants where
    // something else reads them; the ones only other such ops read (a
    // tree of concatenations) go without an attribute of their own.
    for (Operation *op : llvm::reverse(movedOps)) {
      for (Value r : op->getResults())
        if (!r.use_empty())
          materialize(r);
        else
          moved.erase(r); // its bytes go now, not with the folder
      op->erase();
    }
    return success();
  }

private:
  ModuleOp module;
  const safetensors::File *given;
  LazyWeights lazy;
  int64_t maxElements;
  int64_t maxMovedBytes;
  /// The readers of a TG_KeptUnfolded op that let it be folded (foldsKept).
  std::function<bool(Operation *)> foldsKeptFor;
  llvm::DenseMap<Value, TensorPtr> known;
  /// The bytes of the results of data-movement ops folded by copying
  /// (foldByBytes) that are not constants yet, and those ops in order.
  llvm::DenseMap<Value, std::shared_ptr<const std::string>> moved;
  std::vector<Operation *> movedOps;
  llvm::DenseSet<Operation *> folded;

  /// The file holding \p op's weight, checked against its type.
  FailureOr<const safetensors::File *> fileOf(WeightOp op) {
    if (!given)
      return lazy.fileFor(op);
    if (failed(checkWeight(op, *given)))
      return failure();
    return given;
  }

  FailureOr<TensorPtr> loadWeight(WeightOp op) {
    FailureOr<const safetensors::File *> file = fileOf(op);
    if (failed(file))
      return failure();
    auto values = (*file)->readAsDouble(op.getName());
    if (!values)
      return op.emitOpError() << llvm::toString(values.takeError());
    auto shape = op.getType().getShape();
    return std::make_shared<const KnownTensor>(KnownTensor::fromDoubles(
            std::vector<int64_t>(shape.begin(), shape.end()), *values));
  }

  /// The value of a parameter operand (loading a weight on first use).
  FailureOr<TensorPtr> valueOf(Value v) {
    auto it = known.find(v);
    if (it != known.end())
      return it->second;
    auto weight = v.getDefiningOp<WeightOp>();
    if (!weight)
      return failure();
    auto t = loadWeight(weight);
    if (succeeded(t))
      known[v] = *t;
    return t;
  }

  bool isParameter(Value v) const {
    Operation *def = v.getDefiningOp();
    return def && (isa<WeightOp, ConstantOp>(def) || moved.count(v));
  }

  /// Replaces the folded bytes of \p v by a constant after its op.
  void materialize(Value v) {
    auto it = moved.find(v);
    auto type = cast<RankedTensorType>(v.getType());
    auto value = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(it->second->data(), it->second->size()));
    OpBuilder b(v.getContext());
    b.setInsertionPointAfterValue(v);
    v.replaceAllUsesWith(
        ConstantOp::create(b, v.getLoc(), type, value).getResult());
    moved.erase(it);
  }

  /// Whether \p op (TG_KeptUnfolded) is folded all the same: every reader
  /// of it is one foldsKeptFor takes (a library step's operand, whose
  /// rounding would otherwise run at every inference).
  bool foldsKept(Operation &op) const {
    return foldsKeptFor && !op.use_empty() &&
           llvm::all_of(op.getUsers(), foldsKeptFor);
  }

  LogicalResult visit(Operation &op) {
    if (!isa<TGDialect>(op.getDialect()) || op.getNumRegions() ||
        op.hasTrait<OpTrait::IsTerminator>() || op.hasTrait<ReadsWorld>() ||
        (op.hasTrait<KeptUnfolded>() && !foldsKept(op)) ||
        isa<WeightOp, ConstantOp>(op) || op.getNumOperands() == 0 ||
        !llvm::all_of(op.getOperands(),
                      [&](Value v) { return isParameter(v); }))
      return success();
    // Data movement first: its bound is in bytes (maxMovedBytes), not the
    // f64 evaluation's elements. VGG's first classifier weight, transposed
    // for its product, has 103 M elements (411 MB): left to run time it
    // was a 386 ms transpose at every inference.
    FailureOr<bool> copied = foldByBytes(op);
    if (failed(copied) || *copied)
      return copied;
    for (Type t : op.getResultTypes()) {
      auto n = checkedNumElements(cast<RankedTensorType>(t).getShape());
      if (n < 0 || n > maxElements)
        return success();
    }
    std::vector<const KnownTensor *> in;
    std::vector<TensorPtr> keep;
    for (OpOperand &operand : op.getOpOperands()) {
      if (moved.count(operand.get()))
        materialize(operand.get());
      Value v = operand.get();
      if (isa<ConstantOp>(v.getDefiningOp()) && !known.count(v)) {
        auto c = evaluateAtCompileTime(*v.getDefiningOp(), {});
        if (failed(c))
          return failure();
        known[v] = c->front();
      }
      auto t = valueOf(v);
      if (failed(t))
        return failure();
      keep.push_back(*t);
      in.push_back(t->get());
    }
    auto results = evaluateAtCompileTime(op, in);
    if (failed(results))
      return failure();
    OpBuilder b(&op);
    for (auto [r, t] : llvm::zip(op.getResults(), *results)) {
      auto type = cast<RankedTensorType>(r.getType());
      auto folded = ConstantOp::create(b, op.getLoc(), type,
                                       denseOf(type, t->toDoubles()));
      // A folded rounding's values are TF32 (a library step may multiply
      // them on tensor cores: holdsTF32Values).
      if (isa<RoundTF32Op>(op))
        folded->setAttr(kTF32ValuesAttr, b.getUnitAttr());
      known[folded.getResult()] = t;
      r.replaceAllUsesWith(folded.getResult());
    }
    op.erase();
    return success();
  }

  /// The bytes of the parameter \p v as the dense attribute of its value
  /// would hold them (a splat expanded into \p storage); nullopt for a
  /// constant that is not a dense attribute.
  FailureOr<std::optional<ArrayRef<char>>> bytesOf(Value v,
                                                   std::string &storage) {
    if (auto it = moved.find(v); it != moved.end())
      return std::optional<ArrayRef<char>>(ArrayRef<char>(*it->second));
    if (auto weight = v.getDefiningOp<WeightOp>()) {
      FailureOr<const safetensors::File *> file = fileOf(weight);
      if (failed(file))
        return failure();
      ArrayRef<uint8_t> raw =
          (*file)->rawBytes(*(*file)->lookup(weight.getName()));
      return std::optional<ArrayRef<char>>(
          ArrayRef<char>((const char *)raw.data(), raw.size()));
    }
    auto dense =
        dyn_cast<DenseElementsAttr>(v.getDefiningOp<ConstantOp>().getValue());
    if (!dense)
      return std::optional<ArrayRef<char>>();
    if (std::optional<ArrayRef<char>> view = littleEndianView(dense))
      return view;
    storage = littleEndianBytes(dense);
    return std::optional<ArrayRef<char>>(ArrayRef<char>(storage));
  }

  /// Folds a data-movement op of parameters (moveBytes) by copying their
  /// bytes: a concatenation of eight 512x512 weights went through a double
  /// per element, most of NasRNN's rewritten compile. Its results' bytes
  /// are kept aside (`moved`) until run() ends or another kind of op reads
  /// them, so that the inner nodes of a tree of concatenations get no
  /// attribute (NasRNN's 40 concatenations: 43 M elements, of which the
  /// products read 18 M). False (nothing done) for other ops and for
  /// element types that are not whole bytes.
  FailureOr<bool> foldByBytes(Operation &op) {
    Type e = cast<RankedTensorType>(op.getResultTypes().front())
                 .getElementType();
    if (!isDataMovement(&op) ||
        llvm::endianness::native != llvm::endianness::little ||
        !e.isIntOrFloat() || e.isInteger(1) || e.getIntOrFloatBitWidth() % 8)
      return false;
    size_t elem = e.getIntOrFloatBitWidth() / 8;
    for (Type t : op.getResultTypes()) {
      int64_t n = checkedNumElements(cast<RankedTensorType>(t).getShape());
      if (n < 0 || uint64_t(n) * elem > uint64_t(maxMovedBytes))
        return false;
    }
    std::vector<std::string> storage(op.getNumOperands());
    SmallVector<ArrayRef<char>> in;
    for (auto [v, store] : llvm::zip(op.getOperands(), storage)) {
      auto bytes = bytesOf(v, store);
      if (failed(bytes))
        return failure();
      if (!*bytes)
        return false;
      in.push_back(**bytes);
    }
    std::vector<std::string> out = moveBytes(op, in, elem);
    for (auto [r, bytes] : llvm::zip(op.getResults(), out))
      moved[r] = std::make_shared<const std::string>(std::move(bytes));
    movedOps.push_back(&op);
    folded.insert(&op);
    // A result that no other data movement reads (a weight's slice that a
    // product reads) becomes its constant now, and its bytes go: a
    // tensor-parallel program's prefill and decode take the same slices,
    // one attribute for both, where all of them waited as bytes (1.9 GB
    // for TinyLlama's 4 layers' 0.97 GB of slices).
    for (Value r : op.getResults())
      if (!r.use_empty() && llvm::none_of(r.getUsers(), isDataMovement))
        materialize(r);
    // An operand folded by bytes whose every reader is now folded the same
    // way (a reshaped weight, each rank's slice of it taken) is needed no
    // more: its bytes go now, not when the folder ends.
    for (Value v : op.getOperands())
      if (moved.count(v) && llvm::all_of(v.getUsers(), [&](Operation *user) {
            return folded.contains(user);
          }))
        moved.erase(v);
    return true;
  }
};

struct FoldWeights : public tg::impl::TGFoldWeightsBase<FoldWeights> {
  using TGFoldWeightsBase::TGFoldWeightsBase;
  FoldWeights(const safetensors::File *weights, int64_t max,
              std::function<bool(Operation *)> foldsKeptFor)
      : given(weights), foldsKeptFor(std::move(foldsKeptFor)) {
    maxElements = max;
  }

  void runOnOperation() override {
    std::function<bool(Operation *)> kept = foldsKeptFor;
    if (foldRoundings)
      kept = [](Operation *) { return true; };
    WeightFolder folder(getOperation(), given, weightsFile, maxElements,
                        maxMovedBytes, kept);
    if (failed(folder.run()))
      signalPassFailure();
  }

  const safetensors::File *given = nullptr;
  std::function<bool(Operation *)> foldsKeptFor;
};

} // namespace

std::unique_ptr<Pass>
tg::createTGFoldWeightsPass(const safetensors::File *w, int64_t maxElements,
                            std::function<bool(Operation *)> foldsKeptFor) {
  return std::make_unique<FoldWeights>(w, maxElements, std::move(foldsKeptFor));
}
