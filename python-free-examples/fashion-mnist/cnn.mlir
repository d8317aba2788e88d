// A small convolutional network for Fashion-MNIST (28x28 grey images, 10
// classes) at batch 64: conv 1->32 3x3 pad 1 + relu, maxpool 2x2, conv 32->64
// 3x3 pad 1 + relu, maxpool 2x2, flatten (3136), dense 3136->128 + relu, dense
// 128->10. @logits is the network, @loss the mean softmax cross-entropy of its
// logits against the labels. Both use the same weights; --tg-autodiff=
// "function=loss ..." turns @loss into a training step and
// --tg-weights-to-arguments=function=logits makes @logits take the trained
// parameters (README.md beside this file). Filters are OIHW; dense matrices
// are stored [in, out] (tg.matmul's right operand).
module {
  func.func @logits(%x: tensor<64x1x28x28xf32> {tg.name = "images"}) -> (tensor<64x10xf32> {tg.name = "logits"}) {
    %w1 = tg.weight "conv1.weight" : tensor<32x1x3x3xf32>
    %b1 = tg.weight "conv1.bias" : tensor<32xf32>
    %c1 = tg.conv %x, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>}
        : (tensor<64x1x28x28xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<64x32x28x28xf32>
    %p1 = tg.maxpool %c1 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<64x32x28x28xf32>) -> tensor<64x32x14x14xf32>
    %w2 = tg.weight "conv2.weight" : tensor<64x32x3x3xf32>
    %b2 = tg.weight "conv2.bias" : tensor<64xf32>
    %c2 = tg.conv %p1, %w2, %b2 {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>}
        : (tensor<64x32x14x14xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>) -> tensor<64x64x14x14xf32>
    %p2 = tg.maxpool %c2 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<64x64x14x14xf32>) -> tensor<64x64x7x7xf32>
    %flat = tg.reshape %p2 : (tensor<64x64x7x7xf32>) -> tensor<64x3136xf32>
    %w3 = tg.weight "fc1.weight" : tensor<3136x128xf32>
    %b3 = tg.weight "fc1.bias" : tensor<128xf32>
    %m3 = tg.matmul %flat, %w3 : (tensor<64x3136xf32>, tensor<3136x128xf32>) -> tensor<64x128xf32>
    %a3 = tg.add %m3, %b3 : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
    %h3 = tg.relu %a3 : tensor<64x128xf32>
    %w4 = tg.weight "fc2.weight" : tensor<128x10xf32>
    %b4 = tg.weight "fc2.bias" : tensor<10xf32>
    %m4 = tg.matmul %h3, %w4 : (tensor<64x128xf32>, tensor<128x10xf32>) -> tensor<64x10xf32>
    %y = tg.add %m4, %b4 : (tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
    return %y : tensor<64x10xf32>
  }

  func.func @loss(%x: tensor<64x1x28x28xf32> {tg.name = "images"}, %labels: tensor<64xi64> {tg.name = "labels"}) -> (tensor<f32> {tg.name = "loss"}) {
    %w1 = tg.weight "conv1.weight" : tensor<32x1x3x3xf32>
    %b1 = tg.weight "conv1.bias" : tensor<32xf32>
    %c1 = tg.conv %x, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>}
        : (tensor<64x1x28x28xf32>, tensor<32x1x3x3xf32>, tensor<32xf32>) -> tensor<64x32x28x28xf32>
    %p1 = tg.maxpool %c1 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<64x32x28x28xf32>) -> tensor<64x32x14x14xf32>
    %w2 = tg.weight "conv2.weight" : tensor<64x32x3x3xf32>
    %b2 = tg.weight "conv2.bias" : tensor<64xf32>
    %c2 = tg.conv %p1, %w2, %b2 {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>}
        : (tensor<64x32x14x14xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>) -> tensor<64x64x14x14xf32>
    %p2 = tg.maxpool %c2 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>}
        : (tensor<64x64x14x14xf32>) -> tensor<64x64x7x7xf32>
    %flat = tg.reshape %p2 : (tensor<64x64x7x7xf32>) -> tensor<64x3136xf32>
    %w3 = tg.weight "fc1.weight" : tensor<3136x128xf32>
    %b3 = tg.weight "fc1.bias" : tensor<128xf32>
    %m3 = tg.matmul %flat, %w3 : (tensor<64x3136xf32>, tensor<3136x128xf32>) -> tensor<64x128xf32>
    %a3 = tg.add %m3, %b3 : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
    %h3 = tg.relu %a3 : tensor<64x128xf32>
    %w4 = tg.weight "fc2.weight" : tensor<128x10xf32>
    %b4 = tg.weight "fc2.bias" : tensor<10xf32>
    %m4 = tg.matmul %h3, %w4 : (tensor<64x128xf32>, tensor<128x10xf32>) -> tensor<64x10xf32>
    %y = tg.add %m4, %b4 : (tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
    %l = tg.softmax_cross_entropy %y, %labels : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
