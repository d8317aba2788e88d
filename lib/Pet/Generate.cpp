//===- Generate.cpp - loom-rulegen --partial: PET's rule generator ---------===//
//
// Part of Loom. Enumerates the split-to-batch transformations of small
// sliding-window instances, finds each one's equal and wrong output regions
// by evaluation, checks them against the index arithmetic, proves the equal
// boxes and the corrected program, and writes the partial rules; and
// re-proves a file of them (--verify-partial).
//
//===----------------------------------------------------------------------===//

#include "loom/Pet/Pet.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace mlir;
using namespace loom;
using namespace loom::pet;

namespace {

/// One small instance of an operator: square windows on an NCHW input.
struct Instance {
  std::string op; // conv, conv_relu, avgpool, maxpool
  int64_t kernel, stride, dilation, pad;
  bool countIncludePad = false;
  int64_t height, width;

  /// The window along either spatial dim, for extents only (whether the
  /// padding reads as zero comes from the op: windowOf).
  Window window() const { return {kernel, stride, dilation, pad, pad}; }
  std::string str() const {
    return llvm::formatv("{0} k={1} s={2} d={3} p={4}{5} on 1x2x{6}x{7}", op,
                         kernel, stride, dilation, pad,
                         countIncludePad ? " count_include_pad" : "", height,
                         width)
        .str();
  }
};

std::string tensorType(ArrayRef<int64_t> shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

/// The source program of \p inst as MLIR text (empty: the window does not
/// fit the input).
std::string sourceText(const Instance &inst) {
  Window w = inst.window();
  int64_t oh = w.outSize(inst.height), ow = w.outSize(inst.width);
  if (oh == 0 || ow == 0)
    return "";
  std::string in = tensorType({1, 2, inst.height, inst.width});
  std::string out = tensorType({1, 2, oh, ow});
  auto pair = [](int64_t v) { return llvm::formatv("{0}, {0}", v).str(); };
  std::string pads = "pads = array<i64: " + pair(inst.pad) + ", " +
                     pair(inst.pad) + ">";
  std::string strides = "strides = array<i64: " + pair(inst.stride) + ">";
  std::string args = "%x: " + in, body;
  if (StringRef(inst.op).starts_with("conv")) {
    std::string filter = tensorType({2, 2, inst.kernel, inst.kernel});
    args += ", %w: " + filter;
    body = llvm::formatv(
        "%y = tg.conv %x, %w {{{0}, {1}, dilations = array<i64: {2}>{3}} : "
        "({4}, {5}) -> {6}",
        strides, pads, pair(inst.dilation),
        inst.op == "conv_relu" ? ", activation = #tg<activation relu>" : "",
        in, filter, out);
  } else {
    body = llvm::formatv(
        "%y = tg.{0} %x {{kernel_size = array<i64: {1}>, {2}, {3}{4}} : "
        "({5}) -> {6}",
        inst.op, pair(inst.kernel), strides, pads,
        inst.countIncludePad ? ", count_include_pad = true" : "", in, out);
  }
  return llvm::formatv("func.func @source({0}) -> {1} {{\n  {2}\n  return %y "
                       ": {1}\n}\n",
                       args, out, body)
      .str();
}

/// The instances of \p op to enumerate.
std::vector<Instance> instancesOf(StringRef op) {
  std::vector<Instance> out;
  bool conv = op.starts_with("conv");
  for (int64_t k : conv ? std::vector<int64_t>{1, 3, 5}
                        : std::vector<int64_t>{2, 3})
    for (int64_t s : {1, 2})
      for (int64_t d : conv ? std::vector<int64_t>{1, 2}
                            : std::vector<int64_t>{1})
        for (int64_t p : {int64_t(0), d * (k - 1) / 2})
          for (bool cip : op == "avgpool" ? std::vector<bool>{false, true}
                                          : std::vector<bool>{false}) {
            if (!conv && p >= k)
              continue;
            if (op == "conv_relu" && (k != 3 || d != 1))
              continue; // the activation adds nothing to the arithmetic
            if (!out.empty() && out.back().kernel == k &&
                out.back().stride == s && out.back().dilation == d &&
                out.back().pad == p && out.back().countIncludePad == cip)
              continue; // p == d * (k - 1) / 2 == 0 twice
            out.push_back({op.str(), k, s, d, p, cip, 0, 0});
          }
  return out;
}

/// @target (folded) and @corrected of \p t for the op of @source, added to
/// \p module.
void addTransformed(ModuleOp module, const SplitToBatch &t) {
  auto source = module.lookupSymbol<func::FuncOp>("source");
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  for (StringRef name : {"target", "corrected"}) {
    auto fn = cast<func::FuncOp>(b.clone(*source));
    fn.setSymName(name);
    Operation *op = &fn.getBody().front().front();
    OpBuilder inner(op);
    Value v = name == "target" ? buildFolded(inner, op, t)
                               : buildCorrected(inner, op, t, /*fuse=*/true);
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
  }
}

/// A copy of \p rule in which every tg.conv has no activation: the program
/// the regions are proved on. A fused activation is an elementwise function
/// of the convolution, applied alike to both sides, so the boxes where the
/// linear parts agree are boxes where the programs agree.
OwningOpRef<ModuleOp> linearPart(ModuleOp rule) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(rule->clone());
  copy->walk([](tg::ConvOp c) { c.setActivation(tg::Activation::None); });
  return copy;
}

ArrayAttr boxesAttr(Builder &b, ArrayRef<Box> boxes) {
  SmallVector<Attribute> out;
  for (const Box &box : boxes) {
    SmallVector<int64_t> v(box.lo.begin(), box.lo.end());
    v.append(box.hi.begin(), box.hi.end());
    out.push_back(b.getDenseI64ArrayAttr(v));
  }
  return b.getArrayAttr(out);
}

FailureOr<std::vector<Box>> boxesFromAttr(ModuleOp rule, StringRef name,
                                          unsigned rank) {
  auto array = rule->getAttrOfType<ArrayAttr>(name);
  if (!array)
    return rule.emitError("pet: the rule has no array attribute '")
           << name << "'";
  std::vector<Box> boxes;
  for (Attribute a : array) {
    auto v = dyn_cast<DenseI64ArrayAttr>(a);
    if (!v || v.size() != int64_t(2 * rank))
      return rule.emitError("pet: '")
             << name << "' holds a box that is not array<i64> of " << 2 * rank
             << " bounds (lo..., hi...)";
    Box box;
    box.lo.assign(v.asArrayRef().begin(), v.asArrayRef().begin() + rank);
    box.hi.assign(v.asArrayRef().begin() + rank, v.asArrayRef().end());
    boxes.push_back(box);
  }
  return boxes;
}

/// The whole output of @source as one box.
Box wholeOutput(func::FuncOp fn) {
  auto shape = cast<RankedTensorType>(fn.getResultTypes().front()).getShape();
  Box b;
  b.lo.assign(shape.size(), 0);
  b.hi.assign(shape.begin(), shape.end());
  return b;
}

struct RuleProof {
  bool proved = true;
  std::string method, detail;
  double errorBound = 0;
};

/// Proves the \p equal boxes of @target and @corrected everywhere, on the
/// linear part of \p rule.
RuleProof proveRule(ModuleOp rule, ArrayRef<Box> equal,
                    const PartialGenOptions &o) {
  OwningOpRef<ModuleOp> linear = linearPart(rule);
  auto source = linear->lookupSymbol<func::FuncOp>("source");
  auto target = linear->lookupSymbol<func::FuncOp>("target");
  auto corrected = linear->lookupSymbol<func::FuncOp>("corrected");
  RuleProof r;
  std::vector<std::pair<func::FuncOp, Box>> claims;
  for (const Box &b : equal)
    claims.push_back({target, b});
  claims.push_back({corrected, wholeOutput(source)});
  for (auto &[fn, box] : claims) {
    RegionProof p = proveBox(source, fn, box, o.trials, o.seed);
    r.method = p.method;
    r.errorBound += p.errorBound; // union bound over the claims
    if (!p.proved) {
      r.proved = false;
      r.detail = llvm::formatv("@{0} on {1}: {2}", fn.getSymName(), box.str(),
                               p.detail)
                     .str();
      return r;
    }
  }
  return r;
}

} // namespace

namespace {

/// Generates the rule of one instance and transformation, or nothing (the
/// reason counted in \p stats).
FailureOr<OwningOpRef<ModuleOp>> ruleOf(MLIRContext *context,
                                        const Instance &inst,
                                        const SplitToBatch &t,
                                        const PartialGenOptions &o,
                                        PartialGenStats &stats) {
  std::string text = sourceText(inst);
  if (text.empty())
    return OwningOpRef<ModuleOp>();
  ++stats.enumerated;
  OwningOpRef<ModuleOp> rule =
      parseSourceString<ModuleOp>("module {\n" + text + "}\n", context);
  if (!rule || failed(verify(*rule)))
    return failure();
  auto source = rule->lookupSymbol<func::FuncOp>("source");
  Operation *op = &source.getBody().front().front();
  std::string why;
  if (failed(checkApplicable(op, t, why))) {
    ++stats.shapeMismatch;
    return OwningOpRef<ModuleOp>();
  }
  addTransformed(*rule, t);
  if (failed(verify(*rule)))
    return failure();
  OwningOpRef<ModuleOp> linear = linearPart(*rule);
  FailureOr<std::vector<bool>> mask =
      differingElements(linear->lookupSymbol<func::FuncOp>("source"),
                        linear->lookupSymbol<func::FuncOp>("target"), o.seed);
  if (failed(mask))
    return failure();
  if (llvm::none_of(*mask, [](bool b) { return b; })) {
    ++stats.fullyEquivalent;
    return OwningOpRef<ModuleOp>();
  }
  auto shape =
      cast<RankedTensorType>(source.getResultTypes().front()).getShape();
  // The regions found must be the ones the index arithmetic predicts (the
  // corrections and the pass rely on it). A multi-linear program differs on
  // a polynomial that is not zero, so on every predicted row; a maximum
  // differs only where the data makes it, so on a subset of them, and its
  // boxes are the predicted ones.
  std::vector<bool> rows = wrongRows(*windowOf(op, t.dim, why),
                                     t.dim == 2 ? inst.height : inst.width, t);
  int64_t inner = 1;
  for (unsigned d = t.dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  bool exact = isMultiLinear(linear->lookupSymbol<func::FuncOp>("source"));
  std::vector<bool> predicted(mask->size());
  for (size_t f = 0; f < mask->size(); ++f) {
    predicted[f] = rows[(f / inner) % shape[t.dim]];
    if ((*mask)[f] != predicted[f] && (exact || (*mask)[f])) {
      ++stats.regionMismatch;
      if (o.log)
        *o.log << "pet: " << inst.str() << ", " << t.str()
               << ": the regions found differ from the index arithmetic\n";
      return OwningOpRef<ModuleOp>();
    }
  }
  std::vector<Box> equal, wrong;
  for (auto &[box, differs] : boxesOfMask(predicted, shape))
    (differs ? wrong : equal).push_back(box);
  if (equal.empty()) {
    ++stats.nowhereEqual;
    return OwningOpRef<ModuleOp>();
  }
  ++stats.partial;
  RuleProof proof = proveRule(*rule, equal, o);
  if (!proof.proved) {
    ++(proof.method == "tested" ? stats.tested : stats.unproved);
    if (o.log && proof.method != "tested")
      *o.log << "pet: " << inst.str() << ", " << t.str()
             << ": not proved: " << proof.detail << "\n";
    return OwningOpRef<ModuleOp>();
  }
  ++stats.proved;
  stats.boxesProved += equal.size();
  Builder b(context);
  unsigned corrections = 0;
  rule->walk([&](func::FuncOp fn) {
    if (fn.getSymName() == "corrected")
      fn.walk([&](Operation *nested) {
        if (nested->getName() == op->getName())
          ++corrections;
      });
  });
  rule->setSymName("pet_" + std::to_string(stats.proved - 1));
  NamedAttrList attrs;
  attrs.set("loom.status", b.getStringAttr("proved"));
  attrs.set("loom.pet.instance", b.getStringAttr(inst.str()));
  attrs.set("loom.pet.transform", b.getStringAttr(t.str()));
  attrs.set("loom.pet.pad_rows",
            b.getI64IntegerAttr(padRows(
                t.dim == 2 ? inst.height : inst.width, t)));
  attrs.set("loom.pet.method", b.getStringAttr(proof.method));
  attrs.set("loom.pet.trials", b.getI64IntegerAttr(o.trials));
  attrs.set("loom.pet.error_bound", b.getF64FloatAttr(proof.errorBound));
  attrs.set("loom.pet.equal", boxesAttr(b, equal));
  attrs.set("loom.pet.wrong", boxesAttr(b, wrong));
  // The folded op itself is one of the ops of @corrected.
  attrs.set("loom.pet.corrections", b.getI64IntegerAttr(corrections - 1));
  for (NamedAttribute a : attrs)
    (*rule)->setAttr(a.getName(), a.getValue());
  return rule;
}

} // namespace

namespace {

/// Generates the rules of every instance of \p op into \p b's block.
LogicalResult enumerateOp(MLIRContext *context, StringRef op,
                          const PartialGenOptions &o, PartialGenStats &stats,
                          OpBuilder &b) {
  if (op != "conv" && op != "conv_relu" && op != "avgpool" && op != "maxpool")
    return emitError(b.getUnknownLoc(), "pet: unknown operator '")
           << op << "' (expected conv, conv_relu, avgpool or maxpool)";
  for (Instance inst : instancesOf(op))
    for (unsigned dim : {2u, 3u})
      for (int64_t parts : {2, 3})
        for (int64_t pad : {0, 1})
          for (Fold fold : {Fold::SplitConcat, Fold::ReshapeTranspose}) {
            // The split extent: `pad` rows short of `parts` pieces (PET's
            // padding to a friendly shape when not 0), each of the fewest
            // rows of 4..24, longer than a window, that line up; the other
            // spatial extent 5.
            SplitToBatch t{dim, parts, fold};
            int64_t piece =
                std::max<int64_t>(4, inst.dilation * (inst.kernel - 1) + 2);
            for (; piece <= 24; ++piece) {
              if (inst.window().outSize(piece) * parts !=
                  inst.window().outSize(piece * parts))
                continue;
              Instance at = inst;
              (dim == 2 ? at.height : at.width) = piece * parts - pad;
              (dim == 2 ? at.width : at.height) = 5;
              auto rule = ruleOf(context, at, t, o, stats);
              if (failed(rule))
                return failure();
              if (*rule)
                b.insert(rule->release());
              piece = 0;
              break;
            }
            if (piece) { // no extent lines up
              ++stats.enumerated;
              ++stats.shapeMismatch;
            }
          }
  return success();
}

} // namespace

FailureOr<OwningOpRef<ModuleOp>>
pet::generatePartialRules(MLIRContext *context, const PartialGenOptions &o,
                          PartialGenStats &stats) {
  auto start = std::chrono::steady_clock::now();
  OpBuilder b(context);
  OwningOpRef<ModuleOp> file = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(file->getBody());
  for (const std::string &op : o.ops)
    if (failed(enumerateOp(context, op, o, stats, b)))
      return failure();
  stats.seconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  NamedAttrList info;
  info.set("generator", b.getStringAttr("loom-rulegen --partial"));
  info.set("seed", b.getI64IntegerAttr(o.seed));
  info.set("trials", b.getI64IntegerAttr(o.trials));
  info.set("enumerated", b.getI64IntegerAttr(stats.enumerated));
  info.set("fully_equivalent", b.getI64IntegerAttr(stats.fullyEquivalent));
  info.set("partial", b.getI64IntegerAttr(stats.partial));
  info.set("proved", b.getI64IntegerAttr(stats.proved));
  info.set("tested_only", b.getI64IntegerAttr(stats.tested));
  info.set("boxes_proved", b.getI64IntegerAttr(stats.boxesProved));
  (*file)->setAttr("loom.pet", info.getDictionary(context));
  return file;
}

FailureOr<unsigned> pet::verifyPartialRules(ModuleOp file,
                                            const PartialGenOptions &o) {
  unsigned bad = 0, rules = 0;
  for (Operation &op : file.getBody()->getOperations()) {
    auto rule = dyn_cast<ModuleOp>(op);
    if (!rule)
      return op.emitError("pet: a partial rules file holds only rule "
                          "modules");
    ++rules;
    auto source = rule.lookupSymbol<func::FuncOp>("source");
    if (!source || !rule.lookupSymbol<func::FuncOp>("target") ||
        !rule.lookupSymbol<func::FuncOp>("corrected"))
      return rule.emitError("pet: a partial rule needs @source, @target and "
                            "@corrected");
    if (source.getNumResults() != 1 ||
        !isa<RankedTensorType>(source.getResultTypes().front()))
      return rule.emitError("pet: @source must return one ranked tensor");
    Box whole = wholeOutput(source);
    FailureOr<std::vector<Box>> equal =
        boxesFromAttr(rule, "loom.pet.equal", whole.lo.size());
    if (failed(equal))
      return failure();
    for (const Box &box : *equal)
      for (size_t d = 0; d < box.lo.size(); ++d)
        if (box.lo[d] < 0 || box.lo[d] >= box.hi[d] || box.hi[d] > whole.hi[d])
          return rule.emitError("pet: box ")
                 << box.str() << " is empty or outside the output "
                 << whole.str();
    RuleProof proof = proveRule(rule, *equal, o);
    if (!proof.proved) {
      ++bad;
      rule.emitError("pet: rule @")
          << rule.getSymName().value_or("?")
          << " is not proved: " << proof.detail;
    }
  }
  if (o.log)
    *o.log << rules - bad << " of " << rules << " partial rules proved\n";
  return bad;
}

namespace {

/// \p op's operand types at a small shape: batch 1, `groups` channels in
/// and out (2 when not grouped), the split dim \p extent long, the
/// other spatial dims just long enough for one window.
FailureOr<SmallVector<Type>> smallOperandTypes(Operation *op,
                                               const SplitToBatch &t,
                                               int64_t extent,
                                               std::string &why) {
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t groups = 1;
  if (auto conv = dyn_cast<tg::ConvOp>(op))
    groups = conv.getGroups();
  int64_t channels = groups > 1 ? groups : 2;
  SmallVector<int64_t> shape = {1, channels};
  for (unsigned d = 2; d < in.getRank(); ++d) {
    FailureOr<Window> w = windowOf(op, d, why);
    if (failed(w))
      return failure();
    shape.push_back(d == t.dim ? extent
                               : w->dilation * (w->kernel - 1) + 1);
  }
  SmallVector<Type> types = {in.clone(shape)};
  if (op->getNumOperands() > 1) {
    auto f = cast<RankedTensorType>(op->getOperand(1).getType());
    SmallVector<int64_t> fs(f.getShape());
    fs[0] = channels;
    fs[1] = channels / groups;
    types.push_back(f.clone(fs));
  }
  if (op->getNumOperands() > 2)
    types.push_back(
        cast<RankedTensorType>(op->getOperand(2).getType()).clone({channels}));
  return types;
}

} // namespace

SmallProof pet::proveAtSmallShape(Operation *op, const SplitToBatch &t,
                                  const PartialGenOptions &o) {
  SmallProof r;
  FailureOr<Window> w = windowOf(op, t.dim, r.detail);
  if (failed(w))
    return r;
  // The smallest piece of the same residue modulo the stride whose pieces
  // line up and that holds a whole window, padded by as many zero rows as
  // the real extent: the rows near a cut and near the end are then laid out
  // as at the real shape.
  int64_t extent =
      cast<RankedTensorType>(op->getOperand(0).getType()).getDimSize(t.dim);
  int64_t pad = padRows(extent, t), real = (extent + pad) / t.parts;
  int64_t piece = 0;
  for (int64_t h = pad + 1; h <= real && !piece; ++h)
    if ((real - h) % w->stride == 0 &&
        h >= w->dilation * (w->kernel - 1) + 1 + w->padLo + w->padHi &&
        w->outSize(h) * t.parts == w->outSize(h * t.parts))
      piece = h;
  if (!piece)
    piece = real;
  FailureOr<SmallVector<Type>> types =
      smallOperandTypes(op, t, piece * t.parts - pad, r.detail);
  if (failed(types))
    return r;
  MLIRContext *context = op->getContext();
  OpBuilder b(context);
  OwningOpRef<ModuleOp> rule = ModuleOp::create(op->getLoc());
  b.setInsertionPointToEnd(rule->getBody());
  // The result type: the op's own, at the small shape.
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> outShape = {1, cast<RankedTensorType>((*types)[0])
                                          .getDimSize(1)};
  for (unsigned d = 2; d < out.getRank(); ++d) {
    FailureOr<Window> wd = windowOf(op, d, r.detail);
    outShape.push_back(wd->outSize(
        cast<RankedTensorType>((*types)[0]).getDimSize(d)));
  }
  auto resultType = out.clone(outShape);
  auto fn = func::FuncOp::create(b, op->getLoc(), "source",
                                 b.getFunctionType(*types, {resultType}));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToEnd(body);
  IRMapping map;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    map.map(op->getOperand(i), body->getArgument(i));
  Operation *small = b.clone(*op, map);
  small->getResult(0).setType(resultType);
  func::ReturnOp::create(b, op->getLoc(), small->getResults());
  if (failed(verify(*rule)) ||
      failed(checkApplicable(small, t, r.detail)))
    return r;
  addTransformed(*rule, t);
  RowBoxes boxes = boxesOfRows(
      wrongRows(*w, piece * t.parts - pad, t), outShape, t.dim);
  r.equal = boxes.equal.size();
  r.wrong = boxes.wrong.size();
  RuleProof proof = proveRule(*rule, boxes.equal, o);
  r.proved = proof.proved;
  r.method = proof.method;
  r.errorBound = proof.errorBound;
  if (!proof.proved)
    r.detail = proof.detail;
  return r;
}
