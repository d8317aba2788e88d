//===- ValueRanges.cpp - Bounds of run-time data --------------------------===//
//
// Part of Loom. The importer bounds the values of run-time data where the
// graph itself clamps them: a detector clips its boxes to the image
// (`Max(x, 0)`, `Min(x, width)`, `Clip`), and what it computes from them
// afterwards (box sizes, offsets, resize sizes) stays within bounds that
// interval arithmetic gives. ImportedValue::ranges holds them: one interval
// for every element, or, for tensors of at most kMaxRangeElements
// elements, one per element (so that `max(w, 1)` of a box width is known
// to be at least 1). After each node, trackValueRanges computes its
// outputs' ranges from its inputs' (known inputs give their own values);
// trackRunTimeInts (RunTimeLengths.cpp) then tracks a small integer tensor
// whose elements are bounded and non-negative like a shape computed from
// lengths, with its upper bounds: a Resize to such sizes, a ConstantOfShape
// of them or a Loop over such a count has a static bound.
//
// docs/ONNX/Import.md "Value ranges of run-time data".
//
//===----------------------------------------------------------------------===//

#include "BoundRules.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using TP = onnx::TensorProto;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// A bound on the relative rounding of one floating-point operation.
constexpr double kRounding = 1.0 / 128;

bool bounded(const Interval &r) {
  return std::isfinite(r.lo) || std::isfinite(r.hi);
}

/// The union of every interval of \p r.
Interval hull(ArrayRef<Interval> r) {
  Interval out{kInf, -kInf};
  for (const Interval &i : r) {
    out.lo = std::min(out.lo, i.lo);
    out.hi = std::max(out.hi, i.hi);
  }
  return out;
}

ImportedValue *inputOf(NodeContext &ctx, unsigned i) {
  return ctx.hasInput(i) ? ctx.importer().lookup(ctx.node().input(i)) : nullptr;
}

int64_t numElements(NodeContext &ctx, unsigned i) {
  return onnxutil::numElementsOf(ctx.inputShape(i));
}

} // namespace

std::optional<SmallVector<Interval>> onnx_to_tg::inputRanges(NodeContext &ctx,
                                                             unsigned i) {
  ImportedValue *v = inputOf(ctx, i);
  if (!v)
    return std::nullopt;
  if (!v->ranges.empty())
    return Ranges(v->ranges.begin(), v->ranges.end());
  if (v->runTimeInts) {
    Ranges out;
    for (const RunTimeInt &e : *v->runTimeInts)
      out.push_back({e.exact ? double(e.upper) : 0.0, double(e.upper)});
    return out;
  }
  const HostTensor *t = ctx.known(i);
  if (!t || t->numElements() == 0)
    return std::nullopt;
  Ranges out;
  for (int64_t k = 0; k < t->numElements(); ++k) {
    double x = t->asDouble(k);
    if (std::isnan(x))
      return std::nullopt;
    out.push_back({x, x});
  }
  if (int64_t(out.size()) > kMaxRangeElements)
    return Ranges{hull(out)};
  return out;
}

namespace {

/// The ranges of inputs \p a and \p b element by element when both have
/// one interval or as many as the output \p n; else both as their hulls.
bool alignRanges(Ranges &a, Ranges &b, int64_t n) {
  auto fits = [&](const Ranges &r) {
    return r.size() == 1 || int64_t(r.size()) == n;
  };
  if (fits(a) && fits(b) && (a.size() > 1 || b.size() > 1)) {
    if (a.size() == 1)
      a.assign(n, a.front());
    if (b.size() == 1)
      b.assign(n, b.front());
    return true;
  }
  a = {hull(a)};
  b = {hull(b)};
  return false;
}

/// The arithmetic of binaryRanges.
enum class Arith { Add, Sub, Mul, Div, Max, Min };

Interval applyBinary(Arith op, Interval x, Interval y) {
  auto corners = [](double a, double b, double c, double d) {
    double v[] = {a, b, c, d};
    Interval r{kInf, -kInf};
    for (double e : v) {
      if (std::isnan(e))
        return Interval{-kInf, kInf};
      r.lo = std::min(r.lo, e);
      r.hi = std::max(r.hi, e);
    }
    return r;
  };
  switch (op) {
  case Arith::Add:
    return {x.lo + y.lo, x.hi + y.hi};
  case Arith::Sub:
    return {x.lo - y.hi, x.hi - y.lo};
  case Arith::Mul:
    return corners(x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi);
  case Arith::Div:
    if (y.lo <= 0 && y.hi >= 0)
      return {-kInf, kInf};
    return corners(x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi);
  case Arith::Max:
    return {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
  case Arith::Min:
    return {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
  }
  llvm_unreachable("unknown Arith");
}

/// Add, Sub, Mul, Div, and Max and Min of any number of inputs.
std::optional<Ranges> binaryRanges(NodeContext &ctx, int64_t n, Arith op) {
  std::optional<Ranges> acc;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    std::optional<Ranges> r = inputRanges(ctx, i);
    if (!r)
      r = Ranges{{-kInf, kInf}};
    if (!acc) {
      acc = r;
      continue;
    }
    alignRanges(*acc, *r, n);
    for (size_t k = 0; k < acc->size(); ++k)
      (*acc)[k] = applyBinary(op, (*acc)[k], (*r)[k]);
  }
  if (!acc)
    return std::nullopt;
  bool isFloat = onnxutil::isFloatDataType(ctx.inputDataType(0));
  for (Interval &r : *acc) {
    // Integer division truncates toward zero, which keeps the bounds'
    // order; floating-point arithmetic rounds each result, by less than
    // kRounding of it (bfloat16's half ulp is 2^-8).
    if (op == Arith::Div && !isFloat)
      r = {std::trunc(r.lo), std::trunc(r.hi)};
    else if (isFloat && op != Arith::Max && op != Arith::Min)
      r = {r.lo - std::abs(r.lo) * kRounding,
           r.hi + std::abs(r.hi) * kRounding};
  }
  return acc;
}

/// A function that keeps the order of values, applied to both bounds.
std::optional<Ranges> monotone(NodeContext &ctx,
                               llvm::function_ref<double(double)> fn) {
  std::optional<Ranges> r = inputRanges(ctx, 0);
  if (!r)
    return std::nullopt;
  for (Interval &i : *r)
    i = {fn(i.lo), fn(i.hi)};
  return r;
}

/// Clip to the known bounds of inputs 1 and 2 (attributes before opset 11).
std::optional<Ranges> clipRanges(NodeContext &ctx) {
  double lo = -kInf, hi = kInf;
  if (ctx.opset() < 11) {
    lo = ctx.getFloat("min", -kInf);
    hi = ctx.getFloat("max", kInf);
  } else {
    if (const HostTensor *t = ctx.hasInput(1) ? ctx.known(1, 1) : nullptr)
      lo = t->asDouble(0);
    if (const HostTensor *t = ctx.hasInput(2) ? ctx.known(2, 1) : nullptr)
      hi = t->asDouble(0);
  }
  std::optional<Ranges> r = inputRanges(ctx, 0);
  if (!r)
    r = Ranges{{-kInf, kInf}};
  for (Interval &i : *r)
    i = {std::clamp(i.lo, lo, hi), std::clamp(i.hi, lo, hi)};
  return r;
}

/// Concat: per element when every part has its elements' ranges (in the
/// output's order: 1-D parts), else the hull.
std::optional<Ranges> concatRanges(NodeContext &ctx) {
  Ranges all, perElement;
  bool keepElements = true;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    std::optional<Ranges> r = inputRanges(ctx, i);
    if (!r)
      return std::nullopt;
    int64_t n = numElements(ctx, i);
    if (n == 0)
      continue;
    keepElements &= ctx.inputRank(i) == 1 && int64_t(r->size()) == n;
    all.append(r->begin(), r->end());
    perElement.append(r->begin(), r->end());
  }
  if (all.empty())
    return std::nullopt;
  if (keepElements && int64_t(perElement.size()) <= kMaxRangeElements)
    return perElement;
  return Ranges{hull(all)};
}

/// ReduceMax and ReduceMin: over every element of a value with per-element
/// ranges, the extreme of the bounds; otherwise within the input's hull.
std::optional<Ranges> reduceRanges(NodeContext &ctx, int64_t outElements,
                                   bool isMax) {
  std::optional<Ranges> r = inputRanges(ctx, 0);
  if (!r)
    return std::nullopt;
  if (outElements != 1 || r->size() == 1)
    return Ranges{hull(*r)};
  Interval out = r->front();
  for (const Interval &i : *r)
    out = isMax ? Interval{std::max(out.lo, i.lo), std::max(out.hi, i.hi)}
                : Interval{std::min(out.lo, i.lo), std::min(out.hi, i.hi)};
  return Ranges{out};
}

/// Gather of a 1-D value with per-element ranges at known indices picks
/// those; any other Gather stays within the data's hull.
std::optional<Ranges> gatherRanges(NodeContext &ctx) {
  std::optional<Ranges> r = inputRanges(ctx, 0);
  if (!r)
    return std::nullopt;
  const HostTensor *idx = ctx.known(1, kMaxRangeElements);
  if (r->size() == 1 || ctx.inputRank(0) != 1 || !idx || idx->isFloat())
    return Ranges{hull(*r)};
  return pickElements<Interval>(*r, idx->ints);
}

double castBound(double x, int32_t to) {
  if (onnxutil::isFloatDataType(to))
    return x;
  return std::trunc(x);
}

/// Where: the hull of the chosen inputs' ranges.
std::optional<Ranges> whereRanges(NodeContext &ctx, int64_t n) {
  std::optional<Ranges> a = inputRanges(ctx, 1), b = inputRanges(ctx, 2);
  if (!a || !b)
    return std::nullopt;
  alignRanges(*a, *b, n);
  for (size_t k = 0; k < a->size(); ++k)
    (*a)[k] = {std::min((*a)[k].lo, (*b)[k].lo),
               std::max((*a)[k].hi, (*b)[k].hi)};
  return a;
}

std::optional<Ranges> castRanges(NodeContext &ctx) {
  int32_t to = ctx.getInt("to", 0);
  if (to == TP::BOOL)
    return std::nullopt;
  return monotone(ctx, [&](double x) { return castBound(x, to); });
}

std::optional<Ranges> negRanges(NodeContext &ctx) {
  std::optional<Ranges> r = inputRanges(ctx, 0);
  if (r)
    for (Interval &i : *r)
      i = {-i.hi, -i.lo};
  return r;
}

} // namespace

void onnx_to_tg::trackValueRanges(NodeContext &ctx) {
  const BoundRules &rules = getBoundRules(ctx);
  for (unsigned o = 0; o < ctx.numOutputs(); ++o) {
    if (!ctx.hasOutput(o))
      continue;
    ImportedValue *out = ctx.importer().lookup(ctx.node().output(o));
    if (!out || out->known || out->sequence || !out->ranges.empty())
      continue;
    if (!rules.ranges || (o > 0 && !rules.rangesOfEveryOutput))
      continue;
    int64_t n = onnxutil::numElementsOf(out->shape);
    std::optional<Ranges> r = rules.ranges(ctx, n);
    if (!r || r->empty() || !bounded(hull(*r)))
      continue;
    if (int64_t(r->size()) != n)
      r = Ranges{hull(*r)};
    out->ranges = std::move(*r);
  }
}

void onnx_to_tg::populateValueRangeRules(BoundRulesTable &table) {
  using Rule = std::function<std::optional<Ranges>(NodeContext &, int64_t)>;
  // Output elements some of the input's, in the same row-major order:
  // per-element ranges carry over.
  for (StringRef op :
       {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    table[op].ranges = [](NodeContext &c, int64_t) {
      return inputRanges(c, 0);
    };
  // Output elements some of input 0's: within its hull.
  for (StringRef op : {"Transpose", "Slice", "Expand", "Tile", "Split",
                       "GatherElements", "GatherND", "TopK", "Compress"})
    table[op].ranges = [](NodeContext &c, int64_t) -> std::optional<Ranges> {
      std::optional<Ranges> r = inputRanges(c, 0);
      return r ? std::optional<Ranges>(Ranges{hull(*r)}) : std::nullopt;
    };
  table["Split"].rangesOfEveryOutput = true;
  table["Gather"].ranges = [](NodeContext &c, int64_t) {
    return gatherRanges(c);
  };
  table["Concat"].ranges = [](NodeContext &c, int64_t) {
    return concatRanges(c);
  };
  for (auto [op, arith] : {std::pair{"Add", Arith::Add},
                           {"Sub", Arith::Sub},
                           {"Mul", Arith::Mul},
                           {"Div", Arith::Div},
                           {"Max", Arith::Max},
                           {"Min", Arith::Min}})
    table[op].ranges = [arith = arith](NodeContext &c, int64_t n) {
      return binaryRanges(c, n, arith);
    };
  table["Clip"].ranges = [](NodeContext &c, int64_t) { return clipRanges(c); };
  for (auto [op, isMax] : {std::pair{"ReduceMax", true}, {"ReduceMin", false}})
    table[op].ranges = [isMax = isMax](NodeContext &c, int64_t n) {
      return reduceRanges(c, n, isMax);
    };
  table["Where"].ranges = whereRanges;
  table["Cast"].ranges = [](NodeContext &c, int64_t) { return castRanges(c); };
  table["Neg"].ranges = [](NodeContext &c, int64_t) { return negRanges(c); };
  auto monotoneRule = [](double (*fn)(double)) -> Rule {
    return [fn](NodeContext &c, int64_t) { return monotone(c, fn); };
  };
  table["Floor"].ranges = monotoneRule([](double x) { return std::floor(x); });
  table["Ceil"].ranges = monotoneRule([](double x) { return std::ceil(x); });
  table["Round"].ranges =
      monotoneRule([](double x) { return std::nearbyint(x); });
  table["Relu"].ranges =
      monotoneRule([](double x) { return std::max(x, 0.0); });
}
