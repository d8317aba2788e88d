// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-run %s --entry=rnn --print-values 16 | FileCheck %s --check-prefix=EVAL
// RUN: loom-run %s --entry=rnn_reverse --print-values 16 | FileCheck %s --check-prefix=REV
// RUN: loom-run %s --entry=rnn --print-values 16 --domain f64 | FileCheck %s --check-prefix=EVAL

// tg.scan round-trips (the optional operand groups and `reverse` print only
// when present), and the interpreter runs the step once per element of the
// sequence: h_t = relu(x_t + 0.5 h_{t-1}), Y stacked in sequence order.

// CHECK-LABEL: func.func @rnn
// CHECK: tg.scan inits(%{{.*}} : tensor<1x1xf32>) sequences(%{{.*}} : tensor<3x1x1xf32>) invariants(%{{.*}} : tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<3x1x1xf32>) {
// CHECK: ^bb0(%{{.*}}: tensor<1x1xf32>, %{{.*}}: tensor<1x1xf32>, %{{.*}}: tensor<1x1xf32>):
// CHECK: tg.yield
// x = 1, 2, 3: h = 1, 2.5, 4.25.
// EVAL: h: tensor<1x1xf32>
// EVAL-NEXT: values: 4.25{{$}}
// EVAL: y: tensor<3x1x1xf32>
// EVAL-NEXT: values: 1 2.5 4.25{{$}}
func.func @rnn() -> (tensor<1x1xf32> {tg.name = "h"}, tensor<3x1x1xf32> {tg.name = "y"}) {
  %x = tg.constant dense<[[[1.0]], [[2.0]], [[3.0]]]> : tensor<3x1x1xf32>
  %h0 = tg.constant dense<0.0> : tensor<1x1xf32>
  %r = tg.constant dense<0.5> : tensor<1x1xf32>
  %h, %y = tg.scan inits(%h0 : tensor<1x1xf32>) sequences(%x : tensor<3x1x1xf32>)
      invariants(%r : tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<3x1x1xf32>) {
  ^bb0(%hp: tensor<1x1xf32>, %xt: tensor<1x1xf32>, %w: tensor<1x1xf32>):
    %m = tg.matmul %hp, %w : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
    %s = tg.add %m, %xt : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
    %hn = tg.relu %s : tensor<1x1xf32>
    tg.yield %hn, %hn : tensor<1x1xf32>, tensor<1x1xf32>
  }
  return %h, %y : tensor<1x1xf32>, tensor<3x1x1xf32>
}

// A reverse scan runs t = 2, 1, 0 and stores step t's output at index t;
// no carried value, two sequences.
// CHECK-LABEL: func.func @rnn_reverse
// CHECK: tg.scan sequences(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<3x2xf32>) reverse -> (tensor<3x2xf32>)
// REV: y: tensor<3x2xf32>
// REV-NEXT: values: 11 22 33 44 55 66{{$}}
func.func @rnn_reverse() -> (tensor<3x2xf32> {tg.name = "y"}) {
  %a = tg.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %b = tg.constant dense<[[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]]> : tensor<3x2xf32>
  %y = tg.scan sequences(%a, %b : tensor<3x2xf32>, tensor<3x2xf32>) reverse -> (tensor<3x2xf32>) {
  ^bb0(%p: tensor<2xf32>, %q: tensor<2xf32>):
    %s = tg.add %p, %q : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    tg.yield %s : tensor<2xf32>
  }
  return %y : tensor<3x2xf32>
}
