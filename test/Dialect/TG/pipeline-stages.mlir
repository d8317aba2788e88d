// RUN: loom-opt %s -split-input-file -verify-diagnostics --tg-pipeline-stages="stages=2" | FileCheck %s
// RUN: not loom-opt %s -split-input-file --tg-pipeline-stages="stages=1" 2>&1 | FileCheck %s --check-prefix=ONE
//
// --tg-pipeline-stages (docs/CacheParallel.md, "Pipeline stages") on a
// two-layer program whose layers each read and update a state argument:
// rank 0 keeps the input and the first layer's state, rank 1 the second's;
// the cut goes where the fewest bytes are live, the last such place (the
// residual %r0 alone, 16 bytes, not %h0 and %a0 before it nor %r0 and %h1
// after; the weight %w1 is cloned where it is read); rank 0 sends %r0 in a
// gather rooted at it (rank 1's operand, not sent, zeros made from nothing:
// its first gather), then rank 1 sends the result in one rooted at it and
// every rank takes block 1 (rank 0's operand zeros made from its last
// gathered block). Then the programs it refuses.

// CHECK-LABEL: func.func @decode.rank0
// CHECK-SAME: (%[[X:.*]]: tensor<1x4xf32> {tg.name = "input"}, %[[C0:.*]]: tensor<1x4xf32> {tg.name = "cache.0", tg.tied_result = 1 : i64})
// CHECK-SAME: -> (tensor<1x4xf32> {tg.name = "logits"}, tensor<1x4xf32> {tg.name = "cache.0"})
// CHECK-SAME: attributes {tg.runs_on_rank = 0 : i64}
// CHECK: %[[W0:.*]] = tg.weight "w0"
// CHECK: %[[H0:.*]] = tg.matmul %[[X]], %[[W0]]
// CHECK: %[[N0:.*]] = tg.add %[[C0]], %[[H0]]
// CHECK: %[[A0:.*]] = tg.mul %[[N0]], %[[H0]]
// CHECK: %[[R0:.*]] = tg.add %[[H0]], %[[A0]]
// CHECK: %[[FLAT:.*]] = tg.reshape %[[R0]] : (tensor<1x4xf32>) -> tensor<4xf32>
// CHECK: %[[G0:.*]] = tg.all_gather %[[FLAT]] {ranks = 2 : i64, root = 0 : i64} : (tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: %[[Z:.*]] = tg.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[FIRST:.*]] = tg.slice %[[G0]] {limits = array<i64: 1, 1>, starts = array<i64: 0, 0>}
// CHECK: %[[S:.*]] = tg.reshape %[[FIRST]] : (tensor<1x1xf32>) -> tensor<1xf32>
// CHECK: %[[ZS:.*]] = tg.mul %[[Z]], %[[S]]
// CHECK: %[[G1:.*]] = tg.all_gather %[[ZS]] {ranks = 2 : i64, root = 1 : i64}
// CHECK: %[[ROW:.*]] = tg.slice %[[G1]] {limits = array<i64: 2, 4>, starts = array<i64: 1, 0>}
// CHECK: %[[PART:.*]] = tg.slice %[[ROW]] {limits = array<i64: 1, 4>, starts = array<i64: 0, 0>}
// CHECK: %[[OUT:.*]] = tg.reshape %[[PART]] : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK: return %[[OUT]], %[[N0]]

// CHECK-LABEL: func.func @decode.rank1
// CHECK-SAME: (%{{.*}}: tensor<1x4xf32> {tg.name = "input"}, %[[C1:.*]]: tensor<1x4xf32> {tg.name = "cache.1", tg.tied_result = 1 : i64})
// CHECK-SAME: attributes {tg.runs_on_rank = 1 : i64}
// CHECK-NOT: tg.weight "w0"
// CHECK: %[[Z1:.*]] = tg.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[G:.*]] = tg.all_gather %[[Z1]] {ranks = 2 : i64, root = 0 : i64}
// CHECK: %[[ROW0:.*]] = tg.slice %[[G]] {limits = array<i64: 1, 4>, starts = array<i64: 0, 0>}
// CHECK: %[[P0:.*]] = tg.slice %[[ROW0]]
// CHECK: %[[IN:.*]] = tg.reshape %[[P0]] : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK: %[[W1:.*]] = tg.weight "w1"
// CHECK: %[[H1:.*]] = tg.matmul %[[IN]], %[[W1]]
// CHECK: %[[N1:.*]] = tg.add %[[C1]], %[[H1]]
// CHECK: %[[R1:.*]] = tg.add %[[IN]],
// CHECK: %[[F1:.*]] = tg.reshape %[[R1]] : (tensor<1x4xf32>) -> tensor<4xf32>
// CHECK: %[[GL:.*]] = tg.all_gather %[[F1]] {ranks = 2 : i64, root = 1 : i64}
// CHECK: %[[LROW:.*]] = tg.slice %[[GL]] {limits = array<i64: 2, 4>, starts = array<i64: 1, 0>}
// CHECK: return %{{.*}}, %[[N1]]
// CHECK-NOT: func.func @decode(

// ONE: error: --tg-pipeline-stages needs stages=S with S in 2..4096, got 1

func.func @decode(%x: tensor<1x4xf32> {tg.name = "input"},
                  %c0: tensor<1x4xf32> {tg.name = "cache.0", tg.tied_result = 1 : i64},
                  %c1: tensor<1x4xf32> {tg.name = "cache.1", tg.tied_result = 2 : i64})
    -> (tensor<1x4xf32> {tg.name = "logits"}, tensor<1x4xf32> {tg.name = "cache.0"}, tensor<1x4xf32> {tg.name = "cache.1"}) {
  %w0 = tg.weight "w0" : tensor<4x4xf32>
  %h0 = tg.matmul %x, %w0 : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %n0 = tg.add %c0, %h0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %a0 = tg.mul %n0, %h0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %r0 = tg.add %h0, %a0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %w1 = tg.weight "w1" : tensor<4x4xf32>
  %h1 = tg.matmul %r0, %w1 : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %n1 = tg.add %c1, %h1 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %a1 = tg.mul %n1, %h1 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %r1 = tg.add %r0, %a1 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %r1, %n0, %n1 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// One layer of state cannot fill two stages.
// expected-error@+1 {{--tg-pipeline-stages: 1 layer(s) of state (key/value caches read together) cannot fill stages=2}}
func.func @one_layer(%x: tensor<1x4xf32>, %c0: tensor<1x4xf32> {tg.tied_result = 1 : i64}) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %n0 = tg.add %c0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = tg.mul %n0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %y, %n0 : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// Two state arguments one op reads are one layer.
// expected-error@+1 {{--tg-pipeline-stages: 1 layer(s) of state}}
func.func @read_together(%x: tensor<1x4xf32>, %c0: tensor<1x4xf32> {tg.tied_result = 1 : i64}, %c1: tensor<1x4xf32> {tg.tied_result = 2 : i64}) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
  %n0 = tg.add %c0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %n1 = tg.add %c1, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = tg.mul %n0, %n1 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %y, %n0, %n1 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// Layers that interleave: the second layer's state is read before the
// first layer's last read.
func.func @interleaved(%x: tensor<1x4xf32>, %c0: tensor<1x4xf32> {tg.tied_result = 1 : i64}, %c1: tensor<1x4xf32> {tg.tied_result = 2 : i64}) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
  %n0 = tg.add %c0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  // expected-error@+1 {{--tg-pipeline-stages: this op of stage 1 comes before the last op of stage 0 that reads its state: the layers interleave}}
  %n1 = tg.add %c1, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  // expected-note@+1 {{that op}}
  %a0 = tg.mul %n0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %a1 = tg.mul %n1, %a0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %a1, %n0, %n1 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// What crosses a cut is sent as f32: an i64 value computed from state (the
// indices the next layer gathers its state at) is refused.
func.func @not_f32(%x: tensor<1x4xf32>, %c0: tensor<1x4xf32> {tg.tied_result = 1 : i64}, %c1: tensor<4xf32> {tg.tied_result = 2 : i64}) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>) {
  %n0 = tg.add %c0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  // expected-error@+1 {{--tg-pipeline-stages: a value of type 'tensor<1x4xi64>' would be sent from stage 0; only f32 values are sent}}
  %i = tg.cast %n0 : tensor<1x4xf32> to tensor<1x4xi64>
  %y = tg.gather %c1, %i : (tensor<4xf32>, tensor<1x4xi64>) -> tensor<1x4xf32>
  return %y, %n0, %c1 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>
}

// -----

// The last stage must compute something the function returns: here every
// result is state.
// expected-error@+1 {{--tg-pipeline-stages: the function returns nothing its last stage computes}}
func.func @only_state(%x: tensor<1x4xf32>, %c0: tensor<1x4xf32> {tg.tied_result = 0 : i64}, %c1: tensor<1x4xf32> {tg.tied_result = 1 : i64}) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %n0 = tg.add %c0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %n1 = tg.add %c1, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %n0, %n1 : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// State no op reads has no stage.
// expected-error@+1 {{--tg-pipeline-stages: state argument 1 is read by no op: no stage holds it}}
func.func @unread(%x: tensor<1x4xf32>, %c0: tensor<1x4xf32> {tg.tied_result = 1 : i64}) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %y = tg.mul %x, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %y, %c0 : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// A program on a world whose collectives disagree on its size (stages of
// parallel ranks stage one world).
// expected-error@+1 {{--tg-pipeline-stages: the function's collectives run on worlds of different sizes}}
func.func @worlds(%x: tensor<2xf32>) -> tensor<2x2xf32> {
  %g = tg.all_gather %x {ranks = 2 : i64} : (tensor<2xf32>) -> tensor<2x2xf32>
  %h = tg.all_gather %x {ranks = 2 : i64, world = 4 : i64} : (tensor<2xf32>) -> tensor<2x2xf32>
  %s = tg.add %g, %h : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %s : tensor<2x2xf32>
}

// -----

// A stage of parallel ranks already (one block of its world): the stages
// come last.
// expected-error@+1 {{--tg-pipeline-stages: the function runs on one block of its world (a pipeline stage of parallel ranks): --tg-pipeline-stages comes last}}
func.func @block(%x: tensor<2xf32>) -> tensor<2x2xf32> attributes {tg.runs_on_rank = 4 : i64, tg.rank_period = 2 : i64, tg.rank_count = 2 : i64} {
  %g = tg.all_gather %x {ranks = 2 : i64, world = 8 : i64} : (tensor<2xf32>) -> tensor<2x2xf32>
  return %g : tensor<2x2xf32>
}

// -----

// A state of one name in two stages: @first reads cache.0 first, @second
// cache.1 first, so each would put the other's layer on rank 0 (prefill's
// and decode's caches must fall alike).
func.func @first(%x: tensor<1x4xf32>, %c0: tensor<1x4xf32> {tg.name = "cache.0", tg.tied_result = 1 : i64}, %c1: tensor<1x4xf32> {tg.name = "cache.1", tg.tied_result = 2 : i64}) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
  %n0 = tg.add %c0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %h = tg.mul %n0, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %n1 = tg.add %c1, %h : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = tg.mul %n1, %h : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %y, %n0, %n1 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}
// expected-error@+1 {{--tg-pipeline-stages: state 'cache.0' falls in stage 1 here and in stage 0 in @first}}
func.func @second(%x: tensor<1x4xf32>, %c0: tensor<1x4xf32> {tg.name = "cache.0", tg.tied_result = 1 : i64}, %c1: tensor<1x4xf32> {tg.name = "cache.1", tg.tied_result = 2 : i64}) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
  %n1 = tg.add %c1, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %h = tg.mul %n1, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %n0 = tg.add %c0, %h : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = tg.mul %n0, %h : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %y, %n0, %n1 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}
