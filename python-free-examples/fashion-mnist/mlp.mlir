// A multilayer perceptron for Fashion-MNIST (28x28 grey images, 10 classes) at
// batch 64: 784 -> 256 relu -> 128 relu -> 10. @logits is the network, @loss
// the mean softmax cross-entropy of its logits against the labels. Both use the
// same weights; --tg-autodiff="function=loss ..." turns @loss into a training
// step and --tg-weights-to-arguments=function=logits makes @logits take the
// trained parameters (README.md beside this file). Matrices are stored
// [in, out] (tg.matmul's right operand); loom-train initialises them as
// PyTorch's nn.Linear does (uniform in +-1/sqrt(in)).
module {
  func.func @logits(%x: tensor<64x1x28x28xf32> {tg.name = "images"}) -> (tensor<64x10xf32> {tg.name = "logits"}) {
    %flat = tg.reshape %x : (tensor<64x1x28x28xf32>) -> tensor<64x784xf32>
    %w1 = tg.weight "fc1.weight" : tensor<784x256xf32>
    %b1 = tg.weight "fc1.bias" : tensor<256xf32>
    %m1 = tg.matmul %flat, %w1 : (tensor<64x784xf32>, tensor<784x256xf32>) -> tensor<64x256xf32>
    %a1 = tg.add %m1, %b1 : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    %h1 = tg.relu %a1 : tensor<64x256xf32>
    %w2 = tg.weight "fc2.weight" : tensor<256x128xf32>
    %b2 = tg.weight "fc2.bias" : tensor<128xf32>
    %m2 = tg.matmul %h1, %w2 : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
    %a2 = tg.add %m2, %b2 : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
    %h2 = tg.relu %a2 : tensor<64x128xf32>
    %w3 = tg.weight "fc3.weight" : tensor<128x10xf32>
    %b3 = tg.weight "fc3.bias" : tensor<10xf32>
    %m3 = tg.matmul %h2, %w3 : (tensor<64x128xf32>, tensor<128x10xf32>) -> tensor<64x10xf32>
    %y = tg.add %m3, %b3 : (tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
    return %y : tensor<64x10xf32>
  }

  func.func @loss(%x: tensor<64x1x28x28xf32> {tg.name = "images"}, %labels: tensor<64xi64> {tg.name = "labels"}) -> (tensor<f32> {tg.name = "loss"}) {
    %flat = tg.reshape %x : (tensor<64x1x28x28xf32>) -> tensor<64x784xf32>
    %w1 = tg.weight "fc1.weight" : tensor<784x256xf32>
    %b1 = tg.weight "fc1.bias" : tensor<256xf32>
    %m1 = tg.matmul %flat, %w1 : (tensor<64x784xf32>, tensor<784x256xf32>) -> tensor<64x256xf32>
    %a1 = tg.add %m1, %b1 : (tensor<64x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    %h1 = tg.relu %a1 : tensor<64x256xf32>
    %w2 = tg.weight "fc2.weight" : tensor<256x128xf32>
    %b2 = tg.weight "fc2.bias" : tensor<128xf32>
    %m2 = tg.matmul %h1, %w2 : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
    %a2 = tg.add %m2, %b2 : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
    %h2 = tg.relu %a2 : tensor<64x128xf32>
    %w3 = tg.weight "fc3.weight" : tensor<128x10xf32>
    %b3 = tg.weight "fc3.bias" : tensor<10xf32>
    %m3 = tg.matmul %h2, %w3 : (tensor<64x128xf32>, tensor<128x10xf32>) -> tensor<64x10xf32>
    %y = tg.add %m3, %b3 : (tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
    %l = tg.softmax_cross_entropy %y, %labels : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}
