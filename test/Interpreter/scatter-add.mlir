// tg.scatter_add on the reference interpreter: hand values (repeated and
// negative indices accumulate), a middle axis with 2-D indices, the same
// exact values in the three domains, its adjoint identity with tg.gather
// (sum(gather(x, i) * g) == sum(x * scatter_add(g, i))), and an index out
// of range as a located run-time error.
//
// RUN: loom-run %s --entry rows --print-values 64 --domain f32 | FileCheck %s --check-prefix=ROWS
// RUN: loom-run %s --entry rows --print-values 64 --domain f64 | FileCheck %s --check-prefix=ROWS
// RUN: loom-run %s --entry rows --print-values 64 --domain modp | FileCheck %s --check-prefix=ROWS
// RUN: loom-run %s --entry middle --print-values 64 | FileCheck %s --check-prefix=MID
// RUN: loom-run %s --entry adjoint --print-values 64 --seed 3 --domain modp | FileCheck %s --check-prefix=ADJ
// RUN: not loom-run %s --entry out_of_range 2>&1 | FileCheck %s --check-prefix=ERR

// ROWS-LABEL: @rows
// Rows 0 and 2 (index -1) of 3 get updates 0 + 2 and 1 + 3.
// ROWS: y: tensor<3x2xf32>
// ROWS-NEXT: values: 11 22 0 0 33 44{{$}}
func.func @rows() -> (tensor<3x2xf32> {tg.name = "y"}) {
  %u = tg.constant dense<[[1.0, 2.0], [3.0, 4.0], [10.0, 20.0], [30.0, 40.0]]> : tensor<4x2xf32>
  %i = tg.constant dense<[0, -1, 0, 2]> : tensor<4xi64>
  %y = tg.scatter_add %u, %i {dim_size = 3 : i64} : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// MID-LABEL: @middle
// updates [2, (2x2), 1] along axis 1 into 3 positions; indices [[1, 1], [0, -3]].
// MID: y: tensor<2x3x1xf32>
// MID-NEXT: values: 7 3 0 15 11 0{{$}}
func.func @middle() -> (tensor<2x3x1xf32> {tg.name = "y"}) {
  %u = tg.constant dense<[[[[1.0], [2.0]], [[3.0], [4.0]]], [[[5.0], [6.0]], [[7.0], [8.0]]]]> : tensor<2x2x2x1xf32>
  %i = tg.constant dense<[[1, 1], [0, -3]]> : tensor<2x2xi32>
  %y = tg.scatter_add %u, %i {axis = 1 : i64, dim_size = 3 : i64} : (tensor<2x2x2x1xf32>, tensor<2x2xi32>) -> tensor<2x3x1xf32>
  return %y : tensor<2x3x1xf32>
}

// ADJ-LABEL: @adjoint
// Exact in modp arithmetic, on random residues.
// ADJ: d: tensor<f32>
// ADJ-NEXT: values: 0{{$}}
func.func @adjoint(%x: tensor<2x5x3xf32> {tg.name = "x"}, %g: tensor<2x2x2x3xf32> {tg.name = "g"})
    -> (tensor<f32> {tg.name = "d"}) {
  %i = tg.constant dense<[[4, 0], [-1, 2]]> : tensor<2x2xi64>
  %gx = tg.gather %x, %i {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<2x2xi64>) -> tensor<2x2x2x3xf32>
  %p1 = tg.mul %gx, %g : (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x2x3xf32>
  %s1 = tg.reduce_sum %p1 {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x2x2x3xf32>) -> tensor<f32>
  %sg = tg.scatter_add %g, %i {axis = 1 : i64, dim_size = 5 : i64} : (tensor<2x2x2x3xf32>, tensor<2x2xi64>) -> tensor<2x5x3xf32>
  %p2 = tg.mul %x, %sg : (tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  %s2 = tg.reduce_sum %p2 {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x5x3xf32>) -> tensor<f32>
  %d = tg.sub %s1, %s2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %d : tensor<f32>
}

// ERR: scatter-add.mlir:[[@LINE+4]]:8: error: 'tg.scatter_add' op scatter_add index 3 is out of range [-3, 3) of axis 0
func.func @out_of_range() -> tensor<3xf32> {
  %u = tg.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = tg.constant dense<[0, 3]> : tensor<2xi64>
  %y = tg.scatter_add %u, %i {dim_size = 3 : i64} : (tensor<2xf32>, tensor<2xi64>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}
