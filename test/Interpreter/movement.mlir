// Numeric results of tg.constant and the data-movement ops (transpose,
// reshape, concat, split, slice, pad, enlarge, broadcast_to, gather) on the
// reference interpreter, for float and integer element types.
//
// RUN: loom-run %s --entry constants --print-values 64 | FileCheck %s --check-prefix=CONST
// RUN: loom-run %s --entry transpose_reshape --print-values 64 | FileCheck %s --check-prefix=PERM
// RUN: loom-run %s --entry concat_split --print-values 64 | FileCheck %s --check-prefix=CAT
// RUN: loom-run %s --entry slice --print-values 64 | FileCheck %s --check-prefix=SLICE
// RUN: loom-run %s --entry pad_enlarge --print-values 64 | FileCheck %s --check-prefix=PAD
// RUN: loom-run %s --entry broadcast --print-values 64 | FileCheck %s --check-prefix=BCAST
// RUN: loom-run %s --entry gather --print-values 64 | FileCheck %s --check-prefix=GATHER
// Data movement is the same in every domain (indices included).
// RUN: loom-run %s --entry gather --print-values 64 --domain modp | FileCheck %s --check-prefix=GATHER
// RUN: loom-run %s --entry slice --print-values 64 --domain modp | FileCheck %s --check-prefix=SLICE
// RUN: loom-run %s --entry concat_split --print-values 64 --domain f64 | FileCheck %s --check-prefix=CAT

// CONST-LABEL: @constants
// CONST: f32: tensor<2x2xf32>  mean 0.625  min -1.5  max 3
// CONST-NEXT: values: 1 -1.5 0 3{{$}}
// CONST: splat: tensor<2x3xf32>  mean 0.25  min 0.25  max 0.25
// CONST-NEXT: values: 0.25 0.25 0.25 0.25 0.25 0.25{{$}}
// The attribute holds f16 values: 0.1 is stored as 0.0999756.
// CONST: f16: tensor<2xf16>
// CONST-NEXT: values: 0.0999756 -65504{{$}}
// CONST: bf16: tensor<1xbf16>
// CONST-NEXT: values: 3.14062{{$}}
// CONST: f64: tensor<1xf64>
// CONST-NEXT: values: 0.1{{$}}
// CONST: i64: tensor<3xi64>
// CONST-NEXT: values: -3 0 100000{{$}}
// CONST: i32: tensor<2xi32>
// CONST-NEXT: values: 65535 -40000{{$}}
// CONST: i1: tensor<4xi1>
// CONST-NEXT: values: 1 0 0 1{{$}}
// CONST: scalar: tensor<f32>  mean 7  min 7  max 7
// CONST-NEXT: values: 7{{$}}
// CONST: empty: tensor<0x3xf32>{{$}}
// CONST-NEXT: values:{{$}}
func.func @constants() -> (tensor<2x2xf32> {tg.name = "f32"}, tensor<2x3xf32> {tg.name = "splat"},
                           tensor<2xf16> {tg.name = "f16"}, tensor<1xbf16> {tg.name = "bf16"},
                           tensor<1xf64> {tg.name = "f64"}, tensor<3xi64> {tg.name = "i64"},
                           tensor<2xi32> {tg.name = "i32"}, tensor<4xi1> {tg.name = "i1"},
                           tensor<f32> {tg.name = "scalar"}, tensor<0x3xf32> {tg.name = "empty"}) {
  %0 = tg.constant dense<[[1.0, -1.5], [0.0, 3.0]]> : tensor<2x2xf32>
  %1 = tg.constant dense<0.25> : tensor<2x3xf32>
  %2 = tg.constant dense<[0.1, -65504.0]> : tensor<2xf16>
  %3 = tg.constant dense<3.14159> : tensor<1xbf16>
  %4 = tg.constant dense<0.1> : tensor<1xf64>
  %5 = tg.constant dense<[-3, 0, 100000]> : tensor<3xi64>
  %6 = tg.constant dense<[65535, -40000]> : tensor<2xi32>
  %7 = tg.constant dense<[true, false, false, true]> : tensor<4xi1>
  %8 = tg.constant dense<7.0> : tensor<f32>
  %9 = tg.constant dense<> : tensor<0x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9
      : tensor<2x2xf32>, tensor<2x3xf32>, tensor<2xf16>, tensor<1xbf16>, tensor<1xf64>,
        tensor<3xi64>, tensor<2xi32>, tensor<4xi1>, tensor<f32>, tensor<0x3xf32>
}

// PERM-LABEL: @transpose_reshape
// PERM: t2: tensor<3x2xf32>
// PERM-NEXT: values: 1 4 2 5 3 6{{$}}
// out[i][j][k] = in[j][k][i] for in = 0..11 as 2x2x3.
// PERM: t3: tensor<3x2x2xi64>
// PERM-NEXT: values: 0 3 6 9 1 4 7 10 2 5 8 11{{$}}
// PERM: t3_back: tensor<2x2x3xi64>
// PERM-NEXT: values: 0 1 2 3 4 5 6 7 8 9 10 11{{$}}
// PERM: reshape: tensor<3x2xf32>
// PERM-NEXT: values: 1 2 3 4 5 6{{$}}
// PERM: reshape_t: tensor<1x6x1xf32>
// PERM-NEXT: values: 1 4 2 5 3 6{{$}}
// The attention pattern: perm [0, 2, 1, 3] of 0..23 as 2x3x2x2.
// PERM: t4: tensor<2x2x3x2xf32>
// PERM-NEXT: values: 0 1 4 5 8 9 2 3 6 7 10 11 12 13 16 17 20 21 14 15 18 19 22 23{{$}}
func.func @transpose_reshape() -> (tensor<3x2xf32> {tg.name = "t2"}, tensor<3x2x2xi64> {tg.name = "t3"},
                                   tensor<2x2x3xi64> {tg.name = "t3_back"}, tensor<3x2xf32> {tg.name = "reshape"},
                                   tensor<1x6x1xf32> {tg.name = "reshape_t"}, tensor<2x2x3x2xf32> {tg.name = "t4"}) {
  %a = tg.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = tg.transpose %a {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %b = tg.constant dense<[[[0, 1, 2], [3, 4, 5]], [[6, 7, 8], [9, 10, 11]]]> : tensor<2x2x3xi64>
  %1 = tg.transpose %b {perm = array<i64: 2, 0, 1>} : (tensor<2x2x3xi64>) -> tensor<3x2x2xi64>
  %2 = tg.transpose %1 {perm = array<i64: 1, 2, 0>} : (tensor<3x2x2xi64>) -> tensor<2x2x3xi64>
  %3 = tg.reshape %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %4 = tg.reshape %0 : (tensor<3x2xf32>) -> tensor<1x6x1xf32>
  %c = tg.constant dense<[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]], [[8.0, 9.0], [10.0, 11.0]]],
                          [[[12.0, 13.0], [14.0, 15.0]], [[16.0, 17.0], [18.0, 19.0]], [[20.0, 21.0], [22.0, 23.0]]]]> : tensor<2x3x2x2xf32>
  %5 = tg.transpose %c {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x3x2x2xf32>) -> tensor<2x2x3x2xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3x2xf32>, tensor<3x2x2xi64>, tensor<2x2x3xi64>, tensor<3x2xf32>, tensor<1x6x1xf32>, tensor<2x2x3x2xf32>
}

// CAT-LABEL: @concat_split
// CAT: cat1: tensor<2x3xf32>
// CAT-NEXT: values: 1 3 4 2 5 6{{$}}
// CAT: cat_neg: tensor<2x3xf32>
// CAT-NEXT: values: 3 4 1 5 6 2{{$}}
// CAT: cat0: tensor<5x1xf32>
// CAT-NEXT: values: 1 2 1 2 7{{$}}
// CAT: cat_i1: tensor<2x2xi1>
// CAT-NEXT: values: 1 0 0 1{{$}}
// x = 0..9 as 2x5, split along axis 1 into 2 + 3.
// CAT: split_a: tensor<2x2xf32>
// CAT-NEXT: values: 0 1 5 6{{$}}
// CAT: split_b: tensor<2x3xf32>
// CAT-NEXT: values: 2 3 4 7 8 9{{$}}
// Along axis -2 (rows) into 1 + 1.
// CAT: split_r0: tensor<1x5xf32>
// CAT-NEXT: values: 0 1 2 3 4{{$}}
// CAT: split_r1: tensor<1x5xf32>
// CAT-NEXT: values: 5 6 7 8 9{{$}}
func.func @concat_split() -> (tensor<2x3xf32> {tg.name = "cat1"}, tensor<2x3xf32> {tg.name = "cat_neg"},
                              tensor<5x1xf32> {tg.name = "cat0"}, tensor<2x2xi1> {tg.name = "cat_i1"},
                              tensor<2x2xf32> {tg.name = "split_a"}, tensor<2x3xf32> {tg.name = "split_b"},
                              tensor<1x5xf32> {tg.name = "split_r0"}, tensor<1x5xf32> {tg.name = "split_r1"}) {
  %a = tg.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %b = tg.constant dense<[[3.0, 4.0], [5.0, 6.0]]> : tensor<2x2xf32>
  %0 = tg.concat %a, %b {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>
  %1 = tg.concat %b, %a {axis = -1 : i64} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %c = tg.constant dense<[[7.0]]> : tensor<1x1xf32>
  %2 = tg.concat %a, %a, %c {axis = 0 : i64} : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<1x1xf32>) -> tensor<5x1xf32>
  %t = tg.constant dense<[[true], [false]]> : tensor<2x1xi1>
  %f = tg.constant dense<[[false], [true]]> : tensor<2x1xi1>
  %3 = tg.concat %t, %f {axis = 1 : i64} : (tensor<2x1xi1>, tensor<2x1xi1>) -> tensor<2x2xi1>
  %x = tg.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0]]> : tensor<2x5xf32>
  %4:2 = tg.split %x {axis = 1 : i64, sizes = array<i64: 2, 3>} : (tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
  %5:2 = tg.split %x {axis = -2 : i64, sizes = array<i64: 1, 1>} : (tensor<2x5xf32>) -> (tensor<1x5xf32>, tensor<1x5xf32>)
  return %0, %1, %2, %3, %4#0, %4#1, %5#0, %5#1
      : tensor<2x3xf32>, tensor<2x3xf32>, tensor<5x1xf32>, tensor<2x2xi1>, tensor<2x2xf32>, tensor<2x3xf32>,
        tensor<1x5xf32>, tensor<1x5xf32>
}

// x = 0..31 as 4x8.
// SLICE-LABEL: @slice
// Rows 0, 2 and columns 1, 3, 5 (ceil((7 - 1) / 2) = 3).
// SLICE: strided: tensor<2x3xf32>
// SLICE-NEXT: values: 1 3 5 17 19 21{{$}}
// SLICE: unit: tensor<2x2xf32>
// SLICE-NEXT: values: 10 11 18 19{{$}}
// Columns 1, 4, 7: the stride does not divide the extent.
// SLICE: ragged: tensor<1x3xf32>
// SLICE-NEXT: values: 25 28 31{{$}}
// SLICE: whole: tensor<4x1xi32>
// SLICE-NEXT: values: 0 8 16 24{{$}}
func.func @slice() -> (tensor<2x3xf32> {tg.name = "strided"}, tensor<2x2xf32> {tg.name = "unit"},
                       tensor<1x3xf32> {tg.name = "ragged"}, tensor<4x1xi32> {tg.name = "whole"}) {
  %x = tg.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
                          [16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0], [24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]]> : tensor<4x8xf32>
  %0 = tg.slice %x {starts = array<i64: 0, 1>, limits = array<i64: 4, 7>, strides = array<i64: 2, 2>} : (tensor<4x8xf32>) -> tensor<2x3xf32>
  %1 = tg.slice %x {starts = array<i64: 1, 2>, limits = array<i64: 3, 4>} : (tensor<4x8xf32>) -> tensor<2x2xf32>
  %2 = tg.slice %x {starts = array<i64: 3, 1>, limits = array<i64: 4, 8>, strides = array<i64: 1, 3>} : (tensor<4x8xf32>) -> tensor<1x3xf32>
  %xi = tg.cast %x : tensor<4x8xf32> to tensor<4x8xi32>
  %3 = tg.slice %xi {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, strides = array<i64: 1, 8>} : (tensor<4x8xi32>) -> tensor<4x1xi32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x2xf32>, tensor<1x3xf32>, tensor<4x1xi32>
}

// PAD-LABEL: @pad_enlarge
// PAD: pad: tensor<3x4xf32>
// PAD-NEXT: values: -1 -1 -1 -1 1 2 -1 -1 3 4 -1 -1{{$}}
// PAD: pad_default: tensor<4x2xf32>
// PAD-NEXT: values: 0 0 1 2 3 4 0 0{{$}}
// PAD: pad_i64: tensor<1x4xi64>
// PAD-NEXT: values: 7 5 6 7{{$}}
// PAD: enlarge: tensor<1x1x3x3xf32>
// PAD-NEXT: values: 0 0 0 0 5 0 0 0 0{{$}}
// [2, 1, 1, 1] -> [2, 1, 1, 3]: only the width grows.
// PAD: enlarge_w: tensor<2x1x1x3xf32>
// PAD-NEXT: values: 0 1 0 0 2 0{{$}}
// PAD: enlarge_5: tensor<1x1x3x5xf32>
// PAD-NEXT: values: 0 1 2 3 0 0 4 5 6 0 0 7 8 9 0{{$}}
func.func @pad_enlarge() -> (tensor<3x4xf32> {tg.name = "pad"}, tensor<4x2xf32> {tg.name = "pad_default"},
                             tensor<1x4xi64> {tg.name = "pad_i64"}, tensor<1x1x3x3xf32> {tg.name = "enlarge"},
                             tensor<2x1x1x3xf32> {tg.name = "enlarge_w"}, tensor<1x1x3x5xf32> {tg.name = "enlarge_5"}) {
  %x = tg.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %0 = tg.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = -1.0 : f64} : (tensor<2x2xf32>) -> tensor<3x4xf32>
  %1 = tg.pad %x {low = array<i64: 1, 0>, high = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<4x2xf32>
  %i = tg.constant dense<[[5, 6]]> : tensor<1x2xi64>
  %2 = tg.pad %i {low = array<i64: 0, 1>, high = array<i64: 0, 1>, value = 7.0 : f64} : (tensor<1x2xi64>) -> tensor<1x4xi64>
  %w = tg.constant dense<5.0> : tensor<1x1x1x1xf32>
  %3 = tg.enlarge %w {kernel_size = array<i64: 3, 3>} : (tensor<1x1x1x1xf32>) -> tensor<1x1x3x3xf32>
  %v = tg.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %4 = tg.enlarge %v {kernel_size = array<i64: 1, 3>} : (tensor<2x1x1x1xf32>) -> tensor<2x1x1x3xf32>
  %k = tg.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %5 = tg.enlarge %k {kernel_size = array<i64: 3, 5>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x5xf32>
  return %0, %1, %2, %3, %4, %5
      : tensor<3x4xf32>, tensor<4x2xf32>, tensor<1x4xi64>, tensor<1x1x3x3xf32>, tensor<2x1x1x3xf32>, tensor<1x1x3x5xf32>
}

// BCAST-LABEL: @broadcast
// BCAST: col: tensor<2x3x2xf32>
// BCAST-NEXT: values: 1 1 2 2 3 3 1 1 2 2 3 3{{$}}
// BCAST: row: tensor<2x3xi64>
// BCAST-NEXT: values: 4 5 6 4 5 6{{$}}
// BCAST: scalar: tensor<2x2xf32>
// BCAST-NEXT: values: -2 -2 -2 -2{{$}}
// BCAST: same: tensor<2x1xf32>
// BCAST-NEXT: values: 8 9{{$}}
func.func @broadcast() -> (tensor<2x3x2xf32> {tg.name = "col"}, tensor<2x3xi64> {tg.name = "row"},
                           tensor<2x2xf32> {tg.name = "scalar"}, tensor<2x1xf32> {tg.name = "same"}) {
  %c = tg.constant dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>
  %0 = tg.broadcast_to %c : (tensor<3x1xf32>) -> tensor<2x3x2xf32>
  %r = tg.constant dense<[4, 5, 6]> : tensor<3xi64>
  %1 = tg.broadcast_to %r : (tensor<3xi64>) -> tensor<2x3xi64>
  %s = tg.constant dense<-2.0> : tensor<f32>
  %2 = tg.broadcast_to %s : (tensor<f32>) -> tensor<2x2xf32>
  %m = tg.constant dense<[[8.0], [9.0]]> : tensor<2x1xf32>
  %3 = tg.broadcast_to %m : (tensor<2x1xf32>) -> tensor<2x1xf32>
  return %0, %1, %2, %3 : tensor<2x3x2xf32>, tensor<2x3xi64>, tensor<2x2xf32>, tensor<2x1xf32>
}

// data = [[1,2],[3,4],[5,6]].
// GATHER-LABEL: @gather
// Indices [2, -1, 0] along axis 0: -1 is the last row.
// GATHER: rows: tensor<3x2xf32>
// GATHER-NEXT: values: 5 6 5 6 1 2{{$}}
// Indices [[1], [-2]] (i32) along axis 1: shape [3] + [2, 1] + [].
// GATHER: cols: tensor<3x2x1xf32>
// GATHER-NEXT: values: 2 1 4 3 6 5{{$}}
// Negative axis -2 (= 0) and a rank-0 index: the row dimension disappears.
// GATHER: scalar_index: tensor<2xf32>
// GATHER-NEXT: values: 3 4{{$}}
// Integer data.
// GATHER: ids: tensor<2x2xi64>
// GATHER-NEXT: values: 30 10 10 30{{$}}
func.func @gather() -> (tensor<3x2xf32> {tg.name = "rows"}, tensor<3x2x1xf32> {tg.name = "cols"},
                        tensor<2xf32> {tg.name = "scalar_index"}, tensor<2x2xi64> {tg.name = "ids"}) {
  %data = tg.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %i0 = tg.constant dense<[2, -1, 0]> : tensor<3xi64>
  %0 = tg.gather %data, %i0 {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  %i1 = tg.constant dense<[[1], [-2]]> : tensor<2x1xi32>
  %1 = tg.gather %data, %i1 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<2x1xi32>) -> tensor<3x2x1xf32>
  %i2 = tg.constant dense<1> : tensor<i64>
  %2 = tg.gather %data, %i2 {axis = -2 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<2xf32>
  %table = tg.constant dense<[10, 20, 30]> : tensor<3xi64>
  %ids = tg.constant dense<[[2, 0], [-3, -1]]> : tensor<2x2xi32>
  %3 = tg.gather %table, %ids : (tensor<3xi64>, tensor<2x2xi32>) -> tensor<2x2xi64>
  return %0, %1, %2, %3 : tensor<3x2xf32>, tensor<3x2x1xf32>, tensor<2xf32>, tensor<2x2xi64>
}
