//===- TGAttrs.td - Tensor graph attributes and enums ------*- tablegen -*-===//
//
// Part of Loom. Every enumerated attribute of tg, as an ODS enum: the C++
// enum, its parser, printer and verifier come from the one list here, and
// the interpreter's kernels use the same C++ enums (TGEnums.h).
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

//===----------------------------------------------------------------------===//
// tg.resize (the options of ONNX Resize)
//===----------------------------------------------------------------------===//

def TG_ResizeModeNearest : I32EnumAttrCase<"Nearest", 0, "nearest">;
def TG_ResizeModeLinear  : I32EnumAttrCase<"Linear", 1, "linear">;
def TG_ResizeModeCubic   : I32EnumAttrCase<"Cubic", 2, "cubic">;

def TG_ResizeMode : I32EnumAttr<"ResizeMode",
    "interpolation of tg.resize (ONNX Resize `mode`)",
    [TG_ResizeModeNearest, TG_ResizeModeLinear, TG_ResizeModeCubic]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::loom::tg";
}
def TG_ResizeModeAttr : EnumAttr<TG_Dialect, TG_ResizeMode, "resize_mode">;

def TG_CoordHalfPixel        : I32EnumAttrCase<"HalfPixel", 0, "half_pixel">;
def TG_CoordPytorchHalfPixel : I32EnumAttrCase<"PytorchHalfPixel", 1, "pytorch_half_pixel">;
def TG_CoordAlignCorners     : I32EnumAttrCase<"AlignCorners", 2, "align_corners">;
def TG_CoordAsymmetric       : I32EnumAttrCase<"Asymmetric", 3, "asymmetric">;
def TG_CoordTfHalfPixelForNN : I32EnumAttrCase<"TfHalfPixelForNN", 4, "tf_half_pixel_for_nn">;

def TG_ResizeCoordinateMode : I32EnumAttr<"ResizeCoordinateMode",
    "map from an output index to an input coordinate (ONNX Resize "
    "`coordinate_transformation_mode`)",
    [TG_CoordHalfPixel, TG_CoordPytorchHalfPixel, TG_CoordAlignCorners,
     TG_CoordAsymmetric, TG_CoordTfHalfPixelForNN]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::loom::tg";
}
def TG_ResizeCoordinateModeAttr
    : EnumAttr<TG_Dialect, TG_ResizeCoordinateMode, "coordinate_mode">;

def TG_NearestRoundPreferFloor : I32EnumAttrCase<"RoundPreferFloor", 0, "round_prefer_floor">;
def TG_NearestRoundPreferCeil  : I32EnumAttrCase<"RoundPreferCeil", 1, "round_prefer_ceil">;
def TG_NearestFloor            : I32EnumAttrCase<"Floor", 2, "floor">;
def TG_NearestCeil             : I32EnumAttrCase<"Ceil", 3, "ceil">;

def TG_ResizeNearestMode : I32EnumAttr<"ResizeNearestMode",
    "rounding of nearest-mode tg.resize (ONNX Resize `nearest_mode`)",
    [TG_NearestRoundPreferFloor, TG_NearestRoundPreferCeil, TG_NearestFloor,
     TG_NearestCeil]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::loom::tg";
}
def TG_ResizeNearestModeAttr
    : EnumAttr<TG_Dialect, TG_ResizeNearestMode, "nearest_mode">;

#endif // LOOM_DIALECT_TG_IR_TGATTRS_TD
