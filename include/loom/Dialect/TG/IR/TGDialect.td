//===- TGDialect.td - Tensor graph dialect definition ------*- tablegen -*-===//
//
// Part of Loom. The `tg` dialect: ML tensor graphs with value semantics.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGDIALECT_TD
#define LOOM_DIALECT_TG_IR_TGDIALECT_TD

include "mlir/IR/OpBase.td"

def TG_Dialect : Dialect {
  let name = "tg";
  let cppNamespace = "::loom::tg";
  let summary = "Tensor graphs: the operators of ML models with value semantics";
  let description = [{
    The `tg` (tensor graph) dialect holds ML models as graphs of operators on
    ranked, statically shaped tensors with value semantics. Its operators are
    the ones ONNX exporters produce and the graph substitutions of TASO need:
    matrix multiplication and convolution, pooling, elementwise arithmetic with
    numpy broadcasting, activations, data movement (transpose, reshape,
    concat, split, slice, pad, TASO's kernel `enlarge`, broadcast, gather),
    reductions and normalisations.

    Element types: `f32` first; `f16`, `bf16` and `f64` are legal wherever a
    float is; `i1`, `i32` and `i64` tensors are legal in data-movement ops
    (indices, shapes, masks) and `tg.cast`.

    Every operator verifies its operand shapes and attributes, infers its
    result type (`InferTypeOpInterface`; the result type written in the IR must
    equal the inferred one) and has a reference semantics in Loom's
    interpreter (`loom-run`), which is generic over the number domain.

    State updated in place: a function argument with `tg.tied_result = J`
    (an i64) is state the function updates, and result `J`, of the same
    type, is its new value (IREE's tied operands, JAX's donated buffers). The
    interpreter computes it as any result; a compiled entry writes it into
    the argument's own memory, and the runtime keeps it between calls
    (docs/Runtime.md "State"). A decoder's KV cache is such an argument,
    appended to by `tg.update_slice`:

    ```mlir
    func.func @decode(%k: tensor<1x12x1024x64xf32> {tg.tied_result = 0 : i64},
                      %new: tensor<1x12x1x64xf32>, %len: tensor<i64>)
        -> tensor<1x12x1024x64xf32> {
      %k1 = tg.update_slice %k, %new, %len {axis = 2 : i64}
          : (tensor<1x12x1024x64xf32>, tensor<1x12x1x64xf32>, tensor<i64>) -> tensor<1x12x1024x64xf32>
      return %k1 : tensor<1x12x1024x64xf32>
    }
    ```

    The dialect verifies the tie (a result of the argument's type, tied to
    one argument, without a data-dependent length).

    Parameters live outside the IR: `tg.weight "name"` refers to a tensor in
    the safetensors file named by the module attribute `tg.weights` (a path
    relative to the .mlir file):

    ```mlir
    module attributes {tg.weights = "block.safetensors"} {
      func.func @main(%x: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
        %w = tg.weight "conv1.weight" : tensor<64x64x3x3xf32>
        %y = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>}
            : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
        return %y : tensor<1x64x56x56xf32>
      }
    }
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the module attribute that names the weights file.
    static constexpr ::llvm::StringLiteral kWeightsAttrName = "tg.weights";
  }];
}

#endif // LOOM_DIALECT_TG_IR_TGDIALECT_TD
