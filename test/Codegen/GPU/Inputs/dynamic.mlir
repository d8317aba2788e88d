// What detectors' post-processing leaves to the GPU targets' generated
// kernels (dynamic-vulkan.test): a top-k whose K is read at run time (by
// several launches of one kernel), a mean over two dimensions that are not
// adjacent (RoiAlign's sampling grid: a parallel loop inside the
// reduction's), and f64 arithmetic (the importer's exact integers).
func.func @main(%x: tensor<37xf32>, %k: tensor<i64>,
                %y: tensor<3x5x2x5x2x1xf32>, %z: tensor<29xf32>)
    -> (tensor<5xf32>, tensor<5xi64>, tensor<i64>, tensor<3x5x5x1xf32>,
        tensor<29xf32>) {
  %v, %i, %n = tg.topk %x, %k {axis = 0 : i64, k = 5 : i64}
      : (tensor<37xf32>, tensor<i64>) -> (tensor<5xf32>, tensor<5xi64>, tensor<i64>)
  %m = tg.reduce_mean %y {axes = array<i64: 2, 4>, keepdims = false}
      : (tensor<3x5x2x5x2x1xf32>) -> tensor<3x5x5x1xf32>
  %d = tg.cast %z : tensor<29xf32> to tensor<29xf64>
  %s = tg.mul %d, %d : (tensor<29xf64>, tensor<29xf64>) -> tensor<29xf64>
  %t = tg.add %s, %d : (tensor<29xf64>, tensor<29xf64>) -> tensor<29xf64>
  %r = tg.cast %t : tensor<29xf64> to tensor<29xf32>
  return %v, %i, %n, %m, %r : tensor<5xf32>, tensor<5xi64>, tensor<i64>, tensor<3x5x5x1xf32>, tensor<29xf32>
}
