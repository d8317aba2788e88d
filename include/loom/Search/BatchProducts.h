//===- BatchProducts.h - Independent products as one batched product -*- C++ -*-===//
//
// Part of Loom. TASO's batching substitution, applied programmatically:
// G independent `tg.matmul`s of equal shapes, each of its own activation
// `[d0, ..., M, K]` by its own parameter `[K, N]`, are one batched product
// of the activations stacked on a new leading axis by the parameters
// stacked the same way (`[G, 1, ..., K, N]`, computed from weights alone,
// so folded ahead of time), whose result is split back:
//
//   matmul(x_g, w_g)  =  split_g(reshape(matmul(reshape(concat0(x_1..x_G)),
//                                               stack(w_1..w_G))))
//
// When the members share their parameter (one weight applied at several
// places: the time steps of an unrolled recurrence), the activations' rows
// are stacked instead and the weight is read once:
//
//   matmul(x_g, w)  =  split_g(matmul(concat0(x_1..x_G), w))
//
// (docs/Superopt/Search.md, "Batched products"). The generated rules cannot
// express it: their products have rank-2 weights, and a group has as many
// members as the model has branches (DLRM: 7 bottom MLPs). The rewrite
// pays where each product is small and its step's fixed cost is a large
// part of its time; it is applied to a group when the cost model prices
// the batched form below the products it replaces, each step with its fixed
// cost (kStepSeconds), as the search rewrites on any estimated gain;
// loom-compile keeps the result only when the compiled model measures
// faster.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SEARCH_BATCHPRODUCTS_H
#define LOOM_SEARCH_BATCHPRODUCTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstddef>

namespace loom::cost {
class CostModel;
} // namespace loom::cost

namespace loom::search {

/// Parameters of distinct products are stacked into one folded weight;
/// groups whose stack would be larger are left alone (the folding and the
/// artifact's bytes cost more than the steps saved: CANDLE-Uno's 4096 x
/// 4096 encoder layers).
inline constexpr int64_t kMaxStackedBytes = int64_t(64) << 20;

/// The fixed cost of one step of the compiled model on the CPU (a oneDNN
/// primitive or a kernel called by the runtime), which the op-by-op cost
/// does not count and which batching saves: DLRM's 27 steps run in 12 us
/// in all (idle VM, 2 threads), about 0.45 us a step with its work.
inline constexpr double kStepSeconds = 0.3e-6;

/// The name the search's report gives the rewrite (rules_applied).
inline constexpr const char *kBatchProductsRule = "batch-products";

struct BatchProductsResult {
  /// Products replaced by batched ones, and the batched products made.
  size_t products = 0, groups = 0;
  /// The cost model's estimate of the seconds saved (0 without one).
  double saved = 0;
};

/// Batches the independent products of equal shapes in \p fn's body (its
/// entry block's top level) where \p model (null: always) prices the
/// batched form cheaper; after each group the same elementwise op applied
/// to every piece (relu) is applied once to the batched result, so that
/// the next layer's products batch too. Repeats until nothing changes.
BatchProductsResult batchProducts(mlir::func::FuncOp fn,
                                  cost::CostModel *model);

} // namespace loom::search

#endif // LOOM_SEARCH_BATCHPRODUCTS_H
