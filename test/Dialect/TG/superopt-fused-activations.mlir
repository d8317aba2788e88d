// RUN: loom-opt %s --split-input-file --tg-superopt="search=eqsat target=cpu check=true" | FileCheck %s
// RUN: loom-opt %s --split-input-file --tg-superopt="search=backtrack target=cpu check=true" | FileCheck %s

// The search starts from the activations of convolutions fused into them
// (search::fuseConvActivations, lib/Search/Optimize.cpp), as a library runs
// them: a relu of a convolution that nothing else reads costs nothing of its
// own. `concat(relu(conv), relu(conv))` -> `relu(concat(conv, conv))`
// (rule_235) saved one relu priced as a pass; it unfused two oneDNN post-ops
// into a generated pass over the concatenation (ShuffleNet-v2: 1-2% slower,
// after compiling and timing both versions). Now nothing fires, and the
// function is left as written (the fused form is the search's only).

// CHECK-LABEL: func.func @fused
// CHECK: tg.conv
// CHECK-NOT: activation
// CHECK-NEXT: tg.relu {{.*}} : tensor<1x8x6x6xf32>
// CHECK: tg.conv
// CHECK-NEXT: tg.relu {{.*}} : tensor<1x8x6x6xf32>
// CHECK-NEXT: tg.concat
// CHECK-NOT: tg.relu
// CHECK: return

func.func @fused(%x: tensor<1x8x6x6xf32>) -> tensor<1x16x6x6xf32> {
  %w1 = tg.weight "w1" : tensor<8x8x3x3xf32>
  %b1 = tg.weight "b1" : tensor<8xf32>
  %c1 = tg.conv %x, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %r1 = tg.relu %c1 : tensor<1x8x6x6xf32>
  %w2 = tg.weight "w2" : tensor<8x8x1x1xf32>
  %b2 = tg.weight "b2" : tensor<8xf32>
  %c2 = tg.conv %x, %w2, %b2 : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %r2 = tg.relu %c2 : tensor<1x8x6x6xf32>
  %y = tg.concat %r1, %r2 {axis = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x16x6x6xf32>
  return %y : tensor<1x16x6x6xf32>
}

// -----

// The counter-example: each convolution's result is read elsewhere too, so
// no library fuses its relu; the two relus are two passes and one relu of
// the concatenation is cheaper.

// CHECK-LABEL: func.func @unfused
// CHECK: tg.concat
// CHECK-NEXT: tg.relu {{.*}} : tensor<1x16x6x6xf32>

func.func @unfused(%x: tensor<1x8x6x6xf32>) -> (tensor<1x16x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) {
  %w1 = tg.weight "w1" : tensor<8x8x3x3xf32>
  %b1 = tg.weight "b1" : tensor<8xf32>
  %c1 = tg.conv %x, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %r1 = tg.relu %c1 : tensor<1x8x6x6xf32>
  %w2 = tg.weight "w2" : tensor<8x8x1x1xf32>
  %b2 = tg.weight "b2" : tensor<8xf32>
  %c2 = tg.conv %x, %w2, %b2 : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %r2 = tg.relu %c2 : tensor<1x8x6x6xf32>
  %y = tg.concat %r1, %r2 {axis = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x16x6x6xf32>
  return %y, %c1, %c2 : tensor<1x16x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>
}
