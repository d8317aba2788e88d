// Nearest-neighbour resizes, whose lowering reads constant index tables:
// two of the same 5 -> 10 table in two kernels (the tables merged into one
// module), one 10 -> 20 and a 5 -> 20 one with tables of the same length
// but other values, a convolution between them.
module {
  func.func @main(%x: tensor<1x3x5x5xf32>, %w: tensor<3x3x3x3xf32>) -> (tensor<1x3x20x20xf32>, tensor<1x3x20x20xf32>) {
    %a = tg.resize %x {coordinate_transformation_mode = #tg<coordinate_mode asymmetric>, nearest_mode = #tg<nearest_mode floor>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 10, 10>} : (tensor<1x3x5x5xf32>) -> tensor<1x3x10x10xf32>
    %c = tg.conv %a, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x10x10xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x10x10xf32>
    %b = tg.resize %c {coordinate_transformation_mode = #tg<coordinate_mode asymmetric>, nearest_mode = #tg<nearest_mode floor>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 20, 20>} : (tensor<1x3x10x10xf32>) -> tensor<1x3x20x20xf32>
    %d = tg.resize %x {coordinate_transformation_mode = #tg<coordinate_mode asymmetric>, nearest_mode = #tg<nearest_mode floor>, scales = array<f64: 1.0, 1.0, 4.0, 4.0>, sizes = array<i64: 1, 3, 20, 20>} : (tensor<1x3x5x5xf32>) -> tensor<1x3x20x20xf32>
    %e = tg.conv %d, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x20x20xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x20x20xf32>
    %f = tg.resize %x {coordinate_transformation_mode = #tg<coordinate_mode asymmetric>, nearest_mode = #tg<nearest_mode floor>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 10, 10>} : (tensor<1x3x5x5xf32>) -> tensor<1x3x10x10xf32>
    %g = tg.conv %f, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x10x10xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x10x10xf32>
    %h = tg.resize %g {coordinate_transformation_mode = #tg<coordinate_mode asymmetric>, nearest_mode = #tg<nearest_mode floor>, scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 20, 20>} : (tensor<1x3x10x10xf32>) -> tensor<1x3x20x20xf32>
    %s = tg.add %b, %h : (tensor<1x3x20x20xf32>, tensor<1x3x20x20xf32>) -> tensor<1x3x20x20xf32>
    return %s, %e : tensor<1x3x20x20xf32>, tensor<1x3x20x20xf32>
  }
}
