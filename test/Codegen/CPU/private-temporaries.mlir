// RUN: loom-opt %s --loom-private-temporaries | FileCheck %s

// Two results: the empty tensor both transposes write into, and the zero
// accumulator (a fill, read as a vector) both loops start from, are copied
// for the second user, so bufferization gives each computation its own.
// CHECK-LABEL: func.func @two_results
// CHECK-DAG: %[[E1:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-DAG: %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-DAG: %[[F1:.*]] = linalg.fill {{.*}} outs(%[[Z1:.*]] : tensor<8xf32>)
// CHECK-DAG: %[[F2:.*]] = linalg.fill {{.*}} outs(%[[Z2:.*]] : tensor<8xf32>)
// CHECK-DAG: %[[V1:.*]] = vector.transfer_read %[[F1]]
// CHECK-DAG: %[[V2:.*]] = vector.transfer_read %[[F2]]
// CHECK-DAG: linalg.transpose ins(%arg0 : tensor<8x4xf32>) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-DAG: linalg.transpose ins(%arg1 : tensor<8x4xf32>) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK-DAG: iter_args(%{{.*}} = %[[V1]])
// CHECK-DAG: iter_args(%{{.*}} = %[[V2]])
// CHECK: return
func.func @two_results(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, vector<8xf32>, vector<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %b = linalg.transpose ins(%y : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %z = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%z : tensor<8xf32>) -> tensor<8xf32>
  %v = vector.transfer_read %f[%c0], %zero {in_bounds = [true]} : tensor<8xf32>, vector<8xf32>
  %s1 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %v) -> (vector<8xf32>) {
    %r = vector.transfer_read %a[%i, %c0], %zero {in_bounds = [true]} : tensor<4x8xf32>, vector<8xf32>
    %n = arith.addf %acc, %r : vector<8xf32>
    scf.yield %n : vector<8xf32>
  }
  %s2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %v) -> (vector<8xf32>) {
    %r = vector.transfer_read %b[%i, %c0], %zero {in_bounds = [true]} : tensor<4x8xf32>, vector<8xf32>
    %n = arith.addf %acc, %r : vector<8xf32>
    scf.yield %n : vector<8xf32>
  }
  return %a, %b, %s1, %s2 : tensor<4x8xf32>, tensor<4x8xf32>, vector<8xf32>, vector<8xf32>
}

// One result: a buffer reused is memory saved; nothing changes.
// CHECK-LABEL: func.func @one_result
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
// CHECK: return
func.func @one_result(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %b = linalg.transpose ins(%y : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %s = linalg.add ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
