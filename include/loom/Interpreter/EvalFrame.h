//===- EvalFrame.h - One op's evaluation, in any number domain --*- C++ -*-===//
//
// Part of Loom. The argument of tg's EvaluableOpInterface.
//
// The interpreter is generic over the number domain D (Domain.h), but an op
// interface method cannot be a template. The choice (docs/AddingAnOp.md):
// the interface method takes an EvalFrame, a std::variant over the closed
// list of interpreter domains (EvalDomains), and each op writes its
// semantics once as a generic lambda that EvalFrame::visit instantiates for
// every domain:
//
//   LogicalResult ReluOp::evaluate(interp::EvalFrame &frame) {
//     return frame.visit([&](auto &f) {
//       return f.push(interp::unary(interp::UnaryKind::Relu, f.in(0)));
//     });
//   }
//
// A new domain is one more alternative of EvalFrame's variant (and one more
// instantiation in Kernels.cpp); no op changes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_INTERPRETER_EVALFRAME_H
#define LOOM_INTERPRETER_EVALFRAME_H

#include "loom/Interpreter/Domain.h"
#include "loom/Interpreter/Tensor.h"

#include "mlir/IR/Block.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <variant>
#include <vector>

namespace loom::interp {

/// The operands and results of one op being evaluated in domain D.
template <class D> class TypedFrame {
public:
  using Domain = D;
  using TensorPtr = std::shared_ptr<const Tensor<D>>;
  /// Produces the tensor of a tg.weight (named); the interpreter loads and
  /// caches weights. Failure has been diagnosed.
  using WeightLoader = llvm::function_ref<mlir::FailureOr<TensorPtr>()>;
  /// Runs a block of ops (the body of a region op) on argument values and
  /// returns what its terminator yields. Failure has been diagnosed.
  using BlockRunner = llvm::function_ref<mlir::FailureOr<std::vector<TensorPtr>>(
      mlir::Block &, llvm::ArrayRef<TensorPtr>)>;

  TypedFrame(llvm::ArrayRef<const Tensor<D> *> operands,
             std::vector<TensorPtr> &results, WeightLoader loadWeight,
             BlockRunner runBlock)
      : operands(operands), results(results), loadWeight(loadWeight),
        runBlock(runBlock) {}

  unsigned numOperands() const { return operands.size(); }
  /// Operand \p i (the verifier guarantees it exists).
  const Tensor<D> &in(unsigned i) const { return *operands[i]; }
  /// Operand \p i, or null when the op's optional operand \p i is absent.
  const Tensor<D> *inOrNull(unsigned i) const {
    return i < operands.size() ? operands[i] : nullptr;
  }
  llvm::ArrayRef<const Tensor<D> *> ins() const { return operands; }

  /// Appends the next result.
  mlir::LogicalResult push(Tensor<D> t) {
    results.push_back(std::make_shared<const Tensor<D>>(std::move(t)));
    return mlir::success();
  }
  /// Appends several results, in order.
  mlir::LogicalResult push(std::vector<Tensor<D>> ts) {
    for (Tensor<D> &t : ts)
      (void)push(std::move(t));
    return mlir::success();
  }
  /// Appends a result given as doubles (D::fromDouble of each).
  mlir::LogicalResult pushDoubles(std::vector<int64_t> shape,
                                  llvm::ArrayRef<double> values) {
    return push(Tensor<D>::fromDoubles(std::move(shape), values));
  }
  /// Appends a result shared with the interpreter (a cached weight).
  mlir::LogicalResult pushShared(TensorPtr t) {
    results.push_back(std::move(t));
    return mlir::success();
  }
  /// Appends the weight of the op being evaluated (tg.weight only).
  mlir::LogicalResult pushWeight() {
    auto t = loadWeight();
    if (mlir::failed(t))
      return mlir::failure();
    return pushShared(std::move(*t));
  }

  /// Runs \p body on the op's operands and appends what it yields as the
  /// op's results (region ops such as tg.fragment).
  mlir::LogicalResult pushBodyResults(mlir::Block &body) {
    std::vector<TensorPtr> args;
    for (const Tensor<D> *t : operands) // borrowed: they outlive the call
      args.push_back(TensorPtr(std::shared_ptr<void>(), t));
    auto yielded = runBlock(body, args);
    if (mlir::failed(yielded))
      return mlir::failure();
    for (TensorPtr &t : *yielded)
      (void)pushShared(std::move(t));
    return mlir::success();
  }

  /// Runs \p body on \p args and returns what it yields (a region op that
  /// runs its body several times, such as tg.scan).
  mlir::FailureOr<std::vector<TensorPtr>>
  runBody(mlir::Block &body, llvm::ArrayRef<TensorPtr> args) {
    return runBlock(body, args);
  }

  /// Runs \p body, a region without arguments (tg.if), and appends what it
  /// yields as the op's results.
  mlir::LogicalResult pushBlockResults(mlir::Block &body) {
    auto yielded = runBlock(body, {});
    if (mlir::failed(yielded))
      return mlir::failure();
    for (TensorPtr &t : *yielded)
      (void)pushShared(std::move(t));
    return mlir::success();
  }

private:
  llvm::ArrayRef<const Tensor<D> *> operands;
  std::vector<TensorPtr> &results;
  WeightLoader loadWeight;
  BlockRunner runBlock;
};

/// A frame in one of the interpreter's domains.
class EvalFrame {
public:
  template <class D> explicit EvalFrame(TypedFrame<D> &frame) : frame(&frame) {}

  /// Calls \p fn with the TypedFrame<D> of the frame's domain; \p fn is
  /// instantiated for every domain and returns a LogicalResult.
  template <class Fn> mlir::LogicalResult visit(Fn &&fn) {
    return std::visit([&](auto *typed) { return fn(*typed); }, frame);
  }

  /// Name of the frame's domain ("f32", "f64", "modp").
  llvm::StringRef domainName() const {
    return std::visit(
        [](auto *typed) -> llvm::StringRef {
          return std::remove_reference_t<decltype(*typed)>::Domain::name;
        },
        frame);
  }

private:
  std::variant<TypedFrame<F32Domain> *, TypedFrame<F64Domain> *,
               TypedFrame<ModPDomain> *>
      frame;
};

} // namespace loom::interp

#endif // LOOM_INTERPRETER_EVALFRAME_H
