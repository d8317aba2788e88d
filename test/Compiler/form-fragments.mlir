// --tg-form-fragments: library fragments (oneDNN convolution with its
// residual sum and activation, matmul with bias and activation; OpenBLAS
// sgemm), codegen fragments with elementwise prologues and epilogues, and
// what stays outside (weights, reshapes, large constants). The fragments
// compute what the ops computed.
//
// RUN: loom-opt %s --split-input-file --tg-form-fragments | FileCheck %s
// RUN: loom-opt %s --split-input-file --tg-form-fragments="conv-backend=codegen matmul-backend=openblas" | FileCheck %s --check-prefix=OTHER
// RUN: loom-opt %s --split-input-file --tg-form-fragments="backends=conv:codegen,matmul:openblas" | FileCheck %s --check-prefix=OTHER
// RUN: not loom-opt %s --split-input-file --tg-form-fragments="conv-backend=openblas" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: 'conv:openblas': openblas runs no conv op
// Backend lists name registered backends and classes, in one spelling.
// RUN: not loom-opt %s --split-input-file --tg-form-fragments="backends=conv:cudnn" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown backend 'cudnn' (registered: codegen, onednn, openblas, loomrt)
// RUN: not loom-opt %s --split-input-file --tg-form-fragments="backends=pool:onednn" 2>&1 | FileCheck %s --check-prefix=CLASS
// CLASS: unknown op class 'pool' in 'pool:onednn' (classes: conv, matmul)
// RUN: not loom-opt %s --split-input-file --tg-form-fragments="backends=onednn conv-backend=codegen" 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: give backends, or conv-backend and matmul-backend (which spell it), not both

// CHECK-LABEL: func.func @resnet_tail
// CHECK: %[[CONV:.*]] = tg.fragment <onednn>(%arg0, %{{.*}}, %{{.*}}, %arg1)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.conv
// CHECK-NEXT: tg.add
// CHECK-NEXT: tg.relu
// CHECK-NEXT: tg.yield
// The pool goes with the convolution: oneDNN runs it in the layout the
// convolution writes.
// CHECK: tg.fragment <onednn>(%[[CONV]])
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.global_avgpool
// CHECK-NEXT: tg.yield
// CHECK-NOT: tg.fragment
// CHECK: return
// Small constants become compile-time constants of a codegen kernel.
// OTHER-LABEL: func.func @resnet_tail
// OTHER: tg.fragment <codegen>
// OTHER-NEXT: ^bb0
// OTHER-NEXT: tg.constant
// OTHER-NEXT: tg.constant
// OTHER-NEXT: tg.conv
// OTHER-NEXT: tg.add
// OTHER-NEXT: tg.relu
// OTHER: tg.fragment <codegen>
// OTHER-NEXT: ^bb0
// OTHER-NEXT: tg.global_avgpool
func.func @resnet_tail(%x: tensor<1x4x6x6xf32>, %r: tensor<1x8x6x6xf32>) -> tensor<1x8x1x1xf32> {
  %w = tg.constant dense<0.5> : tensor<8x4x3x3xf32>
  %b = tg.constant dense<0.25> : tensor<8xf32>
  %c = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %s = tg.add %c, %r : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %y = tg.relu %s : tensor<1x8x6x6xf32>
  %p = tg.global_avgpool %y : (tensor<1x8x6x6xf32>) -> tensor<1x8x1x1xf32>
  return %p : tensor<1x8x1x1xf32>
}

// -----

// An addend that broadcasts (a per-channel [1,C,1,1] tensor) is not a
// residual: oneDNN's sum post-op reads a full tensor. The add stays in a
// codegen fragment of its own (PP-OCRv4's detector had this shape).
// CHECK-LABEL: func.func @broadcast_addend
// CHECK: %[[CONV:.*]] = tg.fragment <onednn>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.conv
// CHECK-NEXT: tg.yield
// CHECK: tg.fragment <codegen>(%[[CONV]], %arg1)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.add
func.func @broadcast_addend(%x: tensor<1x4x6x6xf32>, %r: tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32> {
  %w = tg.constant dense<0.5> : tensor<8x4x3x3xf32>
  %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  %s = tg.add %c, %r : (tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  return %s : tensor<1x8x6x6xf32>
}

// -----

// A matmul with a bias row and GELU is one oneDNN call; softmax takes its
// scaling prologue; a reshape stays outside.
// CHECK-LABEL: func.func @mlp
// CHECK: %[[MM:.*]] = tg.fragment <onednn>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.add
// CHECK-NEXT: tg.gelu
// CHECK-NEXT: tg.yield
// CHECK: %[[R:.*]] = tg.reshape %[[MM]]
// CHECK: tg.fragment <codegen>(%[[R]])
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.constant
// CHECK-NEXT: tg.mul
// CHECK-NEXT: tg.softmax
// CHECK-NEXT: tg.yield
// OTHER-LABEL: func.func @mlp
// OTHER: tg.fragment <openblas>
// OTHER-NEXT: ^bb0
// OTHER-NEXT: tg.matmul
// OTHER-NEXT: tg.yield
// OTHER: tg.fragment <codegen>
// OTHER-NEXT: ^bb0
// OTHER-NEXT: tg.add
// OTHER-NEXT: tg.gelu
func.func @mlp(%x: tensor<4x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<4x4x8xf32> {
  %m = tg.matmul %x, %w : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %a = tg.add %m, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %g = tg.gelu %a : tensor<4x32xf32>
  %r = tg.reshape %g : (tensor<4x32xf32>) -> tensor<4x4x8xf32>
  %c = tg.constant dense<0.125> : tensor<f32>
  %s = tg.mul %r, %c : (tensor<4x4x8xf32>, tensor<f32>) -> tensor<4x4x8xf32>
  %p = tg.softmax %s : (tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
  return %p : tensor<4x4x8xf32>
}

// -----

// Two reductions do not share a fragment; a value used twice is computed
// once, by the fragment that produces it, and read by both consumers.
// CHECK-LABEL: func.func @two_heavy
// CHECK: %[[E:.*]] = tg.fragment <codegen>(%arg0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.exp
// CHECK-NEXT: tg.yield
// CHECK: tg.fragment <codegen>(%[[E]])
// CHECK: tg.reduce_sum
// CHECK: tg.fragment <codegen>(%[[E]], %{{.*}})
// CHECK: tg.reduce_max
func.func @two_heavy(%x: tensor<8x16xf32>) -> (tensor<8x1xf32>, tensor<8x1xf32>) {
  %e = tg.exp %x : tensor<8x16xf32>
  %s = tg.reduce_sum %e {axes = array<i64: 1>} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %m = tg.reduce_max %e {axes = array<i64: 1>} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %n = tg.neg %s : tensor<8x1xf32>
  %t = tg.add %m, %n : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  return %s, %t : tensor<8x1xf32>, tensor<8x1xf32>
}

// -----

// Gathers fuse like elementwise ops (each result element from the index at
// its own position): two weighted gathers of rows, their sum and the mean
// over the samples are one codegen fragment (RoiAlign's taps), rather than
// one fragment and one stored tensor per gather.
// CHECK-LABEL: func.func @gathered_taps
// CHECK: tg.fragment <codegen>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.gather
// CHECK-NEXT: tg.mul
// CHECK-NEXT: tg.gather
// CHECK-NEXT: tg.mul
// CHECK-NEXT: tg.add
// CHECK-NEXT: tg.reduce_mean
// CHECK-NEXT: tg.yield
// CHECK-NOT: tg.fragment
// CHECK: return
func.func @gathered_taps(%x: tensor<16x8xf32>, %i: tensor<3x2xi64>, %j: tensor<3x2xi64>, %u: tensor<3x2x1xf32>, %v: tensor<3x2x1xf32>) -> tensor<3x8xf32> {
  %a = tg.gather %x, %i {axis = 0 : i64} : (tensor<16x8xf32>, tensor<3x2xi64>) -> tensor<3x2x8xf32>
  %wa = tg.mul %a, %u : (tensor<3x2x8xf32>, tensor<3x2x1xf32>) -> tensor<3x2x8xf32>
  %b = tg.gather %x, %j {axis = 0 : i64} : (tensor<16x8xf32>, tensor<3x2xi64>) -> tensor<3x2x8xf32>
  %wb = tg.mul %b, %v : (tensor<3x2x8xf32>, tensor<3x2x1xf32>) -> tensor<3x2x8xf32>
  %s = tg.add %wa, %wb : (tensor<3x2x8xf32>, tensor<3x2x8xf32>) -> tensor<3x2x8xf32>
  %m = tg.reduce_mean %s {axes = array<i64: 1>, keepdims = false} : (tensor<3x2x8xf32>) -> tensor<3x8xf32>
  return %m : tensor<3x8xf32>
}

// -----

// ... but a gather joins no other heavy op: a gather of a reduction, and a
// transpose of a gather (its elementwise consumer fused), keep their own
// fragments.
// CHECK-LABEL: func.func @gather_and_heavy_ops
// CHECK: tg.fragment <codegen>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.reduce_sum
// CHECK-NEXT: tg.yield
// CHECK: tg.fragment <codegen>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.gather
// CHECK-NEXT: tg.neg
// CHECK-NEXT: tg.yield
// CHECK: tg.fragment <codegen>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.transpose
// CHECK-NEXT: tg.yield
func.func @gather_and_heavy_ops(%x: tensor<16x8xf32>, %i: tensor<3x2xi64>) -> tensor<3x1x2xf32> {
  %s = tg.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<16x8xf32>) -> tensor<16x1xf32>
  %a = tg.gather %s, %i {axis = 0 : i64} : (tensor<16x1xf32>, tensor<3x2xi64>) -> tensor<3x2x1xf32>
  %d = tg.neg %a : tensor<3x2x1xf32>
  %t = tg.transpose %d {perm = array<i64: 0, 2, 1>} : (tensor<3x2x1xf32>) -> tensor<3x1x2xf32>
  return %t : tensor<3x1x2xf32>
}

// -----

// A cast to bf16 or f16 (--precision's input to a product) joins the group
// computing its operand although that value has another user: the layer
// norm's kernel writes the f32 value the residual sum reads and its bf16
// rounding, one fragment of two results.
// CHECK-LABEL: func.func @narrow_cast_shared
// CHECK: %[[LN:.*]]:2 = tg.fragment <codegen>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.layernorm
// CHECK-NEXT: tg.cast {{.*}} to tensor<8x16xbf16>
// CHECK-NEXT: tg.yield
// CHECK: tg.fragment <codegen>(%[[LN]]#1, %arg3, %[[LN]]#0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.cast
// CHECK-NEXT: tg.add
func.func @narrow_cast_shared(%x: tensor<8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>, %w: tensor<16x16xbf16>) -> tensor<8x16xf32> {
  %n = tg.layernorm %x, %g, %b {epsilon = 1.0e-5 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %c = tg.cast %n : tensor<8x16xf32> to tensor<8x16xbf16>
  %p = tg.matmul %c, %w : (tensor<8x16xbf16>, tensor<16x16xbf16>) -> tensor<8x16xbf16>
  %f = tg.cast %p : tensor<8x16xbf16> to tensor<8x16xf32>
  %r = tg.add %f, %n : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// ... but not where another user of the value comes before the cast: the
// joined fragment, placed after the cast, would follow that user.
// CHECK-LABEL: func.func @narrow_cast_after_user
// CHECK: tg.fragment <codegen>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.layernorm
// CHECK-NEXT: tg.yield
// CHECK: tg.fragment <codegen>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.neg
// CHECK-NEXT: tg.yield
// CHECK: tg.fragment <codegen>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.cast
// CHECK-NEXT: tg.yield
func.func @narrow_cast_after_user(%x: tensor<8x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf16>) {
  %n = tg.layernorm %x, %g, %b {epsilon = 1.0e-5 : f64} : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %m = tg.neg %n : tensor<8x16xf32>
  %c = tg.cast %n : tensor<8x16xf32> to tensor<8x16xf16>
  return %m, %c : tensor<8x16xf32>, tensor<8x16xf16>
}

// -----

// A group that took a shared cast joins nothing more that would place it
// after a user of its shared value: the gelu's group (with the cast) yields
// both; the product, which would have taken them as its prologue, keeps its
// own fragment because the negation reads the gelu before it.
// CHECK-LABEL: func.func @narrow_cast_then_prologue
// CHECK: %[[G:.*]]:2 = tg.fragment <codegen>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.gelu
// CHECK-NEXT: tg.cast
// CHECK-NEXT: tg.yield
// CHECK: tg.fragment <codegen>(%[[G]]#0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.neg
// CHECK: tg.fragment <codegen>(%[[G]]#1, %arg1)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.matmul
func.func @narrow_cast_then_prologue(%x: tensor<8x16xf32>, %w: tensor<16x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xf32>) {
  %g = tg.gelu %x : tensor<8x16xf32>
  %c = tg.cast %g : tensor<8x16xf32> to tensor<8x16xbf16>
  %m = tg.neg %g : tensor<8x16xf32>
  %p = tg.matmul %c, %w : (tensor<8x16xbf16>, tensor<16x16xbf16>) -> tensor<8x16xbf16>
  return %p, %m : tensor<8x16xbf16>, tensor<8x16xf32>
}
