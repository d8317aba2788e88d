//===- TGDynamicOps.td - Ops with data-dependent result lengths -*- tablegen -*-===//
//
// Part of Loom. Included from TGOps.td. tg stays statically shaped: an op
// whose result length depends on the data (ONNX NonZero,
// NonMaxSuppression) returns its result padded to a static upper bound and
// the run-time length beside it, a rank-0 i64 tensor (bounded dynamic
// shapes, as XLA's). The valid part of a padded result is its prefix of
// `count` along the bounded dimension; the padding is 0, so a gather by
// padded indices stays in range. docs/ONNX/Import.md "Bounded dynamic
// shapes" says how the importer carries the lengths and which ops may
// consume a padded value.
//
// Facts: lib/Dialect/TG/IR/DynamicOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGDYNAMICOPS_TD
#define LOOM_DIALECT_TG_IR_TGDYNAMICOPS_TD

def TG_LengthTensor : 0DTensorOf<[I64]>;

def TG_NonZeroOp : TG_InferOp<"nonzero", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "coordinates of the non-zero elements, padded (ONNX NonZero)";
  let description = [{
    For an input of rank `r` and `n` elements, `indices` is `r x n` (the
    upper bound): column `j < count` holds the coordinates of the `j`-th
    non-zero element in row-major order, the columns from `count` on are 0.
    `count` is the number of non-zero elements.

    ```mlir
    %idx, %count = tg.nonzero %mask : (tensor<2x3xi1>) -> (tensor<2x6xi64>, tensor<i64>)
    ```
  }];
  let arguments = (ins TG_Tensor:$input);
  let results = (outs StaticShapeTensorOf<[I64]>:$indices, TG_LengthTensor:$count);
}

def TG_TopKOp : TG_InferOp<"topk", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "the k largest (or smallest) elements along an axis (ONNX TopK)";
  let description = [{
    Along `axis`, the `k` largest elements (`largest = false`: smallest)
    and their positions, in descending (ascending) order; equal values keep
    the lower position first, and NaN counts as larger than every number
    (ONNX Runtime's order). `sorted = false` allows any order (ONNX), and tg
    sorts anyway.

    With the optional `valid` operand (a run-time length) only the first
    `valid` positions along `axis` take part: the input is a padded tensor
    of bounded length. The results are then valid for their first
    `min(k, valid)` positions, and padded after them (values 0, indices 0).
    `count` is `min(k, valid)` (`k` without `valid`, where `k` must not
    exceed the axis size).

    ```mlir
    %v, %i, %n = tg.topk %scores {axis = -1 : i64, k = 5 : i64, largest = true, sorted = true}
        : (tensor<2x100xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>, tensor<i64>)
    ```
  }];
  let arguments = (ins TG_NumberTensor:$input, Optional<TG_LengthTensor>:$valid,
                   I64Attr:$k, DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$largest,
                   DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs TG_NumberTensor:$values, StaticShapeTensorOf<[I64]>:$indices,
                 TG_LengthTensor:$count);
}

def TG_NonMaxSuppressionOp : TG_InferOp<"non_max_suppression", !listconcat([TG_Structured], TG_Facts)> {
  let summary = "greedy non-maximum suppression of boxes per class (ONNX NonMaxSuppression)";
  let description = [{
    `boxes` is `[B, N, 4]`, `scores` `[B, C, N]`. For every batch `b` and
    class `c`, repeatedly selects the box of highest score (the lower index
    among equals) whose score is above `score_threshold` (when given) and
    that no selected box of that batch and class overlaps with an
    intersection over union above `iou_threshold`, up to
    `max_output_boxes_per_class` boxes. `selected` lists them as rows
    `[b, c, box]`, by batch, then class, then selection order, padded with
    zero rows to the bound `B * C * min(max_output_boxes_per_class, N)`;
    `count` is the number of valid rows. Boxes are corners `[y1, x1, y2, x2]`
    (either diagonal) with `center_point_box = 0`, `[x_center, y_center,
    width, height]` with 1. With the optional `valid` operand only the first
    `valid` boxes take part (a padded, bounded `N`).

    ```mlir
    %sel, %n = tg.non_max_suppression %boxes, %scores {center_point_box = 0 : i64,
        max_output_boxes_per_class = 10 : i64, iou_threshold = 5.000000e-01 : f64}
        : (tensor<1x100x4xf32>, tensor<1x3x100xf32>) -> (tensor<30x3xi64>, tensor<i64>)
    ```
  }];
  let arguments = (ins TG_FloatTensor:$boxes, TG_FloatTensor:$scores,
                   Optional<TG_LengthTensor>:$valid,
                   DefaultValuedAttr<I64Attr, "0">:$center_point_box,
                   I64Attr:$max_output_boxes_per_class,
                   DefaultValuedAttr<F64Attr, "0.0">:$iou_threshold,
                   OptionalAttr<F64Attr>:$score_threshold);
  let results = (outs StaticShapeTensorOf<[I64]>:$selected, TG_LengthTensor:$count);
}

#endif // LOOM_DIALECT_TG_IR_TGDYNAMICOPS_TD
