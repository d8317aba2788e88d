// Reductions whose reduction loops are not the innermost ones, which only
// loom-gpu-parallel-first gives a thread per output element
// (parallel-first-ptxas.test): Faster R-CNN's RoIAlign mean over its 2 x 2
// samples per bin ([rois, 7, 2, 7, 2, channels] over dims 2 and 4: without
// the interchange 1,050 threads of 7,168 sequential additions each, which
// spilled), a sum over the outermost and a middle dimension, and a maximum
// over a middle dimension of prime extents.
func.func @main(%roi: tensor<150x7x2x7x2x256xf32>, %a: tensor<6x5x7x3xf32>,
                %b: tensor<13x9x17xf32>)
    -> (tensor<150x7x7x256xf32>, tensor<5x3xf32>, tensor<13x17xf32>) {
  %m = tg.reduce_mean %roi {axes = array<i64: 2, 4>, keepdims = false}
      : (tensor<150x7x2x7x2x256xf32>) -> tensor<150x7x7x256xf32>
  %s = tg.reduce_sum %a {axes = array<i64: 0, 2>, keepdims = false}
      : (tensor<6x5x7x3xf32>) -> tensor<5x3xf32>
  %x = tg.reduce_max %b {axes = array<i64: 1>, keepdims = false}
      : (tensor<13x9x17xf32>) -> tensor<13x17xf32>
  return %m, %s, %x : tensor<150x7x7x256xf32>, tensor<5x3xf32>, tensor<13x17xf32>
}
