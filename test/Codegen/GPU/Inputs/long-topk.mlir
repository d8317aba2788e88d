// A top-k past lavapipe's loop limit as one thread's loops (300 scans of
// 5,003 positions: 1.5 million iterations), what the scf lowering gives
// with --gpu-generic-kernels (selections-vulkan.test's must-fail); the
// selection class sorts it in 3,083 iterations per thread.
func.func @main(%big: tensor<5003xf32>) -> (tensor<300xf32>, tensor<300xi64>) {
  %v, %i, %n = tg.topk %big {axis = 0 : i64, k = 300 : i64}
      : (tensor<5003xf32>) -> (tensor<300xf32>, tensor<300xi64>, tensor<i64>)
  return %v, %i : tensor<300xf32>, tensor<300xi64>
}
