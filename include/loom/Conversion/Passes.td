//===- Passes.td - Conversion passes ------------------------*- tablegen -*-===//
//
// Part of Loom. Passes that convert between dialects (lib/Conversion/<X>To<Y>),
// one banner per conversion, alphabetical.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_CONVERSION_PASSES_TD
#define LOOM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// TGToLinalg
//===----------------------------------------------------------------------===//

def ConvertTGToLinalg : Pass<"convert-tg-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower the tg ops of kernel functions to linalg on tensors";
  let description = [{
    The first stage of the kernel pipeline: every tg op of every function
    is replaced by the linalg, tensor, arith and math ops its
    `LinalgLoweringOpInterface` model builds (lib/Conversion/TGToLinalg),
    with the interpreter's semantics; elementwise bodies are the
    interpreter's own formulas (ScalarFunctions.h). An op without a lowering
    is an error at the op that names it.

    ```
    loom-opt kernels.mlir --convert-tg-to-linalg
    ```

    With `softmax-stores-exponentials` (the CPU pipeline sets it), a
    softmax computes each exponential once into a result its row sum and
    its output e * (1 / sum) both read; without it (the GPU pipeline) the
    output recomputes exp(x - max), so that the sum and the output stay one
    fused generic each.
  }];
  let options = [
    Option<"softmaxStoresExponentials", "softmax-stores-exponentials", "bool",
           /*default=*/"false",
           "tg.softmax stores exp(x - max) once for its sum and its output">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def ExpandTF32Roundings : Pass<"loom-expand-tf32-roundings"> {
  let summary = "Compute TF32 roundings on the bits of their f32 values";
  let description = [{
    `tg.round_tf32` lowers to `arith.truncf` to `tf32` and `arith.extf` back
    to f32 (scalars or vectors), the pair the GPU's tiled classes read as a
    tensor core's operand format (docs/Codegen/GPU.md, "Tensor cores").
    Neither LLVM nor SPIR-V has a TF32 type, so after the classes have read
    it (the GPU kernel pipeline's map stage, the CPU pipeline's lower
    stage) each pair becomes integer arithmetic on the f32 bits, rounding to
    nearest with ties to even at the 13th bit: `(u + 0xfff + ((u >> 13) &
    1)) & ~0x1fff`, NaN and infinities kept; the interpreter's
    `roundToTF32` to the bit (docs/Precision.md, "TF32"). A `tf32` value
    used otherwise is an error at its op.

    ```
    loom-opt kernels.mlir --loom-expand-tf32-roundings
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // LOOM_CONVERSION_PASSES_TD
