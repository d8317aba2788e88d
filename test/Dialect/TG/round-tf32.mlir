// RUN: loom-opt %s --tg-narrow-products=type=tf32 | FileCheck %s
// RUN: loom-opt %s --tg-narrow-products=type=tf32 --tg-fold-weights | FileCheck %s --check-prefix=FOLD
// RUN: not loom-opt %s --tg-narrow-products=type=tf16 2>&1 | FileCheck %s --check-prefix=BAD
// --precision=tf32's policy (docs/Precision.md, "TF32"): both multiplicands
// of every f32 product and convolution rounded by a tg.round_tf32 of their
// own, just before it (one per use, so that each joins its product's
// kernel); results stay f32; the bias of a convolution is not rounded.

// x is read by two products: each rounds it itself. A product reading
// another's result rounds that result; the ReLU reads the f32 sum.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x6xf32>, %[[V:.*]]: tensor<6x3xf32>, %[[U:.*]]: tensor<8x3xf32>)
// CHECK-NEXT: %[[XR:.*]] = tg.round_tf32 %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: %[[WR:.*]] = tg.round_tf32 %[[W]] : tensor<8x6xf32>
// CHECK-NEXT: %[[A:.*]] = tg.matmul %[[XR]], %[[WR]] : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %[[AR:.*]] = tg.round_tf32 %[[A]] : tensor<4x6xf32>
// CHECK-NEXT: %[[VR:.*]] = tg.round_tf32 %[[V]] : tensor<6x3xf32>
// CHECK-NEXT: %[[B:.*]] = tg.matmul %[[AR]], %[[VR]]
// CHECK-NEXT: %[[XR2:.*]] = tg.round_tf32 %[[X]] : tensor<4x8xf32>
// CHECK-NEXT: %[[UR:.*]] = tg.round_tf32 %[[U]] : tensor<8x3xf32>
// CHECK-NEXT: %[[C:.*]] = tg.matmul %[[XR2]], %[[UR]]
// CHECK-NEXT: %[[S:.*]] = tg.add %[[B]], %[[C]]
// CHECK-NEXT: tg.relu %[[S]] : tensor<4x3xf32>
func.func @chain(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %v: tensor<6x3xf32>, %u: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %a = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %b = tg.matmul %a, %v : (tensor<4x6xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  %c = tg.matmul %x, %u : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %s = tg.add %b, %c : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = tg.relu %s : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// A convolution: input and filter rounded, the bias added in f32.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[XR:.*]] = tg.round_tf32 %[[X]]
// CHECK-NEXT: %[[WR:.*]] = tg.round_tf32 %[[W]]
// CHECK-NEXT: tg.conv %[[XR]], %[[WR]], %[[B]] {activation = #tg<activation relu>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %y = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// An operand a rounding of its own already makes is not rounded twice;
// f64 and narrow products are left as they are.
// CHECK-LABEL: func.func @others
// CHECK-NEXT: %[[R:.*]] = tg.round_tf32 %arg0
// CHECK-NEXT: %[[R2:.*]] = tg.round_tf32 %arg0
// CHECK-NEXT: tg.matmul %[[R]], %[[R2]]
// CHECK-NEXT: tg.matmul %arg1, %arg1 : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-NEXT: tg.matmul %arg2, %arg2 : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
func.func @others(%x: tensor<2x2xf32>, %d: tensor<2x2xf64>, %h: tensor<2x2xf16>) -> (tensor<2x2xf32>, tensor<2x2xf64>, tensor<2x2xf16>) {
  %r = tg.round_tf32 %x : tensor<2x2xf32>
  %a = tg.matmul %r, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = tg.matmul %d, %d : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %c = tg.matmul %h, %h : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
  return %a, %b, %c : tensor<2x2xf32>, tensor<2x2xf64>, tensor<2x2xf16>
}

// A weight's rounding is never folded (TG_KeptUnfolded): the product's
// kernel rounds it as it loads it. The transpose before it is folded.
// FOLD-LABEL: func.func @weight
// FOLD: %[[C:.*]] = tg.constant dense<{{.*}}> : tensor<3x2xf32>
// FOLD: %[[R:.*]] = tg.round_tf32 %[[C]] : tensor<3x2xf32>
// FOLD: tg.matmul %{{.*}}, %[[R]]
func.func @weight(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = tg.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 1.00048828125]]> : tensor<2x3xf32>
  %t = tg.transpose %w {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = tg.matmul %x, %t : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// BAD: --tg-narrow-products: type must be bf16, f16 or tf32, not 'tf16'
