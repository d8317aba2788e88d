// A reduction to a scalar whose row reads an input broadcast along the
// row (broadcast-reduction-vulkan.test): Mask R-CNN's largest box
// coordinate before its batched NMS (torchvision's coordinate trick), the
// maximum over the 90,000 x 4 boxes of those below a run-time count, the
// mask a 90,000 x 1 column. Here the boxes are random values plus their
// row's position (a nonzero's indices), so the maximum is in the last
// rows.
func.func @main(%boxes: tensor<90000x4xf32>) -> tensor<f32> {
  %t = tg.constant dense<-2.0> : tensor<f32>
  %col = tg.slice %boxes {starts = array<i64: 0, 0>, limits = array<i64: 90000, 1>, strides = array<i64: 1, 1>}
      : (tensor<90000x4xf32>) -> tensor<90000x1xf32>
  %live = tg.greater %col, %t : (tensor<90000x1xf32>, tensor<f32>) -> tensor<90000x1xi1>
  %idx, %n = tg.nonzero %live : (tensor<90000x1xi1>) -> (tensor<2x90000xi64>, tensor<i64>)
  %first = tg.slice %idx {starts = array<i64: 0, 0>, limits = array<i64: 1, 90000>, strides = array<i64: 1, 1>}
      : (tensor<2x90000xi64>) -> tensor<1x90000xi64>
  %rows = tg.reshape %first : (tensor<1x90000xi64>) -> tensor<90000x1xi64>
  %ramp = tg.cast %rows : tensor<90000x1xi64> to tensor<90000x1xf32>
  %shifted = tg.add %boxes, %ramp : (tensor<90000x4xf32>, tensor<90000x1xf32>) -> tensor<90000x4xf32>
  %below = tg.less %rows, %n : (tensor<90000x1xi64>, tensor<i64>) -> tensor<90000x1xi1>
  %ninf = tg.constant dense<0xFF800000> : tensor<f32>
  %kept = tg.select %below, %shifted, %ninf : (tensor<90000x1xi1>, tensor<90000x4xf32>, tensor<f32>) -> tensor<90000x4xf32>
  %max = tg.reduce_max %kept {axes = array<i64: 0, 1>, keepdims = false} : (tensor<90000x4xf32>) -> tensor<f32>
  return %max : tensor<f32>
}
