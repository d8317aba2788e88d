// Top-k lines past one sort's loop budget (chunked-topk-vulkan.test), which
// the selection class cuts into chunks, each sorted by a workgroup, and
// then sorts the chunks' candidates (RetinaNet's top-1000 of the 209,664
// scores of its finest level is one): a top-37 of 70,001 with a run-time
// valid length (a nonzero count, as RetinaNet's), the 300 smallest of
// 66,001 on each of 2 x 3 lines along the last axis, a top-5 of 70,001
// equal values (signed zeros: the lowest positions, across chunks), and a
// top-5 of 70,001 with nothing valid (a count of 0: zeros).
func.func @main(%x: tensor<70001xf32>, %y: tensor<2x3x66001xf32>)
    -> (tensor<37xf32>, tensor<37xi64>, tensor<i64>, tensor<2x3x300xf32>,
        tensor<2x3x300xi64>, tensor<5xf32>, tensor<5xi64>, tensor<5xf32>,
        tensor<5xi64>, tensor<i64>) {
  %zero = tg.constant dense<0.0> : tensor<f32>
  %pos = tg.greater %x, %zero : (tensor<70001xf32>, tensor<f32>) -> tensor<70001xi1>
  %nz, %n = tg.nonzero %pos : (tensor<70001xi1>) -> (tensor<1x70001xi64>, tensor<i64>)
  %v0, %i0, %c0 = tg.topk %x, %n {axis = 0 : i64, k = 37 : i64}
      : (tensor<70001xf32>, tensor<i64>) -> (tensor<37xf32>, tensor<37xi64>, tensor<i64>)
  %v1, %i1, %c1 = tg.topk %y {axis = 2 : i64, k = 300 : i64, largest = false}
      : (tensor<2x3x66001xf32>) -> (tensor<2x3x300xf32>, tensor<2x3x300xi64>, tensor<i64>)
  %z = tg.mul %x, %zero : (tensor<70001xf32>, tensor<f32>) -> tensor<70001xf32>
  %v2, %i2, %c2 = tg.topk %z {axis = 0 : i64, k = 5 : i64}
      : (tensor<70001xf32>) -> (tensor<5xf32>, tensor<5xi64>, tensor<i64>)
  %one = tg.constant dense<1.0> : tensor<f32>
  %never = tg.greater %z, %one : (tensor<70001xf32>, tensor<f32>) -> tensor<70001xi1>
  %nz3, %n3 = tg.nonzero %never : (tensor<70001xi1>) -> (tensor<1x70001xi64>, tensor<i64>)
  %v3, %i3, %c3 = tg.topk %x, %n3 {axis = 0 : i64, k = 5 : i64}
      : (tensor<70001xf32>, tensor<i64>) -> (tensor<5xf32>, tensor<5xi64>, tensor<i64>)
  return %v0, %i0, %c0, %v1, %i1, %v2, %i2, %v3, %i3, %c3
      : tensor<37xf32>, tensor<37xi64>, tensor<i64>, tensor<2x3x300xf32>,
        tensor<2x3x300xi64>, tensor<5xf32>, tensor<5xi64>, tensor<5xf32>,
        tensor<5xi64>, tensor<i64>
}
