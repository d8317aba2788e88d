// Products that take transposes (docs/Codegen/GPU.md, "Transposes taken by
// products"): an attention's heads split off ([S, H, D] read as [H, S, D]),
// its keys transposed to [H, D, S] (B's rows contiguous, its columns not),
// its values split off like the queries and its heads merged back after the
// product with them ([H, S, D] written as [S, H, D]), and a 2-d product of A
// transposed ([K, M] read as [M, K]: A's rows contiguous), and a batch of
// products whose result is rotated ([B, M, N] written as [N, B, M]: a
// permutation that is not its own inverse). Extents multiples of 4, not of
// the tiles.
module {
  func.func @main(%q: tensor<1x36x4x64xf32>, %k: tensor<1x36x4x64xf32>,
                  %v: tensor<1x36x4x64xf32>, %at: tensor<196x100xf32>,
                  %b: tensor<196x52xf32>, %x: tensor<3x36x64xf32>,
                  %y: tensor<3x64x20xf32>)
      -> (tensor<1x36x4x64xf32>, tensor<100x52xf32>, tensor<20x3x36xf32>) {
    %qh = tg.transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x36x4x64xf32>) -> tensor<1x4x36x64xf32>
    %kt = tg.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x36x4x64xf32>) -> tensor<1x4x64x36xf32>
    %s = tg.matmul %qh, %kt : (tensor<1x4x36x64xf32>, tensor<1x4x64x36xf32>) -> tensor<1x4x36x36xf32>
    %p = tg.softmax %s : (tensor<1x4x36x36xf32>) -> tensor<1x4x36x36xf32>
    %vh = tg.transpose %v {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x36x4x64xf32>) -> tensor<1x4x36x64xf32>
    %o = tg.matmul %p, %vh : (tensor<1x4x36x36xf32>, tensor<1x4x36x64xf32>) -> tensor<1x4x36x64xf32>
    %om = tg.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x36x64xf32>) -> tensor<1x36x4x64xf32>
    %a = tg.transpose %at {perm = array<i64: 1, 0>} : (tensor<196x100xf32>) -> tensor<100x196xf32>
    %c = tg.matmul %a, %b : (tensor<100x196xf32>, tensor<196x52xf32>) -> tensor<100x52xf32>
    %xy = tg.matmul %x, %y : (tensor<3x36x64xf32>, tensor<3x64x20xf32>) -> tensor<3x36x20xf32>
    %r = tg.transpose %xy {perm = array<i64: 2, 0, 1>} : (tensor<3x36x20xf32>) -> tensor<20x3x36xf32>
    return %om, %c, %r : tensor<1x36x4x64xf32>, tensor<100x52xf32>, tensor<20x3x36xf32>
  }
}
