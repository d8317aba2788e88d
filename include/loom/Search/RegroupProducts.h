//===- RegroupProducts.h - Products in one canonical grouping ---*- C++ -*-===//
//
// Part of Loom. The search merges the products of one activation by a
// parameter (`x W_a`, `x W_b` -> `x concat(W_a, W_b)` split; rule_336~)
// a pair at a time, over rounds that stop at node limits, so the steps of
// an unrolled recurrence end with different groupings of the same column
// blocks: NasRNN's 1024 x 4096 merge in one step, 1536 + 1536 + 1024
// columns in another. Each grouping is a folded constant of its own, which
// no common-subexpression elimination can share (75 MB folded, compiled
// and loaded against 17 MB as written).
//
// Where the products of an activation `x` by parameters (at least one of
// them already a merge: a `tg.concat` along the columns) are read only
// through splits along the columns that end at the parameters' column
// blocks, this rewrite makes them one product by the blocks concatenated
// in a canonical order (the order of their definitions in the function),
// split into the blocks:
//
//   x concat(b_3, b_1) -> split -> y_3, y_1;  x b_2 -> y_2
//     =>  x concat(b_1, b_2, b_3) -> split -> y_1, y_2, y_3
//
// so every step that multiplies by the same blocks reads one and the same
// constant. The search applies it to its result when the cost (which
// prices the folded constants' bytes once each, TermGraph.h) is lower
// (docs/Superopt/Search.md, "Stored weights").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_REGROUPPRODUCTS_H
#define LOOM_SEARCH_REGROUPPRODUCTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstddef>

namespace loom::search {

/// The name the search's report gives the rewrite (rules_applied).
inline constexpr const char *kRegroupProductsRule = "regroup-products";

/// Regroups the products of each activation in \p fn's entry block (its top
/// level) as above; returns how many products were replaced.
size_t regroupProducts(mlir::func::FuncOp fn);

} // namespace loom::search

#endif // LOOM_SEARCH_REGROUPPRODUCTS_H
