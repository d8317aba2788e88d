// RUN: loom-opt %s --tg-narrow-products=type=bf16 | FileCheck %s
// RUN: loom-opt %s --tg-narrow-products=type=f16 | FileCheck %s --check-prefix=F16
// RUN: not loom-opt %s --tg-narrow-products=type=f8 2>&1 | FileCheck %s --check-prefix=BAD
// --precision=bf16|f16's policy (docs/Precision.md): f32 products and
// convolutions between casts, everything else as it is.

// Two products reading x: one cast of x. The second product reads the
// first's narrow result directly (no cast to f32 and back); the cast to f32
// that fed only it is gone, the ReLU reads the second's result in f32.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x6xf32>, %[[V:.*]]: tensor<6x3xf32>, %[[U:.*]]: tensor<8x3xf32>)
// CHECK-DAG: %[[XN:.*]] = tg.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-DAG: %[[WN:.*]] = tg.cast %[[W]] : tensor<8x6xf32> to tensor<8x6xbf16>
// CHECK-DAG: %[[VN:.*]] = tg.cast %[[V]] : tensor<6x3xf32> to tensor<6x3xbf16>
// CHECK-DAG: %[[UN:.*]] = tg.cast %[[U]] : tensor<8x3xf32> to tensor<8x3xbf16>
// CHECK: %[[A:.*]] = tg.matmul %[[XN]], %[[WN]] : (tensor<4x8xbf16>, tensor<8x6xbf16>) -> tensor<4x6xbf16>
// CHECK-NEXT: %[[B:.*]] = tg.matmul %[[A]], %[[VN]] : (tensor<4x6xbf16>, tensor<6x3xbf16>) -> tensor<4x3xbf16>
// CHECK-NEXT: %[[BF:.*]] = tg.cast %[[B]] : tensor<4x3xbf16> to tensor<4x3xf32>
// CHECK-NEXT: %[[C:.*]] = tg.matmul %[[XN]], %[[UN]] : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
// CHECK-NEXT: %[[CF:.*]] = tg.cast %[[C]] : tensor<4x3xbf16> to tensor<4x3xf32>
// CHECK-NEXT: %[[S:.*]] = tg.add %[[BF]], %[[CF]] : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: tg.relu %[[S]] : tensor<4x3xf32>
// F16-LABEL: func.func @chain
// F16: tg.matmul {{.*}} : (tensor<4x8xf16>, tensor<8x6xf16>) -> tensor<4x6xf16>
func.func @chain(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %v: tensor<6x3xf32>, %u: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %a = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %b = tg.matmul %a, %v : (tensor<4x6xf32>, tensor<6x3xf32>) -> tensor<4x3xf32>
  %c = tg.matmul %x, %u : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %s = tg.add %b, %c : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = tg.relu %s : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// A convolution with its bias and fused activation: all three operands
// narrow, the activation kept on the op (applied to the f32 accumulator
// before the one rounding).
// CHECK-LABEL: func.func @conv
// CHECK: tg.conv %{{.*}}, %{{.*}}, %{{.*}} {activation = #tg<activation relu>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16>) -> tensor<1x4x8x8xbf16>
// CHECK: tg.cast %{{.*}} : tensor<1x4x8x8xbf16> to tensor<1x4x8x8xf32>
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %y = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// Products that are not f32 are left as they are: f64, and one already
// narrow.
// CHECK-LABEL: func.func @others
// CHECK-NOT: tg.cast
// CHECK: tg.matmul %{{.*}} : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK: tg.matmul %{{.*}} : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
func.func @others(%a: tensor<2x2xf64>, %h: tensor<2x2xf16>) -> (tensor<2x2xf64>, tensor<2x2xf16>) {
  %p = tg.matmul %a, %a : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %q = tg.matmul %h, %h : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
  return %p, %q : tensor<2x2xf64>, tensor<2x2xf16>
}

// BAD: error: --tg-narrow-products: type must be bf16, f16 or tf32, not 'f8'
