//===- Scatter.cpp - ScatterND, ScatterElements and GatherElements --------===//
//
// Part of Loom. Writing into, and reading from, a tensor at computed
// positions. Every scatter here reduces to one form: data viewed as rows
// [P, S] and T target rows, each receiving one row of the updates [T, S].
// For ScatterND a row is the slice one index tuple addresses; for
// ScatterElements (and the older Scatter) a row is one element, S = 1.
//
// - Indices known at import time (the common case in exported models:
//   PyTorch's assignments to constant slices, Swin's attention masks): the
//   targets are computed and range-checked here. With data and updates
//   known too the result is a constant; otherwise it is built from
//   tg.gather and tg.concat, writes applied in index order so that the last
//   write to a row wins, exact for every element type.
// - Run-time indices: the linear targets are computed in the graph
//   (linearizeIndices: components out of range wrap around). Reduction
//   'none' matches rows against writes (scatterByMatch: per row its last
//   write, then a gather of the update rows), any element type; past
//   kMaxMatchedPairs, and for 'add', the updates are summed in with
//   tg.scatter_add (float data only; 'none' then selects the rows written
//   and would sum duplicates); 'mul', 'max' and 'min' are refused.
//   Indices or updates of data-dependent length (padded to a bound,
//   docs/ONNX/Import.md) take this path: the writes of their padding are
//   dropped (dropPaddedWrites). ScatterElements of one index per row
//   broadcast along the row writes whole rows (scatterBroadcastRows).
//
// GatherElements reads data flattened to one dimension at the same linear
// targets, with tg.gather.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "Importer.h"

#include "loom/Support/SafeTensors.h"
#include "loom/Support/Shapes.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::Twine;

namespace {

enum class Reduction { None, Add, Mul, Max, Min };

const char *nameOf(Reduction r) {
  switch (r) {
  case Reduction::None:
    return "none";
  case Reduction::Add:
    return "add";
  case Reduction::Mul:
    return "mul";
  case Reduction::Max:
    return "max";
  case Reduction::Min:
    return "min";
  }
  llvm_unreachable("unknown reduction");
}

FailureOr<Reduction> readReduction(NodeContext &ctx) {
  std::string name = ctx.getString("reduction", "none");
  for (Reduction r : {Reduction::None, Reduction::Add, Reduction::Mul,
                      Reduction::Max, Reduction::Min})
    if (name == nameOf(r))
      return r;
  return ctx.fail("unknown reduction '" + name + "'");
}

/// `old` combined with `update` as the reduction says.
template <typename T> T combine(Reduction r, T old, T update) {
  switch (r) {
  case Reduction::None:
    return update;
  case Reduction::Add:
    return old + update;
  case Reduction::Mul:
    return old * update;
  case Reduction::Max:
    return std::max(old, update);
  case Reduction::Min:
    return std::min(old, update);
  }
  llvm_unreachable("unknown reduction");
}

/// `index` normalised into [0, dim), or a diagnostic naming `what`.
FailureOr<int64_t> normalizeIndex(NodeContext &ctx, int64_t index,
                                  int64_t dim, const Twine &what) {
  if (index < -dim || index >= dim)
    return ctx.fail(what + " " + Twine(index) + " is out of range [" +
                    Twine(-dim) + ", " + Twine(dim) + ")");
  return index < 0 ? index + dim : index;
}

//===----------------------------------------------------------------------===//
// Targets
//===----------------------------------------------------------------------===//

/// ScatterND's target rows: the linear index of every k-tuple of `indices`
/// into the first k dimensions of `dataShape`.
FailureOr<SmallVector<int64_t>> tupleTargets(NodeContext &ctx,
                                             const HostTensor &indices,
                                             ArrayRef<int64_t> dataShape) {
  int64_t k = indices.shape.back();
  int64_t tuples = indices.numElements() / k;
  SmallVector<int64_t> targets;
  targets.reserve(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t linear = 0;
    for (int64_t j = 0; j < k; ++j) {
      auto v = normalizeIndex(ctx, indices.asInt(t * k + j), dataShape[j],
                              "component " + Twine(j) + " of index tuple " +
                                  Twine(t));
      if (failed(v))
        return failure();
      linear = linear * dataShape[j] + *v;
    }
    targets.push_back(linear);
  }
  return targets;
}

/// For every position of an index tensor of shape \p idxShape (row-major
/// order), the offset into data of shape \p dataShape of that position
/// without its coordinate along \p axis.
std::vector<int64_t> offAxisOffsets(ArrayRef<int64_t> idxShape,
                                    ArrayRef<int64_t> dataShape,
                                    int64_t axis) {
  SmallVector<int64_t> strides = rowMajorStrides(dataShape);
  SmallVector<int64_t> pos(idxShape.size(), 0);
  std::vector<int64_t> offsets;
  for (int64_t i = 0, n = onnxutil::numElementsOf(idxShape); i < n; ++i) {
    int64_t linear = 0;
    for (size_t d = 0; d < pos.size(); ++d)
      if (int64_t(d) != axis)
        linear += pos[d] * strides[d];
    offsets.push_back(linear);
    for (size_t d = pos.size(); d-- > 0;) {
      if (++pos[d] < idxShape[d])
        break;
      pos[d] = 0;
    }
  }
  return offsets;
}

/// The Elements operators' targets: for every position of `indices`, the
/// linear offset into data of that position with its coordinate along
/// `axis` replaced by the index there.
FailureOr<SmallVector<int64_t>>
elementTargets(NodeContext &ctx, const HostTensor &indices,
               ArrayRef<int64_t> dataShape, int64_t axis) {
  int64_t stride = rowMajorStrides(dataShape)[axis];
  std::vector<int64_t> offsets = offAxisOffsets(indices.shape, dataShape, axis);
  SmallVector<int64_t> targets;
  targets.reserve(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) {
    auto v = normalizeIndex(ctx, indices.asInt(i), dataShape[axis],
                            "index at position " + Twine(i));
    if (failed(v))
      return failure();
    targets.push_back(offsets[i] + *v * stride);
  }
  return targets;
}

/// The run-time form of elementTargets: an i64 tensor of the indices'
/// shape, computed in f64 (exact below 2^53); indices out of range wrap.
FailureOr<Value> elementTargetsValue(NodeContext &ctx, Value indices,
                                     ArrayRef<int64_t> dataShape,
                                     int64_t axis) {
  ArrayRef<int64_t> idxShape =
      cast<RankedTensorType>(indices.getType()).getShape();
  SmallVector<int64_t> strides = rowMajorStrides(dataShape);
  HostTensor base;
  base.dataType = onnx::TensorProto::DOUBLE;
  base.shape.assign(idxShape.begin(), idxShape.end());
  for (int64_t offset : offAxisOffsets(idxShape, dataShape, axis))
    base.floats.push_back(double(offset));
  OpBuilder &b = ctx.builder();
  HostTensor dim = HostTensor::splat(onnx::TensorProto::INT64, {},
                                     double(dataShape[axis]));
  auto dimValue = ctx.materialize(dim, "axis_dim");
  auto baseValue = ctx.materialize(base, "element_offsets");
  auto idx64 = ctx.convert(indices, b.getI64Type());
  if (failed(dimValue) || failed(baseValue) || failed(idx64))
    return failure();
  auto wrapped = ctx.create<tg::ModOp>({*idx64, *dimValue});
  if (failed(wrapped))
    return failure();
  auto asF64 = ctx.convert(*wrapped, b.getF64Type());
  if (failed(asF64))
    return failure();
  auto scaled = ctx.create<tg::MulOp>(
      {*asF64, ctx.scalar(b.getF64Type(), double(strides[axis]))});
  if (failed(scaled))
    return failure();
  auto linear = ctx.create<tg::AddOp>({*scaled, *baseValue});
  if (failed(linear))
    return failure();
  return ctx.convert(*linear, b.getI64Type());
}

//===----------------------------------------------------------------------===//
// Scatter by rows
//===----------------------------------------------------------------------===//

/// The element type, rows and row size of data (input 0) viewed as rows of
/// `rowSize` elements.
struct RowsView {
  int64_t rows, rowSize, updates;
};

HostTensor scatterHost(const HostTensor &data, const HostTensor &updates,
                       ArrayRef<int64_t> targets, int64_t rowSize,
                       Reduction r) {
  HostTensor out = data;
  auto apply = [&](auto &dst, const auto &src) {
    for (size_t j = 0; j < targets.size(); ++j)
      for (int64_t s = 0; s < rowSize; ++s) {
        auto &d = dst[targets[j] * rowSize + s];
        d = combine(r, d, src[j * rowSize + s]);
      }
  };
  if (out.isFloat())
    apply(out.floats, updates.floats);
  else
    apply(out.ints, updates.ints);
  return out;
}

FailureOr<Value> combineRows(NodeContext &ctx, Reduction r, Value old,
                             Value update) {
  switch (r) {
  case Reduction::None:
    return update;
  case Reduction::Add:
    return ctx.create<tg::AddOp>({old, update});
  case Reduction::Mul:
    return ctx.create<tg::MulOp>({old, update});
  case Reduction::Max:
    return ctx.create<tg::MaxOp>({old, update});
  case Reduction::Min:
    return ctx.create<tg::MinOp>({old, update});
  }
  llvm_unreachable("unknown reduction");
}

/// Writes to rows, split into layers that each name a row at most once:
/// layer l holds the l-th write of every row written more than l times.
/// With no reduction only each row's last write matters: one layer.
struct Layer {
  SmallVector<int64_t> rows, updates;
};

std::vector<Layer> splitIntoLayers(ArrayRef<int64_t> targets, Reduction r) {
  std::vector<Layer> layers;
  llvm::DenseMap<int64_t, size_t> seen;
  for (size_t j = 0; j < targets.size(); ++j) {
    if (r == Reduction::None) {
      if (layers.empty())
        layers.emplace_back();
      auto [it, inserted] = seen.try_emplace(targets[j], layers[0].rows.size());
      if (!inserted) {
        layers[0].updates[it->second] = j; // a later write replaces it
        continue;
      }
      layers[0].rows.push_back(targets[j]);
      layers[0].updates.push_back(j);
      continue;
    }
    size_t layer = seen[targets[j]]++;
    if (layer == layers.size())
      layers.emplace_back();
    layers[layer].rows.push_back(targets[j]);
    layers[layer].updates.push_back(j);
  }
  return layers;
}

/// `data` [P, S] with row targets[j] combined with `updates` row j, for
/// every j in order: per layer, a gather of the updates it applies and a
/// gather of data and those rows concatenated.
FailureOr<Value> scatterKnownRows(NodeContext &ctx, Value data,
                                  Value updates, ArrayRef<int64_t> targets,
                                  Reduction r) {
  int64_t rows = cast<RankedTensorType>(data.getType()).getDimSize(0);
  Value current = data;
  for (const Layer &layer : splitIntoLayers(targets, r)) {
    auto update = ctx.gather(updates, 0, layer.updates);
    if (failed(update))
      return failure();
    if (r != Reduction::None) {
      auto old = ctx.gather(current, 0, layer.rows);
      if (failed(old))
        return failure();
      update = combineRows(ctx, r, *old, *update);
      if (failed(update))
        return failure();
    }
    auto joined = ctx.create<tg::ConcatOp>({current, *update},
                                           {ctx.i64Attr("axis", 0)});
    if (failed(joined))
      return failure();
    SmallVector<int64_t> source(rows);
    std::iota(source.begin(), source.end(), 0);
    for (size_t i = 0; i < layer.rows.size(); ++i)
      source[layer.rows[i]] = rows + int64_t(i);
    auto next = ctx.gather(*joined, 0, source);
    if (failed(next))
      return failure();
    current = *next;
  }
  return current;
}

/// Writes matched to rows at most this many pairs (rows x writes) at a
/// time go through scatterByMatch; more (a million scattered elements) go
/// through tg.scatter_add.
constexpr int64_t kMaxMatchedPairs = int64_t(1) << 20;

/// Whether a scatter into `rows` rows by `count` writes goes through
/// scatterByMatch.
bool scattersByMatch(Reduction r, int64_t rows, int64_t count) {
  return r == Reduction::None && rows * count <= kMaxMatchedPairs;
}

/// Reduction 'none' as a match of rows against writes: for every row p of
/// `data` [P, S], the last write j with targets[j] == p (and writes[j] > 0)
/// is found as max_j (match ? j : -1) over the [P, T] pairs (in f32, exact
/// as T <= 2^20), and the rows written are gathered from `updates` [T, S]
/// and selected over data. Parallel over the rows, O(P * T + P * S), for any
/// element type; a row written twice takes its last write, as with indices
/// known at import time.
FailureOr<Value> scatterByMatch(NodeContext &ctx, Value data, Value updates,
                                Value targets, Value writes) {
  OpBuilder &b = ctx.builder();
  int64_t rows = cast<RankedTensorType>(data.getType()).getDimSize(0);
  int64_t count = cast<RankedTensorType>(targets.getType()).getDimSize(0);
  if (count == 0)
    return data; // nothing written (and no row to gather)
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  OpChain c{ctx, f32};
  FailureOr<Value> wanted = ctx.reshape(targets, {1, count});
  if (writes)
    wanted = c.select(
        c.bin<tg::GreaterOp>(ctx.reshape(writes, {1, count}),
                             ctx.scalar(
                                 cast<RankedTensorType>(writes.getType())
                                     .getElementType(),
                                 0.0)),
        wanted, ctx.scalar(i64, -1.0));
  HostTensor rowIds, writeIds;
  rowIds.dataType = onnx::TensorProto::INT64;
  rowIds.shape = {rows, 1};
  rowIds.ints.resize(rows);
  std::iota(rowIds.ints.begin(), rowIds.ints.end(), 0);
  writeIds.dataType = onnx::TensorProto::FLOAT;
  writeIds.shape = {1, count};
  writeIds.floats.resize(count);
  std::iota(writeIds.floats.begin(), writeIds.floats.end(), 0.0);
  auto last = c.reduce<tg::ReduceMaxOp>(
      c.select(c.bin<tg::EqualOp>(wanted, ctx.materialize(rowIds, "row_ids")),
               ctx.materialize(writeIds, "write_ids"), c.c(-1)),
      {1});
  auto source = c.cast(c.bin<tg::MaxOp>(last, c.c(0)), i64);
  if (failed(source))
    return failure();
  auto flatSource = ctx.reshape(*source, {rows});
  if (failed(flatSource))
    return failure();
  auto gathered = ctx.create<tg::GatherOp>({updates, *flatSource},
                                           {ctx.i64Attr("axis", 0)});
  return c.select(c.bin<tg::GreaterEqualOp>(last, c.c(0)), gathered, data);
}

/// `data` [P, S] with the rows of `updates` summed in at the run-time
/// `targets` [T] (reduction 'add'), or written there ('none'). `writes`
/// [T, 1], when given, is 1 for the rows that write and 0 for those that
/// do not (the padding of a bounded value, whose updates are 0).
FailureOr<Value> scatterRuntimeRows(NodeContext &ctx, Value data,
                                    Value updates, Value targets,
                                    Reduction r, Value writes) {
  switch (r) {
  case Reduction::None:
  case Reduction::Add:
    break;
  case Reduction::Mul:
  case Reduction::Max:
  case Reduction::Min:
    return ctx.requireKnown(1, std::string("the indices of a scatter with "
                                           "reduction '") +
                                   nameOf(r) + "'");
  }
  auto dataType = cast<RankedTensorType>(data.getType());
  int64_t rows = dataType.getDimSize(0);
  int64_t count = cast<RankedTensorType>(targets.getType()).getDimSize(0);
  if (scattersByMatch(r, rows, count))
    return scatterByMatch(ctx, data, updates, targets, writes);
  if (!isa<FloatType>(dataType.getElementType()))
    return ctx.fail("scattering into integer data needs indices known at "
                    "import time");
  auto dimSize = ctx.i64Attr("dim_size", rows);
  auto axis = ctx.i64Attr("axis", 0);
  auto summed = ctx.create<tg::ScatterAddOp>({updates, targets}, {axis, dimSize});
  if (failed(summed))
    return failure();
  if (r == Reduction::Add)
    return ctx.create<tg::AddOp>({data, *summed});
  Type elementType = dataType.getElementType();
  if (!writes)
    writes = ctx.splat(RankedTensorType::get({count, 1}, elementType), 1.0);
  auto counted =
      ctx.create<tg::ScatterAddOp>({writes, targets}, {axis, dimSize});
  if (failed(counted))
    return failure();
  auto written =
      ctx.create<tg::GreaterOp>({*counted, ctx.scalar(elementType, 0.0)});
  if (failed(written))
    return failure();
  return ctx.create<tg::SelectOp>({*written, *summed, data});
}

/// Scatters the updates (input 2) into data (input 0), viewed as `view`,
/// at the known `targets`, and sets output 0.
LogicalResult scatterKnown(NodeContext &ctx, const RowsView &view,
                           ArrayRef<int64_t> targets, Reduction r) {
  ArrayRef<int64_t> dataShape = ctx.inputShape(0);
  const HostTensor *data = ctx.constant(0);
  const HostTensor *updates = data ? ctx.constant(2) : nullptr;
  if (data && updates) {
    ctx.setOutput(0, scatterHost(*data, *updates, targets, view.rowSize, r));
    return success();
  }
  if (!ctx.isFloatInput(0) && r != Reduction::None)
    return ctx.fail(Twine("reduction '") + nameOf(r) +
                    "' on integer data needs data and updates known at "
                    "import time");
  auto dataValue = ctx.input(0), updatesValue = ctx.input(2);
  if (failed(dataValue) || failed(updatesValue))
    return failure();
  auto dataRows = ctx.reshape(*dataValue, {view.rows, view.rowSize});
  auto updateRows = ctx.reshape(*updatesValue, {view.updates, view.rowSize});
  if (failed(dataRows) || failed(updateRows))
    return failure();
  auto out = scatterKnownRows(ctx, *dataRows, *updateRows, targets, r);
  if (failed(out))
    return failure();
  auto shaped = ctx.reshape(*out, dataShape);
  if (failed(shaped))
    return failure();
  ctx.setOutput(0, *shaped);
  return success();
}

/// Indices or updates of data-dependent length (padded to a static bound,
/// docs/ONNX/Import.md): the writes of their padding are dropped. Returns
/// the [T, 1] mask of the rows that write (null when nothing is padded),
/// and with `maskUpdates` sets `updates` to its value with the padding's
/// updates 0 (what a sum needs; scatterByMatch reads the mask alone).
/// `targetShape` is the shape of the writes (the indices', without
/// ScatterND's tuple dimension): a prefix of the updates' shape, along
/// which `bounds` (the indices' and the updates') are padded.
FailureOr<Value>
dropPaddedWrites(NodeContext &ctx, Value &updates,
                 ArrayRef<int64_t> targetShape,
                 ArrayRef<std::optional<BoundedDim>> bounds,
                 bool maskUpdates) {
  if (llvm::none_of(bounds, [](const auto &b) { return b.has_value(); }))
    return Value();
  Type e = cast<RankedTensorType>(updates.getType()).getElementType();
  Value mask = ctx.splat(RankedTensorType::get(targetShape, e), 1.0);
  for (const std::optional<BoundedDim> &b : bounds) {
    if (!b)
      continue;
    if (b->dim >= int64_t(targetShape.size()))
      return ctx.fail("an index tuple or an updated slice of data-dependent "
                      "length is not supported");
    auto masked = maskPadding(ctx, mask, *b, 0.0);
    if (failed(masked))
      return failure();
    mask = *masked;
    if (!maskUpdates)
      continue;
    auto maskedUpdates = maskPadding(ctx, updates, *b, 0.0);
    if (failed(maskedUpdates))
      return failure();
    updates = *maskedUpdates;
  }
  return ctx.reshape(mask, {onnxutil::numElementsOf(targetShape), 1});
}

/// scatterKnown for run-time `targets`, an i64 tensor of the writes' shape
/// (view.updates elements), of `updates` (input 2, possibly reshaped so that
/// the targets' shape is a prefix of its shape) padded along `bounds`.
LogicalResult scatterRuntime(NodeContext &ctx, const RowsView &view,
                             Value targets, Value updates,
                             ArrayRef<std::optional<BoundedDim>> bounds,
                             Reduction r) {
  auto dataValue = ctx.input(0);
  if (failed(dataValue))
    return failure();
  auto writes = dropPaddedWrites(
      ctx, updates, cast<RankedTensorType>(targets.getType()).getShape(),
      bounds, !scattersByMatch(r, view.rows, view.updates));
  if (failed(writes))
    return failure();
  auto dataRows = ctx.reshape(*dataValue, {view.rows, view.rowSize});
  auto updateRows = ctx.reshape(updates, {view.updates, view.rowSize});
  auto flatTargets = ctx.reshape(targets, {view.updates});
  if (failed(dataRows) || failed(updateRows) || failed(flatTargets))
    return failure();
  auto out = scatterRuntimeRows(ctx, *dataRows, *updateRows, *flatTargets, r,
                                *writes);
  if (failed(out))
    return failure();
  auto shaped = ctx.reshape(*out, ctx.inputShape(0));
  if (failed(shaped))
    return failure();
  ctx.setOutput(0, *shaped);
  return success();
}

/// A scatter's result keeps a bound of data.
LogicalResult keepDataBound(NodeContext &ctx, LogicalResult done) {
  if (succeeded(done))
    if (std::optional<BoundedDim> b = inputBound(ctx, 0))
      setOutputBound(ctx, 0, *b);
  return done;
}

/// Scatters at the targets `known` computes from indices (input 1) known
/// at import time, or `runtime` builds from run-time ones (also for known
/// indices when the updates are of data-dependent length, so that the
/// writes of their padding are dropped). The result keeps a bound of data.
template <typename Known, typename Runtime>
LogicalResult scatterByIndices(NodeContext &ctx, const RowsView &view,
                               Reduction r, Known known, Runtime runtime) {
  if (const HostTensor *idx = ctx.constant(1); idx && !inputBound(ctx, 2)) {
    FailureOr<SmallVector<int64_t>> targets = known(*idx);
    if (failed(targets))
      return failure();
    return keepDataBound(ctx, scatterKnown(ctx, view, *targets, r));
  }
  auto indices = ctx.input(1), updates = ctx.input(2);
  if (failed(indices) || failed(updates))
    return failure();
  FailureOr<Value> targets = runtime(*indices);
  if (failed(targets))
    return failure();
  return keepDataBound(ctx, scatterRuntime(ctx, view, *targets, *updates,
                                           {inputBound(ctx, 1),
                                            inputBound(ctx, 2)},
                                           r));
}

/// ScatterElements whose run-time indices are one index per row broadcast
/// along every other dimension (torchvision's MultiScaleRoIAlign merge:
/// `index.view(-1, 1, 1, 1).expand(...)`) over the whole of data's extent
/// there, with only dimensions of size 1 before `axis` (and padded, if at
/// all, along it): whole rows of data viewed as [N, S] are written, the
/// targets being the [K] row indices rather than K * S element offsets.
/// Sets output 0 and returns true when that is the case.
FailureOr<bool> scatterBroadcastRows(NodeContext &ctx, int64_t axis,
                                     Reduction r) {
  if (ctx.constant(1))
    return false;
  auto indices = ctx.input(1);
  if (failed(indices))
    return failure();
  auto broadcast = indices->getDefiningOp<tg::BroadcastToOp>();
  if (!broadcast)
    return false;
  ArrayRef<int64_t> dataShape = ctx.inputShape(0);
  ArrayRef<int64_t> idxShape = ctx.inputShape(1);
  ArrayRef<int64_t> source =
      cast<RankedTensorType>(broadcast.getInput().getType()).getShape();
  int64_t lead = int64_t(idxShape.size()) - int64_t(source.size());
  for (int64_t d = 0; d < int64_t(idxShape.size()); ++d) {
    int64_t size = d >= lead ? source[d - lead] : 1;
    if (d == axis ? size != idxShape[d]
                  : size != 1 || idxShape[d] != dataShape[d] ||
                        (d < axis && dataShape[d] != 1))
      return false;
  }
  SmallVector<std::optional<BoundedDim>, 2> bounds;
  for (unsigned i : {1u, 2u}) {
    std::optional<BoundedDim> b = inputBound(ctx, i);
    if (b && b->dim != axis)
      return false;
    if (b)
      b->dim = 0; // of the rows
    bounds.push_back(b);
  }
  RowsView view{dataShape[axis],
                onnxutil::numElementsOf(dataShape.drop_front(axis + 1)),
                idxShape[axis]};
  OpBuilder &b = ctx.builder();
  auto rowIndices = ctx.reshape(broadcast.getInput(), {view.updates});
  auto updates = ctx.input(2);
  if (failed(rowIndices) || failed(updates))
    return failure();
  auto updateRows = ctx.reshape(*updates, {view.updates, view.rowSize});
  auto idx64 = ctx.convert(*rowIndices, b.getI64Type());
  if (failed(updateRows) || failed(idx64))
    return failure();
  auto targets = ctx.create<tg::ModOp>(
      {*idx64, ctx.scalar(b.getI64Type(), double(view.rows))});
  if (failed(targets))
    return failure();
  if (failed(keepDataBound(ctx, scatterRuntime(ctx, view, *targets,
                                               *updateRows, bounds, r))))
    return failure();
  return true;
}

LogicalResult checkIndexAndUpdateTypes(NodeContext &ctx, bool withUpdates) {
  int32_t it = ctx.inputDataType(1);
  if (it != onnx::TensorProto::INT64 && it != onnx::TensorProto::INT32)
    return ctx.fail("indices must be int32 or int64");
  if (withUpdates && ctx.inputDataType(2) != ctx.inputDataType(0))
    return ctx.fail("updates must have the element type of data");
  return success();
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

LogicalResult importScatterND(NodeContext &ctx) {
  auto r = readReduction(ctx);
  if (failed(r) || failed(checkIndexAndUpdateTypes(ctx, true)))
    return failure();
  ArrayRef<int64_t> dataShape = ctx.inputShape(0);
  ArrayRef<int64_t> idxShape = ctx.inputShape(1);
  if (idxShape.empty() || idxShape.back() < 1 ||
      idxShape.back() > int64_t(dataShape.size()))
    return ctx.fail("indices must have rank >= 1 and a last dimension in "
                    "[1, rank(data)]");
  int64_t k = idxShape.back();
  SmallVector<int64_t> expected(idxShape.drop_back());
  llvm::append_range(expected, dataShape.drop_front(k));
  if (ctx.inputShape(2) != ArrayRef<int64_t>(expected))
    return ctx.fail("updates must have shape " + safetensors::formatShape(expected) +
                    " (indices.shape[:-1] + data.shape[k:]), not " +
                    safetensors::formatShape(ctx.inputShape(2)));
  RowsView view{onnxutil::numElementsOf(dataShape.take_front(k)),
                onnxutil::numElementsOf(dataShape.drop_front(k)),
                onnxutil::numElementsOf(idxShape.drop_back())};
  return scatterByIndices(
      ctx, view, *r,
      [&](const HostTensor &idx) { return tupleTargets(ctx, idx, dataShape); },
      [&](Value idx) { return linearizeIndices(ctx, idx, dataShape); });
}

/// Checks the Elements operators' shapes: indices of data's rank, no longer
/// than data off `axis`; returns the normalised axis.
FailureOr<int64_t> elementsAxis(NodeContext &ctx) {
  ArrayRef<int64_t> dataShape = ctx.inputShape(0);
  ArrayRef<int64_t> idxShape = ctx.inputShape(1);
  if (dataShape.empty() || idxShape.size() != dataShape.size())
    return ctx.fail("data and indices must have the same rank >= 1");
  auto axis = ctx.normalizeAxis(ctx.getInt("axis", 0), dataShape.size());
  if (failed(axis))
    return failure();
  for (size_t d = 0; d < dataShape.size(); ++d)
    if (int64_t(d) != *axis && idxShape[d] > dataShape[d])
      return ctx.fail("indices " + safetensors::formatShape(idxShape) +
                      " are larger than data " + safetensors::formatShape(dataShape) +
                      " off the axis");
  return axis;
}

LogicalResult importScatterElements(NodeContext &ctx) {
  auto r = readReduction(ctx);
  if (failed(r) || failed(checkIndexAndUpdateTypes(ctx, true)))
    return failure();
  auto axis = elementsAxis(ctx);
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> dataShape = ctx.inputShape(0);
  if (ctx.inputShape(2) != ctx.inputShape(1))
    return ctx.fail("updates " + safetensors::formatShape(ctx.inputShape(2)) +
                    " must have the shape of indices " +
                    safetensors::formatShape(ctx.inputShape(1)));
  FailureOr<bool> byRows = scatterBroadcastRows(ctx, *axis, *r);
  if (failed(byRows) || *byRows)
    return failure(failed(byRows));
  RowsView view{onnxutil::numElementsOf(dataShape), 1,
                onnxutil::numElementsOf(ctx.inputShape(1))};
  return scatterByIndices(
      ctx, view, *r,
      [&](const HostTensor &idx) {
        return elementTargets(ctx, idx, dataShape, *axis);
      },
      [&](Value idx) {
        return elementTargetsValue(ctx, idx, dataShape, *axis);
      });
}

LogicalResult importGatherElements(NodeContext &ctx) {
  if (failed(checkIndexAndUpdateTypes(ctx, false)))
    return failure();
  auto axis = elementsAxis(ctx);
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> dataShape = ctx.inputShape(0);
  ArrayRef<int64_t> idxShape = ctx.inputShape(1);
  FailureOr<Value> targets = failure();
  if (const HostTensor *idx = ctx.constant(1)) {
    auto known = elementTargets(ctx, *idx, dataShape, *axis);
    if (failed(known))
      return failure();
    if (const HostTensor *data = ctx.constant(0)) {
      HostTensor flat = *data;
      flat.shape = {flat.numElements()};
      ctx.setOutput(0, gatherHost(flat, *known, idxShape, 0));
      return success();
    }
    HostTensor t;
    t.dataType = onnx::TensorProto::INT64;
    t.shape.assign(idxShape.begin(), idxShape.end());
    t.ints.assign(known->begin(), known->end());
    targets = ctx.materialize(t, "element_targets");
  } else {
    auto indices = ctx.input(1);
    if (failed(indices))
      return failure();
    targets = elementTargetsValue(ctx, *indices, dataShape, *axis);
  }
  auto data = ctx.input(0);
  if (failed(targets) || failed(data))
    return failure();
  auto flat = ctx.reshape(*data, {onnxutil::numElementsOf(dataShape)});
  if (failed(flat))
    return failure();
  auto out = ctx.create<tg::GatherOp>({*flat, *targets}, {ctx.i64Attr("axis", 0)});
  if (failed(out))
    return failure();
  ctx.setOutput(0, *out);
  return success();
}

} // namespace

void onnx_to_tg::populateScatterHandlers(HandlerTable &table) {
  table["GatherElements"] = importGatherElements;
  table["Scatter"] = importScatterElements;
  table["ScatterElements"] = importScatterElements;
  table["ScatterND"] = importScatterND;
}
