// RUN: loom-opt %s --tg-cache-in-place=capacity=8 -split-input-file -verify-diagnostics | FileCheck %s
// RUN: loom-opt %s --tg-cache-in-place="capacity=8 per-sequence=true" -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=BATCH

// --tg-cache-in-place (lib/Dialect/TG/Transforms/CacheInPlace.cpp) on the
// exporter's layer written out, and on every past input it must leave as
// it is, each with its remark. The torch.onnx exports: cache-in-place.test.

// CHECK-LABEL: func.func @fits(
// CHECK-SAME: %arg3: tensor<1x2x8x4xf32> {tg.name = "past_key_values.0.key", tg.tied_result = 1 : i64}
// CHECK-SAME: %arg4: tensor<1x2x8x4xf32> {tg.name = "past_key_values.0.value", tg.tied_result = 2 : i64}
// CHECK-SAME: %arg5: tensor<i64> {tg.name = "past_length"}
// CHECK-SAME: -> (tensor<1x2x2x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
// CHECK: %[[LEN:.*]] = tg.cast %{{.*}} : tensor<f32> to tensor<i64>
// CHECK: %[[K:.*]] = tg.update_slice %arg3, %arg1, %arg5 {axis = 2 : i64}
// CHECK: %[[V:.*]] = tg.update_slice %arg4, %arg2, %arg5 {axis = 2 : i64}
// CHECK: %[[O:.*]] = tg.attention %arg0, %[[K]], %[[V]], %[[LEN]] {causal = true, scale = 5.000000e-01 : f64}
// CHECK: return %[[O]], %[[K]], %[[V]]
// BATCH-LABEL: func.func @fits(
// BATCH-SAME: %arg5: tensor<1xi64> {tg.name = "past_length"}
// BATCH: tg.update_slice %arg3, %arg1, %arg5 {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x2x4xf32>, tensor<1xi64>)
// BATCH: tg.attention {{.*}} : (tensor<1x2x2x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>)
func.func @fits(%q: tensor<1x2x2x4xf32>, %nk: tensor<1x2x2x4xf32>, %nv: tensor<1x2x2x4xf32>,
                %pk: tensor<1x2x3x4xf32> {tg.name = "past_key_values.0.key"},
                %pv: tensor<1x2x3x4xf32> {tg.name = "past_key_values.0.value"})
    -> (tensor<1x2x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) {
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x5x4xf32>
  %v = tg.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x5x4xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x5x4xf32>) -> tensor<1x2x4x5xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x2x4xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x2x5xf32>
  %c = tg.constant dense<2.0> : tensor<f32>
  %d = tg.div %s, %c : (tensor<1x2x2x5xf32>, tensor<f32>) -> tensor<1x2x2x5xf32>
  %m = tg.constant dense<[[[[true, true, true, true, false], [true, true, true, true, true]]]]> : tensor<1x1x2x5xi1>
  %f = tg.constant dense<-3.40282347E+38> : tensor<f32>
  %w = tg.select %m, %d, %f : (tensor<1x1x2x5xi1>, tensor<1x2x2x5xf32>, tensor<f32>) -> tensor<1x2x2x5xf32>
  %p = tg.softmax %w {axis = 3 : i64} : (tensor<1x2x2x5xf32>) -> tensor<1x2x2x5xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x2x5xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x2x4xf32>
  return %o, %k, %v : tensor<1x2x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>
}

// -----

// An additive mask (0 seen, -inf hidden) and a scale by multiplication:
// the same attention (one query sees every key: not causal).
// CHECK-LABEL: func.func @additive_mask(
// CHECK: tg.attention {{.*}} {scale = 2.500000e-01 : f64}
func.func @additive_mask(%q: tensor<1x2x1x4xf32>, %nk: tensor<1x2x1x4xf32>, %nv: tensor<1x2x1x4xf32>,
                         %pk: tensor<1x2x3x4xf32> {tg.name = "past_key"},
                         %pv: tensor<1x2x3x4xf32> {tg.name = "past_value"})
    -> (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %v = tg.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  %c = tg.constant dense<0.25> : tensor<f32>
  %d = tg.mul %c, %s : (tensor<f32>, tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %m = tg.constant dense<[[0.0, 0.0, 0.0, 0.0]]> : tensor<1x4xf32>
  %w = tg.add %d, %m : (tensor<1x2x1x4xf32>, tensor<1x4xf32>) -> tensor<1x2x1x4xf32>
  %p = tg.softmax %w {axis = -1 : i64} : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  return %o, %k, %v : tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A past read besides its concatenation: left as it is.
// CHECK-LABEL: func.func @read_elsewhere(
// CHECK-SAME: tensor<1x2x3x4xf32> {tg.name = "past_key_values.0.key"}
// CHECK-NOT: tg.tied_result
// CHECK: tg.concat
// CHECK-NOT: tg.attention
func.func @read_elsewhere(%nk: tensor<1x2x2x4xf32>,
                          %pk: tensor<1x2x3x4xf32> {tg.name = "past_key_values.0.key"})
    -> (tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32>) {
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x5x4xf32>
  // expected-remark @below {{past input 'past_key_values.0.key' has readers besides one concatenation: compiled as it is}}
  %e = tg.exp %pk : tensor<1x2x3x4xf32>
  return %k, %e : tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32>
}

// -----

// Concatenated along the head size, not the sequence.
// CHECK-LABEL: func.func @other_axis(
// CHECK: tg.concat %arg1, %arg0 {axis = -1 : i64}
func.func @other_axis(%nk: tensor<1x2x3x4xf32>,
                      %pk: tensor<1x2x3x4xf32> {tg.name = "past_key_values.0.key"})
    -> tensor<1x2x3x8xf32> {
  // expected-remark @below {{past input 'past_key_values.0.key' is concatenated along axis 3, not the sequence axis 2: compiled as it is}}
  %k = tg.concat %pk, %nk {axis = -1 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x8xf32>
  return %k : tensor<1x2x3x8xf32>
}

// -----

// The present is not an output.
// CHECK-LABEL: func.func @not_returned(
// CHECK: tg.concat
func.func @not_returned(%nk: tensor<1x2x2x4xf32>,
                        %pk: tensor<1x2x3x4xf32> {tg.name = "past_key_values.0.key"})
    -> tensor<1x2x5x4xf32> {
  // expected-remark @below {{past input 'past_key_values.0.key' has a present (its concatenation) that is not returned once as an output: compiled as it is}}
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x5x4xf32>
  %e = tg.exp %k : tensor<1x2x5x4xf32>
  return %e : tensor<1x2x5x4xf32>
}

// -----

// A mask that is neither causal nor empty (a sliding window of 2 keys).
// CHECK-LABEL: func.func @window_mask(
// CHECK-NOT: tg.tied_result
// CHECK: tg.softmax
func.func @window_mask(%q: tensor<1x2x1x4xf32>, %nk: tensor<1x2x1x4xf32>, %nv: tensor<1x2x1x4xf32>,
                       %pk: tensor<1x2x3x4xf32> {tg.name = "past_key"},
                       %pv: tensor<1x2x3x4xf32> {tg.name = "past_value"})
    -> (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %v = tg.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  %m = tg.constant dense<[[0xFF800000, 0xFF800000, 0.0, 0.0]]> : tensor<1x4xf32>
  // expected-remark @below {{the attention over the present of 'past_key' adds to its scores a mask that is neither causal nor zero: compiled as it is}}
  %w = tg.add %s, %m : (tensor<1x2x1x4xf32>, tensor<1x4xf32>) -> tensor<1x2x1x4xf32>
  %p = tg.softmax %w {axis = 3 : i64} : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  return %o, %k, %v : tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A pointwise op other than a scale before the softmax (a soft cap):
// rewritten, the attention kept explicit over the whole cache, the keys
// past the live length masked (cache-in-place.test checks the numbers).
// CHECK-LABEL: func.func @soft_cap(
// CHECK-SAME: tg.tied_result = 1
// CHECK: %[[OFF:.*]] = tg.clip
// CHECK-NOT: tg.cast
// CHECK: tg.tanh %{{.*}} : tensor<1x2x1x8xf32>
// CHECK: %[[LAST:.*]] = tg.add %[[OFF]], %{{.*}} : (tensor<f32>, tensor<1x1xf32>) -> tensor<1x1xf32>
// CHECK: %[[SEEN:.*]] = tg.less_equal %{{.*}}, %[[LAST]] : (tensor<8xf32>, tensor<1x1xf32>) -> tensor<1x8xi1>
// CHECK: tg.select %[[SEEN]]
// CHECK: tg.softmax
// CHECK-NOT: tg.attention
// BATCH-LABEL: func.func @soft_cap(
// BATCH: %[[OFF:.*]] = tg.clip %{{.*}} : tensor<1xf32>
// BATCH: %[[B:.*]] = tg.reshape %[[OFF]] : (tensor<1xf32>) -> tensor<1x1x1x1xf32>
// BATCH: tg.less_equal %{{.*}}, %{{.*}} : (tensor<8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x8xi1>
func.func @soft_cap(%q: tensor<1x2x1x4xf32>, %nk: tensor<1x2x1x4xf32>, %nv: tensor<1x2x1x4xf32>,
                    %pk: tensor<1x2x3x4xf32> {tg.name = "past_key"},
                    %pv: tensor<1x2x3x4xf32> {tg.name = "past_value"})
    -> (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %v = tg.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  // expected-remark @below {{the attention over the present of 'past_key' has a 'tg.tanh' that tg.attention cannot express: kept as matmul and softmax over all 8 positions of the caches, those past the live length masked (a step reads the whole cache)}}
  %t = tg.tanh %s : tensor<1x2x1x4xf32>
  %p = tg.softmax %t {axis = 3 : i64} : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  return %o, %k, %v : tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A past of another layout (BLOOM's [batch * heads, past, head size]).
// (A past of unknown length does not get here: the ONNX importer asks for
// its size, --dim past_sequence_length=L.)
// CHECK-LABEL: func.func @rank_3(
// CHECK: tg.concat
// expected-remark @below {{past input 'past_key_values.0.key' is not a [batch, heads, past, head size] tensor of static shape: compiled as it is}}
func.func @rank_3(%nk: tensor<2x2x4xf32>, %pk: tensor<2x3x4xf32> {tg.name = "past_key_values.0.key"})
    -> tensor<2x5x4xf32> {
  %k = tg.concat %pk, %nk {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x2x4xf32>) -> tensor<2x5x4xf32>
  return %k : tensor<2x5x4xf32>
}

// -----

// A cache of fewer positions than the present's.
// CHECK-LABEL: func.func @fits_not(
// CHECK: tg.concat
func.func @fits_not(%q: tensor<1x1x2x2xf32>, %nk: tensor<1x1x2x2xf32>, %nv: tensor<1x1x2x2xf32>,
                    %pk: tensor<1x1x7x2xf32> {tg.name = "past_key"},
                    %pv: tensor<1x1x7x2xf32> {tg.name = "past_value"})
    -> (tensor<1x1x2x2xf32>, tensor<1x1x9x2xf32>, tensor<1x1x9x2xf32>) {
  // expected-remark @below {{the present of past input 'past_key' holds 9 positions, more than capacity=8: compiled as it is}}
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x1x7x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x9x2xf32>
  %v = tg.concat %pv, %nv {axis = 2 : i64} : (tensor<1x1x7x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x9x2xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x1x9x2xf32>) -> tensor<1x1x2x9xf32>
  %s = tg.matmul %q, %kt : (tensor<1x1x2x2xf32>, tensor<1x1x2x9xf32>) -> tensor<1x1x2x9xf32>
  %p = tg.softmax %s {axis = 3 : i64} : (tensor<1x1x2x9xf32>) -> tensor<1x1x2x9xf32>
  %o = tg.matmul %p, %v : (tensor<1x1x2x9xf32>, tensor<1x1x9x2xf32>) -> tensor<1x1x2x2xf32>
  return %o, %k, %v : tensor<1x1x2x2xf32>, tensor<1x1x9x2xf32>, tensor<1x1x9x2xf32>
}

// -----

// Run twice: the caches, tied already, and past_length are no candidates,
// and nothing is said.
// CHECK-LABEL: func.func @twice(
// CHECK-SAME: %arg1: tensor<1x2x8x4xf32> {tg.name = "past_key_values.0.key", tg.tied_result = 0 : i64}
// CHECK-SAME: %arg2: tensor<i64> {tg.name = "past_length"}
func.func @twice(%nk: tensor<1x2x2x4xf32>,
                 %pk: tensor<1x2x8x4xf32> {tg.name = "past_key_values.0.key", tg.tied_result = 0 : i64},
                 %n: tensor<i64> {tg.name = "past_length"}) -> tensor<1x2x8x4xf32> {
  %k = tg.update_slice %pk, %nk, %n {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x2x4xf32>, tensor<i64>) -> tensor<1x2x8x4xf32>
  return %k : tensor<1x2x8x4xf32>
}

// -----

// A negative scale after the mask would show the hidden scores: refused.
// CHECK-LABEL: func.func @negative_scale(
// CHECK-NOT: tg.tied_result
// CHECK: tg.softmax
func.func @negative_scale(%q: tensor<1x2x1x4xf32>, %nk: tensor<1x2x1x4xf32>, %nv: tensor<1x2x1x4xf32>,
                          %pk: tensor<1x2x3x4xf32> {tg.name = "past_key"},
                          %pv: tensor<1x2x3x4xf32> {tg.name = "past_value"})
    -> (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %v = tg.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  %m = tg.constant dense<[[0.0, 0.0, 0.0, 0.0]]> : tensor<1x4xf32>
  %w = tg.add %s, %m : (tensor<1x2x1x4xf32>, tensor<1x4xf32>) -> tensor<1x2x1x4xf32>
  %c = tg.constant dense<-1.0> : tensor<f32>
  // expected-remark @below {{the attention over the present of 'past_key' has a 'tg.mul' after its mask: compiled as it is}}
  %d = tg.mul %w, %c : (tensor<1x2x1x4xf32>, tensor<f32>) -> tensor<1x2x1x4xf32>
  %p = tg.softmax %d {axis = 3 : i64} : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  return %o, %k, %v : tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A CNN's channel concatenation of an input is no cache: nothing is said.
// CHECK-LABEL: func.func @channels(
// CHECK: tg.concat %arg0, %arg1 {axis = 1 : i64}
func.func @channels(%a: tensor<1x2x3x4xf32>, %b: tensor<1x2x3x4xf32>) -> tensor<1x4x3x4xf32> {
  %c = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x4x3x4xf32>
  return %c : tensor<1x4x3x4xf32>
}

// -----

// A mask computed from an input [batch, keys] that something else reads
// too: the input cannot become one over the caches' positions.
// CHECK-LABEL: func.func @mask_read_elsewhere(
// CHECK-SAME: tensor<1x4xf32> {tg.name = "attention_mask"}
// CHECK-NOT: tg.tied_result
func.func @mask_read_elsewhere(%q: tensor<1x2x1x4xf32>, %nk: tensor<1x2x1x4xf32>, %nv: tensor<1x2x1x4xf32>,
                               %mask: tensor<1x4xf32> {tg.name = "attention_mask"},
                               %pk: tensor<1x2x3x4xf32> {tg.name = "past_key"},
                               %pv: tensor<1x2x3x4xf32> {tg.name = "past_value"})
    -> (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) {
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %v = tg.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  // expected-remark @below {{the mask input 'attention_mask' of the attention over the present of 'past_key' is read by ops the rewrite does not replace: compiled as it is}}
  %m = tg.reshape %mask : (tensor<1x4xf32>) -> tensor<1x1x1x4xf32>
  %w = tg.add %s, %m : (tensor<1x2x1x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x1x4xf32>
  %p = tg.softmax %w {axis = 3 : i64} : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  return %o, %k, %v, %m : tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>
}

// -----

// An additive mask computed from something other than one input.
// CHECK-LABEL: func.func @mask_from_scores(
// CHECK-NOT: tg.tied_result
func.func @mask_from_scores(%q: tensor<1x2x1x4xf32>, %nk: tensor<1x2x1x4xf32>, %nv: tensor<1x2x1x4xf32>,
                            %bias: tensor<1x2x1x4xf32>,
                            %pk: tensor<1x2x3x4xf32> {tg.name = "past_key"},
                            %pv: tensor<1x2x3x4xf32> {tg.name = "past_value"})
    -> (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %k = tg.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %v = tg.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x3x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x4x4xf32>
  %kt = tg.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  // expected-remark @below {{the attention over the present of 'past_key' adds to its scores a mask that is neither a constant nor computed elementwise from one input [batch, keys]: compiled as it is}}
  %w = tg.add %s, %bias : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %p = tg.softmax %w {axis = 3 : i64} : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x1x4xf32>
  return %o, %k, %v : tensor<1x2x1x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
