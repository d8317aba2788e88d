// RUN: loom-run %s --print-values 8 | FileCheck %s
// RUN: loom-compile %s -o %t.so
// RUN: loom-run %t.so --check --print-values 8 | FileCheck %s
// tg.bound is the identity: the interpreter copies its input through, and
// loom-compile erases it (--tg-erase-bounds) after the importer's result
// attributes say which result holds the length.

func.func @main() -> (tensor<1x6xi64> {tg.name = "nz", tg.bounded_dim = 1 : i64, tg.length_result = 1 : i64},
                      tensor<i64> {tg.name = "nz_length"}) {
  %m = tg.constant dense<[0.0, 1.0, 0.0, 2.0, 3.0, 0.0]> : tensor<6xf32>
  %idx, %n = tg.nonzero %m : (tensor<6xf32>) -> (tensor<1x6xi64>, tensor<i64>)
  %b = tg.bound %idx, %n {dim = 1 : i64} : tensor<1x6xi64>, tensor<i64>
  return %b, %n : tensor<1x6xi64>, tensor<i64>
}
// CHECK: nz: tensor<1x6xi64> valid 1x3
// CHECK-NEXT: values: 1 3 4{{$}}
