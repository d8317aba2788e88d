// Products that read transposed operands (docs/Codegen/GPU.md, "Transposes
// read by products"): an attention's heads split off ([S, H, D] read as
// [H, S, D]), its keys transposed to [H, D, S] (B's rows contiguous, its
// columns not), its values split off like the queries, and a 2-d product of
// A transposed ([K, M] read as [M, K]: A's rows contiguous). Extents
// multiples of 4, not of the tiles.
module {
  func.func @main(%q: tensor<1x36x4x64xf32>, %k: tensor<1x36x4x64xf32>,
                  %v: tensor<1x36x4x64xf32>, %at: tensor<196x100xf32>,
                  %b: tensor<196x52xf32>)
      -> (tensor<1x4x36x64xf32>, tensor<100x52xf32>) {
    %qh = tg.transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x36x4x64xf32>) -> tensor<1x4x36x64xf32>
    %kt = tg.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x36x4x64xf32>) -> tensor<1x4x64x36xf32>
    %s = tg.matmul %qh, %kt : (tensor<1x4x36x64xf32>, tensor<1x4x64x36xf32>) -> tensor<1x4x36x36xf32>
    %p = tg.softmax %s : (tensor<1x4x36x36xf32>) -> tensor<1x4x36x36xf32>
    %vh = tg.transpose %v {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x36x4x64xf32>) -> tensor<1x4x36x64xf32>
    %o = tg.matmul %p, %vh : (tensor<1x4x36x36xf32>, tensor<1x4x36x64xf32>) -> tensor<1x4x36x64xf32>
    %a = tg.transpose %at {perm = array<i64: 1, 0>} : (tensor<196x100xf32>) -> tensor<100x196xf32>
    %c = tg.matmul %a, %b : (tensor<100x196xf32>, tensor<196x52xf32>) -> tensor<100x52xf32>
    return %o, %c : tensor<1x4x36x64xf32>, tensor<100x52xf32>
  }
}
