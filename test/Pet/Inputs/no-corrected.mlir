// A partial rule without @corrected.
module {
  module @incomplete attributes {loom.pet.equal = []} {
    func.func @source(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    }
    func.func @target(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    }
  }
}
