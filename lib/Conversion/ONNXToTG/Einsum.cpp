//===- Einsum.cpp - ONNX Einsum to tg -------------------------------------===//
//
// Part of Loom. Einsum has no tg op of its own: the importer lowers it into
// ops that tg has (docs/ONNX/Import.md states the contract). Every dimension
// of every operand carries a label, a letter of the equation or one of the
// dimensions an ellipsis stands for. A letter that repeats within one operand
// takes the diagonal (a strided tg.slice of the repeated dimensions merged
// into one); the operands are then contracted pairwise, left to right. Of
// two operands, each label is a batch label (both have it and the result
// needs it), a contracted one (both have it, nothing after needs it), a free
// one (one has it, the result needs it) or summed out (one has it, nothing
// needs it: tg.reduce_sum before the product). The pair becomes one batched
// tg.matmul of [batch, free, contracted] by [batch, contracted, free]
// (transposes where the operands are not in that order, reshapes to at most
// rank 3), or a broadcasting tg.mul when nothing is contracted. The last
// result is summed and transposed to the output's order.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;

namespace {

/// A dimension's label: 'A'-'Z' are 0-25 and 'a'-'z' 26-51 (so that labels
/// sort as their letters do), and the k-th dimension an ellipsis stands for,
/// counted over the broadcast of every operand's ellipsis, is kNumLetters + k.
using Label = int64_t;
constexpr Label kNumLetters = 52;
using Labels = SmallVector<Label, 8>;

std::optional<Label> letterLabel(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return 26 + (c - 'a');
  return std::nullopt;
}

std::string labelName(Label label) {
  if (label < 26)
    return "'" + std::string(1, static_cast<char>('A' + label)) + "'";
  if (label < kNumLetters)
    return "'" + std::string(1, static_cast<char>('a' + label - 26)) + "'";
  return "dimension " + std::to_string(label - kNumLetters) + " of '...'";
}

/// One term of the equation as written: its letters, and where "..." stands
/// among them.
struct Term {
  Labels letters;
  std::optional<size_t> ellipsisAt;
};

/// Parses one term (spaces already removed); an error message on failure.
std::optional<std::string> parseTerm(StringRef text, Term &term) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with("...")) {
      if (term.ellipsisAt)
        return std::string("'...' appears twice in one term");
      term.ellipsisAt = term.letters.size();
      i += 2;
      continue;
    }
    std::optional<Label> label = letterLabel(text[i]);
    if (!label)
      return "'" + std::string(1, text[i]) +
             "' is neither a letter nor part of '...'";
    term.letters.push_back(*label);
  }
  return std::nullopt;
}

/// The labels of a term whose ellipsis stands for `ellipsisRank` dimensions,
/// the last `ellipsisRank` of the `broadcastRank` that all ellipses span.
Labels expandTerm(const Term &term, int64_t ellipsisRank,
                  int64_t broadcastRank) {
  Labels labels(term.letters.begin(), term.letters.end());
  if (term.ellipsisAt) {
    Labels dims;
    for (int64_t k = broadcastRank - ellipsisRank; k < broadcastRank; ++k)
      dims.push_back(kNumLetters + k);
    labels.insert(labels.begin() + *term.ellipsisAt, dims.begin(), dims.end());
  }
  return labels;
}

/// An equation resolved against the inputs' ranks: the labels of every
/// operand and of the output, and the size of every label.
struct Equation {
  SmallVector<Labels> inputs;
  Labels output;
  /// The size of each label, broadcast over the operands (1 against n is n).
  llvm::SmallDenseMap<Label, int64_t> sizes;
};

/// The output of an equation without "->": the ellipsis' dimensions, then
/// the letters that appear exactly once, in alphabetical order.
Labels implicitOutput(ArrayRef<Term> terms, int64_t broadcastRank) {
  Labels output;
  for (int64_t k = 0; k < broadcastRank; ++k)
    output.push_back(kNumLetters + k);
  SmallVector<int> counts(kNumLetters, 0);
  for (const Term &term : terms)
    for (Label label : term.letters)
      ++counts[label];
  for (Label label = 0; label < kNumLetters; ++label)
    if (counts[label] == 1)
      output.push_back(label);
  return output;
}

/// An error of the node that names its equation.
LogicalResult failEquation(NodeContext &ctx, StringRef equation,
                           const Twine &message) {
  return ctx.fail("equation '" + equation + "': " + message);
}

/// Parses `text` against the node's inputs; an error naming the node and the
/// equation when it is malformed or does not fit the inputs.
FailureOr<Equation> parseEquation(NodeContext &ctx, StringRef text) {
  auto fail = [&](const Twine &message) {
    return failEquation(ctx, text, message);
  };
  std::string compact;
  for (char c : text)
    if (!llvm::isSpace(c))
      compact.push_back(c);
  StringRef body(compact);
  bool explicitOutput = body.contains("->");
  auto [lhs, rhs] = body.split("->");
  SmallVector<StringRef> texts;
  lhs.split(texts, ',');
  if (texts.size() != ctx.numInputs())
    return fail("it has " + Twine(texts.size()) +
                " operand terms but the node has " + Twine(ctx.numInputs()) +
                " input(s)");

  SmallVector<Term> terms(texts.size());
  SmallVector<int64_t> ellipsisRanks(texts.size(), 0);
  int64_t broadcastRank = 0;
  for (auto [i, termText] : llvm::enumerate(texts)) {
    if (auto error = parseTerm(termText, terms[i]))
      return fail(*error);
    int64_t rank = ctx.inputRank(i), letters = terms[i].letters.size();
    if (terms[i].ellipsisAt ? letters > rank : letters != rank)
      return fail("term " + Twine(i) + " '" + termText + "' has " +
                  Twine(letters) + " letters for input " + Twine(i) +
                  " of rank " + Twine(rank));
    ellipsisRanks[i] = rank - letters;
    broadcastRank = std::max(broadcastRank, ellipsisRanks[i]);
  }

  Equation eq;
  for (auto [i, term] : llvm::enumerate(terms)) {
    eq.inputs.push_back(expandTerm(term, ellipsisRanks[i], broadcastRank));
    ArrayRef<int64_t> shape = ctx.inputShape(i);
    for (auto [label, size] : llvm::zip_equal(eq.inputs.back(), shape)) {
      auto [it, inserted] = eq.sizes.try_emplace(label, size);
      if (inserted || it->second == size || size == 1)
        continue;
      if (it->second != 1)
        return fail("label " + labelName(label) + " has sizes " +
                    Twine(it->second) + " and " + Twine(size));
      it->second = size;
    }
  }

  if (!explicitOutput) {
    eq.output = implicitOutput(terms, broadcastRank);
    return eq;
  }
  Term out;
  if (auto error = parseTerm(rhs, out))
    return fail(*error);
  if (!out.ellipsisAt && broadcastRank > 0)
    return fail("the output has no '...', which stands for " +
                Twine(broadcastRank) + " dimension(s) of the operands");
  eq.output = expandTerm(out, broadcastRank, broadcastRank);
  for (auto [i, label] : llvm::enumerate(eq.output)) {
    if (!eq.sizes.count(label))
      return fail("output label " + labelName(label) + " is in no operand");
    if (llvm::is_contained(ArrayRef(eq.output).take_front(i), label))
      return fail("output label " + labelName(label) + " repeats");
  }
  return eq;
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

/// A value with a label per dimension.
struct Operand {
  Value value;
  Labels labels;

  ArrayRef<int64_t> shape() const {
    return cast<RankedTensorType>(value.getType()).getShape();
  }
  bool has(Label label) const { return llvm::is_contained(labels, label); }
  int64_t size(Label label) const {
    return shape()[llvm::find(labels, label) - labels.begin()];
  }
  /// The product of the sizes of `some` of the labels.
  int64_t volume(ArrayRef<Label> some) const {
    int64_t n = 1;
    for (Label label : some)
      n *= size(label);
    return n;
  }
  /// The sizes of `some` of the labels.
  SmallVector<int64_t> sizes(ArrayRef<Label> some) const {
    return llvm::map_to_vector(some, [&](Label l) { return size(l); });
  }
};

/// Transposes `x` so that its labels are `order` (a permutation of them).
FailureOr<Operand> arrange(NodeContext &ctx, const Operand &x,
                           ArrayRef<Label> order) {
  SmallVector<int64_t> perm = llvm::map_to_vector(order, [&](Label l) {
    return static_cast<int64_t>(llvm::find(x.labels, l) - x.labels.begin());
  });
  auto t = ctx.transpose(x.value, perm);
  if (failed(t))
    return failure();
  return Operand{*t, Labels(order.begin(), order.end())};
}

/// Removes the dimensions whose label satisfies `drop`: summed with
/// tg.reduce_sum when `sum`, else (they must have size 1) reshaped away; a
/// sum over dimensions of size 1 only is a reshape too.
FailureOr<Operand> removeDims(NodeContext &ctx, const Operand &x,
                              llvm::function_ref<bool(Label)> drop, bool sum) {
  SmallVector<int64_t> axes, kept;
  Labels labels;
  bool reduces = false;
  for (auto [d, label] : llvm::enumerate(x.labels)) {
    if (drop(label)) {
      axes.push_back(d);
      reduces |= x.shape()[d] != 1;
    } else {
      labels.push_back(label);
      kept.push_back(x.shape()[d]);
    }
  }
  if (axes.empty())
    return x;
  FailureOr<Value> y = failure();
  if (sum && reduces)
    y = ctx.create<tg::ReduceSumOp>(x.value, {ctx.arrayAttr("axes", axes),
                                              ctx.boolAttr("keepdims", false)});
  else
    y = ctx.reshape(x.value, kept);
  if (failed(y))
    return failure();
  return Operand{*y, labels};
}

/// Takes the diagonal of every label that repeats in `x`: the k dimensions
/// of size n that share a label are moved last and merged into one of n^k
/// elements, whose diagonal is every (1 + n + ... + n^(k-1))-th.
FailureOr<Operand> takeDiagonals(NodeContext &ctx, Operand x,
                                 StringRef equation, unsigned index) {
  auto repeats = [&](Label l) { return llvm::count(x.labels, l) > 1; };
  for (auto it = llvm::find_if(x.labels, repeats); it != x.labels.end();
       it = llvm::find_if(x.labels, repeats)) {
    Label label = *it;
    int64_t n = x.size(label), merged = 1, stride = 0;
    Labels rest;
    SmallVector<int64_t> perm, shape, diagonal;
    for (auto [d, other] : llvm::enumerate(x.labels)) {
      if (other == label) {
        diagonal.push_back(d);
        continue;
      }
      rest.push_back(other);
      perm.push_back(d);
      shape.push_back(x.shape()[d]);
    }
    for (int64_t d : diagonal) {
      if (x.shape()[d] != n)
        return failEquation(ctx, equation,
                            "label " + labelName(label) + " repeats in term " +
                                Twine(index) + " over dimensions of sizes " +
                                Twine(n) + " and " + Twine(x.shape()[d]));
      perm.push_back(d);
      stride += merged;
      merged *= n;
    }
    shape.push_back(merged);
    auto t = ctx.transpose(x.value, perm);
    auto r = succeeded(t) ? ctx.reshape(*t, shape) : t;
    if (failed(r))
      return failure();
    SmallVector<int64_t> starts(shape.size(), 0), strides(shape.size(), 1);
    strides.back() = stride;
    auto s = ctx.create<tg::SliceOp>(*r, {ctx.arrayAttr("starts", starts),
                                          ctx.arrayAttr("limits", shape),
                                          ctx.arrayAttr("strides", strides)});
    if (failed(s))
      return failure();
    rest.push_back(label);
    x = Operand{*s, rest};
  }
  return x;
}

/// The labels of a pair by their role in its product.
struct PairRoles {
  Labels batch, contracted, lhsFree, rhsFree;
};

/// Roles with `lhs` on the left: batch and contracted labels in lhs's order.
PairRoles classify(const Operand &lhs, const Operand &rhs,
                   ArrayRef<Label> keep) {
  PairRoles roles;
  for (Label label : lhs.labels) {
    if (!rhs.has(label))
      roles.lhsFree.push_back(label);
    else if (llvm::is_contained(keep, label))
      roles.batch.push_back(label);
    else
      roles.contracted.push_back(label);
  }
  for (Label label : rhs.labels)
    if (!lhs.has(label))
      roles.rhsFree.push_back(label);
  return roles;
}

Labels concat(ArrayRef<Label> a, ArrayRef<Label> b, ArrayRef<Label> c = {}) {
  Labels all(a.begin(), a.end());
  all.append(b.begin(), b.end());
  all.append(c.begin(), c.end());
  return all;
}

/// How many of the two operands must be transposed for `lhs` x `rhs`.
int transposesFor(const Operand &lhs, const Operand &rhs,
                  ArrayRef<Label> keep) {
  PairRoles r = classify(lhs, rhs, keep);
  return (concat(r.batch, r.lhsFree, r.contracted) != lhs.labels) +
         (concat(r.batch, r.contracted, r.rhsFree) != rhs.labels);
}

/// `lhs` x `rhs` as one tg.matmul of [batch, m, k] by [batch, k, n] (rank 2
/// without batch labels); the result's labels are batch, lhs free, rhs free.
FailureOr<Operand> matmulPair(NodeContext &ctx, const Operand &lhsIn,
                              const Operand &rhsIn, const PairRoles &r) {
  auto lhs = arrange(ctx, lhsIn, concat(r.batch, r.lhsFree, r.contracted));
  auto rhs = arrange(ctx, rhsIn, concat(r.batch, r.contracted, r.rhsFree));
  if (failed(lhs) || failed(rhs))
    return failure();
  int64_t b = lhs->volume(r.batch), m = lhs->volume(r.lhsFree),
          k = lhs->volume(r.contracted), n = rhs->volume(r.rhsFree);
  bool batched = !r.batch.empty();
  auto a3 = ctx.reshape(lhs->value, batched ? SmallVector<int64_t>{b, m, k}
                                            : SmallVector<int64_t>{m, k});
  auto b3 = ctx.reshape(rhs->value, batched ? SmallVector<int64_t>{b, k, n}
                                            : SmallVector<int64_t>{k, n});
  if (failed(a3) || failed(b3))
    return failure();
  auto product = ctx.create<tg::MatmulOp>({*a3, *b3});
  if (failed(product))
    return failure();
  SmallVector<int64_t> shape = lhs->sizes(r.batch);
  llvm::append_range(shape, lhs->sizes(r.lhsFree));
  llvm::append_range(shape, rhs->sizes(r.rhsFree));
  auto y = ctx.reshape(*product, shape);
  if (failed(y))
    return failure();
  return Operand{*y, concat(r.batch, r.lhsFree, r.rhsFree)};
}

/// `lhs` * `rhs` when nothing is contracted: [batch, lhs free, 1...] times
/// [batch, 1..., rhs free], broadcast by tg.mul.
FailureOr<Operand> multiplyPair(NodeContext &ctx, const Operand &lhsIn,
                                const Operand &rhsIn, const PairRoles &r) {
  auto lhs = arrange(ctx, lhsIn, concat(r.batch, r.lhsFree));
  auto rhs = arrange(ctx, rhsIn, concat(r.batch, r.rhsFree));
  if (failed(lhs) || failed(rhs))
    return failure();
  SmallVector<int64_t> lhsShape = lhs->sizes(concat(r.batch, r.lhsFree));
  lhsShape.append(r.rhsFree.size(), 1);
  SmallVector<int64_t> rhsShape = rhs->sizes(r.batch);
  rhsShape.append(r.lhsFree.size(), 1);
  llvm::append_range(rhsShape, rhs->sizes(r.rhsFree));
  auto a = ctx.reshape(lhs->value, lhsShape);
  auto b = ctx.reshape(rhs->value, rhsShape);
  if (failed(a) || failed(b))
    return failure();
  auto y = ctx.create<tg::MulOp>({*a, *b});
  if (failed(y))
    return failure();
  return Operand{*y, concat(r.batch, r.lhsFree, r.rhsFree)};
}

/// Contracts `a` with `b`; the result keeps the labels in `keep` that either
/// has.
FailureOr<Operand> contract(NodeContext &ctx, Operand a, Operand b,
                            ArrayRef<Label> keep) {
  // A dimension of size 1 against a larger one in the other operand
  // broadcasts: it is dropped, and the label is the other operand's alone.
  auto a1 = removeDims(
      ctx, a,
      [&](Label l) { return b.has(l) && a.size(l) == 1 && b.size(l) != 1; },
      /*sum=*/false);
  if (failed(a1))
    return failure();
  auto b1 = removeDims(
      ctx, b,
      [&](Label l) { return a1->has(l) && b.size(l) == 1 && a1->size(l) != 1; },
      /*sum=*/false);
  if (failed(b1))
    return failure();
  // A label of one operand that nothing later needs is summed out first.
  auto notNeeded = [keep](const Operand &other) {
    return [keep, o = &other](Label l) {
      return !o->has(l) && !llvm::is_contained(keep, l);
    };
  };
  auto a2 = removeDims(ctx, *a1, notNeeded(*b1), /*sum=*/true);
  if (failed(a2))
    return failure();
  auto b2 = removeDims(ctx, *b1, notNeeded(*a2), /*sum=*/true);
  if (failed(b2))
    return failure();

  PairRoles roles = classify(*a2, *b2, keep);
  if (roles.contracted.empty())
    return multiplyPair(ctx, *a2, *b2, roles);
  // Whichever operand order needs fewer transposes goes (a first on a tie).
  if (transposesFor(*b2, *a2, keep) < transposesFor(*a2, *b2, keep))
    return matmulPair(ctx, *b2, *a2, classify(*b2, *a2, keep));
  return matmulPair(ctx, *a2, *b2, roles);
}

LogicalResult importEinsum(NodeContext &ctx) {
  if (!ctx.hasAttr("equation"))
    return ctx.fail("attribute 'equation' is required");
  std::string text = ctx.getString("equation", "");
  if (ctx.numInputs() == 0)
    return ctx.fail("needs at least one input");
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    if (failed(ctx.requireFloatInput(i)))
      return failure();
  auto eq = parseEquation(ctx, text);
  if (failed(eq))
    return failure();

  // An empty dimension makes the output empty or a sum of nothing.
  if (llvm::any_of(eq->sizes, [](auto &entry) { return entry.second == 0; })) {
    SmallVector<int64_t> shape = llvm::map_to_vector(
        eq->output, [&](Label l) { return eq->sizes.lookup(l); });
    Type element = ctx.inputType(0).getElementType();
    ctx.setOutput(0, ctx.splat(RankedTensorType::get(shape, element), 0.0));
    return success();
  }

  SmallVector<Operand> operands;
  for (unsigned i = 0; i < ctx.numInputs(); ++i) {
    auto v = ctx.input(i);
    if (failed(v))
      return failure();
    auto x = takeDiagonals(ctx, Operand{*v, eq->inputs[i]}, text, i);
    if (failed(x))
      return failure();
    operands.push_back(*x);
  }
  Operand result = operands.front();
  for (size_t i = 1; i < operands.size(); ++i) {
    Labels keep = eq->output;
    for (const Operand &later : ArrayRef(operands).drop_front(i + 1))
      keep.append(later.labels.begin(), later.labels.end());
    auto y = contract(ctx, result, operands[i], keep);
    if (failed(y))
      return failure();
    result = *y;
  }
  auto summed = removeDims(
      ctx, result, [&](Label l) { return !llvm::is_contained(eq->output, l); },
      /*sum=*/true);
  if (failed(summed))
    return failure();
  auto y = arrange(ctx, *summed, eq->output);
  if (failed(y))
    return failure();
  ctx.setOutput(0, y->value);
  return success();
}

} // namespace

void onnx_to_tg::populateEinsumHandlers(HandlerTable &table) {
  table["Einsum"] = importEinsum;
}
