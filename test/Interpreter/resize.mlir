// Numeric results of tg.resize on the reference interpreter. The expected
// values are those of the ONNX backend tests of Resize (computed by ONNX's
// reference implementation), on the same inputs.
//
// RUN: loom-run %s --entry nearest --print-values 64 | FileCheck %s --check-prefix=NEAREST
// RUN: loom-run %s --entry linear --print-values 64 | FileCheck %s --check-prefix=LINEAR
// RUN: loom-run %s --entry cubic --print-values 64 | FileCheck %s --check-prefix=CUBIC
// Nearest resampling only moves elements: the same in every domain.
// RUN: loom-run %s --entry nearest --print-values 64 --domain modp | FileCheck %s --check-prefix=NEAREST
// RUN: loom-run %s --entry linear --print-values 64 --domain f64 | FileCheck %s --check-prefix=LINEAR

// test_resize_upsample_scales_nearest: half_pixel, round_prefer_floor.
// NEAREST: up: tensor<1x1x4x6xf32>
// NEAREST-NEXT: values: 1 1 1 2 2 2 1 1 1 2 2 2 3 3 3 4 4 4 3 3 3 4 4 4{{$}}
// test_resize_downsample_scales_nearest: scales 0.6 give a 1x2 output.
// NEAREST: down: tensor<1x1x1x2xf32>
// NEAREST-NEXT: values: 1 3{{$}}
// asymmetric + floor (as ONNX Upsample).
// NEAREST: floor: tensor<1x1x2x4xf32>
// NEAREST-NEXT: values: 1 1 2 2 3 3 4 4{{$}}
// round_prefer_ceil (scale 2: coordinates 0, 0.5, 1, ...) and ceil (scale
// 1.75: 0, 0.57, 1.14, 1.71, 2.29, 2.86, 3.43) on a 1-D input of 4
// resampled to 7, asymmetric; the last index is clamped to the edge.
// NEAREST: prefer_ceil: tensor<7xf32>
// NEAREST-NEXT: values: 1 2 2 3 3 4 4{{$}}
// NEAREST: ceil: tensor<7xf32>
// NEAREST-NEXT: values: 1 2 3 3 4 4 4{{$}}
func.func @nearest() -> (tensor<1x1x4x6xf32> {tg.name = "up"}, tensor<1x1x1x2xf32> {tg.name = "down"},
                         tensor<1x1x2x4xf32> {tg.name = "floor"}, tensor<7xf32> {tg.name = "prefer_ceil"},
                         tensor<7xf32> {tg.name = "ceil"}) {
  %x = tg.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %up = tg.resize %x {sizes = array<i64: 1, 1, 4, 6>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x6xf32>
  %d = tg.constant dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]]> : tensor<1x1x2x4xf32>
  %down = tg.resize %d {sizes = array<i64: 1, 1, 1, 2>, scales = array<f64: 1.0, 1.0, 0.6, 0.6>}
      : (tensor<1x1x2x4xf32>) -> tensor<1x1x1x2xf32>
  %floor = tg.resize %x {sizes = array<i64: 1, 1, 2, 4>, coordinate_transformation_mode = #tg<coordinate_mode asymmetric>,
                         nearest_mode = #tg<nearest_mode floor>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x4xf32>
  %v = tg.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %pc = tg.resize %v {sizes = array<i64: 7>, scales = array<f64: 2.0>, coordinate_transformation_mode = #tg<coordinate_mode asymmetric>,
                      nearest_mode = #tg<nearest_mode round_prefer_ceil>} : (tensor<4xf32>) -> tensor<7xf32>
  %c = tg.resize %v {sizes = array<i64: 7>, scales = array<f64: 1.75>, coordinate_transformation_mode = #tg<coordinate_mode asymmetric>,
                     nearest_mode = #tg<nearest_mode ceil>} : (tensor<4xf32>) -> tensor<7xf32>
  return %up, %down, %floor, %pc, %c : tensor<1x1x4x6xf32>, tensor<1x1x1x2xf32>, tensor<1x1x2x4xf32>, tensor<7xf32>, tensor<7xf32>
}

// test_resize_upsample_scales_linear (half_pixel).
// LINEAR: half_pixel: tensor<1x1x4x4xf32>
// LINEAR-NEXT: values: 1 1.25 1.75 2 1.5 1.75 2.25 2.5 2.5 2.75 3.25 3.5 3 3.25 3.75 4{{$}}
// test_resize_upsample_scales_linear_align_corners.
// LINEAR: align_corners: tensor<1x1x4x4xf32>
// LINEAR-NEXT: values: 1 1.33333 1.66667 2 1.66667 2 2.33333 2.66667 2.33333 2.66667 3 3.33333 3 3.33333 3.66667 4{{$}}
// test_resize_downsample_scales_linear: half_pixel, scales 0.6.
// LINEAR: down: tensor<1x1x1x2xf32>
// LINEAR-NEXT: values: 2.66667 4.33333{{$}}
// pytorch_half_pixel to a single element reads coordinate -0.5, i.e. the
// first element (half_pixel would interpolate the middle).
// LINEAR: pytorch: tensor<1xf32>
// LINEAR-NEXT: values: 1{{$}}
// LINEAR: half_pixel_1: tensor<1xf32>
// LINEAR-NEXT: values: 2.5{{$}}
func.func @linear() -> (tensor<1x1x4x4xf32> {tg.name = "half_pixel"}, tensor<1x1x4x4xf32> {tg.name = "align_corners"},
                        tensor<1x1x1x2xf32> {tg.name = "down"}, tensor<1xf32> {tg.name = "pytorch"},
                        tensor<1xf32> {tg.name = "half_pixel_1"}) {
  %x = tg.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %h = tg.resize %x {sizes = array<i64: 1, 1, 4, 4>, mode = #tg<resize_mode linear>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  %a = tg.resize %x {sizes = array<i64: 1, 1, 4, 4>, mode = #tg<resize_mode linear>, coordinate_transformation_mode = #tg<coordinate_mode align_corners>}
      : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  %d = tg.constant dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]]> : tensor<1x1x2x4xf32>
  %down = tg.resize %d {sizes = array<i64: 1, 1, 1, 2>, scales = array<f64: 1.0, 1.0, 0.6, 0.6>, mode = #tg<resize_mode linear>}
      : (tensor<1x1x2x4xf32>) -> tensor<1x1x1x2xf32>
  %v = tg.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %p = tg.resize %v {sizes = array<i64: 1>, mode = #tg<resize_mode linear>, coordinate_transformation_mode = #tg<coordinate_mode pytorch_half_pixel>}
      : (tensor<4xf32>) -> tensor<1xf32>
  %q = tg.resize %v {sizes = array<i64: 1>, mode = #tg<resize_mode linear>} : (tensor<4xf32>) -> tensor<1xf32>
  return %h, %a, %down, %p, %q : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x1x2xf32>, tensor<1xf32>, tensor<1xf32>
}

// test_resize_upsample_scales_cubic: the first two output rows of the 4x4
// input 1..16 resized by 2 (A = -0.75, half_pixel); the weights are dyadic,
// so the values are exact.
// CUBIC: up: tensor<1x1x8x8xf32>
// CUBIC-NEXT: values: 0.472656 0.769531 1.24609 1.875 2.28125 2.91016 3.38672 3.68359 1.66016 1.95703 2.43359 3.0625 3.46875 4.09766 4.57422 4.87109 {{.*}}
// A = -0.5 with exclude_outside, first row. Element 0 reads coordinate
// -0.25 in both dimensions: taps -2..1 with weights (-0.0234, 0.2266, 0.8672,
// -0.0703); the two outside are dropped and the others renormalised to
// (1.0882, -0.0882), so it is 1.0882 * (1.0882 * 1 - 0.0882 * 2)
// - 0.0882 * (1.0882 * 5 - 0.0882 * 6) = 0.558823.
// CUBIC: exclude: tensor<1x1x8x8xf32>
// CUBIC-NEXT: values: 0.558823 0.814942 1.35698 1.89706 2.39706 2.93713 3.47918 3.73529 {{.*}}
func.func @cubic() -> (tensor<1x1x8x8xf32> {tg.name = "up"}, tensor<1x1x8x8xf32> {tg.name = "exclude"}) {
  %x = tg.constant dense<[[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0],
                            [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]]]> : tensor<1x1x4x4xf32>
  %up = tg.resize %x {sizes = array<i64: 1, 1, 8, 8>, mode = #tg<resize_mode cubic>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x8x8xf32>
  %e = tg.resize %x {sizes = array<i64: 1, 1, 8, 8>, mode = #tg<resize_mode cubic>, cubic_coeff_a = -0.5 : f64, exclude_outside = true}
      : (tensor<1x1x4x4xf32>) -> tensor<1x1x8x8xf32>
  return %up, %e : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
}
