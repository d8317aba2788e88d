// Non-max suppression past one workgroup's sort and past the masks that
// fit at once (long-nms-vulkan.test): 70,001 boxes of one class (a sort of
// 131,072 positions, past the loop budget of one launch), the candidates
// those whose score passes 0.85 (about 5,250 of the random scores in
// [-1, 1): 165 words of 32, the sweep's first two launches), boxes of sides
// below 0.2 around random centres (a negative side flips the box), an IoU
// threshold of 0.1 (the interpreter keeps 4,502 of them on loom-run's
// inputs), no pick limit, and a run-time valid length (a nonzero count):
// Mask R-CNN's form (its 90,000 boxes, 1,000 proposals x 90 classes, in
// one NMS, the classes kept apart by offsets of the coordinates).
func.func @main(%boxes: tensor<1x70001x4xf32>, %scores: tensor<1x1x70001xf32>)
    -> (tensor<70001x3xi64>, tensor<i64>) {
  %side = tg.constant dense<[[[1.0, 1.0, 0.2, 0.2]]]> : tensor<1x1x4xf32>
  %b = tg.mul %boxes, %side : (tensor<1x70001x4xf32>, tensor<1x1x4xf32>) -> tensor<1x70001x4xf32>
  %t = tg.constant dense<-0.99> : tensor<f32>
  %live = tg.greater %scores, %t : (tensor<1x1x70001xf32>, tensor<f32>) -> tensor<1x1x70001xi1>
  %nz, %n = tg.nonzero %live : (tensor<1x1x70001xi1>) -> (tensor<3x70001xi64>, tensor<i64>)
  %s, %k = tg.non_max_suppression %b, %scores, %n {center_point_box = 1 : i64,
      iou_threshold = 0.1 : f64, max_output_boxes_per_class = 9223372036854775807 : i64,
      score_threshold = 0.85 : f64}
      : (tensor<1x70001x4xf32>, tensor<1x1x70001xf32>, tensor<i64>) -> (tensor<70001x3xi64>, tensor<i64>)
  return %s, %k : tensor<70001x3xi64>, tensor<i64>
}
