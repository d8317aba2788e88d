// A small hand-written rule set in the format of loom-rulegen's rules.mlir,
// used by the tg-superopt tests. Witness shapes use distinct values per
// independent dimension so that the rules apply at any real shape.

module {
  // Two matmuls sharing their left operand become one matmul on
  // concatenated weights and a split (TASO; a multi-output rule).
  module @rule_1 attributes {loom.status = "proved", loom.axioms = ["matmul_concat_rhs", "split_concat"]} {
    func.func @source(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>) {
      %a = tg.matmul %x, %w1 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      %b = tg.matmul %x, %w2 : (tensor<4x6xf32>, tensor<6x10xf32>) -> tensor<4x10xf32>
      return %a, %b : tensor<4x8xf32>, tensor<4x10xf32>
    }
    func.func @target(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>) {
      %w = tg.concat %w1, %w2 {axis = 1 : i64} : (tensor<6x8xf32>, tensor<6x10xf32>) -> tensor<6x18xf32>
      %m = tg.matmul %x, %w : (tensor<4x6xf32>, tensor<6x18xf32>) -> tensor<4x18xf32>
      %a, %b = tg.split %m {axis = 1 : i64, sizes = array<i64: 8, 10>} : (tensor<4x18xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>)
      return %a, %b : tensor<4x8xf32>, tensor<4x10xf32>
    }
  }

  // relu after a convolution fuses into it.
  module @rule_2 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x4x6x7xf32>, %w: tensor<5x4x3x3xf32>) -> tensor<1x5x6x7xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x7xf32>, tensor<5x4x3x3xf32>) -> tensor<1x5x6x7xf32>
      %r = tg.relu %c : tensor<1x5x6x7xf32>
      return %r : tensor<1x5x6x7xf32>
    }
    func.func @target(%x: tensor<1x4x6x7xf32>, %w: tensor<5x4x3x3xf32>) -> tensor<1x5x6x7xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x4x6x7xf32>, tensor<5x4x3x3xf32>) -> tensor<1x5x6x7xf32>
      return %c : tensor<1x5x6x7xf32>
    }
  }

  // Transposing twice is the identity.
  module @rule_3 attributes {loom.status = "proved", loom.axioms = ["transpose_involution"]} {
    func.func @source(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      %t = tg.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
      %u = tg.transpose %t {perm = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
      return %u : tensor<4x6xf32>
    }
    func.func @target(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      return %x : tensor<4x6xf32>
    }
  }

  // Matmul distributes over add (both directions are used).
  module @rule_4 attributes {loom.status = "proved", loom.axioms = ["matmul_add_rhs"]} {
    func.func @source(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x8xf32>) -> tensor<4x8xf32> {
      %a = tg.matmul %x, %w1 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      %b = tg.matmul %x, %w2 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      %s = tg.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      return %s : tensor<4x8xf32>
    }
    func.func @target(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x8xf32>) -> tensor<4x8xf32> {
      %w = tg.add %w1, %w2 : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xf32>
      %m = tg.matmul %x, %w : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      return %m : tensor<4x8xf32>
    }
  }

  // Not proved: never loaded.
  module @rule_5 attributes {loom.status = "timeout"} {
    func.func @source(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      %r = tg.relu %x : tensor<4x6xf32>
      return %r : tensor<4x6xf32>
    }
    func.func @target(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      return %x : tensor<4x6xf32>
    }
  }
}
