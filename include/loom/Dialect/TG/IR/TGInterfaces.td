//===- TGInterfaces.td - The facts every tg op provides ----*- tablegen -*-===//
//
// Part of Loom. Each operator's facts are written once, beside the op, and
// reached through these interfaces (TASO's lesson: a specification per
// operator instead of a switch per client). An op declares the interfaces in
// TGOps.td; its family base class usually does that, and implements the
// methods from the family's parameters. docs/AddingAnOp.md lists every fact;
// test/Unit/Dialect/TG/OpFactsTest.cpp walks every registered tg op and
// fails when one lacks one.
//
// The shape rule is InferTypeOpInterface (rules in TypeInference.cpp), or,
// for ops whose result type is written in the IR, the verifier
// (TG_ResultTypeGiven). The lowering to linalg (CPU compilation) and the
// vector-Jacobian product (training) are external models (the dialect does
// not depend on linalg or on the autodiff library).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGINTERFACES_TD
#define LOOM_DIALECT_TG_IR_TGINTERFACES_TD

include "mlir/IR/OpBase.td"

def TG_EvaluableOpInterface : OpInterface<"EvaluableOpInterface"> {
  let cppNamespace = "::loom::tg";
  let description = [{
    The op's reference semantics: its results computed from its operand
    values by the interpreter's domain-generic kernels (Kernels.h). The
    frame is a variant over the interpreter's number domains (f32, f64,
    exact mod-p arithmetic); the implementation is a generic lambda passed
    to `EvalFrame::visit`, so it is written once for every domain.
    Run-time errors (an index out of range) are diagnostics on the op.
  }];
  let methods = [
    InterfaceMethod<[{
        Appends the op's results to `frame`; on failure a diagnostic has
        been emitted.
      }],
      "::llvm::LogicalResult", "evaluate",
      (ins "::loom::interp::EvalFrame &":$frame)>,
  ];
}

def TG_WorkOpInterface : OpInterface<"WorkOpInterface"> {
  let cppNamespace = "::loom::tg";
  let description = [{
    What the op does, for the cost models: floating-point operations (a
    multiply-add counts 2) and bytes read and written, each operand read and
    each result written once, and whether it launches a kernel at all
    (metadata ops such as reshape do not). The rooflines, the measured
    model's fallback, the superoptimiser's reports and the rule generator's
    orientation of rules all use this one model.
  }];
  let methods = [
    InterfaceMethod<"The op's work.", "::loom::tg::OpWork", "getWork">,
  ];
}

def TG_ONNXExportOpInterface : OpInterface<"ONNXExportOpInterface"> {
  let cppNamespace = "::loom::tg";
  let description = [{
    How the op is written in ONNX (opset 17): the nodes and initializers
    that compute it, through an ONNXEmitter (which hides the protobuf
    library). Ops that are exactly one ONNX node with the same inputs and no
    attributes name it in `getONNXOpType`; the ONNX importer then also maps
    that node type to the op when it has no handler of its own.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits the op's ONNX nodes; on failure a diagnostic has been emitted.
      }],
      "::llvm::LogicalResult", "exportONNX",
      (ins "::loom::tg::ONNXEmitter &":$emitter)>,
    StaticInterfaceMethod<[{
        The ONNX operator type this op is exactly (same inputs, same
        outputs, no attributes), or "" when it is not one plain node.
      }],
      "::llvm::StringRef", "getONNXOpType", (ins), [{}],
      [{ return ""; }]>,
  ];
}


def TG_LinalgLoweringOpInterface : OpInterface<"LinalgLoweringOpInterface"> {
  let cppNamespace = "::loom::tg";
  let description = [{
    How the op is computed by generated code: linalg, tensor, arith and math
    ops on tensors (statically shaped) that compute its results with the
    interpreter's semantics. The implementations are external models
    (lib/Conversion/TGToLinalg, registerTGToLinalgInterfaceModels), so the
    dialect does not depend on linalg; `--convert-tg-to-linalg` applies
    them, first step of the kernel pipeline of loom-compile.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the lowering at the builder's insertion point (before the
        op) and returns the values that replace the op's results; fails,
        with a diagnostic on the op, when the op cannot be lowered.
      }],
      "::llvm::FailureOr<::llvm::SmallVector<::mlir::Value>>", "lowerToLinalg",
      (ins "::mlir::OpBuilder &":$builder)>,
  ];
}

def TG_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::loom::tg";
  let description = [{
    The op's vector-Jacobian product, for reverse-mode differentiation
    (`--tg-autodiff`): given the gradient of a scalar with respect to each
    result, the tg ops that compute its gradient with respect to each
    operand. The implementations are external models (lib/Autodiff,
    registerTGGradientInterfaceModels) written with tg ops only, so backward
    graphs are ordinary tg that the superoptimiser, the placement and the CPU
    pipeline all handle. Choices at points where the op is not
    differentiable (relu at 0, ties of max, clip bounds) are documented in
    docs/Training.md.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the gradient of every
        operand whose `needed` flag is set, from `resultGrads` (one per
        result, of the result's type). Returns one value per operand: the
        gradient (of the operand's type), or a null value where it was not
        needed or the operand is not differentiable (an index). Fails, with a
        diagnostic on the op, when a needed gradient cannot be built.
      }],
      "::llvm::FailureOr<::llvm::SmallVector<::mlir::Value>>", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$resultGrads,
           "::llvm::ArrayRef<bool>":$needed)>,
  ];
}

#endif // LOOM_DIALECT_TG_IR_TGINTERFACES_TD
