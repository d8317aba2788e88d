//===- CacheInPlaceMatch.h - What tg-cache-in-place matches -----*- C++ -*-===//
//
// Part of Loom. The recognition half of --tg-cache-in-place
// (CacheInPlace.cpp rewrites): a past input whose only reader is its
// concatenation with the new keys or values along the sequence axis, whose
// result (the present) is returned; and the exporter's explicit attention
// over a key and a value present (q . k^T, a scale, a causal or no mask,
// softmax, . v). A candidate that does not fit comes back with the reason,
// at the op it concerns, for the pass's remark.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_DIALECT_TG_TRANSFORMS_CACHEINPLACEMATCH_H
#define LOOM_LIB_DIALECT_TG_TRANSFORMS_CACHEINPLACEMATCH_H

#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace loom::tg {

/// Why a candidate does not fit, and where (an empty reason: the value is
/// no candidate at all, and nothing is said).
struct Refusal {
  mlir::Location where;
  std::string why;
};

/// A past input P [B, H, L, D] and its present R = concat(P, new) [B, H,
/// L + S, D], returned as result `result`.
struct PastCache {
  mutable mlir::BlockArgument past;
  mutable ConcatOp concat;
  unsigned result = 0;
  /// new: [B, H, S, D].
  mlir::Value fresh() const { return concat.getInputs()[1]; }
  int64_t pastLength() const;
  int64_t newLength() const;
};

/// The exporter's attention of query q [B, Hq, S, D] over a key and a value
/// present: softmax(mask(scale * q . k^T)) . v.
struct ExportedAttention {
  const PastCache *key = nullptr, *value = nullptr;
  mlir::Value query;
  double scale = 1.0;
  bool causal = false;
  /// The mask (a select or an add of a constant), if any.
  mlir::Operation *mask = nullptr;
  /// The first pointwise op other than a scale before the mask (a soft
  /// cap's tanh), if any: tg.attention has no place for it, so the
  /// attention stays explicit (CacheInPlaceMask.cpp).
  mlir::Operation *pointwise = nullptr;
  /// An additive mask computed from an input [B, L + S] (HuggingFace's
  /// attention_mask): the input and the ops from it to the mask, in order.
  /// The attention stays explicit, the input becomes [B, C] (positions of
  /// the caches) and the ops are retyped (CacheInPlace.cpp).
  mlir::BlockArgument maskInput;
  llvm::SmallVector<mlir::Operation *> maskChain;
  /// Whether tg.attention cannot express it.
  bool isExplicit() const { return pointwise || maskInput; }
  /// The ops of the subgraph, first (the key's transpose) to last (the
  /// product with the values, whose result the attention replaces).
  llvm::SmallVector<mlir::Operation *> ops;
};

/// The argument's tg.name, or "argN".
std::string argName(mlir::BlockArgument arg);

/// \p arg as a past cache of \p ret's function, or the refusal. A candidate
/// is a float argument, not tied already, named `past...` or the first
/// operand of a returned concatenation along axis 2 of rank-4 tensors.
std::variant<PastCache, Refusal> matchPastCache(mlir::BlockArgument arg,
                                                mlir::func::ReturnOp ret);

/// The attention reading \p key's present, its values one of \p caches, or
/// the refusal.
std::variant<ExportedAttention, Refusal>
matchExportedAttention(const PastCache &key, llvm::ArrayRef<PastCache> caches);

/// The exporter's attention \p a kept explicit over the caches \p keys and
/// \p values [B, Hkv, C, D]: its ops retyped from L + S keys to C, its
/// constant mask replaced by one built at run time from \p offset (the
/// clamped past_length, f32, rank 0 or [B]): query i sees keys 0 ..
/// offset + i (causal) or 0 .. offset + S - 1. Built before the attention's
/// last op; returns what replaces its result (CacheInPlaceMask.cpp).
mlir::Value explicitAttention(mlir::OpBuilder &b, const ExportedAttention &a,
                              mlir::Value keys, mlir::Value values,
                              mlir::Value offset);

} // namespace loom::tg

#endif // LOOM_LIB_DIALECT_TG_TRANSFORMS_CACHEINPLACEMATCH_H
