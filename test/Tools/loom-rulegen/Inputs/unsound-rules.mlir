// A hand-written rules file with one sound rule and two planted unsound
// ones, all marked "proved": `loom-rulegen --verify-rules` must prove the
// first and reject the others with a counterexample (verify-rules.test).
module {
  // matmul(x, w1) + matmul(x, w2) = matmul(x, w1 + w2): sound.
  module @distributivity attributes {loom.status = "proved"} {
    func.func @source(%x: tensor<2x4xf32> {loom.name = "x1", loom.role = "activation"},
                      %w1: tensor<4x4xf32> {loom.name = "w1", loom.role = "weight"},
                      %w2: tensor<4x4xf32> {loom.name = "w2", loom.role = "weight"}) -> tensor<2x4xf32> {
      %0 = tg.matmul %x, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
      %1 = tg.matmul %x, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
      %2 = tg.add %0, %1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
      return %2 : tensor<2x4xf32>
    }
    func.func @target(%x: tensor<2x4xf32> {loom.name = "x1", loom.role = "activation"},
                      %w1: tensor<4x4xf32> {loom.name = "w1", loom.role = "weight"},
                      %w2: tensor<4x4xf32> {loom.name = "w2", loom.role = "weight"}) -> tensor<2x4xf32> {
      %0 = tg.add %w1, %w2 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      %1 = tg.matmul %x, %0 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
      return %1 : tensor<2x4xf32>
    }
  }

  // relu(x) = x: unsound (negative inputs).
  module @relu_identity attributes {loom.status = "proved"} {
    func.func @source(%x: tensor<2x4xf32> {loom.name = "x1", loom.role = "activation"}) -> tensor<2x4xf32> {
      %0 = tg.relu %x : tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    }
    func.func @target(%x: tensor<2x4xf32> {loom.name = "x1", loom.role = "activation"}) -> tensor<2x4xf32> {
      return %x : tensor<2x4xf32>
    }
  }

  // matmul(x, w1) + matmul(x, w2) = matmul(x, w1): unsound (drops a term).
  module @dropped_matmul attributes {loom.status = "proved"} {
    func.func @source(%x: tensor<2x4xf32> {loom.name = "x1", loom.role = "activation"},
                      %w1: tensor<4x4xf32> {loom.name = "w1", loom.role = "weight"},
                      %w2: tensor<4x4xf32> {loom.name = "w2", loom.role = "weight"}) -> tensor<2x4xf32> {
      %0 = tg.matmul %x, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
      %1 = tg.matmul %x, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
      %2 = tg.add %0, %1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
      return %2 : tensor<2x4xf32>
    }
    func.func @target(%x: tensor<2x4xf32> {loom.name = "x1", loom.role = "activation"},
                      %w1: tensor<4x4xf32> {loom.name = "w1", loom.role = "weight"},
                      %w2: tensor<4x4xf32> {loom.name = "w2", loom.role = "weight"}) -> tensor<2x4xf32> {
      %0 = tg.matmul %x, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    }
  }
}
