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

#endif // LOOM_CONVERSION_PASSES_TD
