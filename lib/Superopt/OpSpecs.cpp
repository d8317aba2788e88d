//===- OpSpecs.cpp - The vocabulary of the rule generator -----------------===//
//
// Part of Loom. The vocabulary: the specs of the spec files (OpSpecs*.cpp,
// each a compile-time list of its structs, OpSpecSupport.h) put end to end,
// each given its index; and what is done with a spec whatever the operator
// (evaluation, recognition, hashing, printing).
//
//===----------------------------------------------------------------------===//

#include "OpSpecSupport.h"

#include "loom/Cost/CostModel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace loom;
using namespace loom::superopt;
using interp::Tensor;

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

/// The spec files, in vocabulary order. A new operator goes in the file of
/// its concern; only a new file is listed here (and in CMakeLists.txt).
constexpr ArrayRef<OpSpec> (*kSpecFiles[])() = {
    opspec::algebraSpecs,  opspec::convSpecs, opspec::movementSpecs,
    opspec::constantSpecs, opspec::normSpecs, opspec::batchedSpecs,
};

std::vector<OpSpec> buildVocabulary() {
  std::vector<OpSpec> specs;
  llvm::StringSet<> names, opsNames;
  for (auto file : kSpecFiles)
    for (OpSpec s : file()) {
      s.kind = OpKind::fromIndex(specs.size());
      if (!names.insert(s.name).second)
        llvm::report_fatal_error("two generator operators are named '" +
                                 s.name + "'");
      if (s.variants.empty())
        llvm::report_fatal_error("generator operator '" + s.name +
                                 "' has no --ops name");
      for (const OpVariant &v : s.variants)
        if (!opsNames.insert((s.name + v.suffix).str()).second)
          llvm::report_fatal_error("two --ops names are '" + s.name + v.suffix +
                                   "'");
      specs.push_back(s);
    }
  if (specs.size() > 255)
    llvm::report_fatal_error("more generator operators than OpKind holds");
  return specs;
}

} // namespace

ArrayRef<OpSpec> superopt::vocabulary() {
  static const std::vector<OpSpec> specs = buildVocabulary();
  return specs;
}

std::optional<OpKind> superopt::kindNamed(StringRef name) {
  for (const OpSpec &s : vocabulary())
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

OpCost superopt::costOf(MLIRContext *context, const ShapeTable &shapes,
                        OpKind kind, const OpAttrs &attrs,
                        ArrayRef<ShapeId> operands, ArrayRef<ShapeId> results) {
  const OpSpec &spec = specOf(kind);
  OpCost c;
  if (spec.paramPrep)
    return c;
  Location loc = UnknownLoc::get(context);
  Block scratch;
  SmallVector<Value, 5> args;
  for (ShapeId s : operands)
    args.push_back(
        scratch.addArgument(tensorTypeOf(context, shapes.get(s)), loc));
  SmallVector<Type, 2> types;
  for (ShapeId s : results)
    types.push_back(tensorTypeOf(context, shapes.get(s)));
  OpBuilder b(context);
  b.setInsertionPointToEnd(&scratch);
  SmallVector<Value, 2> emitted;
  spec.emit(b, loc, attrs, args, types, emitted);
  for (Operation &op : scratch) {
    cost::OpWork w = cost::workOf(&op);
    c.flops += w.flops;
    c.bytes += w.bytes();
  }
  return c;
}

bool superopt::importOp(Operation *op, const ShapeTable &shapes,
                        ImportedOp &result) {
  for (const OpSpec &s : vocabulary()) {
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
  std::string s = specOf(kind).name.str();
  if (!parts.empty())
    s += "{" + llvm::join(parts, ",") + "}";
  return s;
}
