//===- LibraryCalls.cpp - Fragments that are one library call -------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/LibraryCalls.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

namespace {

bool isF32(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

bool allF32(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), isF32) &&
         llvm::all_of(op->getResultTypes(), isF32);
}

/// Whether a consumer may join the call being grown.
using Available = llvm::function_ref<bool(Operation *)>;

/// The only op using \p v when it may join, or null.
Operation *soleUser(Value v, Available available) {
  if (!v.hasOneUse())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  return !available || available(user) ? user : nullptr;
}

/// The library name of an activation op, or nullopt.
std::optional<StringRef> activationOf(Operation *op) {
  if (!op || !allF32(op))
    return std::nullopt;
  if (isa<tg::ReluOp>(op))
    return StringRef("relu");
  if (isa<tg::SigmoidOp>(op))
    return StringRef("sigmoid");
  if (isa<tg::TanhOp>(op))
    return StringRef("tanh");
  if (auto gelu = dyn_cast<tg::GeluOp>(op))
    return StringRef(gelu.getTanhApproximation() ? "gelu_tanh" : "gelu_erf");
  return std::nullopt;
}

/// The other operand of a tg.add that uses \p v once, when the add keeps
/// \p v's type; null otherwise.
Value addendOf(tg::AddOp add, Value v) {
  if (!add || add.getType() != v.getType() || add.getLhs() == add.getRhs())
    return {};
  return add.getLhs() == v ? add.getRhs() : add.getLhs();
}

/// Grows \p call over an activation using its current result.
void growActivation(LibraryCall &call, Available available) {
  Operation *user = soleUser(call.ops.back()->getResult(0), available);
  if (auto act = activationOf(user)) {
    call.activation = *act;
    call.ops.push_back(user);
  }
}

std::optional<LibraryCall> growConv(tg::Conv2dOp conv, Available available) {
  LibraryCall call;
  call.backend = tg::Backend::OneDNN;
  call.anchor = conv;
  call.ops.push_back(conv);
  call.bias = conv.getBias();
  call.activation = tg::stringifyActivation(conv.getActivation());
  if (conv.getActivation() != tg::Activation::None)
    return call;
  // conv + residual: the sum post-op, applied before the activation.
  Value out = conv.getResult();
  auto add = dyn_cast_or_null<tg::AddOp>(soleUser(out, available));
  // Only a full tensor: the sum post-op does not broadcast.
  if (Value other = addendOf(add, out); other && other.getType() == out.getType()) {
    call.sum = other;
    call.ops.push_back(add);
  }
  growActivation(call, available);
  return call;
}

/// True when \p bias of a [..., M, N] matmul result is a bias over N: shape
/// [N], or all ones but the last dimension N.
bool isRowBias(Value bias, RankedTensorType result) {
  auto type = dyn_cast<RankedTensorType>(bias.getType());
  if (!type || !isF32(type) || type.getRank() < 1 ||
      type.getRank() > result.getRank() ||
      type.getShape().back() != result.getShape().back())
    return false;
  return llvm::all_of(type.getShape().drop_back(),
                      [](int64_t d) { return d == 1; });
}

std::optional<LibraryCall> growMatmul(tg::MatmulOp matmul,
                                      Available available) {
  LibraryCall call;
  call.backend = tg::Backend::OneDNN;
  call.anchor = matmul;
  call.ops.push_back(matmul);
  Value out = matmul.getResult();
  auto add = dyn_cast_or_null<tg::AddOp>(soleUser(out, available));
  if (Value other = addendOf(add, out);
      other && isRowBias(other, matmul.getType())) {
    call.bias = other;
    call.ops.push_back(add);
  }
  growActivation(call, available);
  return call;
}

} // namespace

std::optional<LibraryCall> compiler::growLibraryCall(Operation *anchor,
                                                     tg::Backend backend,
                                                     Available available) {
  if (!allF32(anchor))
    return std::nullopt;
  switch (backend) {
  case tg::Backend::OneDNN:
    if (auto conv = dyn_cast<tg::Conv2dOp>(anchor))
      return growConv(conv, available);
    if (auto matmul = dyn_cast<tg::MatmulOp>(anchor))
      return growMatmul(matmul, available);
    return std::nullopt;
  case tg::Backend::OpenBLAS: {
    auto matmul = dyn_cast<tg::MatmulOp>(anchor);
    if (!matmul)
      return std::nullopt;
    int64_t lhsRank = matmul.getLhs().getType().getRank();
    if ((lhsRank != 2 && lhsRank != 3) ||
        matmul.getRhs().getType().getRank() != 2)
      return std::nullopt;
    LibraryCall call;
    call.backend = backend;
    call.anchor = matmul;
    call.ops.push_back(matmul);
    return call;
  }
  case tg::Backend::Codegen:
    return std::nullopt;
  }
  llvm_unreachable("unknown backend");
}

std::optional<LibraryCall>
compiler::matchLibraryFragment(tg::FragmentOp fragment) {
  Block &body = fragment.getBody().front();
  if (body.empty() || &body.front() == body.getTerminator())
    return std::nullopt;
  auto call = growLibraryCall(&body.front(), fragment.getBackend());
  if (!call)
    return std::nullopt;
  auto ops = llvm::map_to_vector(body.without_terminator(),
                                 [](Operation &op) { return &op; });
  if (ops != ArrayRef<Operation *>(call->ops) ||
      body.getTerminator()->getOperands() != call->ops.back()->getResults())
    return std::nullopt;
  return call;
}
