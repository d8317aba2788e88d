// RUN: loom-opt %s -split-input-file -verify-diagnostics
// The verifier rules of tg.scan, one case per split.

// -----
func.func @different_lengths(%a: tensor<3x2xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{sequences have different lengths (3 and 4)}}
  %y = tg.scan sequences(%a, %b : tensor<3x2xf32>, tensor<4x2xf32>) -> (tensor<3x2xf32>) {
  ^bb0(%p: tensor<2xf32>, %q: tensor<2xf32>):
    tg.yield %p : tensor<2xf32>
  }
  return
}

// -----
func.func @no_sequence(%h: tensor<2xf32>) {
  // expected-error @+1 {{needs at least one sequence}}
  %y = "tg.scan"(%h) <{operandSegmentSizes = array<i32: 1, 0, 0>}> ({
  ^bb0(%p: tensor<2xf32>):
    tg.yield %p : tensor<2xf32>
  }) : (tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----
func.func @bad_arguments(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{body arguments have types 'tensor<3x2xf32>'; expected 'tensor<2xf32>' (the inits, a slice of each sequence, the invariants)}}
  %y = tg.scan sequences(%a : tensor<3x2xf32>) -> (tensor<3x3x2xf32>) {
  ^bb0(%p: tensor<3x2xf32>):
    tg.yield %p : tensor<3x2xf32>
  }
  return
}

// -----
func.func @carried_not_first(%h: tensor<4xf32>, %a: tensor<3x2xf32>) {
  // expected-error @+1 {{body yields 'tensor<2xf32>'; it must yield the carried values first, of types 'tensor<4xf32>'}}
  %f, %y = tg.scan inits(%h : tensor<4xf32>) sequences(%a : tensor<3x2xf32>) -> (tensor<4xf32>, tensor<3x2xf32>) {
  ^bb0(%c: tensor<4xf32>, %p: tensor<2xf32>):
    tg.yield %p : tensor<2xf32>
  }
  return
}

// -----
func.func @bad_results(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{has results of types 'tensor<2x2xf32>'; expected 'tensor<3x2xf32>' (the carried values, then each per-step output stacked)}}
  %y = tg.scan sequences(%a : tensor<3x2xf32>) -> (tensor<2x2xf32>) {
  ^bb0(%p: tensor<2xf32>):
    tg.yield %p : tensor<2xf32>
  }
  return
}

// -----
func.func @empty_sequence(%a: tensor<0x2xf32>) {
  // expected-error @+1 {{sequence of type 'tensor<0x2xf32>' has no leading axis of length at least 1}}
  %y = tg.scan sequences(%a : tensor<0x2xf32>) -> (tensor<0x2xf32>) {
  ^bb0(%p: tensor<2xf32>):
    tg.yield %p : tensor<2xf32>
  }
  return
}

// -----
func.func @isolated(%a: tensor<3x2xf32>, %w: tensor<2xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  %y = tg.scan sequences(%a : tensor<3x2xf32>) -> (tensor<3x2xf32>) {
  ^bb0(%p: tensor<2xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    %s = tg.add %p, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    tg.yield %s : tensor<2xf32>
  }
  return
}

// -----
func.func @no_weight(%a: tensor<3x2xf32>) {
  %y = tg.scan sequences(%a : tensor<3x2xf32>) -> (tensor<3x2xf32>) {
  ^bb0(%p: tensor<2xf32>):
    // expected-error @+1 {{cannot be inside a tg.scan (weights enter as invariants}}
    %w = tg.weight "w" : tensor<2xf32>
    %s = tg.add %p, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    tg.yield %s : tensor<2xf32>
  }
  return
}
