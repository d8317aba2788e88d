// tg.fragment names its backend by a registered name: the dialect keeps any
// name (a bare identifier prints as a keyword, any other name quoted), and
// compiling checks it against the backend registry.
//
// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: not loom-compile %s -o %t.so 2>&1 | FileCheck %s --check-prefix=UNREGISTERED

// CHECK-LABEL: func.func @names
func.func @names(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: tg.fragment <codegen>(%arg0)
  %a = tg.fragment <codegen> (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %r = tg.relu %v : tensor<4xf32>
    tg.yield %r : tensor<4xf32>
  }
  // CHECK: tg.fragment <"gpu-lib">(%{{.*}})
  // UNREGISTERED: error: 'tg.fragment' op is placed on 'gpu-lib', which is not a registered backend
  %b = tg.fragment <"gpu-lib"> (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %r = tg.tanh %v : tensor<4xf32>
    tg.yield %r : tensor<4xf32>
  }
  return %b : tensor<4xf32>
}
