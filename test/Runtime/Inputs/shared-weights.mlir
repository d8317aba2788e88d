// One matrix three entries read: 512 rows (a prefill's products), 256 rows
// and one row (a decode step's). matmul-shared-repack.test and
// matmul-shared-repack-plan.test.
module {
  func.func @many(%x: tensor<1x512x64xf32>) -> tensor<1x512x96xf32> {
    %w = tg.weight "w" : tensor<64x96xf32>
    %y = tg.matmul %x, %w : (tensor<1x512x64xf32>, tensor<64x96xf32>) -> tensor<1x512x96xf32>
    return %y : tensor<1x512x96xf32>
  }
  func.func @few(%x: tensor<1x256x64xf32>) -> tensor<1x256x96xf32> {
    %w = tg.weight "w" : tensor<64x96xf32>
    %y = tg.matmul %x, %w : (tensor<1x256x64xf32>, tensor<64x96xf32>) -> tensor<1x256x96xf32>
    return %y : tensor<1x256x96xf32>
  }
  func.func @one(%x: tensor<1x1x64xf32>) -> tensor<1x1x96xf32> {
    %w = tg.weight "w" : tensor<64x96xf32>
    %y = tg.matmul %x, %w : (tensor<1x1x64xf32>, tensor<64x96xf32>) -> tensor<1x1x96xf32>
    return %y : tensor<1x1x96xf32>
  }
}
