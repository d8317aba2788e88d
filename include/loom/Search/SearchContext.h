//===- SearchContext.h - Interned ops, shape rules and costs ----*- C++ -*-===//
//
// Part of Loom. The services every search structure shares:
//
//  * an op table: each distinct (op name, canonical attributes) is interned
//    once and named by a small integer (OpId), so that term graphs, e-graphs
//    and rule patterns compare ops by integer;
//  * an oracle that, for an op applied to operands of given types, answers
//    whether the application is valid, its result types (from the op's own
//    `inferReturnTypes`, i.e. the tg shape rules of TypeInference.cpp, and
//    the op verifier) and its cost (from a loom::cost::CostModel). Answers
//    are memoised: a search asks the same question many times.
//
// The oracle asks MLIR itself: it builds the op, detached, over scratch
// values of the operand types, runs inference and verification, and asks
// the cost model. No shape rule is written twice.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_SEARCHCONTEXT_H
#define LOOM_SEARCH_SEARCHCONTEXT_H

#include "loom/Cost/CostModel.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace loom::search {

using OpId = uint32_t;

/// How a constant of a rule pattern is matched and instantiated at other
/// shapes (see docs/Superopt/Search.md).
enum class ConstKind : uint8_t {
  None,   ///< not a constant
  Splat,  ///< every element equal: the same value at any shape
  Tagged, ///< one of the rule generator's constant families (`loom.const`)
  Exact,  ///< any other constant: only at its own shape
};

/// An interned op: a name and its canonical inherent attributes, or one of
/// two pseudo ops of the search structures (a function argument, the i-th
/// result of a multi-result op in an e-graph).
struct OpInfo {
  enum class Kind : uint8_t { Op, Arg, Proj };
  Kind kind = Kind::Op;
  /// Argument number (Arg) or result number (Proj).
  unsigned index = 0;
  std::optional<mlir::OperationName> name;
  mlir::DictionaryAttr attrs;

  /// Ops of one shape class differ at most in their shape-carrying
  /// attributes (split sizes, slice bounds, resize sizes) and, for constants,
  /// in the shape of a splat value.
  uint32_t shapeClass = 0;
  /// The values of the shape-carrying attributes, in a fixed order.
  llvm::SmallVector<int64_t, 4> shapeValues;
  /// tg.conv: the filter's spatial dims (operand 1, dims 2 and 3) are
  /// matched literally, like the strides and pads they go with.
  bool literalKernel = false;
  bool commutative = false;
  /// tg.weight or tg.constant: no operands, known before the model runs.
  bool leaf = false;
  /// The result types follow from operands and attributes (the op
  /// implements InferTypeOpInterface); else they must be given.
  bool infersTypes = false;
  /// Only a count of results when known without types (1 for most ops).
  std::optional<unsigned> numResults;
  ConstKind constKind = ConstKind::None;

  bool isOp() const { return kind == Kind::Op; }
  bool isArg() const { return kind == Kind::Arg; }
  bool isProj() const { return kind == Kind::Proj; }
};

/// The answer of the oracle for one op application.
struct OpEval {
  bool valid = false;
  llvm::SmallVector<mlir::Type, 1> resultTypes;
  /// Estimated seconds (0 for ops that launch no kernel).
  double cost = 0;
};

/// The default SearchContext::storedBytePrice, in seconds per byte: what
/// compiling and loading a byte of folded weights costs on the shared
/// 2-core VM (about 5 ns: NasRNN's rewritten 75 MB took 0.12 s to fold,
/// 0.19 s to emit and link, 0.05 s to load), amortised over 10^6 runs.
/// Far below what reading a byte costs at run time (about 1e-10 s) and
/// below what merging two products saves (a step, 0.1-0.3 us, against
/// 4 MB of NasRNN's merged weights: 0.02 us), so it decides between graphs
/// that run equally fast: the one whose recurrence steps share their merged
/// weights (docs/Superopt/Search.md, "Stored weights"). At 5e-14 the 4 MB
/// outweigh the step and NasRNN's products stay unmerged.
inline constexpr double kStoredBytePrice = 5e-15;

class SearchContext {
public:
  /// `model` may be null: every op then costs its roofline-free default of
  /// 1 (unit tests).
  SearchContext(mlir::MLIRContext *context, cost::CostModel *model);
  ~SearchContext();
  SearchContext(const SearchContext &) = delete;
  SearchContext &operator=(const SearchContext &) = delete;

  mlir::MLIRContext *getContext() const { return context; }
  cost::CostModel *getCostModel() const { return model; }

  /// Seconds charged per byte of each distinct folded constant a run-time
  /// op reads (kStoredBytePrice unless set; 0: weights are free).
  double getStoredBytePrice() const { return storedBytePrice; }
  void setStoredBytePrice(double price) { storedBytePrice = price; }

  /// Interns `name` with attributes `attrs`, canonicalised: default values
  /// filled in, negative `axis`/`axes` entries (which index operand 0's
  /// dimensions in every tg op that has them) made non-negative given
  /// `operand0Rank`, discardable attributes dropped.
  OpId internOp(mlir::OperationName name, mlir::DictionaryAttr attrs,
                std::optional<int64_t> operand0Rank);
  /// Interns the op of an existing operation (its inherent attributes).
  OpId internOp(mlir::Operation *op);
  OpId argOp(unsigned index);
  OpId projOp(unsigned index);
  const OpInfo &op(OpId id) const { return ops[id]; }
  size_t numOps() const { return ops.size(); }

  /// Whether `op` applied to operands of `operandTypes` is valid, and its
  /// result types and cost. `hintTypes` are the result types to use for ops
  /// that do not infer them (reshape, broadcast_to, cast, constant, weight)
  /// and the number of results of variadic ones; they are ignored otherwise.
  const OpEval &evaluate(OpId op, llvm::ArrayRef<mlir::Type> operandTypes,
                         llvm::ArrayRef<mlir::Type> hintTypes);

  /// The attribute names of `opName` whose values are dimension sizes.
  static llvm::ArrayRef<llvm::StringRef> shapeAttrNames(llvm::StringRef opName);

  /// Whether `id` is a tg.constant whose value is the rule generator's
  /// constant family `tag` at its own type (see makeTaggedConstant).
  /// Memoised: the matcher asks for every candidate node, and building a
  /// 512x512 identity each time costs more than the whole search.
  bool isTaggedConstant(OpId id, llvm::StringRef tag);

  /// A printable form of an op for diagnostics (`tg.split{axis = 1 ...}`).
  std::string describe(OpId id) const;

  /// Statistics: evaluate() calls and how many were answered by the memo.
  size_t evaluations() const { return numEvaluations; }
  size_t evaluationMisses() const { return evalMemo.size(); }

private:
  mlir::Value scratchValue(mlir::Type type);
  void computeDerived(OpInfo &info);

  mlir::MLIRContext *context;
  cost::CostModel *model;
  double storedBytePrice = kStoredBytePrice;
  std::vector<OpInfo> ops;
  std::map<std::pair<const void *, const void *>, OpId> opIds;
  std::vector<OpId> argOps, projOps;
  std::map<std::pair<const void *, const void *>, uint32_t> shapeClasses;

  struct KeyHash {
    size_t operator()(const std::vector<const void *> &k) const;
  };
  std::unordered_map<std::vector<const void *>, OpEval, KeyHash> evalMemo;
  size_t numEvaluations = 0;

  llvm::DenseMap<std::pair<OpId, const void *>, bool> taggedMemo;

  std::unique_ptr<mlir::Block> scratch;
  llvm::DenseMap<mlir::Type, mlir::Value> scratchValues;
};

/// The value of a constant of the rule generator's family `tag` at `type`
/// (f32): `const_one` all ones, `const_imm` the identity matrix,
/// `const_iconv` the identity convolution kernel (centre tap), `const_pool`
/// the average-pooling kernel 1/(KH*KW). Null for an unknown tag or type,
/// and for an identity of more than kMaxTaggedConstantElements elements
/// (a rewrite that builds one, as `x = x @ I` at a vocabulary's width,
/// would cost gigabytes at compile time and never pay; the uniform
/// families are splats of any size).
constexpr int64_t kMaxTaggedConstantElements = int64_t(1) << 22;
mlir::DenseElementsAttr makeTaggedConstant(llvm::StringRef tag,
                                           mlir::RankedTensorType type);

} // namespace loom::search

#endif // LOOM_SEARCH_SEARCHCONTEXT_H
