// Awkward cases of the dynamic ops (test/Runtime/dynamic-steps.test): the
// interpreter and the compiled artifact (libloomrt's loomrt.* steps) must
// print the same values; the inputs are dynamic-steps-inputs.mlir's results
// (the ops on constants would fold at compile time).
func.func @main(%len: tensor<i64> {tg.name = "len"},
                %x: tensor<2x6xf32> {tg.name = "x"},
                %y: tensor<6x2xf32> {tg.name = "y"},
                %z: tensor<6xf32> {tg.name = "z"},
                %w: tensor<4xi32> {tg.name = "w"},
                %a: tensor<2x3xf32> {tg.name = "a"},
                %e: tensor<3x2xi64> {tg.name = "e"},
                %m: tensor<5xi1> {tg.name = "m"},
                %boxes: tensor<2x5x4xf32> {tg.name = "boxes"},
                %scores: tensor<2x2x5xf32> {tg.name = "scores"},
                %cb: tensor<1x6x4xf32> {tg.name = "cb"},
                %cs: tensor<1x1x6xf32> {tg.name = "cs"})
    -> (tensor<2x3xf32> {tg.name = "top_v"}, tensor<2x3xi64> {tg.name = "top_i"},
        tensor<i64> {tg.name = "top_n"},
        tensor<4x2xf32> {tg.name = "low_v"}, tensor<4x2xi64> {tg.name = "low_i"},
        tensor<0x2xi64> {tg.name = "zero_i"}, tensor<i64> {tg.name = "zero_n"},
        tensor<6xi64> {tg.name = "valid_i"}, tensor<i64> {tg.name = "valid_n"},
        tensor<i32> {tg.name = "int_v"},
        tensor<2x6xi64> {tg.name = "nz"}, tensor<i64> {tg.name = "nz_n"},
        tensor<i64> {tg.name = "empty_n"},
        tensor<1x5xi64> {tg.name = "mask"}, tensor<i64> {tg.name = "mask_n"},
        tensor<12x3xi64> {tg.name = "nms"}, tensor<i64> {tg.name = "nms_n"},
        tensor<6x3xi64> {tg.name = "center"}, tensor<i64> {tg.name = "center_n"}) {
  // Ties (the lower position first), NaN (the largest), -0.0 == 0.0.
  %tv, %ti, %tn = tg.topk %x {axis = 1 : i64, k = 3 : i64}
      : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>, tensor<i64>)
  // Smallest first along axis 0 of a [6, 2] tensor (inner lines of 2).
  %lv, %li, %ln = tg.topk %y {axis = 0 : i64, k = 4 : i64, largest = false}
      : (tensor<6x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>, tensor<i64>)
  // k = 0.
  %zv, %zi, %zn = tg.topk %y {axis = 0 : i64, k = 0 : i64}
      : (tensor<6x2xf32>) -> (tensor<0x2xf32>, tensor<0x2xi64>, tensor<i64>)
  // k = n over a run-time length: only the first len take part.
  %vv, %vi, %vn = tg.topk %z, %len {axis = 0 : i64, k = 6 : i64}
      : (tensor<6xf32>, tensor<i64>) -> (tensor<6xf32>, tensor<6xi64>, tensor<i64>)
  // Integers.
  %wv, %wi, %wn = tg.topk %w {axis = 0 : i64, k = 1 : i64}
      : (tensor<4xi32>) -> (tensor<1xi32>, tensor<1xi64>, tensor<i64>)
  %wr = tg.reshape %wv : (tensor<1xi32>) -> tensor<i32>
  // NonZero: NaN is non-zero, -0.0 is zero; an all-zero input is empty.
  %nz, %nzn = tg.nonzero %a : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  %ez, %ezn = tg.nonzero %e : (tensor<3x2xi64>) -> (tensor<2x6xi64>, tensor<i64>)
  %mz, %mzn = tg.nonzero %m : (tensor<5xi1>) -> (tensor<1x5xi64>, tensor<i64>)
  // NMS: corners in either order, 2 batches x 2 classes, a score threshold
  // and equal scores; boxes 3 and 4 overlap box 0 (IoU 0.81 and 0.33).
  %sel, %seln = tg.non_max_suppression %boxes, %scores
      {max_output_boxes_per_class = 3 : i64, iou_threshold = 0.5 : f64, score_threshold = 0.15 : f64}
      : (tensor<2x5x4xf32>, tensor<2x2x5xf32>) -> (tensor<12x3xi64>, tensor<i64>)
  // Center boxes [xc, yc, w, h] and only the first len boxes.
  %csel, %cseln = tg.non_max_suppression %cb, %cs, %len
      {center_point_box = 1 : i64, max_output_boxes_per_class = 100 : i64, iou_threshold = 0.3 : f64}
      : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>) -> (tensor<6x3xi64>, tensor<i64>)
  return %tv, %ti, %tn, %lv, %li, %zi, %zn, %vi, %vn, %wr, %nz, %nzn, %ezn, %mz, %mzn,
         %sel, %seln, %csel, %cseln
      : tensor<2x3xf32>, tensor<2x3xi64>, tensor<i64>, tensor<4x2xf32>, tensor<4x2xi64>,
        tensor<0x2xi64>, tensor<i64>, tensor<6xi64>, tensor<i64>, tensor<i32>,
        tensor<2x6xi64>, tensor<i64>, tensor<i64>, tensor<1x5xi64>, tensor<i64>,
        tensor<12x3xi64>, tensor<i64>, tensor<6x3xi64>, tensor<i64>
}
