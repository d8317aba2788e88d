//===- BoundRules.h - What each ONNX operator does with bounds -*- C++ -*-===//
//
// Part of Loom. The importer treats values of data-dependent length (padded
// to a static bound, GraphImporter.h's BoundedDim), small integer tensors
// computed from such lengths (RunTimeInt) and the value ranges of run-time
// data (Interval) operator by operator. Those facts are kept in one table
// keyed once by the ONNX operator type, beside the handler table: each
// operator's entry says how it is imported when it reads padded values, how
// its outputs' bounds follow from its inputs', what its output's tracked
// integers and value ranges are. An operator without an entry (or a hook)
// has no such rule: a node of it reading a padded value is refused, naming
// the node. The files that own the rules fill the table:
//
//   BoundPropagation.cpp  the bound of an output from its inputs'
//   RunTimeLengths.cpp    Concat, Slice, reductions, ArgMax over one padded
//                         dimension
//   TwicePadded.cpp       nodes reading a value padded in two dimensions
//   RunTimeInts.cpp       Shape, Size and the shape arithmetic on lengths
//   ValueRanges.cpp       the value ranges of run-time data
//
// docs/ONNX/Import.md "Bounded dynamic shapes".
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_CONVERSION_ONNXTOTG_BOUNDRULES_H
#define LOOM_LIB_CONVERSION_ONNXTOTG_BOUNDRULES_H

#include "GraphImporter.h"
#include "Importer.h"

#include <functional>

namespace loom::onnx_to_tg {

using RunTimeInts = llvm::SmallVector<RunTimeInt>;
using Ranges = llvm::SmallVector<Interval>;

/// Integer tensors of at most this many elements are tracked.
constexpr int64_t kMaxTracked = 16;

/// The bound of a node's output, merged from its inputs': the node is
/// refused when they disagree on the length or the dimension.
struct BoundMerger {
  NodeContext &ctx;
  std::optional<BoundedDim> merged;
  LogicalResult add(BoundedDim b);
};

/// The rules of one ONNX operator type. Every hook is optional.
struct BoundRules {
  /// Imports a node whose input \p i (the first such) is padded in the two
  /// dimensions \p bs, instead of the node's handler; false or no hook: the
  /// node is refused (TwicePadded.cpp).
  std::function<FailureOr<bool>(NodeContext &, unsigned i,
                                llvm::ArrayRef<BoundedDim> bs)>
      twicePadded;
  /// Imports a node that computes with padded lengths or tracked integers,
  /// instead of its handler; false: the handler imports it
  /// (RunTimeLengths.cpp, RunTimeInts.cpp).
  std::function<FailureOr<bool>(NodeContext &)> lengths;
  /// After the handler of a node with a padded input and one output: that
  /// output's bound, added to the merger (BoundPropagation.cpp). No hook:
  /// the node is refused.
  std::function<LogicalResult(NodeContext &, llvm::ArrayRef<int64_t> outShape,
                              BoundMerger &)>
      propagate;
  /// As `propagate`, for an operator of several outputs, which sets them all.
  std::function<LogicalResult(NodeContext &)> propagateOutputs;
  /// The handler reads its inputs' bounds and sets its outputs' itself.
  bool ownBounds = false;
  /// After the handler, when an input is tracked: the tracked elements of
  /// output 0 (RunTimeInts.cpp).
  std::function<std::optional<RunTimeInts>(NodeContext &)> track;
  /// After the handler: the ranges of the values of an output of \p n
  /// elements (ValueRanges.cpp).
  std::function<std::optional<Ranges>(NodeContext &, int64_t n)> ranges;
  /// `ranges` gives every output's (all outputs alike), not only output 0's.
  bool rangesOfEveryOutput = false;
};

using BoundRulesTable = llvm::StringMap<BoundRules>;

void populateBoundPropagationRules(BoundRulesTable &table);
void populateRunTimeLengthRules(BoundRulesTable &table);
void populateTwicePaddedRules(BoundRulesTable &table);
void populateRunTimeIntRules(BoundRulesTable &table);
void populateValueRangeRules(BoundRulesTable &table);

/// Adds \p rule to \p op's `lengths`, tried after the ones added before it.
void addLengthsRule(BoundRulesTable &table, llvm::StringRef op,
                    std::function<FailureOr<bool>(NodeContext &)> rule);

/// The rules of the node's operator type (empty ones when it has none).
const BoundRules &getBoundRules(NodeContext &ctx);

//===----------------------------------------------------------------------===//
// Helpers shared by the files above (BoundRules.cpp)
//===----------------------------------------------------------------------===//

/// A handler's result as a rule's: true (imported), or its failure.
FailureOr<bool> handled(LogicalResult result);
/// The imported value of input (output) \p i, null when absent.
ImportedValue *inputValue(NodeContext &ctx, unsigned i);
ImportedValue *outputValue(NodeContext &ctx, unsigned i);
/// Whether input \p i is a tracked integer tensor.
bool isTracked(NodeContext &ctx, unsigned i);
/// The elements of input \p i: tracked, or exact when known at import time.
std::optional<RunTimeInts> intsOf(NodeContext &ctx, unsigned i);
Type i64Type(NodeContext &ctx);
/// A rank-0 i64 constant.
Value i64Scalar(NodeContext &ctx, int64_t v);
/// A constant i64 tensor of \p shape holding 0, 1, ... along its one
/// dimension of size \p n > 1 (or its only element).
FailureOr<Value> iota(NodeContext &ctx, int64_t n,
                      llvm::ArrayRef<int64_t> shape);
/// Element \p k of integer input \p i, read at run time as a rank-0 i64.
FailureOr<Value> readElement(NodeContext &ctx, unsigned i, int64_t k);
/// Sets output \p i's tracked elements.
void setOutputInts(NodeContext &ctx, unsigned i, RunTimeInts ints);
/// Sets output 0's padded dimensions (one or two).
void setOutputBounds(NodeContext &ctx, llvm::ArrayRef<BoundedDim> bs);
/// The node's own handler.
LogicalResult ownHandler(NodeContext &ctx);

/// Shape of a value padded in the dimensions \p bs: their lengths read at
/// run time, tracked (RunTimeInts.cpp).
LogicalResult importShapeOfBounded(NodeContext &ctx,
                                   llvm::ArrayRef<BoundedDim> bs);
/// Concatenation along a padded dimension: one part's static size and
/// run-time length (null: all `size` elements are valid).
struct Segment {
  int64_t size;
  Value length;
};
/// Input \p i, of run-time \p length along \p axis, appended to the parts
/// of a concatenation (\p values, \p segments) unless it is empty there.
LogicalResult addSegment(NodeContext &ctx, unsigned i, int64_t axis,
                         Value length, llvm::SmallVectorImpl<Value> &values,
                         llvm::SmallVectorImpl<Segment> &segments);
/// \p values concatenated along \p axis with each part's padding
/// (\p segments) compacted out: the result and its run-time length there
/// (RunTimeLengths.cpp).
FailureOr<std::pair<Value, Value>>
concatCompacted(NodeContext &ctx, llvm::ArrayRef<Value> values,
                llvm::ArrayRef<Segment> segments, int64_t axis);

} // namespace loom::onnx_to_tg

#endif // LOOM_LIB_CONVERSION_ONNXTOTG_BOUNDRULES_H
