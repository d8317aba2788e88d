func.func @main(%x: tensor<1x4x8xf32>, %wq: tensor<8x24xf32>, %g: tensor<8xf32>, %ids: tensor<1x4xi64>, %t: tensor<10x8xf32>) -> tensor<1x4x8xf32> {
  %e = tg.gather %t, %ids : (tensor<10x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  %x1 = tg.add %x, %e : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %qkv = tg.matmul %x1, %wq : (tensor<1x4x8xf32>, tensor<8x24xf32>) -> tensor<1x4x24xf32>
  %q, %k, %v = tg.split %qkv {axis = 2 : i64, sizes = array<i64: 8, 8, 8>} : (tensor<1x4x24xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>)
  %kt = tg.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<1x4x8xf32>) -> tensor<1x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x4x8xf32>, tensor<1x8x4xf32>) -> tensor<1x4x4xf32>
  %c = tg.constant dense<0.35> : tensor<1xf32>
  %ss = tg.mul %s, %c : (tensor<1x4x4xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %p = tg.softmax %ss : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x4x4xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %gl = tg.gelu %o : tensor<1x4x8xf32>
  %m = tg.reduce_mean %gl {axes = array<i64: -1>} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %d = tg.sub %gl, %m : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %n = tg.layernorm %d, %g, %g : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  %sl = tg.slice %n {starts = array<i64: 0, 0, 0>, limits = array<i64: 1, 4, 8>, strides = array<i64: 1, 2, 3>} : (tensor<1x4x8xf32>) -> tensor<1x2x3xf32>
  %pd = tg.pad %sl {low = array<i64: 0, 1, 2>, high = array<i64: 0, 1, 3>} : (tensor<1x2x3xf32>) -> tensor<1x4x8xf32>
  %y = tg.concat %pd, %n {axis = 0 : i64} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<2x4x8xf32>
  %z = tg.reduce_max %y {axes = array<i64: 0>} : (tensor<2x4x8xf32>) -> tensor<1x4x8xf32>
  %cl = tg.clip %z {min = -1.0 : f64, max = 1.0 : f64} : tensor<1x4x8xf32>
  %hc = tg.cast %cl : tensor<1x4x8xf32> to tensor<1x4x8xf16>
  %back = tg.cast %hc : tensor<1x4x8xf16> to tensor<1x4x8xf32>
  return %back : tensor<1x4x8xf32>
}
