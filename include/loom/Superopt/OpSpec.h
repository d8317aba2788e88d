//===- OpSpec.h - Operator specifications of the rule generator -*- C++ -*-===//
//
// Part of Loom. One specification per operator of the generator, tying
// together everything the generator needs to know about it:
//
//   * the tg op it stands for (or that ends it, for a macro), which gives
//     it its name, and the --ops names of its variants with the inputs they
//     need;
//   * its arity, which kinds of tensors (roles) it accepts, and whether it is
//     commutative or a parameter-preparation op;
//   * its shape rule, delegated to the tg dialect's TypeInference.h;
//   * its semantics, delegated to the interpreter's domain-generic kernels
//     (Kernels.h) and instantiated for the fingerprint domain (ModPDomain),
//     for floats (F64Domain) and for the symbolic Z3 domain (Z3Domain.h);
//   * how it propagates TASO's split information (which concatenation
//     boundaries a tensor carries, so that a split knows where to cut);
//   * how to emit it as tg ops, and how to recognise it in tg IR. What it
//     costs, which orients rules from costly to cheap, is the work of the
//     tg ops it emits, as the search's cost model counts it
//     (cost::workOf; costOf below).
//
// A spec is one struct in a spec file (lib/Superopt/OpSpecs*.cpp, see
// OpSpecSupport.h); the vocabulary -- the kinds, their number and order --
// is derived from those structs. The Z3 function symbol of an op is derived
// from its kind name, attributes and operand shapes (Prover.cpp); its
// properties are the axioms of Axioms.cpp. Nothing else in the generator
// switches on the operator kind.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPEROPT_OPSPEC_H
#define LOOM_SUPEROPT_OPSPEC_H

#include "loom/Interpreter/Domain.h"
#include "loom/Interpreter/Tensor.h"
#include "loom/Superopt/Shape.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace loom::superopt {

struct Z3Domain;

//===----------------------------------------------------------------------===//
// Operators, roles and attributes
//===----------------------------------------------------------------------===//

/// An operator of the generator: the index of its specification in the
/// vocabulary (vocabulary()). The vocabulary is derived from the spec
/// structs (lib/Superopt/OpSpecs*.cpp), so there is no list of kinds to keep
/// in step with it: an index is only meaningful against the one vocabulary
/// of the program. Attributes (axis, fused relu, ...) distinguish instances.
class OpKind {
public:
  constexpr OpKind() = default;
  static constexpr OpKind fromIndex(unsigned index) {
    OpKind k;
    k.value = static_cast<uint8_t>(index);
    return k;
  }
  constexpr unsigned index() const { return value; }
  constexpr bool operator==(OpKind o) const { return value == o.value; }
  constexpr bool operator!=(OpKind o) const { return value != o.value; }
  constexpr bool operator<(OpKind o) const { return value < o.value; }

private:
  uint8_t value = 0;
};

/// What a tensor stands for. Graph inputs are declared with a role; op
/// results get the role their kind produces. Roles keep the enumeration to
/// meaningful graphs (a convolution's input is never a raw filter; batchnorm
/// parameters only feed batchnorm and its folding).
enum class Role : uint8_t {
  Activation,   ///< x / i inputs: data flowing through the model
  Weight,       ///< w inputs: matmul / convolution weights
  Derived,      ///< the result of a tensor op on activations
  Constant,     ///< a constant tensor (TASO's identity and ones tensors)
  Scalar,       ///< rank-0 multiplier of smul
  BnScale,      ///< batchnorm gamma [C]
  BnBias,       ///< batchnorm beta [C]
  BnMean,       ///< batchnorm running mean [C]
  BnVar,        ///< batchnorm running variance [C] (non-negative)
  LnScale,      ///< layernorm gamma
  LnBias,       ///< layernorm beta
  ChannelScale, ///< a per-channel factor (bn_scale)
  ChannelBias,  ///< a per-channel offset (bn_shift): a convolution bias
  FoldedFilter, ///< a filter scaled per channel (scale_filter): feeds convs
};
using RoleMask = uint16_t;
constexpr RoleMask roleBit(Role r) { return RoleMask(1) << unsigned(r); }
/// Tensors that ordinary tensor operators accept.
constexpr RoleMask kTensorRoles =
    roleBit(Role::Activation) | roleBit(Role::Weight) | roleBit(Role::Derived) |
    roleBit(Role::Constant);
/// Data flowing through a model (as opposed to weights).
constexpr RoleMask kDataRoles =
    roleBit(Role::Activation) | roleBit(Role::Derived);
llvm::StringRef roleName(Role role);
/// The role of a tensor op's result: Weight when its tensor operands are
/// weights or constants (at least one weight), Constant when all are
/// constants, \p resultRole (usually Derived) otherwise.
Role resultRoleOf(Role resultRole, llvm::ArrayRef<Role> operandRoles);

/// Attributes of one op application. Fields a kind does not use stay zero.
struct OpAttrs {
  int8_t axis = 0;                     ///< concat, split
  bool relu = false;                   ///< conv: fused relu
  bool bias = false;                   ///< conv: has a bias operand
  std::array<int16_t, 2> sizes{0, 0};  ///< split: the two piece sizes
  std::array<int16_t, 2> kernel{0, 0}; ///< enlarge / pooling: kernel size
  ShapeId shape = 0;                   ///< constants: the result shape

  bool operator==(const OpAttrs &o) const {
    return axis == o.axis && relu == o.relu && bias == o.bias &&
           sizes == o.sizes && kernel == o.kernel && shape == o.shape;
  }
  bool operator!=(const OpAttrs &o) const { return !(*this == o); }
};

/// Which OpAttrs fields a kind uses (OpSpec::attrFields).
enum AttrField : uint8_t {
  kAttrAxis = 1,
  kAttrRelu = 2,
  kAttrBias = 4,
  kAttrSizes = 8,
  kAttrKernel = 16,
  kAttrShape = 32,
};

/// Batchnorm / layernorm epsilon used throughout the generator.
constexpr double kNormEpsilon = 1e-5;

/// Attributes with one field set, for the variants of the specs.
constexpr OpAttrs axisAttrs(int axis) {
  OpAttrs r;
  r.axis = static_cast<int8_t>(axis);
  return r;
}
constexpr OpAttrs kernelAttrs(int h, int w) {
  OpAttrs r;
  r.kernel = {static_cast<int16_t>(h), static_cast<int16_t>(w)};
  return r;
}
constexpr OpAttrs convAttrs(bool relu, bool bias) {
  OpAttrs r;
  r.relu = relu;
  r.bias = bias;
  return r;
}

//===----------------------------------------------------------------------===//
// The universe's inputs, as the operators ask for them
//===----------------------------------------------------------------------===//

/// The dimensions of the enumeration's inputs (Graph.cpp builds them; the
/// reasons for each are in docs/Superopt/RuleGen.md). Matrices are 2x4
/// (activations) and 4x4 (weights); images 1x4x5x5 with 4-channel filters.
constexpr int64_t kUniverseRows = 2, kUniverseFeatures = 4,
                  kUniverseChannels = 4, kUniverseSpatial = 5;

/// Groups of inputs an operator needs (OpVariant::inputs).
enum InputGroup : unsigned {
  kMatrices = 1,   ///< x1..x3 [2,4], w1..w3 [4,4]
  kImages = 2,     ///< i1..i3 [1,4,5,5]
  kFilters = 4,    ///< 3x3, 1x3, 3x1, 1x1 and depthwise filters
  kScalar = 8,     ///< s []
  kBatchNorm = 16, ///< gamma, beta, mean, var [4]
  kLayerNorm = 32, ///< gamma, beta [4]
  kSequences = 64, ///< a1..a3 [1,2,4]: batched activations (BERT's [1,S,H])
};

/// A shape written in a spec (a constant's shape in the universe).
struct FixedShape {
  uint8_t rank = 0;
  std::array<int64_t, 4> dims{};
  llvm::ArrayRef<int64_t> get() const { return {dims.data(), rank}; }
};

/// An operator at fixed attributes that --ops can name (`conv_relu`,
/// `concat1`): declared by the spec of its operator, in OpSpec::variants.
struct OpVariant {
  /// Appended to the operator's name to make the --ops name: "" for the
  /// operator itself, `_relu` / `_bias` for fused variants, the axis for
  /// concatenations and splits.
  const char *suffix;
  /// The fixed attributes (a constant's shape comes from constShape).
  OpAttrs attrs;
  /// The InputGroup bits the universe must provide for it.
  unsigned inputs;
  /// Part of `--ops default`.
  bool inDefault;
  /// One line for --list-ops.
  const char *description;
  /// Constants (kAttrShape): the result shape in the universe.
  FixedShape constShape = {};
};

//===----------------------------------------------------------------------===//
// Split information (TASO)
//===----------------------------------------------------------------------===//

/// The concatenation boundaries along one axis, as a binary tree in preorder:
/// an internal node is a boundary position, -1 a leaf. `concat(a, b)` along
/// the axis has root dim(a), a's tree on the left and b's tree (shifted by
/// dim(a)) on the right; `split` cuts at the root and hands the subtrees to
/// its two results, so split(concat(a, b)) yields pieces shaped as a and b.
struct AxisSplit {
  llvm::SmallVector<int16_t, 9> tree{-1};
  bool empty() const { return tree.size() == 1; }
  bool operator==(const AxisSplit &o) const { return tree == o.tree; }
};
/// Split information of a tensor (rank <= 4).
struct SplitInfo {
  std::array<AxisSplit, 4> axes;
};

//===----------------------------------------------------------------------===//
// The specification table
//===----------------------------------------------------------------------===//

/// Services the specifications need.
struct SpecContext {
  mlir::MLIRContext *mlir;
  ShapeTable *shapes;
};

template <class D>
using EvalFn = void (*)(const OpAttrs &, const ShapeTable &,
                        llvm::ArrayRef<const interp::Tensor<D> *>,
                        llvm::SmallVectorImpl<interp::Tensor<D>> &);

/// What importOp recognised: a kind with attributes, its operands, and the
/// ops it covers (more than one for macros).
struct ImportedOp {
  OpKind kind;
  OpAttrs attrs;
  llvm::SmallVector<mlir::Value, 5> operands;
  llvm::SmallVector<mlir::Operation *, 4> ops;
};

/// The specification of one operator of the generator.
struct OpSpec {
  /// Its index in the vocabulary.
  OpKind kind;
  /// Name in axioms, rule descriptions and Z3 symbols ("conv", "concat"):
  /// the mnemonic of tgOp (less a trailing `2d`: every operator of the
  /// generator is 2-D), or the macro's own name (`smul`, `bn_scale`,
  /// `const_imm`).
  llvm::StringRef name;
  /// The tg op it stands for, or the tg op that ends its expansion for a
  /// macro (several tg ops, or one tg op used in a restricted form that has
  /// its own name): "tg.conv", "tg.mul" for bn_scale.
  llvm::StringRef tgOp;
  /// One line of semantics, for generated documentation.
  const char *summary;
  unsigned numOperands;
  unsigned numResults;
  bool commutative;
  /// Parameter-preparation op: computes on parameters only, so a compiler
  /// folds it away; counted against its own budget (--max-param-ops) and
  /// free in the work of a graph.
  bool paramPrep;
  /// The enumeration applies it to graph inputs only (TASO's enlarge).
  bool inputOperandsOnly;
  /// Tensor operands must be all weights (or constants) or all data (or
  /// constants): no sums or concatenations of a weight with an activation.
  bool uniformOperands;
  /// The OpAttrs fields this kind uses (AttrField bits).
  uint8_t attrFields;
  /// Roles accepted per operand.
  std::array<RoleMask, 5> operandRoles;
  Role resultRole;
  /// The --ops names of the operator, in --list-ops order.
  llvm::ArrayRef<OpVariant> variants;

  /// Result shapes, or nullopt when the operands/attributes are invalid.
  /// (Uses TypeInference.h; \p attrs may be completed, e.g. split sizes.)
  std::optional<llvm::SmallVector<ShapeId, 2>> (*infer)(
      SpecContext &, const OpAttrs &, llvm::ArrayRef<ShapeId>);
  EvalFn<interp::ModPDomain> evalModP;
  EvalFn<interp::F64Domain> evalF64;
  EvalFn<Z3Domain> evalZ3;
  /// Whether the enumeration may apply the op to operands of these roles
  /// (beyond operandRoles: a role combination the op does not take).
  bool (*accepts)(const OpAttrs &, llvm::ArrayRef<Role>);
  /// Completes attributes the enumeration derives from the operands (the
  /// sizes of a split, from the split information); false if impossible.
  bool (*complete)(OpAttrs &, llvm::ArrayRef<const SplitInfo *>,
                   llvm::ArrayRef<ShapeId>, const ShapeTable &);
  /// Split information of the results.
  void (*propagateSplit)(const OpAttrs &, llvm::ArrayRef<const SplitInfo *>,
                         llvm::ArrayRef<ShapeId>, const ShapeTable &,
                         llvm::SmallVectorImpl<SplitInfo> &);
  /// Builds the tg op(s); results have \p resultTypes. The work of an
  /// operator is the work (cost::workOf) of the tg ops it builds.
  void (*emit)(mlir::OpBuilder &, mlir::Location, const OpAttrs &,
               mlir::ValueRange, mlir::TypeRange,
               llvm::SmallVectorImpl<mlir::Value> &);
  /// Recognises the op(s) ending at \p op, an op of tgOp (the last op of a
  /// macro).
  bool (*import)(mlir::Operation *, const ShapeTable &, ImportedOp &);
};

/// Every operator of the generator, in vocabulary order: the spec files in
/// the order OpSpecs.cpp lists them, the specs of a file in the order they
/// are declared. The order fixes the enumeration's and --list-ops'.
llvm::ArrayRef<OpSpec> vocabulary();
/// The specification of \p kind.
inline const OpSpec &specOf(OpKind kind) { return vocabulary()[kind.index()]; }
/// The kind named \p name in axioms ("conv", "concat", ...).
std::optional<OpKind> kindNamed(llvm::StringRef name);

/// Evaluates one op over domain D (ModPDomain, F64Domain or Z3Domain).
template <class D>
void evalOp(OpKind kind, const OpAttrs &attrs, const ShapeTable &shapes,
            llvm::ArrayRef<const interp::Tensor<D> *> operands,
            llvm::SmallVectorImpl<interp::Tensor<D>> &results);

/// What operators cost, in the search's terms (loom::cost::OpWork): FLOPs
/// (a multiply-add is 2) and bytes read and written by kernels. Both are
/// integers, so sums compare exactly. (Candidates.cpp orders graphs by
/// FLOPs, then size, then bytes.)
struct OpCost {
  double flops = 0;
  double bytes = 0;

  OpCost &operator+=(const OpCost &o) {
    flops += o.flops;
    bytes += o.bytes;
    return *this;
  }
};

/// The cost of one application of \p kind to operands of shapes
/// \p operands (results \p results): its spec emits its tg ops into a
/// scratch block and cost::workOf counts each. Parameter-preparation ops
/// cost nothing (a compiler folds them into the weights). Thread-safe given
/// a context with the tg dialect loaded.
OpCost costOf(mlir::MLIRContext *context, const ShapeTable &shapes, OpKind kind,
              const OpAttrs &attrs, llvm::ArrayRef<ShapeId> operands,
              llvm::ArrayRef<ShapeId> results);

/// Recognises the op (or macro) ending at \p op; false if none matches.
bool importOp(mlir::Operation *op, const ShapeTable &shapes,
              ImportedOp &result);

/// A stable 64-bit hash of a kind and its attributes (independent of the
/// order of operator tables, so that output does not depend on --ops order).
uint64_t hashOp(OpKind kind, const OpAttrs &attrs, const ShapeTable &shapes);

/// `concat{axis=1}`, `split{axis=0,sizes=[2,2]}`, `conv{relu}`; used in Z3
/// symbol names and messages.
std::string opString(OpKind kind, const OpAttrs &attrs,
                     const ShapeTable &shapes);

/// Mixes \p v into \p h (splitmix64-based).
inline uint64_t hashMix(uint64_t h, uint64_t v) {
  return interp::splitmix64Mix(h * 0x9e3779b97f4a7c15ULL + v + 0x7f4a7c15);
}
uint64_t hashString(llvm::StringRef s);

} // namespace loom::superopt

#endif // LOOM_SUPEROPT_OPSPEC_H
