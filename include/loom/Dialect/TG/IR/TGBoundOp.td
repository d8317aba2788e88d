//===- TGBoundOp.td - The op that states a bounded dimension -*- tablegen -*-===//
//
// Part of Loom. A value of data-dependent length is a tensor padded to a
// static bound plus a rank-0 i64 length (TGDynamicOps.td); tg.bound states
// that pairing in the IR. Kept in a file (and generated header) of its own,
// TGBoundOp.h, so that only the code that reads or writes bounds depends
// on it: `-op-include-regex` generates this one op from the definitions
// TGOps.td shares.
//
// Facts: lib/Dialect/TG/IR/BoundOp.cpp. Ranges of lengths:
// lib/Dialect/TG/Transforms/LengthRanges.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGBOUNDOP_TD
#define LOOM_DIALECT_TG_IR_TGBOUNDOP_TD

include "loom/Dialect/TG/IR/TGOps.td"

def TG_BoundOp : TG_Op<"bound", !listconcat([TG_ResultTypeGiven, TG_ComputesNothing,
    AllTypesMatch<["input", "output"]>], TG_Facts)> {
  let summary = "states that a dimension is padded and holds a run-time length";
  let description = [{
    The identity on `input`, stating that its dimension `dim` (static) is
    padded: only its first `length` positions (a rank-0 i64 tensor, at
    most the dimension's size) are valid, the others are padding. The
    ONNX importer wraps every value of data-dependent length it creates in
    one (two, nested, for a value padded in two dimensions) and reads the
    bound of a value back from it; `--tg-check-bounds` proves with an
    integer range analysis that each length fits its dimension, and
    loom-compile erases the ops (`--tg-erase-bounds`) after the function
    results' bounds have been recorded (docs/ONNX/Import.md "Bounds in the
    IR").

    ```mlir
    %boxes = tg.bound %padded, %count {dim = 0 : i64} : tensor<100x4xf32>, tensor<i64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$length,
                   I64Attr:$dim);
  let results = (outs AnyRankedTensor:$output);
  let assemblyFormat =
      "$input `,` $length attr-dict `:` type($input) `,` type($length)";
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_TG_IR_TGBOUNDOP_TD
