// The inputs of dynamic-steps.mlir (test/Runtime/dynamic-steps.test),
// written by loom-run --outputs. NaN is 0x7FC00000; len, a run-time
// length, is 4.
func.func @main() -> (tensor<i64> {tg.name = "len"}, tensor<2x6xf32> {tg.name = "x"}, tensor<6x2xf32> {tg.name = "y"}, tensor<6xf32> {tg.name = "z"}, tensor<4xi32> {tg.name = "w"}, tensor<2x3xf32> {tg.name = "a"}, tensor<3x2xi64> {tg.name = "e"}, tensor<5xi1> {tg.name = "m"}, tensor<2x5x4xf32> {tg.name = "boxes"}, tensor<2x2x5xf32> {tg.name = "scores"}, tensor<1x6x4xf32> {tg.name = "cb"}, tensor<1x1x6xf32> {tg.name = "cs"}) {
  %len = tg.constant dense<4> : tensor<i64>
  %x = tg.constant dense<[[1.0, 3.0, 3.0, 0x7FC00000, -0.0, 3.0],
                          [0.0, -0.0, 2.0, 2.0, 0x7FC00000, 0x7FC00000]]> : tensor<2x6xf32>
  %y = tg.constant dense<[[5.0, 1.0], [0x7FC00000, 1.0], [2.0, 1.0],
                          [2.0, -1.0], [-3.0, 0x7FC00000], [0.0, 1.0]]> : tensor<6x2xf32>
  %z = tg.constant dense<[4.0, 9.0, 4.0, 7.0, 8.0, 100.0]> : tensor<6xf32>
  %w = tg.constant dense<[3, -7, 3, 12]> : tensor<4xi32>
  %a = tg.constant dense<[[0.0, 0x7FC00000, -0.0], [2.0, 0.0, -1.0]]> : tensor<2x3xf32>
  %e = tg.constant dense<0> : tensor<3x2xi64>
  %m = tg.constant dense<[false, true, true, false, true]> : tensor<5xi1>
  %boxes = tg.constant dense<[[[0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 3.0, 3.0], [0.0, 0.0, 0.0, 0.0],
                               [0.05, 0.05, 1.0, 1.0], [1.0, 1.0, 0.5, 0.0]],
                              [[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [5.0, 5.0, 6.0, 6.0],
                               [5.0, 5.0, 6.0, 6.0], [9.0, 9.0, 10.0, 10.0]]]> : tensor<2x5x4xf32>
  %scores = tg.constant dense<[[[0.9, 0.8, 0.95, 0.85, 0.7], [0.1, 0.6, 0.3, 0.6, 0.6]],
                               [[0.5, 0.5, 0x7FC00000, 0.4, 0.2], [0.3, 0.2, 0.1, 0.05, 0.9]]]> : tensor<2x2x5xf32>
  %cb = tg.constant dense<[[[0.5, 0.5, 1.0, 1.0], [0.5, 0.6, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5],
                            [3.0, 3.0, 1.0, 1.0], [0.5, 0.5, 1.0, 1.0], [7.0, 7.0, 1.0, 1.0]]]> : tensor<1x6x4xf32>
  %cs = tg.constant dense<[[[0.2, 0.9, 0.3, 0.4, 0.95, 0.99]]]> : tensor<1x1x6xf32>
  return %len, %x, %y, %z, %w, %a, %e, %m, %boxes, %scores, %cb, %cs : tensor<i64>, tensor<2x6xf32>, tensor<6x2xf32>, tensor<6xf32>, tensor<4xi32>, tensor<2x3xf32>, tensor<3x2xi64>, tensor<5xi1>, tensor<2x5x4xf32>, tensor<2x2x5xf32>, tensor<1x6x4xf32>, tensor<1x1x6xf32>
}
