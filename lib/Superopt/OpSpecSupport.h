//===- OpSpecSupport.h - Writing operator specifications --------*- C++ -*-===//
//
// Part of Loom. What the spec files (OpSpecs*.cpp) share: the shape, type
// and emission helpers, the split-information rules, the defaults every
// spec struct inherits (SpecBase), and the registration of the structs.
//
// A new operator of the generator is one struct, written where its concern
// is (OpSpecsAlgebra.cpp, OpSpecsConv.cpp, OpSpecsMovement.cpp,
// OpSpecsConstants.cpp, OpSpecsNorm.cpp, OpSpecsBatched.cpp), followed by
// `LOOM_SUPEROPT_SPEC(TheSpec);`:
//
//   struct ReluSpec : SpecBase {
//     using TgOp = tg::ReluOp;          // the tg op it stands for
//     static constexpr const char *summary = "max(x, 0) elementwise";
//     static constexpr OpVariant variants[] = {{"", {}, 0, true, "relu"}};
//     static constexpr unsigned numOperands = 1;
//     static constexpr std::array<RoleMask, 5> roles{kData};
//     static Inferred infer(...);       // shape rule
//     template <class D> static void eval(...);   // semantics
//     static void emit(...);            // tg ops
//     static bool import(tg::ReluOp, ...);        // recognised in tg IR
//   };
//   LOOM_SUPEROPT_SPEC(ReluSpec);
//
// Its name is TgOp's mnemonic ("relu"; "conv" for tg.conv: a trailing `2d`
// is dropped), unless the struct declares `name` -- macros (several tg ops,
// or one in a restricted form with a name of its own: smul, bn_scale, the
// generator's constants) do, and name TgOp after the op that ends them.
// Its --ops names are its name plus each variant's suffix. Nothing else
// lists operators: the registration makes a compile-time list of the specs
// of a file, in declaration order, and the file's last line
// (LOOM_SUPEROPT_SPEC_FILE) turns it into the file's table.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_SUPEROPT_OPSPECSUPPORT_H
#define LOOM_LIB_SUPEROPT_OPSPECSUPPORT_H

#include "loom/Superopt/OpSpec.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Dialect/TG/IR/TypeInference.h"
#include "loom/Interpreter/Kernels.h"
#include "loom/Superopt/Z3Domain.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <string_view>
#include <type_traits>

namespace loom::superopt::opspec {

using interp::Tensor;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::SmallVectorImpl;
using mlir::Location;
using mlir::OpBuilder;
using mlir::Operation;
using mlir::Type;
using mlir::TypeRange;
using mlir::Value;
using mlir::ValueRange;

using Shapes = ArrayRef<ShapeId>;
using Inferred = std::optional<SmallVector<ShapeId, 2>>;
template <class D> using Operands = ArrayRef<const Tensor<D> *>;
template <class D> using Results = SmallVectorImpl<Tensor<D>>;
using Splits = ArrayRef<const SplitInfo *>;

constexpr RoleMask kAny = kTensorRoles;
constexpr RoleMask kData = kDataRoles;
constexpr RoleMask kDataOrConst = kDataRoles | roleBit(Role::Constant);
constexpr RoleMask kFilter = roleBit(Role::Weight) | roleBit(Role::Constant);

//===----------------------------------------------------------------------===//
// Shapes, types and emission
//===----------------------------------------------------------------------===//

/// Runs a TypeInference rule on f32 tensor types of \p operands and interns
/// the inferred shapes. \p rule gets the operand types.
template <class F>
Inferred inferWith(SpecContext &sc, Shapes operands, F &&rule) {
  SmallVector<Type, 5> types;
  for (ShapeId s : operands)
    types.push_back(tensorTypeOf(sc.mlir, sc.shapes->get(s)));
  SmallVector<Type, 2> inferred;
  if (mlir::failed(rule(ArrayRef<Type>(types), inferred)))
    return std::nullopt;
  SmallVector<ShapeId, 2> out;
  for (Type t : inferred)
    out.push_back(
        sc.shapes->intern(mlir::cast<mlir::RankedTensorType>(t).getShape()));
  return out;
}

/// The one result shape \p s.
inline Inferred sameShape(ShapeId s) { return SmallVector<ShapeId, 2>{s}; }

/// Checks that every operand is a vector of one shape.
Inferred sameVectors(SpecContext &sc, Shapes in);

/// The same-padding pads [top, left, bottom, right] of an odd kernel.
inline std::array<int64_t, 4> samePads(int64_t kh, int64_t kw) {
  return {(kh - 1) / 2, (kw - 1) / 2, (kh - 1) / 2, (kw - 1) / 2};
}

inline mlir::RankedTensorType rtype(Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// Whether \p axis (negative from the end) of a rank-\p rank tensor,
/// normalised, and stored in \p out.
bool normalizeAxis(int64_t axis, int64_t rank, int8_t &out);

/// A rank-0 tensor holding \p v.
template <class D> Tensor<D> scalarTensor(typename D::T v) {
  return Tensor<D>({}, {v});
}

/// Attribute marking the last op of a macro (an op of the generator that
/// expands to several tg ops).
constexpr const char *kMacroAttr = "loom.macro";
/// Attribute naming which generator constant a tg.constant is.
constexpr const char *kConstAttr = "loom.const";

bool isMacro(Operation *op, llvm::StringRef name);
void markMacro(Operation *op, llvm::StringRef name);

/// The defining op of \p v if it is an OpTy.
template <class OpTy> OpTy def(Value v) {
  return v ? v.getDefiningOp<OpTy>() : OpTy();
}

Value emitEpsilon(OpBuilder &b, Location loc);
mlir::DenseI64ArrayAttr i64s(OpBuilder &b, ArrayRef<int64_t> v);

//===----------------------------------------------------------------------===//
// Split information
//===----------------------------------------------------------------------===//

/// Length of the preorder subtree starting at \p at.
size_t subtreeSize(ArrayRef<int16_t> tree, size_t at);
void appendShifted(SmallVectorImpl<int16_t> &out, ArrayRef<int16_t> tree,
                   int delta);
/// The boundaries two tensors agree on.
AxisSplit meet(const AxisSplit &a, const AxisSplit &b);
/// The boundaries of the concatenation of \p a (of length \p dimA) and \p b.
AxisSplit concatSplit(const AxisSplit &a, const AxisSplit &b, int64_t dimA);

/// Split propagation that keeps nothing (single-result ops).
void splitNone(const OpAttrs &, Splits, Shapes, const ShapeTable &,
               SmallVectorImpl<SplitInfo> &out);
/// Elementwise: an axis keeps the boundaries all operands agree on.
void splitElementwise(const OpAttrs &, Splits in, Shapes, const ShapeTable &,
                      SmallVectorImpl<SplitInfo> &out);
/// Unary ops: the first operand's information.
void splitCopy(const OpAttrs &, Splits in, Shapes, const ShapeTable &,
               SmallVectorImpl<SplitInfo> &out);
/// Only the leading (batch / row) axis survives.
void splitLeading(const OpAttrs &, Splits in, Shapes, const ShapeTable &,
                  SmallVectorImpl<SplitInfo> &out);
/// The two leading axes survive (batch and channels of an image, output and
/// input channels of a filter).
void splitLeadingTwo(const OpAttrs &, Splits in, Shapes, const ShapeTable &,
                     SmallVectorImpl<SplitInfo> &out);

//===----------------------------------------------------------------------===//
// Defaults of the spec structs
//===----------------------------------------------------------------------===//

bool completeNothing(OpAttrs &, Splits, Shapes, const ShapeTable &);
bool acceptAll(const OpAttrs &, ArrayRef<Role>);

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
};

//===----------------------------------------------------------------------===//
// From a struct to its OpSpec
//===----------------------------------------------------------------------===//

template <class S, class = void> struct DeclaresName : std::false_type {};
template <class S>
struct DeclaresName<S, std::void_t<decltype(S::name)>> : std::true_type {};

/// The mnemonic of tg op \p opName ("tg.conv") less a trailing `2d`.
constexpr std::string_view nameFromMnemonic(std::string_view opName) {
  std::string_view m = opName.substr(opName.find('.') + 1);
  if (m.size() > 2 && m.substr(m.size() - 2) == "2d")
    m.remove_suffix(2);
  return m;
}

/// The name of spec \p S (OpSpec::name).
template <class S> constexpr std::string_view specName() {
  if constexpr (DeclaresName<S>::value)
    return S::name;
  else
    return nameFromMnemonic(S::TgOp::getOperationName());
}

/// import() on an op already known to be a TgOp.
template <class S>
bool importAs(Operation *op, const ShapeTable &t, ImportedOp &r) {
  auto o = mlir::dyn_cast<typename S::TgOp>(op);
  return o && S::import(o, t, r);
}

template <class S> OpSpec makeSpec() {
  std::string_view name = specName<S>();
  return OpSpec{OpKind(),
                llvm::StringRef(name.data(), name.size()),
                S::TgOp::getOperationName(),
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
                S::variants,
                &S::infer,
                &S::template eval<interp::ModPDomain>,
                &S::template eval<interp::F64Domain>,
                &S::template eval<Z3Domain>,
                S::accepts,
                S::complete,
                S::propagateSplit,
                &S::emit,
                &importAs<S>};
}

//===----------------------------------------------------------------------===//
// Registration: a compile-time list of a file's spec structs
//===----------------------------------------------------------------------===//

template <class... S> struct SpecList {
  static constexpr unsigned size = sizeof...(S);
};
template <class L, class S> struct SpecAppend;
template <class... Ss, class S> struct SpecAppend<SpecList<Ss...>, S> {
  using type = SpecList<Ss..., S>;
};

/// Overload ranks: a call with SpecRank<kMaxSpecsPerFile> picks the
/// overload of highest rank declared so far.
constexpr unsigned kMaxSpecsPerFile = 32;
template <unsigned N> struct SpecRank : SpecRank<N - 1> {};
template <> struct SpecRank<0> {};

/// The table of the specs of \p L, in list order.
template <class... S> ArrayRef<OpSpec> tableOf(SpecList<S...>) {
  static const OpSpec table[] = {makeSpec<S>()...};
  return table;
}

/// The specs of each spec file (OpSpecs.cpp concatenates them).
ArrayRef<OpSpec> algebraSpecs();
ArrayRef<OpSpec> convSpecs();
ArrayRef<OpSpec> movementSpecs();
ArrayRef<OpSpec> constantSpecs();
ArrayRef<OpSpec> normSpecs();
ArrayRef<OpSpec> batchedSpecs();

} // namespace loom::superopt::opspec

namespace {
/// The specs registered so far in this file: each LOOM_SUPEROPT_SPEC
/// declares an overload of one more rank returning the list with its
/// struct appended. Declarations only, never called (decltype).
[[maybe_unused]] loom::superopt::opspec::SpecList<>
    registeredSpecs(loom::superopt::opspec::SpecRank<0>);
} // namespace

#define LOOM_SUPEROPT_SPECS_SO_FAR                                             \
  decltype(registeredSpecs(::loom::superopt::opspec::SpecRank<                 \
                           ::loom::superopt::opspec::kMaxSpecsPerFile>()))

/// Registers spec struct \p S (at namespace scope, after the struct).
#define LOOM_SUPEROPT_SPEC(S)                                                  \
  static_assert(LOOM_SUPEROPT_SPECS_SO_FAR::size <                             \
                    ::loom::superopt::opspec::kMaxSpecsPerFile,                \
                "too many specs in one file");                                 \
  [[maybe_unused]] ::loom::superopt::opspec::                                  \
      SpecAppend<LOOM_SUPEROPT_SPECS_SO_FAR, S>::type registeredSpecs(         \
          ::loom::superopt::opspec::SpecRank<                                  \
              LOOM_SUPEROPT_SPECS_SO_FAR::size + 1>)

/// Defines \p fn, the table of the specs registered in this file (its last
/// line, at global scope).
#define LOOM_SUPEROPT_SPEC_FILE(fn)                                            \
  llvm::ArrayRef<loom::superopt::OpSpec> loom::superopt::opspec::fn() {        \
    return tableOf(LOOM_SUPEROPT_SPECS_SO_FAR());                              \
  }

#endif // LOOM_LIB_SUPEROPT_OPSPECSUPPORT_H
