//===- TGLoopOps.td - Loops with a static trip count -------*- tablegen -*-===//
//
// Part of Loom. tg.scan: a recurrence (ONNX's LSTM, GRU and RNN, and Scan) as
// one op with a body region, so that a recurrence stays one loop from the
// importer to the generated code instead of one copy of its step per
// element of the sequence. Included from TGOps.td; facts in
// lib/Dialect/TG/IR/LoopOps.cpp, lowering in lib/Conversion/TGToLinalg/Scan.cpp;
// why a region op: docs/Compiler.md ("Recurrences").
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGLOOPOPS_TD
#define LOOM_DIALECT_TG_IR_TGLOOPOPS_TD

def TG_ScanOp : TG_Op<"scan", !listconcat([
    IsolatedFromAbove, AttrSizedOperandSegments, TG_ResultTypeGiven,
    TG_Structured, SingleBlockImplicitTerminator<"YieldOp">], TG_Facts)> {
  let summary = "a loop over the leading axis of sequences, carrying state";
  let description = [{
    Runs its body once per step `t` of the leading axis of the `sequences`
    (all have the same length `N >= 1`; that is the static trip count),
    for `t = 0, 1, ..., N-1`, or `N-1, ..., 0` when `reverse` is set. The
    body's arguments are, in order: the carried values (the `inits` at the
    first step, what the previous step yielded after it), slice `t` of each
    sequence (its leading axis dropped), and the `invariants` (the same at
    every step: weights, biases). The body yields the next carried values
    (of the `inits`' types), then any number of per-step outputs.

    The results are the carried values after the last step, then each
    per-step output stacked along a new leading axis of length `N`, the one
    computed at step `t` at index `t` (so a reverse scan's outputs are in
    sequence order, as ONNX's reverse RNN and Scan's
    `scan_output_directions` have them).

    The body is isolated from above (every value it reads is an operand) and
    holds tg ops only, no `tg.weight`, `tg.fragment` or `tg.if`. The
    interpreter runs the body `N` times; generated code is one `scf.for`
    (the whole scan is one kernel); ONNX export writes a `Scan` node. Its
    work is `N` times its body's.

    ```mlir
    %h, %ys = tg.scan inits(%h0 : tensor<4x8xf32>)
        sequences(%x : tensor<16x4x8xf32>) invariants(%r : tensor<8x8xf32>)
        -> (tensor<4x8xf32>, tensor<16x4x8xf32>) {
    ^bb0(%hp: tensor<4x8xf32>, %xt: tensor<4x8xf32>, %w: tensor<8x8xf32>):
      %m = tg.matmul %hp, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
      %s = tg.add %m, %xt : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      %hn = tg.tanh %s : tensor<4x8xf32>
      tg.yield %hn, %hn : tensor<4x8xf32>, tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<TG_Tensor>:$inits,
                   Variadic<TG_Tensor>:$sequences,
                   Variadic<TG_Tensor>:$invariants,
                   UnitAttr:$reverse);
  let results = (outs Variadic<TG_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`inits` `(` $inits^ `:` type($inits) `)`)?
    `sequences` `(` $sequences `:` type($sequences) `)`
    (`invariants` `(` $invariants^ `:` type($invariants) `)`)?
    (`reverse` $reverse^)? attr-dict `->` `(` type($outputs) `)` $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::TypeRange":$resultTypes, "::mlir::ValueRange":$inits,
                   "::mlir::ValueRange":$sequences,
                   "::mlir::ValueRange":$invariants, "bool":$reverse)>,
  ];
  let extraClassDeclaration = [{
    /// The number of steps: the sequences' leading dimension.
    int64_t getTripCount() {
      return ::mlir::cast<::mlir::ShapedType>(getSequences().front().getType())
          .getDimSize(0);
    }
    /// The carried values after the last step.
    ::mlir::ResultRange getFinals() {
      return getOutputs().take_front(getInits().size());
    }
    /// The per-step outputs, stacked.
    ::mlir::ResultRange getStacked() {
      return getOutputs().drop_front(getInits().size());
    }
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    /// The index of the sequence slices' body arguments.
    unsigned getFirstSliceArgument() { return getInits().size(); }
    unsigned getFirstInvariantArgument() {
      return getInits().size() + getSequences().size();
    }
  }];
}

#endif // LOOM_DIALECT_TG_IR_TGLOOPOPS_TD
