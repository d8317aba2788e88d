// A planted unsound rule, marked proved: relu(x) -> x. The tg-superopt
// check must catch the rewrite it causes.
module {
  module @rule_bad attributes {loom.status = "proved", loom.axioms = []} {
    func.func @source(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      %r = tg.relu %x : tensor<4x6xf32>
      return %r : tensor<4x6xf32>
    }
    func.func @target(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      return %x : tensor<4x6xf32>
    }
  }
}
