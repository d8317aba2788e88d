// The selection class on awkward sizes (selections-vulkan.test): top-k on
// prime lengths below, above and far above a workgroup of 128 (5,003: the
// permutation in a scratch buffer past 4,096), k = n, k = 1, smallest first,
// a run-time valid length (detectors' nonzero count, as SSDlite's), ties
// (integers -4..4, and all equal: the lower index first); nonzero on 3-D i1,
// on 3,234 f32 (SSDlite's anchors) and with none surviving; NMS on prime box
// counts, classes and batches, corners and centres, a score threshold, a
// valid length, a pick limit, and none surviving the threshold.
func.func @main(%x: tensor<37xf32>, %m: tensor<3x131xf32>, %big: tensor<5003xf32>,
                %a: tensor<3234xf32>, %z: tensor<3x7x19xi1>,
                %boxes: tensor<2x61x4xf32>, %scores: tensor<2x3x61xf32>,
                %boxes1: tensor<1x257x4xf32>, %scores1: tensor<1x1x257xf32>)
    -> (tensor<37xf32>, tensor<37xi64>, tensor<3x7xf32>, tensor<3x7xi64>,
        tensor<1xf32>, tensor<1xi64>, tensor<300xf32>, tensor<300xi64>,
        tensor<9xi64>, tensor<50xi32>, tensor<50xi64>,
        tensor<3x399xi64>, tensor<i64>, tensor<1x3234xi64>, tensor<i64>,
        tensor<300xf32>, tensor<300xi64>, tensor<i64>,
        tensor<1x5003xi64>, tensor<i64>,
        tensor<366x3xi64>, tensor<i64>, tensor<6x3xi64>, tensor<i64>,
        tensor<257x3xi64>, tensor<i64>, tensor<366x3xi64>, tensor<i64>) {
  // k = n (37, prime), k = 7 smallest of 131 along axis 1, k = 1.
  %v0, %i0, %n0 = tg.topk %x {axis = 0 : i64, k = 37 : i64}
      : (tensor<37xf32>) -> (tensor<37xf32>, tensor<37xi64>, tensor<i64>)
  %v1, %i1, %n1 = tg.topk %m {axis = 1 : i64, k = 7 : i64, largest = false}
      : (tensor<3x131xf32>) -> (tensor<3x7xf32>, tensor<3x7xi64>, tensor<i64>)
  %v2, %i2, %n2 = tg.topk %x {axis = 0 : i64, k = 1 : i64}
      : (tensor<37xf32>) -> (tensor<1xf32>, tensor<1xi64>, tensor<i64>)
  // 5,003 positions: the sort in a scratch buffer.
  %v3, %i3, %n3 = tg.topk %big {axis = 0 : i64, k = 300 : i64}
      : (tensor<5003xf32>) -> (tensor<300xf32>, tensor<300xi64>, tensor<i64>)
  // All equal: positions 0..8.
  %zero = tg.constant dense<0.0> : tensor<f32>
  %flat = tg.mul %x, %zero : (tensor<37xf32>, tensor<f32>) -> tensor<37xf32>
  %v4, %i4, %n4 = tg.topk %flat {axis = 0 : i64, k = 9 : i64}
      : (tensor<37xf32>) -> (tensor<9xf32>, tensor<9xi64>, tensor<i64>)
  // Integers with ties.
  %four = tg.constant dense<4.0> : tensor<f32>
  %scaled = tg.mul %m, %four : (tensor<3x131xf32>, tensor<f32>) -> tensor<3x131xf32>
  %ints = tg.cast %scaled : tensor<3x131xf32> to tensor<3x131xi32>
  %row = tg.reshape %ints : (tensor<3x131xi32>) -> tensor<393xi32>
  %v5, %i5, %n5 = tg.topk %row {axis = 0 : i64, k = 50 : i64}
      : (tensor<393xi32>) -> (tensor<50xi32>, tensor<50xi64>, tensor<i64>)
  // Nonzero: 3-D i1; SSDlite's pattern (the count is the next top-k's
  // valid length); none surviving.
  %nz0, %c0 = tg.nonzero %z : (tensor<3x7x19xi1>) -> (tensor<3x399xi64>, tensor<i64>)
  %t = tg.constant dense<0.5> : tensor<f32>
  %keep = tg.greater %a, %t : (tensor<3234xf32>, tensor<f32>) -> tensor<3234xi1>
  %nz1, %c1 = tg.nonzero %keep : (tensor<3234xi1>) -> (tensor<1x3234xi64>, tensor<i64>)
  %v6, %i6, %n6 = tg.topk %a, %c1 {axis = 0 : i64, k = 300 : i64}
      : (tensor<3234xf32>, tensor<i64>) -> (tensor<300xf32>, tensor<300xi64>, tensor<i64>)
  %none = tg.mul %big, %zero : (tensor<5003xf32>, tensor<f32>) -> tensor<5003xf32>
  %nz2, %c2 = tg.nonzero %none : (tensor<5003xf32>) -> (tensor<1x5003xi64>, tensor<i64>)
  // NMS: 2 batches x 3 classes x 61 boxes, corners, a score threshold.
  %s0, %k0 = tg.non_max_suppression %boxes, %scores {iou_threshold = 0.3 : f64,
      max_output_boxes_per_class = 100 : i64, score_threshold = -0.5 : f64}
      : (tensor<2x61x4xf32>, tensor<2x3x61xf32>) -> (tensor<366x3xi64>, tensor<i64>)
  // Centres, at most 1 pick per class, the first 40 boxes.
  %forty = tg.constant dense<40> : tensor<i64>
  %s1, %k1 = tg.non_max_suppression %boxes, %scores, %forty {center_point_box = 1 : i64,
      iou_threshold = 0.5 : f64, max_output_boxes_per_class = 1 : i64}
      : (tensor<2x61x4xf32>, tensor<2x3x61xf32>, tensor<i64>) -> (tensor<6x3xi64>, tensor<i64>)
  // 257 boxes (9 words of 32), SSDlite's form: one batch, one class, no
  // limit.
  %s2, %k2 = tg.non_max_suppression %boxes1, %scores1 {iou_threshold = 0.55 : f64,
      max_output_boxes_per_class = 9223372036854775807 : i64}
      : (tensor<1x257x4xf32>, tensor<1x1x257xf32>) -> (tensor<257x3xi64>, tensor<i64>)
  // None above the score threshold.
  %s3, %k3 = tg.non_max_suppression %boxes, %scores {iou_threshold = 0.5 : f64,
      max_output_boxes_per_class = 100 : i64, score_threshold = 2.0 : f64}
      : (tensor<2x61x4xf32>, tensor<2x3x61xf32>) -> (tensor<366x3xi64>, tensor<i64>)
  return %v0, %i0, %v1, %i1, %v2, %i2, %v3, %i3, %i4, %v5, %i5, %nz0, %c0, %nz1, %c1,
         %v6, %i6, %n6, %nz2, %c2, %s0, %k0, %s1, %k1, %s2, %k2, %s3, %k3
      : tensor<37xf32>, tensor<37xi64>, tensor<3x7xf32>, tensor<3x7xi64>,
        tensor<1xf32>, tensor<1xi64>, tensor<300xf32>, tensor<300xi64>,
        tensor<9xi64>, tensor<50xi32>, tensor<50xi64>,
        tensor<3x399xi64>, tensor<i64>, tensor<1x3234xi64>, tensor<i64>,
        tensor<300xf32>, tensor<300xi64>, tensor<i64>,
        tensor<1x5003xi64>, tensor<i64>,
        tensor<366x3xi64>, tensor<i64>, tensor<6x3xi64>, tensor<i64>,
        tensor<257x3xi64>, tensor<i64>, tensor<366x3xi64>, tensor<i64>
}
