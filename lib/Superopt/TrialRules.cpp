//===- TrialRules.cpp - The fused-trial rules as checked equations --------===//
//
// Part of Loom. The doc of each rule names the row of --tg-fuse-trials's
// table (docs/Training.md) it states.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/TrialRules.h"

using namespace loom::superopt;

namespace {
struct RuleText {
  const char *text, *doc;
};
} // namespace

static const RuleText kTrialRules[] = {
    // Elementwise: the trial axis broadcasts as a leading batch axis.
    {"trial-add: add(concat{axis=0}(x, y), concat{axis=0}(z, w)) = "
     "concat{axis=0}(add(x, z), add(y, w)) "
     "where x:[1,*R] y:[1,*R] z:[1,*R] w:[1,*R]",
     "elementwise, both operands per trial"},
    {"trial-mul: mul(concat{axis=0}(x, y), concat{axis=0}(z, w)) = "
     "concat{axis=0}(mul(x, z), mul(y, w)) "
     "where x:[1,*R] y:[1,*R] z:[1,*R] w:[1,*R]",
     "elementwise, both operands per trial"},
    {"trial-relu: relu(concat{axis=0}(x, y)) = "
     "concat{axis=0}(relu(x), relu(y)) where x:[1,*R] y:[1,*R]",
     "elementwise, unary"},
    {"trial-shared-scalar: smul(concat{axis=0}(x, y), s) = "
     "concat{axis=0}(smul(x, s), smul(y, s)) where x:[1,*R] y:[1,*R] s:[]",
     "elementwise, a shared operand broadcast (not repeated per trial)"},
    // Products.
    {"trial-matmul-shared-rhs: matmul(concat{axis=0}(x, y), w) = "
     "concat{axis=0}(matmul(x, w), matmul(y, w)) "
     "where x:[1,n,k] y:[1,n,k] w:[k,m]",
     "matmul, a per-trial left operand times a shared right one: one "
     "batched product"},
    // A per-trial value S is the slice reshape{[1,S]} of the stacked
    // value, so the trials' own ops below are the unfused ones.
    {"trial-matmul-per-trial-weights: "
     "bmatmul(concat{axis=0}(reshape{shape=[1,n,k]}(x), "
     "reshape{shape=[1,n,k]}(y)), concat{axis=0}(reshape{shape=[1,k,m]}(w), "
     "reshape{shape=[1,k,m]}(v))) = "
     "concat{axis=0}(reshape{shape=[1,n,m]}(matmul(x, w)), "
     "reshape{shape=[1,n,m]}(matmul(y, v))) "
     "where x:[n,k] y:[n,k] w:[k,m] v:[k,m]",
     "matmul, per-trial left and right operands: one batched product "
     "[N,n,k] x [N,k,m]"},
    {"trial-matmul-shared-lhs: bmatmul(x, "
     "concat{axis=0}(reshape{shape=[1,k,m]}(w), reshape{shape=[1,k,m]}(v))) "
     "= concat{axis=0}(reshape{shape=[1,n,m]}(matmul(x, w)), "
     "reshape{shape=[1,n,m]}(matmul(x, v))) "
     "where x:[n,k] w:[k,m] v:[k,m]",
     "matmul, a shared left operand times per-trial weights: [n,k] x "
     "[N,k,m]"},
    // Convolutions: the trials folded into the channels.
    {"trial-conv: conv(concat{axis=1}(x, y), concat{axis=0}(f, g)) = "
     "concat{axis=1}(conv(x, f), conv(y, g)) "
     "where x:[n,c,h,w] y:[n,c,h,w] f:[o,c,k,l] g:[o,c,k,l] "
     "with n in {1} k in {1,3} l in {1,3}",
     "conv, per-trial input and filter: a grouped convolution, groups = "
     "trials (input [B, N*C, H, W], filter [N*O, C, KH, KW])"},
    {"trial-conv-grouped: conv(concat{axis=1}(x, y), concat{axis=0}(f, g)) "
     "= concat{axis=1}(conv(x, f), conv(y, g)) "
     "where x:[n,c,h,w] y:[n,c,h,w] f:[c,1,k,l] g:[c,1,k,l] "
     "with n in {1} k in {1,3} l in {1,3}",
     "conv, a grouped (depthwise) convolution per trial: groups = g * "
     "trials"},
    {"trial-conv-relu: conv{relu=1}(concat{axis=1}(x, y), "
     "concat{axis=0}(f, g)) = "
     "concat{axis=1}(conv{relu=1}(x, f), conv{relu=1}(y, g)) "
     "where x:[n,c,h,w] y:[n,c,h,w] f:[o,c,k,l] g:[o,c,k,l] "
     "with n in {1} k in {1,3} l in {1,3}",
     "conv with its fused relu"},
    {"trial-conv-shared-input: conv(x, concat{axis=0}(f, g)) = "
     "concat{axis=1}(conv(x, f), conv(x, g)) "
     "where x:[n,c,h,w] f:[o,c,k,l] g:[o,c,k,l] "
     "with n in {1} k in {1,3} l in {1,3}",
     "conv, a shared input and one group: one convolution by the filters "
     "of every trial"},
    {"trial-batchnorm: batchnorm(concat{axis=1}(x, y), "
     "concat{axis=0}(g1, g2), concat{axis=0}(b1, b2), "
     "concat{axis=0}(m1, m2), concat{axis=0}(v1, v2)) = "
     "concat{axis=1}(batchnorm(x, g1, b1, m1, v1), "
     "batchnorm(y, g2, b2, m2, v2)) "
     "where x:[n,c,h,w] y:[n,c,h,w] g1:[c] g2:[c] b1:[c] b2:[c] m1:[c] "
     "m2:[c] v1:[c]>=0 v2:[c]>=0 with n in {1} h in {1,2} w in {1,2}",
     "inference batchnorm, the trials folded into the channels"},
    {"trial-add-channels: add(concat{axis=1}(x, y), concat{axis=1}(z, w)) "
     "= concat{axis=1}(add(x, z), add(y, w)) "
     "where x:[n,c,h,l] y:[n,c,h,l] z:[n,c,h,l] w:[n,c,h,l] "
     "with n in {1} h in {1,2} l in {1,2}",
     "elementwise after a convolution, the trials in the channels"},
    {"trial-bias-grad-channels: reduce_sum{axis=1}(reduce_sum{axis=1}("
     "reduce_sum{axis=0}(concat{axis=1}(x, y)))) = "
     "concat{axis=0}(reduce_sum{axis=1}(reduce_sum{axis=1}("
     "reduce_sum{axis=0}(x))), reduce_sum{axis=1}(reduce_sum{axis=1}("
     "reduce_sum{axis=0}(y)))) "
     "where x:[n,c,h,l] y:[n,c,h,l] with h in {1,2} l in {1,2}",
     "a reduction over the batch and the spatial axes after a convolution "
     "(a bias gradient), the trials in the channels"},
    {"trial-transpose-channels: transpose_nc(concat{axis=1}(x, y)) = "
     "concat{axis=0}(transpose_nc(x), transpose_nc(y)) "
     "where x:[n,c,h,l] y:[n,c,h,l] with h in {1,2} l in {1,2}",
     "transpose [1, 0, 2, 3] of a convolution's result (the filter "
     "gradient's), the trials in the channels: one transpose"},
    {"trial-enlarge: enlarge{kernel=[3,3]}(concat{axis=0}(f, g)) = "
     "concat{axis=0}(enlarge{kernel=[3,3]}(f), enlarge{kernel=[3,3]}(g)) "
     "where f:[o,c,1,1] g:[o,c,1,1]",
     "enlarge, the trials folded into a filter's output channels"},
    // Pooling: the trials folded into the batch, or kept in the channels.
    {"trial-maxpool-batch: maxpool{kernel=[3,3]}(concat{axis=0}(x, y)) = "
     "concat{axis=0}(maxpool{kernel=[3,3]}(x), maxpool{kernel=[3,3]}(y)) "
     "where x:[n,c,h,w] y:[n,c,h,w] with n in {1} h in {1,3}",
     "maxpool, the trials folded into dimension 0"},
    {"trial-maxpool-channels: maxpool{kernel=[3,3]}(concat{axis=1}(x, y)) "
     "= concat{axis=1}(maxpool{kernel=[3,3]}(x), maxpool{kernel=[3,3]}(y)) "
     "where x:[n,c,h,w] y:[n,c,h,w] with n in {1} h in {1,3}",
     "maxpool after a convolution, the trials in the channels"},
    {"trial-avgpool-batch: avgpool{kernel=[3,3]}(concat{axis=0}(x, y)) = "
     "concat{axis=0}(avgpool{kernel=[3,3]}(x), avgpool{kernel=[3,3]}(y)) "
     "where x:[n,c,h,w] y:[n,c,h,w] with n in {1} h in {1,3}",
     "avgpool, the trials folded into dimension 0"},
    {"trial-avgpool-channels: avgpool{kernel=[3,3]}(concat{axis=1}(x, y)) "
     "= concat{axis=1}(avgpool{kernel=[3,3]}(x), avgpool{kernel=[3,3]}(y)) "
     "where x:[n,c,h,w] y:[n,c,h,w] with n in {1} h in {1,3}",
     "avgpool after a convolution, the trials in the channels"},
    // Normalisations over the last axis: the axis shifts with the trial
    // axis in front.
    {"trial-softmax: softmax(concat{axis=0}(x, y)) = "
     "concat{axis=0}(softmax(x), softmax(y)) where x:[1,c] y:[1,c]",
     "softmax of a per-trial vector, its axis shifted by one (the "
     "vocabulary's softmax is of rank 2)"},
    {"trial-layernorm: layernorm(concat{axis=0}(x, y), g, b) = "
     "concat{axis=0}(layernorm(x, g, b), layernorm(y, g, b)) "
     "where x:[1,c] y:[1,c] g:[c] b:[c]",
     "layernorm of a per-trial vector, its axis shifted by one, a shared "
     "scale and bias (the vocabulary's layernorm is of rank 2)"},
    // Reductions and movement: the axes shift by one.
    {"trial-reduce-sum: reduce_sum{axis=1}(concat{axis=0}("
     "reshape{shape=[1,a,b]}(x), reshape{shape=[1,a,b]}(y))) = "
     "concat{axis=0}(reshape{shape=[1,b]}(reduce_sum{axis=0}(x)), "
     "reshape{shape=[1,b]}(reduce_sum{axis=0}(y))) where x:[a,b] y:[a,b]",
     "reduction, its axis shifted by one"},
    {"trial-reduce-mean: reduce_mean{axis=2}(concat{axis=0}("
     "reshape{shape=[1,a,b]}(x), reshape{shape=[1,a,b]}(y))) = "
     "concat{axis=0}(reshape{shape=[1,a]}(reduce_mean{axis=1}(x)), "
     "reshape{shape=[1,a]}(reduce_mean{axis=1}(y))) where x:[a,b] y:[a,b]",
     "reduction, its axis shifted by one"},
    {"trial-reduce-max: reduce_max{axis=1}(concat{axis=0}("
     "reshape{shape=[1,a,b]}(x), reshape{shape=[1,a,b]}(y))) = "
     "concat{axis=0}(reshape{shape=[1,b]}(reduce_max{axis=0}(x)), "
     "reshape{shape=[1,b]}(reduce_max{axis=0}(y))) where x:[a,b] y:[a,b]",
     "reduction, its axis shifted by one"},
    {"trial-reshape: reshape{shape=[2,a,b+b]}(concat{axis=0}("
     "reshape{shape=[1,a,b,2]}(x), reshape{shape=[1,a,b,2]}(y))) = "
     "concat{axis=0}(reshape{shape=[1,a,b+b]}(reshape{shape=[a,b+b]}(x)), "
     "reshape{shape=[1,a,b+b]}(reshape{shape=[a,b+b]}(y))) "
     "where x:[a,b,2] y:[a,b,2]",
     "reshape to [N, shape]"},
    {"trial-transpose: transpose_batch(concat{axis=0}("
     "reshape{shape=[1,a,b]}(x), reshape{shape=[1,a,b]}(y))) = "
     "concat{axis=0}(reshape{shape=[1,b,a]}(transpose(x)), "
     "reshape{shape=[1,b,a]}(transpose(y))) where x:[a,b] y:[a,b]",
     "transpose, its permutation shifted by one"},
    {"trial-split: split{axis=2,sizes=[p,q]}#0(concat{axis=0}("
     "reshape{shape=[1,n,p+q]}(x), reshape{shape=[1,n,p+q]}(y))) = "
     "concat{axis=0}(reshape{shape=[1,n,p]}(split{axis=1,sizes=[p,q]}#0(x)), "
     "reshape{shape=[1,n,p]}(split{axis=1,sizes=[p,q]}#0(y))) "
     "where x:[n,p+q] y:[n,p+q]",
     "split, its axis shifted by one (the first piece)"},
    {"trial-split-second: split{axis=2,sizes=[p,q]}#1(concat{axis=0}("
     "reshape{shape=[1,n,p+q]}(x), reshape{shape=[1,n,p+q]}(y))) = "
     "concat{axis=0}(reshape{shape=[1,n,q]}(split{axis=1,sizes=[p,q]}#1(x)), "
     "reshape{shape=[1,n,q]}(split{axis=1,sizes=[p,q]}#1(y))) "
     "where x:[n,p+q] y:[n,p+q]",
     "split, its axis shifted by one (the second piece)"},
    // Movement: a per-trial concatenation's axis shifts by one.
    {"trial-concat: concat{axis=2}(concat{axis=0}(x, y), "
     "concat{axis=0}(z, w)) = "
     "concat{axis=0}(concat{axis=2}(x, z), concat{axis=2}(y, w)) "
     "where x:[1,n,a] y:[1,n,a] z:[1,n,b] w:[1,n,b]",
     "concat, its axis shifted by one"},
};

llvm::Expected<std::vector<Axiom>>
loom::superopt::trialFusionRules(llvm::ArrayRef<std::string> extra) {
  std::vector<Axiom> rules;
  for (const RuleText &r : kTrialRules)
    if (llvm::Error e = appendAxiom(rules, r.text, r.doc))
      return std::move(e);
  for (const std::string &text : extra)
    if (llvm::Error e = appendAxiom(rules, text, "(given with --axiom)"))
      return std::move(e);
  return std::move(rules);
}
