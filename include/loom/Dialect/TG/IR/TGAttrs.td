//===- TGAttrs.td - Tensor graph attributes and enums ------*- tablegen -*-===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGATTRS_TD
#define LOOM_DIALECT_TG_IR_TGATTRS_TD

include "loom/Dialect/TG/IR/TGDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def TG_ActivationNone    : I32EnumAttrCase<"None", 0, "none">;
def TG_ActivationRelu    : I32EnumAttrCase<"Relu", 1, "relu">;
def TG_ActivationSigmoid : I32EnumAttrCase<"Sigmoid", 2, "sigmoid">;
def TG_ActivationTanh    : I32EnumAttrCase<"Tanh", 3, "tanh">;

def TG_Activation : I32EnumAttr<"Activation",
    "activation fused into the result of a convolution",
    [TG_ActivationNone, TG_ActivationRelu, TG_ActivationSigmoid,
     TG_ActivationTanh]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::loom::tg";
}

def TG_ActivationAttr : EnumAttr<TG_Dialect, TG_Activation, "activation">;

#endif // LOOM_DIALECT_TG_IR_TGATTRS_TD
