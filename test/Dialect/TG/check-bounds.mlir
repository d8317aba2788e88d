// RUN: loom-opt %s -split-input-file --tg-check-bounds=print=true -verify-diagnostics
// --tg-check-bounds: the integer range analysis over the ops that compute
// lengths, and every tg.bound checked against its dimension's size. The
// verifier's own rules (a dimension that does not exist, a length that is
// not a tensor<i64>) are in invalid.mlir.

// A valid program, as the importer writes lengths: the counts of the dynamic
// ops, a length given to tg.topk, min(count, 3) as a comparison and a select,
// a sum of two lengths through f64, a tg.if yielding a length, and a count
// summed from a mask.
func.func @valid(%m: tensor<6xi1>, %s: tensor<6xf32>, %c: tensor<i1>)
    -> (tensor<1x6xi64>, tensor<4xf32>, tensor<i64>) {
  %idx, %n = tg.nonzero %m : (tensor<6xi1>) -> (tensor<1x6xi64>, tensor<i64>)
  // expected-remark @+1 {{length in [0, 6] of dimension 1 (size 6)}}
  %b = tg.bound %idx, %n {dim = 1 : i64} : tensor<1x6xi64>, tensor<i64>
  %v, %i, %k = tg.topk %s, %n {axis = 0 : i64, k = 4 : i64, largest = true, sorted = true}
      : (tensor<6xf32>, tensor<i64>) -> (tensor<4xf32>, tensor<4xi64>, tensor<i64>)
  // expected-remark @+1 {{length in [0, 4] of dimension 0 (size 4)}}
  %bv = tg.bound %v, %k {dim = 0 : i64} : tensor<4xf32>, tensor<i64>
  %three = tg.constant dense<3> : tensor<i64>
  %less = tg.less %k, %three : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %min = tg.select %less, %k, %three : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
  %zeros = tg.constant dense<0.0> : tensor<3xf32>
  // expected-remark @+1 {{length in [0, 3] of dimension 0 (size 3)}}
  %bz = tg.bound %zeros, %min {dim = 0 : i64} : tensor<3xf32>, tensor<i64>
  %nf = tg.cast %n : tensor<i64> to tensor<f64>
  %kf = tg.cast %k : tensor<i64> to tensor<f64>
  %sumf = tg.add %nf, %kf : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %sum = tg.cast %sumf : tensor<f64> to tensor<i64>
  %both = tg.concat %s, %v {axis = 0 : i64} : (tensor<6xf32>, tensor<4xf32>) -> tensor<10xf32>
  // expected-remark @+1 {{length in [0, 10] of dimension 0 (size 10)}}
  %bb = tg.bound %both, %sum {dim = 0 : i64} : tensor<10xf32>, tensor<i64>
  %r = tg.if %c : tensor<i1> -> (tensor<i64>) {
    tg.yield %n : tensor<i64>
  } else {
    tg.yield %min : tensor<i64>
  }
  %pad = tg.constant dense<0.0> : tensor<6xf32>
  // expected-remark @+1 {{length in [0, 6] of dimension 0 (size 6)}}
  %br = tg.bound %pad, %r {dim = 0 : i64} : tensor<6xf32>, tensor<i64>
  // A count as a sum of a 0/1 mask (how Unique counts its distinct values).
  %mf = tg.cast %m : tensor<6xi1> to tensor<6xf64>
  %cf = tg.reduce_sum %mf {axes = array<i64: 0>} : (tensor<6xf64>) -> tensor<1xf64>
  %cs = tg.reshape %cf : (tensor<1xf64>) -> tensor<f64>
  %c6 = tg.cast %cs : tensor<f64> to tensor<i64>
  // expected-remark @+1 {{length in [0, 6] of dimension 0 (size 6)}}
  %bc = tg.bound %pad, %c6 {dim = 0 : i64} : tensor<6xf32>, tensor<i64>
  return %b, %bv, %n : tensor<1x6xi64>, tensor<4xf32>, tensor<i64>
}

// -----

// A length that may exceed the padded size: the count of 6 candidates
// bounding a dimension of 4.
func.func @may_exceed(%m: tensor<6xi1>) -> tensor<4xf32> {
  %idx, %n = tg.nonzero %m : (tensor<6xi1>) -> (tensor<1x6xi64>, tensor<i64>)
  %x = tg.constant dense<0.0> : tensor<4xf32>
  // expected-error @+1 {{'tg.bound' op length of dimension 0 may be in [0, 6], outside [0, 4] (its size)}}
  %b = tg.bound %x, %n {dim = 0 : i64} : tensor<4xf32>, tensor<i64>
  return %b : tensor<4xf32>
}

// -----

// A length that may be negative: a difference of two counts.
func.func @may_be_negative(%m: tensor<6xi1>, %p: tensor<6xi1>) -> tensor<6xf32> {
  %i1, %n1 = tg.nonzero %m : (tensor<6xi1>) -> (tensor<1x6xi64>, tensor<i64>)
  %i2, %n2 = tg.nonzero %p : (tensor<6xi1>) -> (tensor<1x6xi64>, tensor<i64>)
  %f1 = tg.cast %n1 : tensor<i64> to tensor<f64>
  %f2 = tg.cast %n2 : tensor<i64> to tensor<f64>
  %df = tg.sub %f1, %f2 : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %d = tg.cast %df : tensor<f64> to tensor<i64>
  %x = tg.constant dense<0.0> : tensor<6xf32>
  // expected-error @+1 {{'tg.bound' op length of dimension 0 may be in [-6, 6], outside [0, 6] (its size)}}
  %b = tg.bound %x, %d {dim = 0 : i64} : tensor<6xf32>, tensor<i64>
  return %b : tensor<6xf32>
}

// -----

// A length the analysis cannot bound: a function argument.
func.func @unbounded(%x: tensor<4xf32>, %n: tensor<i64>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.bound' op length of dimension 0 may be in [-9223372036854775808, 9223372036854775807], outside [0, 4] (its size)}}
  %b = tg.bound %x, %n {dim = 0 : i64} : tensor<4xf32>, tensor<i64>
  return %b : tensor<4xf32>
}

// -----

// A division through f64 is no integer: its result has no range.
func.func @no_range(%m: tensor<6xi1>) -> tensor<6xf32> {
  %i, %n = tg.nonzero %m : (tensor<6xi1>) -> (tensor<1x6xi64>, tensor<i64>)
  %f = tg.cast %n : tensor<i64> to tensor<f64>
  %two = tg.constant dense<2.0> : tensor<f64>
  %h = tg.div %f, %two : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %l = tg.cast %h : tensor<f64> to tensor<i64>
  %x = tg.constant dense<0.0> : tensor<6xf32>
  // expected-error @+1 {{'tg.bound' op length of dimension 0 may be in [-9223372036854775808, 9223372036854775807], outside [0, 6] (its size)}}
  %b = tg.bound %x, %l {dim = 0 : i64} : tensor<6xf32>, tensor<i64>
  return %b : tensor<6xf32>
}
