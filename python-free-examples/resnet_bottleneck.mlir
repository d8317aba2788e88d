// A ResNet-50 bottleneck block (conv2_x, first block: 64 -> 256 channels with
// a projection shortcut) at batch 1, 56x56, inference form with batchnorm.
// Weights live in resnet_bottleneck.safetensors beside this file; make them
// with:  loom-run resnet_bottleneck.mlir --write-random-weights resnet_bottleneck.safetensors
module attributes {tg.weights = "resnet_bottleneck.safetensors"} {
  func.func @main(%x: tensor<1x64x56x56xf32> {tg.name = "x"}) -> (tensor<1x256x56x56xf32> {tg.name = "y"}) {
    // 1x1 reduce
    %w1 = tg.weight "conv1.weight" : tensor<64x64x1x1xf32>
    %c1 = tg.conv %x, %w1 : (tensor<1x64x56x56xf32>, tensor<64x64x1x1xf32>) -> tensor<1x64x56x56xf32>
    %g1 = tg.weight "bn1.weight" : tensor<64xf32>
    %b1 = tg.weight "bn1.bias" : tensor<64xf32>
    %m1 = tg.weight "bn1.running_mean" : tensor<64xf32>
    %v1 = tg.weight "bn1.running_var" : tensor<64xf32>
    %n1 = tg.batchnorm %c1, %g1, %b1, %m1, %v1 : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    %r1 = tg.relu %n1 : tensor<1x64x56x56xf32>
    // 3x3
    %w2 = tg.weight "conv2.weight" : tensor<64x64x3x3xf32>
    %c2 = tg.conv %r1, %w2 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
    %g2 = tg.weight "bn2.weight" : tensor<64xf32>
    %b2 = tg.weight "bn2.bias" : tensor<64xf32>
    %m2 = tg.weight "bn2.running_mean" : tensor<64xf32>
    %v2 = tg.weight "bn2.running_var" : tensor<64xf32>
    %n2 = tg.batchnorm %c2, %g2, %b2, %m2, %v2 : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    %r2 = tg.relu %n2 : tensor<1x64x56x56xf32>
    // 1x1 expand
    %w3 = tg.weight "conv3.weight" : tensor<256x64x1x1xf32>
    %c3 = tg.conv %r2, %w3 : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x56x56xf32>
    %g3 = tg.weight "bn3.weight" : tensor<256xf32>
    %b3 = tg.weight "bn3.bias" : tensor<256xf32>
    %m3 = tg.weight "bn3.running_mean" : tensor<256xf32>
    %v3 = tg.weight "bn3.running_var" : tensor<256xf32>
    %n3 = tg.batchnorm %c3, %g3, %b3, %m3, %v3 : (tensor<1x256x56x56xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<1x256x56x56xf32>
    // projection shortcut
    %wd = tg.weight "downsample.0.weight" : tensor<256x64x1x1xf32>
    %cd = tg.conv %x, %wd : (tensor<1x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<1x256x56x56xf32>
    %gd = tg.weight "downsample.1.weight" : tensor<256xf32>
    %bd = tg.weight "downsample.1.bias" : tensor<256xf32>
    %md = tg.weight "downsample.1.running_mean" : tensor<256xf32>
    %vd = tg.weight "downsample.1.running_var" : tensor<256xf32>
    %nd = tg.batchnorm %cd, %gd, %bd, %md, %vd : (tensor<1x256x56x56xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<1x256x56x56xf32>
    // residual
    %s = tg.add %n3, %nd : (tensor<1x256x56x56xf32>, tensor<1x256x56x56xf32>) -> tensor<1x256x56x56xf32>
    %y = tg.relu %s : tensor<1x256x56x56xf32>
    return %y : tensor<1x256x56x56xf32>
  }
}
