//===- TGOps.td - Tensor graph operations ------------------*- tablegen -*-===//
//
// Part of Loom. Every operator carries a verifier (ODS constraints plus the
// shape rules in TypeInference.cpp), result type inference, a description
// with an example, and the facts of TGInterfaces.td: its reference
// semantics (evaluation), its work (FLOPs, bytes) and its ONNX export.
// Families (elementwise unary and binary, reductions) implement the facts
// here from their parameters; every other op implements them in the C++
// file of its family under lib/Dialect/TG/IR/ (named in its section below).
// docs/AddingAnOp.md walks through adding one.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGOPS_TD
#define LOOM_DIALECT_TG_IR_TGOPS_TD

include "loom/Dialect/TG/IR/TGDialect.td"
include "loom/Dialect/TG/IR/TGAttrs.td"
include "loom/Dialect/TG/IR/TGInterfaces.td"
include "loom/Dialect/TG/IR/TGTraits.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def TG_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;
def TG_Tensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I1, I32, I64]>;
def TG_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def TG_BoolTensor : StaticShapeTensorOf<[I1]>;
def TG_F32Tensor : StaticShapeTensorOf<[F32]>;
def TG_NumberTensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I32, I64]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class TG_Op<string mnemonic, list<Trait> traits = []>
    : Op<TG_Dialect, mnemonic, !listconcat([Pure], traits)>;

// The facts every tg op provides (TGInterfaces.td), implemented in C++ by
// the op. Families implement them from their parameters instead.
defvar TG_Facts = [DeclareOpInterfaceMethods<TG_EvaluableOpInterface>,
                   DeclareOpInterfaceMethods<TG_WorkOpInterface>,
                   DeclareOpInterfaceMethods<TG_ONNXExportOpInterface>];


// An op whose result types are computed from its operands and attributes by
// `inferReturnTypes` (defined in TGOps.cpp, rules in TypeInference.cpp). The
// types written in the IR must equal the inferred ones.
class TG_InferOp<string mnemonic, list<Trait> traits = []>
    : TG_Op<mnemonic, !listconcat([InferTypeOpAdaptor], traits,
                                  [TG_VerifyByInference])> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// Elementwise binary arithmetic with numpy broadcasting. `kernel` names the
// interpreter's interp::BinaryKind, `flops` the FLOPs per result element
// (a C++ expression), `onnx` the ONNX operator it is exactly.
class TG_BinaryOp<string mnemonic, string fn, string kernel, string flops,
                  string onnx, list<Trait> traits = []>
    : TG_InferOp<mnemonic, !listconcat(traits, [TG_Elementwise, TG_CheapToRecompute],
                                       TG_Facts)> {
  let summary = "elementwise " # fn # " with numpy broadcasting";
  let description = [{
    Computes `}] # fn # [{` elementwise. The operand shapes are broadcast
    against each other as in numpy: shapes are aligned on the right and each
    pair of dimensions must be equal or one of them 1. Both operands have the
    same float element type, which is the result's. ONNX: `}] # onnx # [{`.

    ```mlir
    %r = tg.}] # mnemonic # [{ %a, %b : (tensor<4x1x3xf32>, tensor<5x3xf32>) -> tensor<4x5x3xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$lhs, TG_FloatTensor:$rhs);
  let results = (outs TG_FloatTensor:$output);
  let extraClassDeclaration = [{
    static ::llvm::StringRef getONNXOpType() { return "}] # onnx # [{"; }
    /// The interpreter's definition of the op (ScalarFunctions.h), which
    /// the lowering to linalg instantiates too.
    static constexpr ::loom::interp::BinaryKind kBinaryKind =
        ::loom::interp::BinaryKind::}] # kernel # [{;
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return ::loom::tg::inferBroadcastBinary(location, adaptor.getLhs().getType(),
                                              adaptor.getRhs().getType(), inferred);
    }
    ::llvm::LogicalResult $cppClass::evaluate(::loom::interp::EvalFrame &frame) {
      return ::loom::tg::evaluateBinary(frame, kBinaryKind);
    }
    ::loom::tg::OpWork $cppClass::getWork() {
      return ::loom::tg::streamingWork(getOperation(), }] # flops # [{);
    }
    ::llvm::LogicalResult $cppClass::exportONNX(::loom::tg::ONNXEmitter &emitter) {
      return emitter.direct(getONNXOpType());
    }
  }];
}

// Elementwise unary function on a float tensor; the result has the operand's
// type.
class TG_UnaryOp<string mnemonic, string fn, list<Trait> traits = []>
    : TG_Op<mnemonic, !listconcat([SameOperandsAndResultType, InferTypeOpInterface,
                                   TG_Elementwise, TG_CheapToRecompute], traits)> {
  let summary = fn;
  let arguments = (ins TG_FloatTensor:$input);
  let results = (outs TG_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Constants and parameters
//===----------------------------------------------------------------------===//
// Facts and folders: lib/Dialect/TG/IR/ConstantOps.cpp.

def TG_ConstantOp : TG_Op<"constant", !listconcat([ConstantLike, TG_ResultTypeGiven, TG_ComputesNothing,
    AllTypesMatch<["value", "output"]>], TG_Facts)> {
  let summary = "a constant tensor held in the IR";
  let description = [{
    A tensor whose value is an elements attribute in the IR. Meant for small
    tensors (shapes, masks, scalars); parameters belong in `tg.weight`.

    ```mlir
    %c = tg.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs TG_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def TG_WeightOp : TG_Op<"weight", !listconcat([TG_ResultTypeGiven, TG_ComputesNothing], TG_Facts)> {
  let summary = "a named parameter stored outside the IR";
  let description = [{
    Refers to the tensor called `name` in the safetensors file named by the
    module attribute `tg.weights`. The file's dtype and shape must equal the
    result type; `loom-run` and `--tg-check-weights` check this.

    ```mlir
    %w = tg.weight "layer1.conv.weight" : tensor<64x64x3x3xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs TG_Tensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution and pooling
//===----------------------------------------------------------------------===//
// Facts and folders: lib/Dialect/TG/IR/LinearOps.cpp (matmul, conv) and PoolingOps.cpp;
// the shape rules of conv and pooling (1-3 spatial dims): TypeInference.cpp.

def TG_MatmulOp : TG_InferOp<"matmul", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "batched matrix multiplication with broadcast batch dimensions";
  let description = [{
    `[..., M, K] x [..., K, N] -> [..., M, N]`. Both operands have rank 2 or
    more; the leading (batch) dimensions broadcast as in numpy.

    ```mlir
    %c = tg.matmul %a, %b : (tensor<8x128x64xf32>, tensor<64x32xf32>) -> tensor<8x128x32xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$lhs, TG_FloatTensor:$rhs);
  let results = (outs TG_FloatTensor:$output);
}

def TG_ConvOp : TG_InferOp<"conv", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "1-D, 2-D or 3-D convolution, channels-first, optional bias and fused activation";
  let description = [{
    `input: [N, C, S1, ..., Sk]` with k = 1, 2 or 3 spatial dimensions
    (NCW, NCHW, NCDHW), `filter: [O, C / groups, K1, ..., Kk]`, optional
    `bias: [O]`. `strides` and `dilations` have k entries, `pads` 2k: the
    begin pads of every spatial dimension, then the end pads (ONNX's order:
    `[top, left, bottom, right]` in 2-D). Their defaults are the 2-D ones
    (ODS cannot size a default by the operand's rank): 1-D and 3-D
    convolutions spell all three out. `activation` (none, relu, sigmoid,
    tanh) is applied to the result, as in TASO's fused convolution. Output
    size per spatial dim:
    `(in + pad_begin + pad_end - dilation * (k - 1) - 1) / stride + 1`.
    Canonicalization folds a `tg.pad` of the input with zeros on its
    spatial dimensions only (PyTorch's `F.pad` before a convolution: causal
    and dilated 1-D convolutions, TensorFlow's "same" padding) into `pads`.

    ```mlir
    %y = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>,
                             activation = #tg<activation relu>}
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    %v = tg.conv %clip, %k {strides = array<i64: 1, 2, 2>, pads = array<i64: 1, 3, 3, 1, 3, 3>,
                            dilations = array<i64: 1, 1, 1>}
        : (tensor<1x3x8x112x112xf32>, tensor<64x3x3x7x7xf32>) -> tensor<1x64x8x56x56xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$filter,
                   Optional<TG_FloatTensor>:$bias,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$pads,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$groups,
                   DefaultValuedAttr<TG_ActivationAttr, "::loom::tg::Activation::None">:$activation);
  let results = (outs TG_FloatTensor:$output);
  let hasCanonicalizer = 1;
}

def TG_MaxPoolOp : TG_InferOp<"maxpool", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "1-D, 2-D or 3-D max pooling, channels-first";
  let description = [{
    `input: [N, C, S1, ..., Sk]`, k = 1, 2 or 3; `kernel_size` and `strides`
    have k entries, `pads` 2k (begin pads, then end pads: `[top, left,
    bottom, right]` in 2-D), as tg.conv's (the defaults are the 2-D ones).
    Padding never wins the maximum.

    ```mlir
    %y = tg.maxpool %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                          pads = array<i64: 1, 1, 1, 1>}
        : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_size,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$pads);
  let results = (outs TG_FloatTensor:$output);
}

def TG_MaxPoolGradOp : TG_InferOp<"maxpool_grad", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "the vector-Jacobian product of tg.maxpool with respect to its input";
  let description = [{
    The attributes are tg.maxpool's, for 1-D or 2-D pooling only (3-D max
    pooling has no gradient yet: tg-autodiff refuses it), and `grad_output`
    has the shape of `tg.maxpool`'s result for `input` and them; the result
    has the type of `input`. It starts at zero and each window's `grad_output` is added at
    the first position (row-major within the window) holding the window's
    maximum, as PyTorch and ONNX Runtime pick MaxPool's argmax. Padding never
    wins; overlapping windows accumulate.

    ```mlir
    %dx = tg.maxpool_grad %x, %dy {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                                     pads = array<i64: 1, 1, 1, 1>}
        : (tensor<1x64x112x112xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$grad_output,
                   DenseI64ArrayAttr:$kernel_size,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$pads);
  let results = (outs TG_FloatTensor:$output);
}

def TG_AvgPoolOp : TG_InferOp<"avgpool", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "1-D, 2-D or 3-D average pooling, channels-first";
  let description = [{
    The window attributes are tg.maxpool's. With `count_include_pad = false`
    (the default, as in ONNX) padded positions are excluded from the
    divisor.

    ```mlir
    %y = tg.avgpool %x {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>}
        : (tensor<1x64x8x8xf32>) -> tensor<1x64x8x8xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_size,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs TG_FloatTensor:$output);
}

def TG_GlobalAvgPoolOp : TG_InferOp<"global_avgpool", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "mean over the spatial dimensions of a channels-first tensor";
  let description = [{
    `[N, C, S1, ..., Sk] -> [N, C, 1, ..., 1]`, k = 1, 2 or 3.

    ```mlir
    %y = tg.global_avgpool %x : (tensor<1x2048x7x7xf32>) -> tensor<1x2048x1x1xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input);
  let results = (outs TG_FloatTensor:$output);
}

//===----------------------------------------------------------------------===//
// Elementwise binary
//===----------------------------------------------------------------------===//
// Facts and folders: lib/Dialect/TG/IR/ElementwiseOps.cpp.

def TG_AddOp : TG_BinaryOp<"add", "lhs + rhs", "Add", "1", "Add", [Commutative]> {
  let hasFolder = 1;
}
def TG_SubOp : TG_BinaryOp<"sub", "lhs - rhs", "Sub", "1", "Sub"> {
  let hasFolder = 1;
}
def TG_MulOp : TG_BinaryOp<"mul", "lhs * rhs", "Mul", "1", "Mul", [Commutative]> {
  let hasFolder = 1;
}
def TG_DivOp : TG_BinaryOp<"div", "lhs / rhs", "Div", "1", "Div"> {
  let hasFolder = 1;
}
def TG_MaxOp : TG_BinaryOp<"max", "max(lhs, rhs)", "Max", "1", "Max", [Commutative]>;
def TG_MinOp : TG_BinaryOp<"min", "min(lhs, rhs)", "Min", "1", "Min", [Commutative]>;
def TG_PowOp : TG_BinaryOp<"pow", "lhs ^ rhs", "Pow",
                           "::loom::tg::kTranscendentalFlops", "Pow">;

def TG_ModOp : TG_InferOp<"mod", !listconcat([TG_Elementwise, TG_CheapToRecompute],
                                             TG_Facts)> {
  let summary = "elementwise remainder with numpy broadcasting (ONNX Mod)";
  let description = [{
    The remainder of `lhs / rhs`, elementwise, as ONNX Mod. With `fmod =
    false` (the default) it has the sign of the divisor, `lhs - rhs *
    floor(lhs / rhs)` (Python's `%`, integer operands only); with `fmod =
    true` the sign of the dividend, C's `fmod` (`lhs - rhs * trunc(lhs /
    rhs)`). Float operands need `fmod = true`, as in ONNX. The operands have
    the same element type, the result's, and broadcast as in numpy. A zero
    divisor gives NaN for floats (C fmod); for integers the result is
    undefined, as in ONNX.

    ```mlir
    %r = tg.mod %i, %n : (tensor<49xi64>, tensor<i64>) -> tensor<49xi64>
    %f = tg.mod %x, %y {fmod = true} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins TG_NumberTensor:$lhs, TG_NumberTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$fmod);
  let results = (outs TG_NumberTensor:$output);
}

//===----------------------------------------------------------------------===//
// Comparisons and select
//===----------------------------------------------------------------------===//
// Facts: lib/Dialect/TG/IR/ElementwiseOps.cpp.

// Elementwise comparison with numpy broadcasting; the result is i1. `kernel`
// names the interpreter's interp::CompareKind, `onnx` the ONNX operator.
class TG_CompareOp<string mnemonic, string fn, string kernel, string onnx,
                   list<Trait> traits = []>
    : TG_InferOp<mnemonic, !listconcat(traits, [TG_Elementwise], TG_Facts)> {
  let summary = "elementwise " # fn # " with numpy broadcasting, i1 result";
  let description = [{
    `}] # fn # [{` elementwise, true (1) or false (0). The operands have the
    same element type (float or integer) and broadcast as in numpy; the
    result has the broadcast shape and element type `i1`. Floats compare as
    IEEE: any comparison with NaN is false. ONNX: `}] # onnx # [{`.

    ```mlir
    %m = tg.}] # mnemonic # [{ %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
    ```
  }];
  let arguments = (ins TG_Tensor:$lhs, TG_Tensor:$rhs);
  let results = (outs TG_BoolTensor:$output);
  let extraClassDeclaration = [{
    static ::llvm::StringRef getONNXOpType() { return "}] # onnx # [{"; }
    /// The interpreter's definition of the op (ScalarFunctions.h), which
    /// the lowering to linalg follows too.
    static constexpr ::loom::interp::CompareKind kCompareKind =
        ::loom::interp::CompareKind::}] # kernel # [{;
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return ::loom::tg::inferCompare(location, adaptor.getLhs().getType(),
                                      adaptor.getRhs().getType(), inferred);
    }
    ::llvm::LogicalResult $cppClass::evaluate(::loom::interp::EvalFrame &frame) {
      return ::loom::tg::evaluateCompare(frame, kCompareKind);
    }
    ::loom::tg::OpWork $cppClass::getWork() {
      return ::loom::tg::streamingWork(getOperation(), 1);
    }
    ::llvm::LogicalResult $cppClass::exportONNX(::loom::tg::ONNXEmitter &emitter) {
      return emitter.direct(getONNXOpType());
    }
  }];
}

def TG_EqualOp : TG_CompareOp<"equal", "lhs == rhs", "Equal", "Equal", [Commutative]>;
def TG_GreaterOp : TG_CompareOp<"greater", "lhs > rhs", "Greater", "Greater">;
def TG_GreaterEqualOp : TG_CompareOp<"greater_equal", "lhs >= rhs", "GreaterEqual",
                                     "GreaterOrEqual">;
def TG_LessOp : TG_CompareOp<"less", "lhs < rhs", "Less", "Less">;
def TG_LessEqualOp : TG_CompareOp<"less_equal", "lhs <= rhs", "LessEqual", "LessOrEqual">;

def TG_SelectOp : TG_InferOp<"select", !listconcat([TG_Elementwise], TG_Facts)> {
  let summary = "elementwise choice by a condition (ONNX Where)";
  let description = [{
    `cond ? a : b` elementwise. `cond` is `i1`; `a` and `b` have the same
    element type, the result's; the three shapes broadcast together as in
    numpy. The operand not chosen does not matter, NaN or infinite.

    ```mlir
    %y = tg.select %c, %a, %b : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins TG_BoolTensor:$cond, TG_Tensor:$true_value,
                   TG_Tensor:$false_value);
  let results = (outs TG_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//
// Facts and folders: lib/Dialect/TG/IR/ElementwiseOps.cpp.

// An elementwise unary op that is one interpreter kernel (`kernel`, an
// interp::UnaryKind), does `flops` FLOPs per element (a C++ expression) and
// is the ONNX operator `onnx` (or, with onnx = "", exports in
// ElementwiseOps.cpp).
class TG_SimpleUnaryOp<string mnemonic, string fn, string kernel, string flops,
                       string onnx, list<Trait> traits = []>
    : TG_UnaryOp<mnemonic, fn, !listconcat(traits, [
        DeclareOpInterfaceMethods<TG_EvaluableOpInterface>,
        DeclareOpInterfaceMethods<TG_WorkOpInterface>,
        DeclareOpInterfaceMethods<TG_ONNXExportOpInterface>])> {
  let description = [{
    `}] # fn # [{`, elementwise.}] # !if(!empty(onnx), "", " ONNX: `" # onnx # "`.") # [{

    ```mlir
    %y = tg.}] # mnemonic # [{ %x : tensor<2x3xf32>
    ```
  }];
  let extraClassDeclaration = [{
    static ::llvm::StringRef getONNXOpType() { return "}] # onnx # [{"; }
    /// The interpreter's definition of the op (ScalarFunctions.h), which
    /// the lowering to linalg instantiates too.
    static constexpr ::loom::interp::UnaryKind kUnaryKind =
        ::loom::interp::UnaryKind::}] # kernel # [{;
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::evaluate(::loom::interp::EvalFrame &frame) {
      return ::loom::tg::evaluateUnary(frame, kUnaryKind);
    }
    ::loom::tg::OpWork $cppClass::getWork() {
      return ::loom::tg::streamingWork(getOperation(), }] # flops # [{);
    }
  }] # !if(!empty(onnx), "", [{
    ::llvm::LogicalResult $cppClass::exportONNX(::loom::tg::ONNXEmitter &emitter) {
      return emitter.direct(getONNXOpType());
    }
  }]);
}

defvar TG_Transcendental = "::loom::tg::kTranscendentalFlops";

def TG_ReluOp : TG_SimpleUnaryOp<"relu", "max(x, 0)", "Relu", "1", "Relu", [Idempotent]>;
def TG_SigmoidOp : TG_SimpleUnaryOp<"sigmoid", "1 / (1 + exp(-x))", "Sigmoid",
                                    TG_Transcendental, "Sigmoid">;
def TG_TanhOp : TG_SimpleUnaryOp<"tanh", "tanh(x)", "Tanh", TG_Transcendental, "Tanh">;
def TG_ExpOp : TG_SimpleUnaryOp<"exp", "exp(x)", "Exp", TG_Transcendental, "Exp">;
def TG_LogOp : TG_SimpleUnaryOp<"log", "natural logarithm ln(x)", "Log",
                                TG_Transcendental, "Log">;
def TG_SqrtOp : TG_SimpleUnaryOp<"sqrt", "square root sqrt(x)", "Sqrt",
                                 TG_Transcendental, "Sqrt">;
// Exported as Sqrt then Reciprocal.
def TG_RsqrtOp : TG_SimpleUnaryOp<"rsqrt", "reciprocal square root 1 / sqrt(x)",
                                  "Rsqrt", TG_Transcendental, "">;
def TG_NegOp : TG_SimpleUnaryOp<"neg", "negation -x", "Neg", "1", "Neg", [Involution]>;
def TG_ErfOp : TG_SimpleUnaryOp<"erf", "Gauss error function erf(x)", "Erf",
                                TG_Transcendental, "Erf">;
def TG_HardSwishOp : TG_SimpleUnaryOp<"hardswish", "x * max(0, min(1, x / 6 + 1 / 2))",
                                      "HardSwish", "1", "HardSwish">;
def TG_SoftplusOp : TG_SimpleUnaryOp<"softplus", "log(1 + exp(x)), computed without overflow",
                                     "Softplus", TG_Transcendental, "Softplus">;

// The operand format of an f32 product on tensor cores under
// --precision=tf32 (docs/Precision.md). Exported nowhere: ONNX has no
// operator for it.
def TG_RoundTF32Op : TG_SimpleUnaryOp<"round_tf32", "x rounded to TF32",
                                      "RoundTF32", "1", "",
                                      [Idempotent, TG_KeptUnfolded]> {
  let description = [{
    Each f32 element rounded to the nearest TF32 value, ties to even: 10
    fraction bits (11 significant) and f32's exponent range, subnormals
    kept, overflow to infinity, NaN and infinities unchanged. The result is
    f32 (TF32 values are f32 values whose 13 low fraction bits are zero).

    It is the format a tensor core multiplies an f32 product's operands in
    (PTX `mma.sync ... .tf32`): `--tg-narrow-products=type=tf32`
    (`loom-compile --precision=tf32`) rounds both multiplicands of every f32
    product and convolution with it, and the GPU's tiled classes multiply a
    product whose operands are both rounded so on tensor cores, exactly
    (products of TF32 values are exact in f32). Not folded at compile time,
    even of a weight (`TG_KeptUnfolded`): the product's kernel rounds its
    operand as it loads it, and the rounding is how it knows it may. A
    weight's rounding that only library steps read (cuBLASLt's, cuDNN's),
    which would otherwise run at every inference, loom-compile folds into
    a `tg.constant` marked `tg.tf32_values` (`--tg-fold-weights`).

    ```mlir
    %y = tg.round_tf32 %x : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins TG_F32Tensor:$input);
  let results = (outs TG_F32Tensor:$output);
}

// Unary ops with attributes.
def TG_GeluOp : TG_UnaryOp<"gelu", "Gaussian error linear unit", TG_Facts> {
  let description = [{
    `0.5 * x * (1 + erf(x / sqrt(2)))`; with `tanh_approximation` the tanh
    form `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.

    ```mlir
    %y = tg.gelu %x {tanh_approximation = true} : tensor<1x128x3072xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input,
                   DefaultValuedAttr<BoolAttr, "false">:$tanh_approximation);
}

def TG_ClipOp : TG_UnaryOp<"clip", "clamp to [min, max]", TG_Facts> {
  let description = [{
    `min(max(x, min), max)`; `min <= max` is required.

    ```mlir
    %y = tg.clip %x {min = 0.0, max = 6.0} : tensor<1x32x112x112xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, F64Attr:$min, F64Attr:$max);
  let hasVerifier = 1;
}

def TG_HardSigmoidOp : TG_UnaryOp<"hardsigmoid", "max(0, min(1, alpha * x + beta))",
                                  TG_Facts> {
  let description = [{
    As ONNX HardSigmoid (defaults alpha = 0.2, beta = 0.5).

    ```mlir
    %y = tg.hardsigmoid %x {alpha = 0.1666666 : f64} : tensor<1x16x56x56xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "0.2">:$alpha,
                   DefaultValuedAttr<F64Attr, "0.5">:$beta);
}

//===----------------------------------------------------------------------===//
// Type conversion
//===----------------------------------------------------------------------===//
// Facts and folders: lib/Dialect/TG/IR/ElementwiseOps.cpp.

def TG_CastOp : TG_Op<"cast", !listconcat([TG_ResultTypeGiven, TG_Elementwise], TG_Facts)> {
  let summary = "elementwise conversion to the result's element type";
  let description = [{
    Same shape, any element type to any element type. Floats round to
    nearest even; float to integer truncates toward zero; to `i1` is `x != 0`.

    ```mlir
    %y = tg.cast %x : tensor<2x3xf32> to tensor<2x3xf16>
    ```
  }];
  let arguments = (ins TG_Tensor:$input);
  let results = (outs TG_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//
// Facts and folders: lib/Dialect/TG/IR/DataMovementOps.cpp.

def TG_TransposeOp : TG_InferOp<"transpose", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "permute dimensions";
  let description = [{
    `output.shape[i] = input.shape[perm[i]]`; `perm` is a permutation of
    `[0, rank)`.

    ```mlir
    %y = tg.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs TG_Tensor:$output);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def TG_ReshapeOp : TG_Op<"reshape", !listconcat([TG_ResultTypeGiven, TG_ComputesNothing], TG_Facts)> {
  let summary = "same elements, in row-major order, under a new static shape";
  let description = [{
    The result type gives the new shape; element counts and element types
    must agree.

    ```mlir
    %y = tg.reshape %x : (tensor<1x2048x1x1xf32>) -> tensor<1x2048xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$input);
  let results = (outs TG_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TG_ConcatOp : TG_InferOp<"concat", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "concatenate along an axis";
  let description = [{
    All inputs have the same rank and element type and equal sizes except
    along `axis` (in `[-rank, rank)`).

    ```mlir
    %y = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x64x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x96x8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<TG_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs TG_Tensor:$output);
  let hasFolder = 1;
}

def TG_SplitOp : TG_InferOp<"split", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "split along an axis into pieces of the given sizes";
  let description = [{
    `sizes` are positive and sum to the size of `axis`; one result per size.

    ```mlir
    %q, %k, %v = tg.split %x {axis = 2 : i64, sizes = array<i64: 768, 768, 768>}
        : (tensor<1x128x2304xf32>) -> (tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>)
    ```
  }];
  let arguments = (ins TG_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<TG_Tensor>:$outputs);
  let hasFolder = 1;
}

def TG_SliceOp : TG_InferOp<"slice", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "strided slice [start, limit) per dimension";
  let description = [{
    One entry per dimension; `0 <= start <= limit <= dim`, `stride >= 1`.
    Output size: `ceil((limit - start) / stride)`.

    ```mlir
    %y = tg.slice %x {starts = array<i64: 0, 1>, limits = array<i64: 4, 7>, strides = array<i64: 1, 2>}
        : (tensor<4x8xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$limits,
                   OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs TG_Tensor:$output);
  let hasFolder = 1;
}

def TG_PadOp : TG_InferOp<"pad", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "pad with a constant";
  let description = [{
    `low[i]` and `high[i]` (non-negative) elements of `value` are added
    before and after dimension `i`.

    ```mlir
    %y = tg.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, value = 0.0 : f64}
        : (tensor<1x3x4x4xf32>) -> tensor<1x3x6x6xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$input, DenseI64ArrayAttr:$low,
                   DenseI64ArrayAttr:$high,
                   DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs TG_Tensor:$output);
  let hasFolder = 1;
}

def TG_EnlargeOp : TG_InferOp<"enlarge", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "TASO's kernel enlarge: zero-pad a conv filter to a larger kernel, centred";
  let description = [{
    A rank-4 filter `[O, I, h, w]` becomes `[O, I, KH, KW]` with
    `kernel_size = [KH, KW]`, `KH - h` and `KW - w` even and non-negative; the
    original taps stay in the centre, so a convolution with the enlarged
    filter and `(KH - h) / 2` more padding computes the same values.

    ```mlir
    %w3 = tg.enlarge %w1 {kernel_size = array<i64: 3, 3>} : (tensor<64x64x1x1xf32>) -> tensor<64x64x3x3xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, DenseI64ArrayAttr:$kernel_size);
  let results = (outs TG_FloatTensor:$output);
  let hasFolder = 1;
}

def TG_BroadcastToOp : TG_Op<"broadcast_to", !listconcat([TG_ResultTypeGiven, TG_Structured], TG_Facts)> {
  let summary = "broadcast to the result shape (numpy rules)";
  let description = [{
    The result type gives the shape; the operand must broadcast to it
    (aligned on the right, each operand dim equal to the result's or 1).

    ```mlir
    %y = tg.broadcast_to %x : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$input);
  let results = (outs TG_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TG_GatherOp : TG_InferOp<"gather", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "ONNX Gather: pick slices along an axis by index";
  let description = [{
    `output.shape = data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end; an index out of range is a run-time
    error of the interpreter. Canonicalization composes a gather of a gather
    along the same axis with 1-D indices into one gather of the data (the
    indices gathered first), so that only the elements the outer gather
    picks are moved; and a gather of a transpose into a transpose of the
    gather along the transposed axis (where it keeps no more elements than
    the data has), so that a column of a transposed table is read as one
    row of the table.

    ```mlir
    %e = tg.gather %table, %ids {axis = 0 : i64} : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$data, TG_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs TG_Tensor:$output);
  let hasCanonicalizer = 1;
}

def TG_ScatterAddOp : TG_InferOp<"scatter_add", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "the adjoint of tg.gather: sum slices into a zero tensor by index";
  let description = [{
    `output.shape = updates.shape[:axis] + [dim_size] +
    updates.shape[axis + indices.rank:]`, where
    `updates.shape[axis : axis + indices.rank] == indices.shape`. The output
    starts at zero and, for every multi-index `j` of `indices`,
    `output[..., indices[j], ...] += updates[..., j, ...]`. Negative indices
    count from the end; an index out of `[-dim_size, dim_size)` is a run-time
    error of the interpreter, as in `tg.gather`. So
    `scatter_add(g, idx, axis, dim_size = data.shape[axis])` is the
    vector-Jacobian product of `gather(data, idx, axis)` with respect to
    `data`.

    ```mlir
    %d = tg.scatter_add %g, %ids {axis = 0 : i64, dim_size = 30522 : i64}
        : (tensor<1x128x768xf32>, tensor<1x128xi64>) -> tensor<30522x768xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$updates, TG_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis, I64Attr:$dim_size);
  let results = (outs TG_FloatTensor:$output);
}

def TG_UpdateSliceOp : TG_InferOp<"update_slice", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "the base tensor with a slice along one axis replaced at a run-time offset";
  let description = [{
    `output = base`, except `output[..., o : o + U, ...] = update` along
    `axis`, where `U` is `update`'s size on `axis` (at most `base`'s, `N`);
    every other dimension of `update` equals `base`'s. `offsets` is a rank-0
    i64 tensor (one offset for the whole tensor) or, for `axis >= 1`, an i64
    tensor `[base.shape[0]]` (one offset per index of dimension 0: each
    sequence of a batch appends at its own length). An offset is clamped to
    `[0, N - U]` (as XLA's dynamic_update_slice), so the write never leaves
    the tensor; callers that must refuse such an offset check it before.
    The op appends new keys and values to a KV cache of fixed capacity:
    compiled with the cache an argument tied to this result (`tg.tied_result`:
    the dialect's "State updated in place"), the slice is written in place
    and nothing else of the cache is copied. ONNX: ScatterElements.

    ```mlir
    %k1 = tg.update_slice %cache, %new, %length {axis = 2 : i64}
        : (tensor<1x12x1024x64xf32>, tensor<1x12x1x64xf32>, tensor<i64>) -> tensor<1x12x1024x64xf32>
    ```
  }];
  let arguments = (ins TG_Tensor:$base, TG_Tensor:$update,
                   StaticShapeTensorOf<[I64]>:$offsets, I64Attr:$axis);
  let results = (outs TG_Tensor:$output);
}

//===----------------------------------------------------------------------===//
// Resampling
//===----------------------------------------------------------------------===//
// Facts and folders: lib/Dialect/TG/IR/ResizeOps.cpp.

def TG_ResizeOp : TG_InferOp<"resize", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "resample by nearest, linear or cubic interpolation (ONNX Resize)";
  let description = [{
    Resamples every dimension `d` from `input.shape[d]` to `sizes[d]`
    elements, as ONNX Resize. Output index `x` maps to the input coordinate
    given by `coordinate_transformation_mode` (with `s = scales[d]`, by
    default `sizes[d] / input.shape[d]`, and `L = s * input.shape[d]`):

    | mode | input coordinate |
    | --- | --- |
    | `half_pixel` | `(x + 0.5) / s - 0.5` |
    | `pytorch_half_pixel` | `L > 1 ? (x + 0.5) / s - 0.5 : -0.5` |
    | `align_corners` | `L == 1 ? 0 : x * (input.shape[d] - 1) / (L - 1)` |
    | `asymmetric` | `x / s` |
    | `tf_half_pixel_for_nn` | `(x + 0.5) / s` |

    The value there is interpolated from its neighbours, indices clamped to
    the edge: `nearest` rounds as `nearest_mode` says (`round_prefer_floor`,
    `round_prefer_ceil`, `floor`, `ceil`), `linear` is (multi-)linear and
    `cubic` is the cubic convolution with coefficient `cubic_coeff_a`; with
    `exclude_outside` the taps outside the input get weight 0 and the others
    are renormalised. Dimensions are interpolated independently (the modes
    are separable), so `linear` on the last two dimensions is bilinear.

    ```mlir
    %y = tg.resize %x {sizes = array<i64: 1, 3, 8, 8>, mode = #tg<resize_mode linear>}
        : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, DenseI64ArrayAttr:$sizes,
                   OptionalAttr<DenseF64ArrayAttr>:$scales,
                   DefaultValuedAttr<TG_ResizeModeAttr,
                       "::loom::tg::ResizeMode::Nearest">:$mode,
                   DefaultValuedAttr<TG_ResizeCoordinateModeAttr,
                       "::loom::tg::ResizeCoordinateMode::HalfPixel">:$coordinate_transformation_mode,
                   DefaultValuedAttr<TG_ResizeNearestModeAttr,
                       "::loom::tg::ResizeNearestMode::RoundPreferFloor">:$nearest_mode,
                   DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside);
  let results = (outs TG_FloatTensor:$output);
}

//===----------------------------------------------------------------------===//
// Reductions and normalisations
//===----------------------------------------------------------------------===//
// Facts and folders: lib/Dialect/TG/IR/ReductionOps.cpp.

class TG_ReduceOp<string mnemonic, string fn>
    : TG_InferOp<mnemonic, !listconcat([TG_Structured], TG_Facts)> {
  let summary = fn # " over the given axes";
  let description = [{
    Reduces over `axes` (non-empty, distinct, each in `[-rank, rank)`) with
    `}] # fn # [{`. With `keepdims` (default true, as ONNX) the reduced
    dimensions stay as size 1.

    ```mlir
    %y = tg.}] # mnemonic # [{ %x {axes = array<i64: -1>} : (tensor<1x128x768xf32>) -> tensor<1x128x1xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs TG_FloatTensor:$output);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return ::loom::tg::inferReduce(location, adaptor.getInput().getType(),
                                     adaptor.getAxes(), adaptor.getKeepdims(),
                                     inferred);
    }
  }];
}

def TG_ReduceSumOp : TG_ReduceOp<"reduce_sum", "sum">;
def TG_ReduceMeanOp : TG_ReduceOp<"reduce_mean", "mean"> {
  // A mean over every spatial axis of an N x C x spatial tensor becomes
  // tg.global_avgpool (and a tg.reshape without keepdims): the form the
  // backends run in the layout of the convolutions before it.
  let hasCanonicalizer = 1;
}
def TG_ReduceMaxOp : TG_ReduceOp<"reduce_max", "max">;

def TG_SoftmaxOp : TG_InferOp<"softmax", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "softmax along one axis";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `axis` (default -1).

    ```mlir
    %p = tg.softmax %s {axis = -1 : i64} : (tensor<1x12x128x128xf32>) -> tensor<1x12x128x128xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs TG_FloatTensor:$output);
}

def TG_AttentionOp : TG_InferOp<"attention", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "scaled dot-product attention with grouped-query heads, a live length and a causal mask";
  let description = [{
    `q` is `[B, Hq, Sq, D]`, `k` and `v` are `[B, Hkv, Skv, D]` with `Hq` a
    multiple of `Hkv` (grouped-query attention: query head `h` reads key and
    value head `h / (Hq / Hkv)`; `Hq = Hkv` is multi-head attention). The
    result has `q`'s type:

        out[b, h, i, :] = sum_j p_j v[b, h / (Hq / Hkv), j, :]
        p_j = exp(s_j - max s) / sum_j' exp(s_j' - max s)   (j, j' < n(b, i))
        s_j = scale * dot(q[b, h, i, :], k[b, h / (Hq / Hkv), j, :])

    computed in the element type (f32 or f64), the softmax over the visible
    keys `j < n(b, i)` only. `length` (optional, i64, `[B]` or rank 0 for
    every sequence) is sequence `b`'s live key length `L`, clamped to
    `[0, Skv]`; without it `L = Skv`. Keys at positions `>= L` are never read:
    `k` and `v` may be a cache of capacity `Skv` holding `L` live positions.

    Without `causal`, `n(b, i) = L`. With `causal`, the `Sq` queries are the
    last `Sq` positions of the live sequence (positions `L - Sq .. L - 1`),
    and query `i` sees the keys up to its own position:
    `n(b, i) = clamp(L - Sq + i + 1, 0, L)`. Prefill is `Sq` = the prompt
    length with `L = Sq` (query `i` sees keys `0..i`); decode is `Sq = 1` with
    `L` = past + 1 (the token just appended sees every live key). A query
    that sees no key (`n = 0`) gives zeros. `causal` needs `Sq <= Skv`.

    ```mlir
    // Decode: 32 query heads over 4 key/value heads, a cache of 2,048
    // positions of which `%len` are live per sequence.
    %o = tg.attention %q, %k, %v, %len {scale = 0.125 : f64, causal = true}
        : (tensor<2x32x1x64xf32>, tensor<2x4x2048x64xf32>, tensor<2x4x2048x64xf32>,
           tensor<2xi64>) -> tensor<2x32x1x64xf32>
    ```

    On the CPU an f32 attention runs as libloomrt's `loomrt.attention` step
    (docs/Runtime.md "Attention"). Its generated code (GPU targets, f64) is
    two contractions around a masked softmax, the score matrix materialised
    (docs/Codegen/GPU.md "Attention"). It has no ONNX export (opset 17 has
    no attention operator).
  }];
  let arguments = (ins StaticShapeTensorOf<[F32, F64]>:$q,
                   StaticShapeTensorOf<[F32, F64]>:$k,
                   StaticShapeTensorOf<[F32, F64]>:$v,
                   Optional<StaticShapeTensorOf<[I64]>>:$length,
                   F64Attr:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal);
  let results = (outs StaticShapeTensorOf<[F32, F64]>:$output);
}

def TG_SoftmaxCrossEntropyOp : TG_InferOp<"softmax_cross_entropy", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "mean softmax cross-entropy of [N, C] logits against class labels";
  let description = [{
    `mean over n of (logsumexp(logits[n, :]) - logits[n, labels[n]])`, with
    the row maximum subtracted before `exp` (stable for large logits).
    `labels` has shape `[N]`; a label outside `[0, C)` is a run-time error
    of the interpreter. The result is a rank-0 tensor of the logits' element
    type. ONNX: SoftmaxCrossEntropyLoss with reduction "mean", no weights and
    no ignore_index.

    ```mlir
    %loss = tg.softmax_cross_entropy %logits, %labels
        : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$logits, TG_IndexTensor:$labels);
  let results = (outs TG_FloatTensor:$output);
}

def TG_MseLossOp : TG_InferOp<"mse_loss", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "mean squared error of two tensors of one shape";
  let description = [{
    `mean((lhs - rhs)^2)` over every element; `lhs` and `rhs` have the same
    type and the result is a rank-0 tensor of their element type. (ONNX has
    no such operator: the export is Sub, Mul and ReduceMean, and nothing
    imports as it.)

    ```mlir
    %loss = tg.mse_loss %y, %target : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$lhs, TG_FloatTensor:$rhs);
  let results = (outs TG_FloatTensor:$output);
}

def TG_LayerNormOp : TG_InferOp<"layernorm", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "layer normalisation over the trailing dimensions";
  let description = [{
    Normalises over dims `[axis, rank)` (default: the last), then
    `y = (x - mean) / sqrt(var + epsilon) * scale + bias` with `scale` and
    `bias` of shape `input.shape[axis:]`.

    ```mlir
    %y = tg.layernorm %x, %g, %b {epsilon = 1.0e-12 : f64}
        : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$scale,
                   TG_FloatTensor:$bias,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs TG_FloatTensor:$output);
}

def TG_BatchNormOp : TG_InferOp<"batchnorm", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "batch normalisation, inference form, channel dimension 1";
  let description = [{
    `y = (x - mean) / sqrt(var + epsilon) * scale + bias`, per channel; the
    four parameters have shape `[C]` where `C = input.shape[1]`.

    ```mlir
    %y = tg.batchnorm %x, %g, %b, %m, %v {epsilon = 1.0e-5 : f64}
        : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
          -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins TG_FloatTensor:$input, TG_FloatTensor:$scale,
                   TG_FloatTensor:$bias, TG_FloatTensor:$mean,
                   TG_FloatTensor:$variance,
                   DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs TG_FloatTensor:$output);
}

//===----------------------------------------------------------------------===//
// Fragments: a part of the graph placed on one backend
//===----------------------------------------------------------------------===//
// Facts: lib/Dialect/TG/IR/FragmentOps.cpp.

def TG_FragmentOp : TG_Op<"fragment", !listconcat([
    IsolatedFromAbove, TG_ResultTypeGiven, TG_ComputesInRegions,
    SingleBlockImplicitTerminator<"YieldOp">], TG_Facts)> {
  let summary = "a part of the graph that runs as one unit on one backend";
  let description = [{
    The body computes the results from the block arguments (one per input,
    of the input's type) with tg ops and yields them. `backend` names a
    backend of the compiler's registry (docs/Placement.md): the dialect does
    not know the set, so a new backend needs no change here. A fragment on a
    backend that generates code (`codegen`) becomes one generated kernel;
    one on a library backend (`onednn`, `openblas`) one library call; an
    unregistered name is an error when the fragment is scheduled. Fragments
    are formed by `--tg-form-fragments` or `--tg-place-backends`, and can be
    written, printed and edited like any other op; the name prints as a
    keyword, or quoted when it is not a bare identifier.
    A fragment holds no `tg.weight` and no nested fragment: weights enter as
    inputs.

    ```mlir
    %y = tg.fragment <onednn> (%x, %w, %b)
        : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32> {
    ^bb0(%a: tensor<1x64x56x56xf32>, %f: tensor<64x64x3x3xf32>, %c: tensor<64xf32>):
      %r = tg.conv %a, %f, %c {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>}
          : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
      tg.yield %r : tensor<1x64x56x56xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<TG_Tensor>:$inputs, StrAttr:$backend);
  let results = (outs Variadic<TG_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    custom<BackendName>($backend) `(` $inputs `)` attr-dict `:`
    functional-type($inputs, results) $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes, "::mlir::ValueRange":$inputs,
                   "::llvm::StringRef":$backend)>,
  ];
}

//===----------------------------------------------------------------------===//
// Run-time control flow
//===----------------------------------------------------------------------===//
// Facts: lib/Dialect/TG/IR/ControlFlowOps.cpp; why a tg region op rather
// than scf.if: docs/Rationale.md.

def TG_IfOp : TG_Op<"if", !listconcat([
    TG_ResultTypeGiven, TG_ComputesInRegions, NoRegionArguments,
    SingleBlockImplicitTerminator<"YieldOp">], TG_Facts)> {
  let summary = "run-time choice between two computations (ONNX If)";
  let description = [{
    Evaluates the `then` region when the condition (an `i1` tensor of one
    element) is true, the `else` region otherwise, and has the values that
    region yields as results; the other region is not evaluated. Both
    regions yield values of the result types. The regions see every value
    that dominates the op (it is not isolated from above) and may hold any
    tg op, nested `tg.if` and fragments included.

    A condition known at compile time is folded away by `--canonicalize`
    (the region taken is inlined). The interpreter evaluates one region;
    the CPU compiler schedules both regions' steps behind a branch step
    (docs/Compiler.md); ONNX export writes an `If` node whose branches are
    the regions.

    ```mlir
    %y = tg.if %c : tensor<i1> -> (tensor<4xf32>) {
      %a = tg.relu %x : tensor<4xf32>
      tg.yield %a : tensor<4xf32>
    } else {
      %b = tg.neg %x : tensor<4xf32>
      tg.yield %b : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins TG_BoolTensor:$condition);
  let results = (outs Variadic<TG_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$thenRegion,
                        SizedRegion<1>:$elseRegion);
  let assemblyFormat = [{
    $condition `:` type($condition) (`->` `(` type($outputs)^ `)`)?
    $thenRegion `else` $elseRegion attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                   "::mlir::Value":$condition)>,
  ];
  let extraClassDeclaration = [{
    ::mlir::Block &getThenBlock() { return getThenRegion().front(); }
    ::mlir::Block &getElseBlock() { return getElseRegion().front(); }
    /// The block the condition \p value selects.
    ::mlir::Block &getBlock(bool value) {
      return value ? getThenBlock() : getElseBlock();
    }
  }];
}

include "loom/Dialect/TG/IR/TGLoopOps.td"

def TG_YieldOp : TG_Op<"yield", [Terminator, TG_ComputesNothing,
    ParentOneOf<["FragmentOp", "IfOp", "ScanOp"]>, ReturnLike]> {
  let summary = "the results of a tg.fragment, of a region of tg.if, of a tg.scan step";
  let description = [{
    ```mlir
    tg.yield %r : tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Variadic<TG_Tensor>:$results);
  let assemblyFormat = "($results^ `:` type($results))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
}

//===----------------------------------------------------------------------===//
// Data-dependent result lengths (bounded dynamic shapes)
//===----------------------------------------------------------------------===//

include "loom/Dialect/TG/IR/TGDynamicOps.td"

//===----------------------------------------------------------------------===//
// Programs run on every rank of a world
//===----------------------------------------------------------------------===//

include "loom/Dialect/TG/IR/TGWorldOps.td"

#endif // LOOM_DIALECT_TG_IR_TGOPS_TD
