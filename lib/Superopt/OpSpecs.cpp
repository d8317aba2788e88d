//===- OpSpecs.cpp - Operator specifications of the rule generator --------===//
//
// Part of Loom. The single table of operator specifications (OpSpec.h): one
// struct per operator kind with its roles, shape rule (TypeInference.h),
// semantics (the interpreter's kernels), split-information rule, tg emission
// and recognition, and cost. Everything the generator knows about an operator
// is in the struct of that operator.
//
//===----------------------------------------------------------------------===//

#include "loom/Superopt/OpSpec.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TypeInference.h"
#include "loom/Interpreter/Kernels.h"
#include "loom/Superopt/Z3Domain.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using interp::Tensor;

//===----------------------------------------------------------------------===//
// Shapes, types and helpers
//===----------------------------------------------------------------------===//

ShapeId ShapeTable::intern(ArrayRef<int64_t> shape) {
  std::vector<int64_t> key(shape.begin(), shape.end());
  auto it = ids.find(key);
  if (it != ids.end())
    return it->second;
  ShapeId id = static_cast<ShapeId>(shapes.size());
  shapes.emplace_back(shape.begin(), shape.end());
  ids.emplace(std::move(key), id);
  return id;
}

std::optional<ShapeId> ShapeTable::lookup(ArrayRef<int64_t> shape) const {
  auto it = ids.find(std::vector<int64_t>(shape.begin(), shape.end()));
  if (it == ids.end())
    return std::nullopt;
  return it->second;
}

int64_t ShapeTable::numElements(ShapeId id) const {
  int64_t n = 1;
  for (int64_t d : shapes[id])
    n *= d;
  return n;
}

std::string ShapeTable::str(ShapeId id) const { return shapeString(get(id)); }

std::string superopt::indexString(ArrayRef<int64_t> shape, int64_t i) {
  SmallVector<int64_t, 4> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string superopt::shapeString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  return s;
}

RankedTensorType superopt::tensorTypeOf(MLIRContext *context,
                                        ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, Float32Type::get(context));
}

uint64_t superopt::hashString(StringRef s) {
  uint64_t h = 0x243f6a8885a308d3ULL;
  for (char c : s)
    h = hashMix(h, static_cast<unsigned char>(c));
  return h;
}

StringRef superopt::roleName(Role role) {
  switch (role) {
  case Role::Activation:
    return "activation";
  case Role::Weight:
    return "weight";
  case Role::Derived:
    return "derived";
  case Role::Constant:
    return "constant";
  case Role::Scalar:
    return "scalar";
  case Role::BnScale:
    return "bn_scale";
  case Role::BnBias:
    return "bn_bias";
  case Role::BnMean:
    return "bn_mean";
  case Role::BnVar:
    return "bn_var";
  case Role::LnScale:
    return "ln_scale";
  case Role::LnBias:
    return "ln_bias";
  case Role::ChannelScale:
    return "channel_scale";
  case Role::ChannelBias:
    return "channel_bias";
  case Role::FoldedFilter:
    return "folded_filter";
  }
  llvm_unreachable("unknown role");
}

Role superopt::resultRoleOf(Role resultRole, ArrayRef<Role> operandRoles) {
  if (resultRole != Role::Derived)
    return resultRole;
  bool anyWeight = false, allConst = true, allWeightish = true;
  for (Role r : operandRoles) {
    if (!(roleBit(r) & kTensorRoles))
      continue;
    anyWeight |= r == Role::Weight;
    allConst &= r == Role::Constant;
    allWeightish &= r == Role::Weight || r == Role::Constant;
  }
  if (operandRoles.empty() || (allConst && !anyWeight))
    return Role::Constant;
  return allWeightish ? Role::Weight : Role::Derived;
}

namespace {

using Shapes = ArrayRef<ShapeId>;
using Inferred = std::optional<SmallVector<ShapeId, 2>>;
template <class D> using Operands = ArrayRef<const Tensor<D> *>;
template <class D> using Results = SmallVectorImpl<Tensor<D>>;

constexpr RoleMask kAny = kTensorRoles;
constexpr RoleMask kData = kDataRoles;
constexpr RoleMask kDataOrConst = kDataRoles | roleBit(Role::Constant);
constexpr RoleMask kFilter = roleBit(Role::Weight) | roleBit(Role::Constant);

std::vector<int64_t> vec(ArrayRef<int64_t> a) {
  return std::vector<int64_t>(a.begin(), a.end());
}

/// Runs a TypeInference rule on f32 tensor types of \p operands and interns
/// the inferred shapes. \p rule gets the operand types.
template <class F>
Inferred inferWith(SpecContext &sc, Shapes operands, F &&rule) {
  SmallVector<Type, 5> types;
  for (ShapeId s : operands)
    types.push_back(tensorTypeOf(sc.mlir, sc.shapes->get(s)));
  SmallVector<Type, 2> inferred;
  if (failed(rule(ArrayRef<Type>(types), inferred)))
    return std::nullopt;
  SmallVector<ShapeId, 2> out;
  for (Type t : inferred)
    out.push_back(sc.shapes->intern(cast<RankedTensorType>(t).getShape()));
  return out;
}

/// The same-padding pads [top, left, bottom, right] of an odd kernel.
std::array<int64_t, 4> samePads(int64_t kh, int64_t kw) {
  return {(kh - 1) / 2, (kw - 1) / 2, (kh - 1) / 2, (kw - 1) / 2};
}

RankedTensorType rtype(Value v) { return cast<RankedTensorType>(v.getType()); }

/// A rank-0 tensor holding \p v.
template <class D> Tensor<D> scalarTensor(typename D::T v) {
  return Tensor<D>({}, {v});
}

/// Attribute marking the last op of a macro (an op of the generator that
/// expands to several tg ops).
constexpr const char *kMacroAttr = "loom.macro";
/// Attribute naming which generator constant a tg.constant is.
constexpr const char *kConstAttr = "loom.const";

bool isMacro(Operation *op, StringRef name) {
  auto a = op->getAttrOfType<StringAttr>(kMacroAttr);
  return a && a.getValue() == name;
}

void markMacro(Operation *op, StringRef name) {
  op->setAttr(kMacroAttr, StringAttr::get(op->getContext(), name));
}

/// The defining op of \p v if it is an OpTy.
template <class OpTy> OpTy def(Value v) {
  return v ? v.getDefiningOp<OpTy>() : OpTy();
}

Value emitEpsilon(OpBuilder &b, Location loc) {
  auto type = tensorTypeOf(b.getContext(), {});
  return tg::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, b.getF32FloatAttr(kNormEpsilon)));
}

DenseI64ArrayAttr i64s(OpBuilder &b, ArrayRef<int64_t> v) {
  return b.getDenseI64ArrayAttr(v);
}

//===----------------------------------------------------------------------===//
// Split information
//===----------------------------------------------------------------------===//

/// Length of the preorder subtree starting at \p at.
size_t subtreeSize(ArrayRef<int16_t> tree, size_t at) {
  if (tree[at] < 0)
    return 1;
  size_t left = subtreeSize(tree, at + 1);
  return 1 + left + subtreeSize(tree, at + 1 + left);
}

void appendShifted(SmallVectorImpl<int16_t> &out, ArrayRef<int16_t> tree,
                   int delta) {
  for (int16_t v : tree)
    out.push_back(v < 0 ? v : static_cast<int16_t>(v + delta));
}

AxisSplit meet(const AxisSplit &a, const AxisSplit &b) {
  return a == b ? a : AxisSplit();
}

AxisSplit concatSplit(const AxisSplit &a, const AxisSplit &b, int64_t dimA) {
  AxisSplit r;
  r.tree.clear();
  r.tree.push_back(static_cast<int16_t>(dimA));
  appendShifted(r.tree, a.tree, 0);
  appendShifted(r.tree, b.tree, static_cast<int>(dimA));
  return r;
}

/// Copies axis \p from of \p in to axis \p to of \p out.
void copyAxis(SplitInfo &out, unsigned to, const SplitInfo &in, unsigned from) {
  out.axes[to] = in.axes[from];
}

/// Split propagation that keeps nothing (single-result ops).
void splitNone(const OpAttrs &, ArrayRef<const SplitInfo *>, Shapes,
               const ShapeTable &, SmallVectorImpl<SplitInfo> &out) {
  out.assign(1, SplitInfo());
}

/// Elementwise: an axis keeps the boundaries all operands agree on.
void splitElementwise(const OpAttrs &, ArrayRef<const SplitInfo *> in, Shapes,
                      const ShapeTable &, SmallVectorImpl<SplitInfo> &out) {
  SplitInfo r = *in[0];
  for (const SplitInfo *s : in.drop_front())
    for (unsigned a = 0; a < 4; ++a)
      r.axes[a] = meet(r.axes[a], s->axes[a]);
  out.assign(1, r);
}

/// Unary ops: the first operand's information.
void splitCopy(const OpAttrs &, ArrayRef<const SplitInfo *> in, Shapes,
               const ShapeTable &, SmallVectorImpl<SplitInfo> &out) {
  out.assign(1, *in[0]);
}

/// Only the leading (batch / row) axis survives.
void splitLeading(const OpAttrs &, ArrayRef<const SplitInfo *> in, Shapes,
                  const ShapeTable &, SmallVectorImpl<SplitInfo> &out) {
  SplitInfo r;
  copyAxis(r, 0, *in[0], 0);
  out.assign(1, r);
}

bool completeNothing(OpAttrs &, ArrayRef<const SplitInfo *>, Shapes,
                     const ShapeTable &) {
  return true;
}

bool acceptAll(const OpAttrs &, ArrayRef<Role>) { return true; }

//===----------------------------------------------------------------------===//
// Defaults of the spec structs
//===----------------------------------------------------------------------===//

/// Defaults every spec struct inherits.
struct SpecBase {
  static constexpr bool commutative = false;
  static constexpr bool paramPrep = false;
  static constexpr Role resultRole = Role::Derived;
  static constexpr unsigned numResults = 1;
  static constexpr uint8_t attrFields = 0;
  static constexpr bool inputOperandsOnly = false;
  static constexpr bool uniformOperands = false;
  static constexpr auto propagateSplit = splitNone;
  static constexpr auto complete = completeNothing;
  static constexpr auto accepts = acceptAll;
  static double cost(const OpAttrs &, Shapes, Shapes results,
                     const ShapeTable &t) {
    double n = 0;
    for (ShapeId s : results)
      n += static_cast<double>(t.numElements(s));
    return n;
  }
};

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

/// matmul(a, b): [M, K] x [K, N] -> [M, N] (rank 2 only).
struct MatmulSpec : SpecBase {
  static constexpr OpKind kind = OpKind::Matmul;
  static constexpr const char *name = "matmul";
  static constexpr const char *summary =
      "matrix product [M,K] x [K,N] -> [M,N], or [B,M,K] x [K,N] -> "
      "[B,M,N] (tg.matmul)";
  static constexpr unsigned numOperands = 2;
  static constexpr std::array<RoleMask, 5> roles{kAny, kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    int64_t lhsRank = sc.shapes->rank(in[0]);
    if ((lhsRank != 2 && lhsRank != 3) || sc.shapes->rank(in[1]) != 2)
      return std::nullopt;
    return inferWith(sc, in, [](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferMatmul(std::nullopt, t[0], t[1], r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(interp::matmul<D>(*in[0], *in[1]));
  }
  static void propagateSplit(const OpAttrs &, ArrayRef<const SplitInfo *> in,
                             Shapes in2, const ShapeTable &t,
                             SmallVectorImpl<SplitInfo> &out) {
    // The result keeps the leading axes of the left operand and the columns
    // of the right one.
    SplitInfo r;
    unsigned lhsRank = t.rank(in2[0]);
    for (unsigned a = 0; a + 1 < lhsRank; ++a)
      copyAxis(r, a, *in[0], a);
    copyAxis(r, lhsRank - 1, *in[1], 1);
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::MatmulOp::create(b, loc, types[0], in[0], in[1]));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto m = dyn_cast<tg::MatmulOp>(op);
    int64_t lhsRank = m ? rtype(m.getLhs()).getRank() : 0;
    if (!m || (lhsRank != 2 && lhsRank != 3) ||
        rtype(m.getRhs()).getRank() != 2)
      return false;
    r.operands = {m.getLhs(), m.getRhs()};
    return true;
  }
  static double cost(const OpAttrs &, Shapes in, Shapes, const ShapeTable &t) {
    // Rows of the left operand (all its leading axes) x K x N.
    double rows = double(t.numElements(in[0])) / t.get(in[0]).back();
    return rows * t.get(in[0]).back() * t.get(in[1])[1];
  }
};

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// add / mul of two tensors of the same shape (no broadcasting).
template <OpKind K, interp::BinaryKind B, class OpTy, RoleMask R>
struct ElementwiseSpec : SpecBase {
  static constexpr OpKind kind = K;
  static constexpr bool commutative = true;
  static constexpr bool uniformOperands = true;
  static constexpr unsigned numOperands = 2;
  static constexpr std::array<RoleMask, 5> roles{R, R};
  static constexpr auto propagateSplit = splitElementwise;

  static Inferred infer(SpecContext &, const OpAttrs &, Shapes in) {
    if (in[0] != in[1])
      return std::nullopt;
    return SmallVector<ShapeId, 2>{in[0]};
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(interp::binary<D>(B, *in[0], *in[1]));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(OpTy::create(b, loc, types[0], in[0], in[1]));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto e = dyn_cast<OpTy>(op);
    if (!e || op->hasAttr(kMacroAttr) ||
        e.getLhs().getType() != e.getRhs().getType())
      return false;
    r.operands = {e.getLhs(), e.getRhs()};
    return true;
  }
};

struct AddSpec : ElementwiseSpec<OpKind::Add, interp::BinaryKind::Add,
                                 tg::AddOp, kAny> {
  static constexpr const char *name = "add";
  static constexpr const char *summary =
      "elementwise sum of two tensors of one shape (tg.add)";
};

/// Products of weights are not enumerated (no model computes them).
struct MulSpec : ElementwiseSpec<OpKind::Mul, interp::BinaryKind::Mul,
                                 tg::MulOp, kDataOrConst> {
  static constexpr const char *name = "mul";
  static constexpr const char *summary =
      "elementwise product of two tensors of one shape (tg.mul)";
};

/// smul(x, s): x times a rank-0 scalar (tg.mul with broadcasting).
struct SMulSpec : SpecBase {
  static constexpr OpKind kind = OpKind::SMul;
  static constexpr const char *name = "smul";
  static constexpr const char *summary =
      "scalar multiplication x * s, s of rank 0 (tg.mul, broadcast)";
  static constexpr unsigned numOperands = 2;
  static constexpr std::array<RoleMask, 5> roles{kAny,
                                                 roleBit(Role::Scalar)};
  static constexpr auto propagateSplit = splitCopy;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    if (sc.shapes->rank(in[0]) < 1 || sc.shapes->rank(in[1]) != 0)
      return std::nullopt;
    return SmallVector<ShapeId, 2>{in[0]};
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(interp::binary<D>(interp::BinaryKind::Mul, *in[0], *in[1]));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::MulOp::create(b, loc, types[0], in[0], in[1]));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto m = dyn_cast<tg::MulOp>(op);
    if (!m || op->hasAttr(kMacroAttr) || rtype(m.getRhs()).getRank() != 0 ||
        rtype(m.getLhs()).getRank() == 0)
      return false;
    r.operands = {m.getLhs(), m.getRhs()};
    return true;
  }
};

/// relu(x) = max(x, 0).
struct ReluSpec : SpecBase {
  static constexpr OpKind kind = OpKind::Relu;
  static constexpr const char *name = "relu";
  static constexpr const char *summary = "max(x, 0) elementwise (tg.relu)";
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kData};
  static constexpr auto propagateSplit = splitCopy;

  static Inferred infer(SpecContext &, const OpAttrs &, Shapes in) {
    return SmallVector<ShapeId, 2>{in[0]};
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(interp::unary<D>(interp::UnaryKind::Relu, *in[0]));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::ReluOp::create(b, loc, types[0], in[0]));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto u = dyn_cast<tg::ReluOp>(op);
    if (!u)
      return false;
    r.operands = {u.getInput()};
    return true;
  }
};

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// transpose(x) of a matrix (perm [1, 0]).
struct TransposeSpec : SpecBase {
  static constexpr OpKind kind = OpKind::Transpose;
  static constexpr const char *name = "transpose";
  static constexpr const char *summary =
      "matrix transpose, perm [1, 0] (tg.transpose)";
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    if (sc.shapes->rank(in[0]) != 2)
      return std::nullopt;
    return inferWith(sc, in, [](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferTranspose(std::nullopt, t[0], {1, 0}, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(interp::transpose<D>(*in[0], {1, 0}));
  }
  static void propagateSplit(const OpAttrs &, ArrayRef<const SplitInfo *> in,
                             Shapes, const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo r;
    copyAxis(r, 0, *in[0], 1);
    copyAxis(r, 1, *in[0], 0);
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(
        tg::TransposeOp::create(b, loc, types[0], in[0], i64s(b, {1, 0})));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto t = dyn_cast<tg::TransposeOp>(op);
    if (!t || t.getPerm() != ArrayRef<int64_t>{1, 0})
      return false;
    r.operands = {t.getInput()};
    return true;
  }
};

/// concat{axis}(a, b).
struct ConcatSpec : SpecBase {
  static constexpr OpKind kind = OpKind::Concat;
  static constexpr uint8_t attrFields = kAttrAxis;
  static constexpr const char *name = "concat";
  static constexpr const char *summary =
      "concatenation of two tensors along `axis` (tg.concat)";
  static constexpr bool uniformOperands = true;
  static constexpr unsigned numOperands = 2;
  static constexpr std::array<RoleMask, 5> roles{kAny, kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    if (sc.shapes->rank(in[0]) <= a.axis || sc.shapes->rank(in[0]) > 4)
      return std::nullopt;
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferConcat(std::nullopt, TypeRange(t), a.axis, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(interp::concat<D>(in, a.axis));
  }
  static void propagateSplit(const OpAttrs &a, ArrayRef<const SplitInfo *> in,
                             Shapes inShapes, const ShapeTable &t,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo r;
    for (unsigned ax = 0; ax < 4; ++ax)
      r.axes[ax] = ax == unsigned(a.axis)
                       ? concatSplit(in[0]->axes[ax], in[1]->axes[ax],
                                     t.get(inShapes[0])[ax])
                       : meet(in[0]->axes[ax], in[1]->axes[ax]);
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a,
                   ValueRange in, TypeRange types,
                   SmallVectorImpl<Value> &out) {
    out.push_back(tg::ConcatOp::create(b, loc, types[0], in,
                                       b.getI64IntegerAttr(a.axis)));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto c = dyn_cast<tg::ConcatOp>(op);
    if (!c || c.getInputs().size() != 2)
      return false;
    int64_t rank = rtype(c.getOutput()).getRank();
    int64_t axis = static_cast<int64_t>(c.getAxis());
    if (axis < 0)
      axis += rank;
    r.attrs.axis = static_cast<int8_t>(axis);
    r.operands = {c.getInputs()[0], c.getInputs()[1]};
    return true;
  }
};

/// split{axis, sizes}(x) -> two pieces. In the enumeration the sizes come
/// from the split information of x (TASO): the cut is at the most recent
/// concatenation boundary.
struct SplitSpec : SpecBase {
  static constexpr OpKind kind = OpKind::Split;
  static constexpr uint8_t attrFields = kAttrAxis | kAttrSizes;
  static constexpr const char *name = "split";
  static constexpr const char *summary =
      "split along `axis` into two pieces of `sizes` (tg.split); the "
      "enumeration cuts at the last concatenation boundary (TASO)";
  static constexpr unsigned numOperands = 1;
  static constexpr unsigned numResults = 2;
  static constexpr std::array<RoleMask, 5> roles{kAny};

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    if (sc.shapes->rank(in[0]) <= a.axis || a.sizes[0] < 1 || a.sizes[1] < 1)
      return std::nullopt;
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferSplit(std::nullopt, t[0], a.axis,
                            {a.sizes[0], a.sizes[1]}, r);
    });
  }
  static bool complete(OpAttrs &a, ArrayRef<const SplitInfo *> in,
                       Shapes inShapes, const ShapeTable &t) {
    if (t.rank(inShapes[0]) <= a.axis)
      return false;
    const AxisSplit &s = in[0]->axes[a.axis];
    if (s.empty())
      return false;
    int64_t dim = t.get(inShapes[0])[a.axis];
    a.sizes = {s.tree[0], static_cast<int16_t>(dim - s.tree[0])};
    return true;
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in, Results<D> &out) {
    for (auto &piece :
         interp::split<D>(*in[0], a.axis, {a.sizes[0], a.sizes[1]}))
      out.push_back(std::move(piece));
  }
  static void propagateSplit(const OpAttrs &a, ArrayRef<const SplitInfo *> in,
                             Shapes, const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo left = *in[0], right = *in[0];
    const AxisSplit &s = in[0]->axes[a.axis];
    left.axes[a.axis] = AxisSplit();
    right.axes[a.axis] = AxisSplit();
    if (!s.empty() && s.tree[0] == a.sizes[0]) {
      ArrayRef<int16_t> tree = s.tree;
      size_t l = subtreeSize(tree, 1);
      left.axes[a.axis].tree.assign(tree.begin() + 1, tree.begin() + 1 + l);
      right.axes[a.axis].tree.clear();
      appendShifted(right.axes[a.axis].tree, tree.drop_front(1 + l),
                    -a.sizes[0]);
    }
    out.assign({left, right});
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a,
                   ValueRange in, TypeRange types,
                   SmallVectorImpl<Value> &out) {
    auto s = tg::SplitOp::create(b, loc, types, in[0],
                                 b.getI64IntegerAttr(a.axis),
                                 i64s(b, {a.sizes[0], a.sizes[1]}));
    out.append(s->result_begin(), s->result_end());
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto s = dyn_cast<tg::SplitOp>(op);
    if (!s || s.getSizes().size() != 2)
      return false;
    int64_t rank = rtype(s.getInput()).getRank();
    int64_t axis = static_cast<int64_t>(s.getAxis());
    if (axis < 0)
      axis += rank;
    r.attrs.axis = static_cast<int8_t>(axis);
    r.attrs.sizes = {static_cast<int16_t>(s.getSizes()[0]),
                     static_cast<int16_t>(s.getSizes()[1])};
    r.operands = {s.getInput()};
    return true;
  }
  static double cost(const OpAttrs &, Shapes in, Shapes, const ShapeTable &t) {
    return static_cast<double>(t.numElements(in[0]));
  }
};

/// enlarge{kernel}(w): TASO's zero-padding of a filter to a larger kernel.
struct EnlargeSpec : SpecBase {
  static constexpr OpKind kind = OpKind::Enlarge;
  static constexpr uint8_t attrFields = kAttrKernel;
  static constexpr bool inputOperandsOnly = true;
  static constexpr const char *name = "enlarge";
  static constexpr const char *summary =
      "zero-pads a filter [O,I,h,w] to [O,I,KH,KW], centred (tg.enlarge); "
      "applied to filter inputs only, as in TASO";
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{roleBit(Role::Weight)};

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    ArrayRef<int64_t> s = sc.shapes->get(in[0]);
    if (s.size() != 4 || (s[2] == a.kernel[0] && s[3] == a.kernel[1]))
      return std::nullopt;
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferEnlarge(std::nullopt, t[0], {a.kernel[0], a.kernel[1]},
                              r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(interp::enlarge<D>(*in[0], a.kernel[0], a.kernel[1]));
  }
  static void propagateSplit(const OpAttrs &, ArrayRef<const SplitInfo *> in,
                             Shapes, const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo r;
    copyAxis(r, 0, *in[0], 0);
    copyAxis(r, 1, *in[0], 1);
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a,
                   ValueRange in, TypeRange types,
                   SmallVectorImpl<Value> &out) {
    out.push_back(tg::EnlargeOp::create(b, loc, types[0], in[0],
                                        i64s(b, {a.kernel[0], a.kernel[1]})));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto e = dyn_cast<tg::EnlargeOp>(op);
    if (!e || e.getKernelSize().size() != 2)
      return false;
    r.attrs.kernel = {static_cast<int16_t>(e.getKernelSize()[0]),
                      static_cast<int16_t>(e.getKernelSize()[1])};
    r.operands = {e.getInput()};
    return true;
  }
};

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// conv{relu, bias}(x, w[, c]): stride 1, "same" padding for the (odd)
/// kernel, groups = channels(x) / channels(w), optional bias and fused relu.
struct ConvSpec : SpecBase {
  static constexpr OpKind kind = OpKind::Conv;
  static constexpr uint8_t attrFields = kAttrRelu | kAttrBias;
  static constexpr const char *name = "conv";
  static constexpr const char *summary =
      "2-D convolution, stride 1, same padding, groups = C / filter C, "
      "optional bias operand and fused relu (tg.conv2d)";
  static constexpr unsigned numOperands = 2; // 3 with a bias
  static constexpr std::array<RoleMask, 5> roles{
      kData, kFilter | roleBit(Role::FoldedFilter),
      roleBit(Role::ChannelBias)};

  /// A bias comes with a batchnorm's folded filter (the enumeration has no
  /// other bias), and only then.
  static bool accepts(const OpAttrs &a, ArrayRef<Role> roles) {
    return (roles.size() > 1 && roles[1] == Role::FoldedFilter) == a.bias;
  }
  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    if (in.size() != (a.bias ? 3u : 2u))
      return std::nullopt;
    ArrayRef<int64_t> x = sc.shapes->get(in[0]), w = sc.shapes->get(in[1]);
    if (x.size() != 4 || w.size() != 4 || w[2] % 2 == 0 || w[3] % 2 == 0 ||
        w[1] == 0 || x[1] % w[1] != 0)
      return std::nullopt;
    int64_t groups = x[1] / w[1];
    std::array<int64_t, 4> pads = samePads(w[2], w[3]);
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferConv2d(std::nullopt, t[0], t[1],
                             a.bias ? t[2] : Type(), {1, 1}, pads, {1, 1},
                             groups, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in, Results<D> &out) {
    interp::Conv2dParams p;
    ArrayRef<int64_t> w = in[1]->shape;
    std::array<int64_t, 4> pads = samePads(w[2], w[3]);
    p.pads = pads;
    p.groups = in[0]->shape[1] / w[1];
    p.activation = a.relu ? interp::Activation::Relu : interp::Activation::None;
    out.push_back(
        interp::conv2d<D>(*in[0], *in[1], a.bias ? in[2] : nullptr, p));
  }
  static void propagateSplit(const OpAttrs &, ArrayRef<const SplitInfo *> in,
                             Shapes, const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo r;
    copyAxis(r, 0, *in[0], 0);
    copyAxis(r, 1, *in[1], 0);
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a,
                   ValueRange in, TypeRange types,
                   SmallVectorImpl<Value> &out) {
    ArrayRef<int64_t> x = rtype(in[0]).getShape(), w = rtype(in[1]).getShape();
    std::array<int64_t, 4> pads = samePads(w[2], w[3]);
    int64_t groups = x[1] / w[1];
    out.push_back(tg::Conv2dOp::create(
        b, loc, types[0], in[0], in[1], a.bias ? in[2] : Value(),
        i64s(b, {1, 1}), i64s(b, pads), i64s(b, {1, 1}),
        b.getI64IntegerAttr(groups),
        tg::ActivationAttr::get(b.getContext(), a.relu
                                                    ? tg::Activation::Relu
                                                    : tg::Activation::None)));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto c = dyn_cast<tg::Conv2dOp>(op);
    if (!c)
      return false;
    ArrayRef<int64_t> x = rtype(c.getInput()).getShape();
    ArrayRef<int64_t> w = rtype(c.getFilter()).getShape();
    std::array<int64_t, 4> pads = samePads(w[2], w[3]);
    if (c.getStrides() != ArrayRef<int64_t>{1, 1} ||
        c.getDilations() != ArrayRef<int64_t>{1, 1} ||
        c.getPads() != ArrayRef<int64_t>(pads) || w[2] % 2 == 0 ||
        w[3] % 2 == 0 || static_cast<int64_t>(c.getGroups()) * w[1] != x[1])
      return false;
    if (c.getActivation() != tg::Activation::None &&
        c.getActivation() != tg::Activation::Relu)
      return false;
    r.attrs.relu = c.getActivation() == tg::Activation::Relu;
    r.attrs.bias = static_cast<bool>(c.getBias());
    r.operands = {c.getInput(), c.getFilter()};
    if (c.getBias())
      r.operands.push_back(c.getBias());
    return true;
  }
  static double cost(const OpAttrs &, Shapes in, Shapes out,
                     const ShapeTable &t) {
    ArrayRef<int64_t> w = t.get(in[1]);
    return static_cast<double>(t.numElements(out[0])) * w[1] * w[2] * w[3];
  }
};

/// max / average pooling{kernel}: stride 1, same padding; the average counts
/// padding (count_include_pad), so that it equals a convolution with a
/// constant filter, as TASO's pooling does.
template <OpKind K> struct PoolSpec : SpecBase {
  static constexpr OpKind kind = K;
  static constexpr uint8_t attrFields = kAttrKernel;
  static constexpr bool isMax = K == OpKind::MaxPool;
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kData};

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes in) {
    if (sc.shapes->rank(in[0]) != 4 || a.kernel[0] % 2 == 0 ||
        a.kernel[1] % 2 == 0)
      return std::nullopt;
    std::array<int64_t, 4> pads = samePads(a.kernel[0], a.kernel[1]);
    return inferWith(sc, in, [&](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferPool2d(std::nullopt, t[0], {a.kernel[0], a.kernel[1]},
                             {1, 1}, pads, r);
    });
  }
  static interp::Pool2dParams params(const OpAttrs &a) {
    interp::Pool2dParams p;
    p.kernel = {a.kernel[0], a.kernel[1]};
    p.pads = samePads(a.kernel[0], a.kernel[1]);
    p.countIncludePad = true;
    return p;
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &, Operands<D> in, Results<D> &out) {
    if constexpr (isMax)
      out.push_back(interp::maxPool2d<D>(*in[0], params(a)));
    else
      out.push_back(interp::avgPool2d<D>(*in[0], params(a)));
  }
  static void propagateSplit(const OpAttrs &, ArrayRef<const SplitInfo *> in,
                             Shapes, const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo r;
    copyAxis(r, 0, *in[0], 0);
    copyAxis(r, 1, *in[0], 1);
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &a,
                   ValueRange in, TypeRange types,
                   SmallVectorImpl<Value> &out) {
    auto kernel = i64s(b, {a.kernel[0], a.kernel[1]});
    auto pads = i64s(b, samePads(a.kernel[0], a.kernel[1]));
    if constexpr (isMax)
      out.push_back(tg::MaxPool2dOp::create(b, loc, types[0], in[0], kernel,
                                            i64s(b, {1, 1}), pads));
    else
      out.push_back(tg::AvgPool2dOp::create(b, loc, types[0], in[0], kernel,
                                            i64s(b, {1, 1}), pads,
                                            b.getBoolAttr(true)));
  }
  template <class OpTy> static bool importPool(OpTy p, ImportedOp &r) {
    ArrayRef<int64_t> k = p.getKernelSize();
    if (k.size() != 2 || k[0] % 2 == 0 || k[1] % 2 == 0 ||
        p.getStrides() != ArrayRef<int64_t>{1, 1} ||
        p.getPads() != ArrayRef<int64_t>(samePads(k[0], k[1])))
      return false;
    r.attrs.kernel = {static_cast<int16_t>(k[0]), static_cast<int16_t>(k[1])};
    r.operands = {p.getInput()};
    return true;
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    if constexpr (isMax) {
      auto p = dyn_cast<tg::MaxPool2dOp>(op);
      return p && importPool(p, r);
    } else {
      auto p = dyn_cast<tg::AvgPool2dOp>(op);
      return p && p.getCountIncludePad() && importPool(p, r);
    }
  }
  static double cost(const OpAttrs &a, Shapes, Shapes out,
                     const ShapeTable &t) {
    return static_cast<double>(t.numElements(out[0])) * a.kernel[0] *
           a.kernel[1];
  }
};

struct MaxPoolSpec : PoolSpec<OpKind::MaxPool> {
  static constexpr const char *name = "maxpool";
  static constexpr const char *summary =
      "max pooling, stride 1, same padding (tg.maxpool2d)";
};
struct AvgPoolSpec : PoolSpec<OpKind::AvgPool> {
  static constexpr const char *name = "avgpool";
  static constexpr const char *summary =
      "average pooling, stride 1, same padding, count_include_pad "
      "(tg.avgpool2d)";
};

//===----------------------------------------------------------------------===//
// Constants (TASO)
//===----------------------------------------------------------------------===//

/// A constant tensor of shape attrs.shape; \p fill gives element i's value.
template <OpKind K> struct ConstSpec : SpecBase {
  static constexpr OpKind kind = K;
  static constexpr uint8_t attrFields = kAttrShape;
  static constexpr unsigned numOperands = 0;
  static constexpr std::array<RoleMask, 5> roles{};
  static constexpr Role resultRole = Role::Constant;

  static Inferred infer(SpecContext &sc, const OpAttrs &a, Shapes) {
    ArrayRef<int64_t> s = sc.shapes->get(a.shape);
    bool ok = true;
    if constexpr (K == OpKind::ConstImm)
      ok = s.size() == 2 && s[0] == s[1];
    else if constexpr (K == OpKind::ConstIConv)
      ok = s.size() == 4 && s[0] == s[1] && s[2] % 2 == 1 && s[3] % 2 == 1;
    else if constexpr (K == OpKind::ConstPool)
      ok = s.size() == 4 && s[1] == 1;
    if (!ok)
      return std::nullopt;
    return SmallVector<ShapeId, 2>{a.shape};
  }
  /// The value of element \p index (row-major) of shape \p s, as
  /// (numerator, denominator).
  static std::pair<int64_t, int64_t> element(ArrayRef<int64_t> s,
                                             int64_t index) {
    if constexpr (K == OpKind::ConstOne) {
      return {1, 1};
    } else if constexpr (K == OpKind::ConstImm) {
      return {index / s[1] == index % s[1] ? 1 : 0, 1};
    } else if constexpr (K == OpKind::ConstIConv) {
      int64_t kw = index % s[3], kh = (index / s[3]) % s[2];
      int64_t i = (index / (s[3] * s[2])) % s[1], o = index / (s[3] * s[2] * s[1]);
      return {o == i && kh == s[2] / 2 && kw == s[3] / 2 ? 1 : 0, 1};
    } else {
      static_assert(K == OpKind::ConstPool, "unknown constant");
      return {1, s[2] * s[3]};
    }
  }
  template <class D>
  static void eval(const OpAttrs &a, const ShapeTable &t, Operands<D>,
                   Results<D> &out) {
    ArrayRef<int64_t> shape = t.get(a.shape);
    Tensor<D> v(vec(shape));
    for (int64_t i = 0; i < v.numElements(); ++i) {
      auto [n, d] = element(shape, i);
      v.data[i] =
          d == 1 ? D::fromInt(n) : D::div(D::fromInt(n), D::fromInt(d));
    }
    out.push_back(std::move(v));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &,
                   ValueRange, TypeRange types, SmallVectorImpl<Value> &out) {
    auto type = cast<RankedTensorType>(types[0]);
    SmallVector<float> values;
    for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
      auto [n, d] = element(type.getShape(), i);
      values.push_back(static_cast<float>(static_cast<double>(n) / d));
    }
    auto c = tg::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, ArrayRef<float>(values)));
    c->setAttr(kConstAttr, b.getStringAttr(specOf(K).name));
    out.push_back(c);
  }
  static bool import(Operation *op, const ShapeTable &t, ImportedOp &r) {
    auto c = dyn_cast<tg::ConstantOp>(op);
    auto which = op->getAttrOfType<StringAttr>(kConstAttr);
    if (!c || !which || which.getValue() != specOf(K).name)
      return false;
    std::optional<ShapeId> s =
        t.lookup(cast<RankedTensorType>(c.getType()).getShape());
    if (!s)
      return false;
    r.attrs.shape = *s;
    return true;
  }
};

struct ConstImmSpec : ConstSpec<OpKind::ConstImm> {
  static constexpr const char *name = "const_imm";
  static constexpr const char *summary = "identity matrix [n,n] (TASO)";
};
struct ConstIConvSpec : ConstSpec<OpKind::ConstIConv> {
  static constexpr const char *name = "const_iconv";
  static constexpr const char *summary =
      "identity filter [C,C,k,k]: 1 at (c, c, centre) (TASO)";
};
struct ConstOneSpec : ConstSpec<OpKind::ConstOne> {
  static constexpr const char *name = "const_one";
  static constexpr const char *summary = "tensor of ones (TASO)";
};
struct ConstPoolSpec : ConstSpec<OpKind::ConstPool> {
  static constexpr const char *name = "const_pool";
  static constexpr const char *summary =
      "depthwise averaging filter [C,1,kh,kw] filled with 1/(kh*kw) (TASO)";
};

//===----------------------------------------------------------------------===//
// Normalisations and their folding
//===----------------------------------------------------------------------===//

/// batchnorm(x, scale, bias, mean, var), inference form, epsilon 1e-5.
struct BatchNormSpec : SpecBase {
  static constexpr OpKind kind = OpKind::BatchNorm;
  static constexpr const char *name = "batchnorm";
  static constexpr const char *summary =
      "(x - mean) / sqrt(var + eps) * scale + bias per channel "
      "(tg.batchnorm, eps 1e-5)";
  static constexpr unsigned numOperands = 5;
  static constexpr std::array<RoleMask, 5> roles{
      kData, roleBit(Role::BnScale), roleBit(Role::BnBias),
      roleBit(Role::BnMean), roleBit(Role::BnVar)};
  static constexpr auto propagateSplit = splitLeading;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    return inferWith(sc, in, [](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferBatchNorm(std::nullopt, t[0], t[1], t[2], t[3], t[4], r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(interp::batchNorm<D>(*in[0], *in[1], *in[2], *in[3], *in[4],
                                       kNormEpsilon));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::BatchNormOp::create(b, loc, types[0], in[0], in[1],
                                          in[2], in[3], in[4],
                                          b.getF64FloatAttr(kNormEpsilon)));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto bn = dyn_cast<tg::BatchNormOp>(op);
    if (!bn || bn.getEpsilon().convertToDouble() != kNormEpsilon)
      return false;
    r.operands = {bn.getInput(), bn.getScale(), bn.getBias(), bn.getMean(),
                  bn.getVariance()};
    return true;
  }
};

/// Checks that every operand is a vector of one shape.
Inferred sameVectors(SpecContext &sc, Shapes in) {
  for (ShapeId s : in)
    if (sc.shapes->rank(s) != 1 || s != in[0])
      return std::nullopt;
  return SmallVector<ShapeId, 2>{in[0]};
}

/// bn_scale(scale, var) = scale * rsqrt(var + eps): the per-channel factor
/// of a batchnorm. Emitted as tg.add, tg.rsqrt, tg.mul.
struct BnScaleSpec : SpecBase {
  static constexpr OpKind kind = OpKind::BnScale;
  static constexpr const char *name = "bn_scale";
  static constexpr const char *summary =
      "scale * rsqrt(var + eps): a batchnorm's per-channel factor "
      "(parameter preparation; tg.add, tg.rsqrt, tg.mul)";
  static constexpr unsigned numOperands = 2;
  static constexpr bool paramPrep = true;
  static constexpr std::array<RoleMask, 5> roles{roleBit(Role::BnScale),
                                                 roleBit(Role::BnVar)};
  static constexpr Role resultRole = Role::ChannelScale;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    return sameVectors(sc, in);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    Tensor<D> eps = scalarTensor<D>(D::fromDouble(kNormEpsilon));
    Tensor<D> sum = interp::binary<D>(interp::BinaryKind::Add, *in[1], eps);
    Tensor<D> r = interp::unary<D>(interp::UnaryKind::Rsqrt, sum);
    out.push_back(interp::binary<D>(interp::BinaryKind::Mul, *in[0], r));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    Value sum = tg::AddOp::create(b, loc, types[0], in[1], emitEpsilon(b, loc));
    Value r = tg::RsqrtOp::create(b, loc, types[0], sum);
    auto m = tg::MulOp::create(b, loc, types[0], in[0], r);
    markMacro(m, name);
    out.push_back(m);
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto m = dyn_cast<tg::MulOp>(op);
    if (!m || !isMacro(op, name))
      return false;
    auto rs = def<tg::RsqrtOp>(m.getRhs());
    auto add = rs ? def<tg::AddOp>(rs.getInput()) : tg::AddOp();
    auto eps = add ? def<tg::ConstantOp>(add.getRhs()) : tg::ConstantOp();
    if (!eps)
      return false;
    r.operands = {m.getLhs(), add.getLhs()};
    r.ops = {eps, add, rs, m};
    return true;
  }
};

/// bn_shift(bias, mean, k) = bias - mean * k: a batchnorm's per-channel
/// offset once its factor k is known. Emitted as tg.mul, tg.sub.
struct BnShiftSpec : SpecBase {
  static constexpr OpKind kind = OpKind::BnShift;
  static constexpr const char *name = "bn_shift";
  static constexpr const char *summary =
      "bias - mean * k: a batchnorm's per-channel offset (parameter "
      "preparation; tg.mul, tg.sub)";
  static constexpr unsigned numOperands = 3;
  static constexpr bool paramPrep = true;
  static constexpr std::array<RoleMask, 5> roles{
      roleBit(Role::BnBias), roleBit(Role::BnMean),
      roleBit(Role::ChannelScale)};
  static constexpr Role resultRole = Role::ChannelBias;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    return sameVectors(sc, in);
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    Tensor<D> mk = interp::binary<D>(interp::BinaryKind::Mul, *in[1], *in[2]);
    out.push_back(interp::binary<D>(interp::BinaryKind::Sub, *in[0], mk));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    Value mk = tg::MulOp::create(b, loc, types[0], in[1], in[2]);
    auto s = tg::SubOp::create(b, loc, types[0], in[0], mk);
    markMacro(s, name);
    out.push_back(s);
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto s = dyn_cast<tg::SubOp>(op);
    if (!s || !isMacro(op, name))
      return false;
    auto mk = def<tg::MulOp>(s.getRhs());
    if (!mk)
      return false;
    r.operands = {s.getLhs(), mk.getLhs(), mk.getRhs()};
    r.ops = {mk, s};
    return true;
  }
};

/// scale_filter(w, k) = w * k[o] per output channel o. Emitted as
/// tg.reshape (k to [O,1,1,1]) and tg.mul.
struct ScaleFilterSpec : SpecBase {
  static constexpr OpKind kind = OpKind::ScaleFilter;
  static constexpr const char *name = "scale_filter";
  static constexpr const char *summary =
      "w * k[o]: a filter [O,I,h,w] scaled per output channel (parameter "
      "preparation; tg.reshape, tg.mul)";
  static constexpr unsigned numOperands = 2;
  static constexpr bool paramPrep = true;
  static constexpr std::array<RoleMask, 5> roles{
      kFilter, roleBit(Role::ChannelScale)};
  static constexpr Role resultRole = Role::FoldedFilter;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    ArrayRef<int64_t> w = sc.shapes->get(in[0]), k = sc.shapes->get(in[1]);
    if (w.size() != 4 || k.size() != 1 || k[0] != w[0])
      return std::nullopt;
    return SmallVector<ShapeId, 2>{in[0]};
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    Tensor<D> k = interp::reshape<D>(*in[1], {in[1]->shape[0], 1, 1, 1});
    out.push_back(interp::binary<D>(interp::BinaryKind::Mul, *in[0], k));
  }
  static void propagateSplit(const OpAttrs &, ArrayRef<const SplitInfo *> in,
                             Shapes, const ShapeTable &,
                             SmallVectorImpl<SplitInfo> &out) {
    SplitInfo r;
    copyAxis(r, 0, *in[0], 0);
    copyAxis(r, 1, *in[0], 1);
    out.assign(1, r);
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    int64_t o = rtype(in[1]).getDimSize(0);
    Value k = tg::ReshapeOp::create(
        b, loc, tensorTypeOf(b.getContext(), {o, 1, 1, 1}), in[1]);
    auto m = tg::MulOp::create(b, loc, types[0], in[0], k);
    markMacro(m, name);
    out.push_back(m);
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto m = dyn_cast<tg::MulOp>(op);
    if (!m || !isMacro(op, name))
      return false;
    auto k = def<tg::ReshapeOp>(m.getRhs());
    if (!k)
      return false;
    r.operands = {m.getLhs(), k.getInput()};
    r.ops = {k, m};
    return true;
  }
};

/// channel_affine(y, k, c) = y * k[ch] + c[ch] per channel of an NCHW
/// tensor: what a batchnorm is, once folded. Emitted as tg.reshape (x2),
/// tg.mul, tg.add. Used by the axioms; not enumerated by default.
struct ChannelAffineSpec : SpecBase {
  static constexpr OpKind kind = OpKind::ChannelAffine;
  static constexpr const char *name = "channel_affine";
  static constexpr const char *summary =
      "y * k[c] + b[c] per channel c of NCHW y (tg.reshape, tg.mul, tg.add)";
  static constexpr unsigned numOperands = 3;
  static constexpr std::array<RoleMask, 5> roles{
      kData, roleBit(Role::ChannelScale), roleBit(Role::ChannelBias)};
  static constexpr auto propagateSplit = splitLeading;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    ArrayRef<int64_t> y = sc.shapes->get(in[0]);
    if (y.size() != 4 || in[1] != in[2] || sc.shapes->get(in[1]).size() != 1 ||
        sc.shapes->get(in[1])[0] != y[1])
      return std::nullopt;
    return SmallVector<ShapeId, 2>{in[0]};
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    int64_t c = in[1]->shape[0];
    Tensor<D> k = interp::reshape<D>(*in[1], {c, 1, 1});
    Tensor<D> b = interp::reshape<D>(*in[2], {c, 1, 1});
    Tensor<D> yk = interp::binary<D>(interp::BinaryKind::Mul, *in[0], k);
    out.push_back(interp::binary<D>(interp::BinaryKind::Add, yk, b));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    int64_t c = rtype(in[1]).getDimSize(0);
    auto vecType = tensorTypeOf(b.getContext(), {c, 1, 1});
    Value k = tg::ReshapeOp::create(b, loc, vecType, in[1]);
    Value off = tg::ReshapeOp::create(b, loc, vecType, in[2]);
    Value yk = tg::MulOp::create(b, loc, types[0], in[0], k);
    auto a = tg::AddOp::create(b, loc, types[0], yk, off);
    markMacro(a, name);
    out.push_back(a);
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto a = dyn_cast<tg::AddOp>(op);
    if (!a || !isMacro(op, name))
      return false;
    auto yk = def<tg::MulOp>(a.getLhs());
    auto off = def<tg::ReshapeOp>(a.getRhs());
    auto k = yk ? def<tg::ReshapeOp>(yk.getRhs()) : tg::ReshapeOp();
    if (!off || !k)
      return false;
    r.operands = {yk.getLhs(), k.getInput(), off.getInput()};
    r.ops = {k, off, yk, a};
    return true;
  }
};

/// softmax over the last axis of a matrix.
struct SoftmaxSpec : SpecBase {
  static constexpr OpKind kind = OpKind::Softmax;
  static constexpr const char *name = "softmax";
  static constexpr const char *summary =
      "softmax over the last axis of a matrix (tg.softmax)";
  static constexpr unsigned numOperands = 1;
  static constexpr std::array<RoleMask, 5> roles{kData};
  static constexpr auto propagateSplit = splitLeading;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    if (sc.shapes->rank(in[0]) != 2)
      return std::nullopt;
    return SmallVector<ShapeId, 2>{in[0]};
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(interp::softmax<D>(*in[0], -1));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::SoftmaxOp::create(b, loc, types[0], in[0],
                                        b.getI64IntegerAttr(-1)));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto s = dyn_cast<tg::SoftmaxOp>(op);
    if (!s || rtype(s.getInput()).getRank() != 2 ||
        (static_cast<int64_t>(s.getAxis()) != -1 &&
         static_cast<int64_t>(s.getAxis()) != 1))
      return false;
    r.operands = {s.getInput()};
    return true;
  }
};

/// layernorm(x, scale, bias) over the last axis of a matrix, epsilon 1e-5.
struct LayerNormSpec : SpecBase {
  static constexpr OpKind kind = OpKind::LayerNorm;
  static constexpr const char *name = "layernorm";
  static constexpr const char *summary =
      "layer normalisation over the last axis of a matrix (tg.layernorm, "
      "eps 1e-5)";
  static constexpr unsigned numOperands = 3;
  static constexpr std::array<RoleMask, 5> roles{
      kData, roleBit(Role::LnScale), roleBit(Role::LnBias)};
  static constexpr auto propagateSplit = splitLeading;

  static Inferred infer(SpecContext &sc, const OpAttrs &, Shapes in) {
    if (sc.shapes->rank(in[0]) != 2)
      return std::nullopt;
    return inferWith(sc, in, [](ArrayRef<Type> t, SmallVectorImpl<Type> &r) {
      return tg::inferLayerNorm(std::nullopt, t[0], t[1], t[2], -1, r);
    });
  }
  template <class D>
  static void eval(const OpAttrs &, const ShapeTable &, Operands<D> in, Results<D> &out) {
    out.push_back(
        interp::layerNorm<D>(*in[0], *in[1], *in[2], -1, kNormEpsilon));
  }
  static void emit(OpBuilder &b, Location loc, const OpAttrs &, ValueRange in,
                   TypeRange types, SmallVectorImpl<Value> &out) {
    out.push_back(tg::LayerNormOp::create(b, loc, types[0], in[0], in[1],
                                          in[2], b.getI64IntegerAttr(-1),
                                          b.getF64FloatAttr(kNormEpsilon)));
  }
  static bool import(Operation *op, const ShapeTable &, ImportedOp &r) {
    auto l = dyn_cast<tg::LayerNormOp>(op);
    if (!l || rtype(l.getInput()).getRank() != 2 ||
        (static_cast<int64_t>(l.getAxis()) != -1 &&
         static_cast<int64_t>(l.getAxis()) != 1) ||
        l.getEpsilon().convertToDouble() != kNormEpsilon)
      return false;
    r.operands = {l.getInput(), l.getScale(), l.getBias()};
    return true;
  }
};

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

template <class S> constexpr OpSpec makeSpec() {
  return OpSpec{S::kind,
                S::name,
                S::summary,
                S::numOperands,
                S::numResults,
                S::commutative,
                S::paramPrep,
                S::inputOperandsOnly,
                S::uniformOperands,
                S::attrFields,
                S::roles,
                S::resultRole,
                &S::infer,
                &S::template eval<interp::ModPDomain>,
                &S::template eval<interp::F64Domain>,
                &S::template eval<Z3Domain>,
                S::accepts,
                S::complete,
                S::propagateSplit,
                &S::emit,
                &S::import,
                &S::cost};
}

const OpSpec kSpecs[] = {
    makeSpec<MatmulSpec>(),      makeSpec<AddSpec>(),
    makeSpec<MulSpec>(),         makeSpec<SMulSpec>(),
    makeSpec<ReluSpec>(),        makeSpec<TransposeSpec>(),
    makeSpec<ConvSpec>(),        makeSpec<MaxPoolSpec>(),
    makeSpec<AvgPoolSpec>(),     makeSpec<ConcatSpec>(),
    makeSpec<SplitSpec>(),       makeSpec<EnlargeSpec>(),
    makeSpec<ConstImmSpec>(),    makeSpec<ConstIConvSpec>(),
    makeSpec<ConstOneSpec>(),    makeSpec<ConstPoolSpec>(),
    makeSpec<BatchNormSpec>(),   makeSpec<BnScaleSpec>(),
    makeSpec<BnShiftSpec>(),     makeSpec<ScaleFilterSpec>(),
    makeSpec<ChannelAffineSpec>(), makeSpec<SoftmaxSpec>(),
    makeSpec<LayerNormSpec>(),
};
static_assert(std::size(kSpecs) == kNumOpKinds, "one spec per kind");

} // namespace

const OpSpec &superopt::specOf(OpKind kind) {
  const OpSpec &s = kSpecs[static_cast<unsigned>(kind)];
  assert(s.kind == kind && "spec table out of order");
  return s;
}

std::optional<OpKind> superopt::kindNamed(StringRef name) {
  for (const OpSpec &s : kSpecs)
    if (name == s.name)
      return s.kind;
  return std::nullopt;
}

template <class D>
void superopt::evalOp(OpKind kind, const OpAttrs &attrs,
                      const ShapeTable &shapes,
                      ArrayRef<const Tensor<D> *> operands,
                      SmallVectorImpl<Tensor<D>> &results) {
  const OpSpec &s = specOf(kind);
  if constexpr (std::is_same_v<D, interp::ModPDomain>)
    s.evalModP(attrs, shapes, operands, results);
  else if constexpr (std::is_same_v<D, interp::F64Domain>)
    s.evalF64(attrs, shapes, operands, results);
  else
    s.evalZ3(attrs, shapes, operands, results);
}

template void superopt::evalOp<interp::ModPDomain>(
    OpKind, const OpAttrs &, const ShapeTable &,
    ArrayRef<const Tensor<interp::ModPDomain> *>,
    SmallVectorImpl<Tensor<interp::ModPDomain>> &);
template void superopt::evalOp<interp::F64Domain>(
    OpKind, const OpAttrs &, const ShapeTable &,
    ArrayRef<const Tensor<interp::F64Domain> *>,
    SmallVectorImpl<Tensor<interp::F64Domain>> &);
template void superopt::evalOp<Z3Domain>(OpKind, const OpAttrs &,
                                         const ShapeTable &,
                                         ArrayRef<const Tensor<Z3Domain> *>,
                                         SmallVectorImpl<Tensor<Z3Domain>> &);

bool superopt::importOp(Operation *op, const ShapeTable &shapes,
                        ImportedOp &result) {
  for (const OpSpec &s : kSpecs) {
    ImportedOp r;
    r.kind = s.kind;
    if (!s.import(op, shapes, r))
      continue;
    if (r.ops.empty())
      r.ops.push_back(op);
    result = std::move(r);
    return true;
  }
  return false;
}

uint64_t superopt::hashOp(OpKind kind, const OpAttrs &a,
                          const ShapeTable &shapes) {
  uint8_t f = specOf(kind).attrFields;
  uint64_t h = hashString(specOf(kind).name);
  if (f & kAttrAxis)
    h = hashMix(h, static_cast<uint64_t>(a.axis) & 0xff);
  if (f & (kAttrRelu | kAttrBias))
    h = hashMix(h, (a.relu ? 1 : 0) | (a.bias ? 2 : 0));
  if (f & kAttrSizes)
    h = hashMix(h,
                (uint64_t(uint16_t(a.sizes[0])) << 16) | uint16_t(a.sizes[1]));
  if (f & kAttrKernel)
    h = hashMix(h, (uint64_t(uint16_t(a.kernel[0])) << 16) |
                       uint16_t(a.kernel[1]));
  if (f & kAttrShape)
    for (int64_t d : shapes.get(a.shape))
      h = hashMix(h, static_cast<uint64_t>(d));
  return h;
}

std::string superopt::opString(OpKind kind, const OpAttrs &a,
                               const ShapeTable &shapes) {
  uint8_t f = specOf(kind).attrFields;
  SmallVector<std::string, 4> parts;
  if (f & kAttrAxis)
    parts.push_back("axis=" + std::to_string(a.axis));
  if ((f & kAttrRelu) && a.relu)
    parts.push_back("relu");
  if ((f & kAttrBias) && a.bias)
    parts.push_back("bias");
  if (f & kAttrSizes)
    parts.push_back("sizes=[" + std::to_string(a.sizes[0]) + "," +
                    std::to_string(a.sizes[1]) + "]");
  if (f & kAttrKernel)
    parts.push_back("kernel=[" + std::to_string(a.kernel[0]) + "," +
                    std::to_string(a.kernel[1]) + "]");
  if (f & kAttrShape)
    parts.push_back("shape=" + shapes.str(a.shape));
  std::string s = specOf(kind).name;
  if (!parts.empty())
    s += "{" + llvm::join(parts, ",") + "}";
  return s;
}
