// A small CNN (convolutions with bias, relu, stride and padding; average
// pooling; tanh and a dense layer; softmax cross-entropy written with tg ops) whose
// training step compiled.test compiles and checks against the interpreter.
module attributes {tg.weights = "small-cnn.safetensors"} {
func.func @loss(%x: tensor<8x1x12x12xf32>, %t: tensor<8x10xf32>) -> tensor<f32> {
  %w1 = tg.weight "conv1.weight" : tensor<8x1x3x3xf32>
  %b1 = tg.weight "conv1.bias" : tensor<8xf32>
  %c1 = tg.conv %x, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<8x1x12x12xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>) -> tensor<8x8x12x12xf32>
  %p1 = tg.avgpool %c1 {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<8x8x12x12xf32>) -> tensor<8x8x6x6xf32>
  %w2 = tg.weight "conv2.weight" : tensor<16x8x3x3xf32>
  %c2 = tg.conv %p1, %w2 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<8x8x6x6xf32>, tensor<16x8x3x3xf32>) -> tensor<8x16x3x3xf32>
  %f = tg.reshape %c2 : (tensor<8x16x3x3xf32>) -> tensor<8x144xf32>
  %w3 = tg.weight "fc.weight" : tensor<144x10xf32>
  %b3 = tg.weight "fc.bias" : tensor<10xf32>
  %ft = tg.tanh %f : tensor<8x144xf32>
  %m = tg.matmul %ft, %w3 : (tensor<8x144xf32>, tensor<144x10xf32>) -> tensor<8x10xf32>
  %o = tg.add %m, %b3 : (tensor<8x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %s = tg.softmax %o : (tensor<8x10xf32>) -> tensor<8x10xf32>
  %l = tg.log %s : tensor<8x10xf32>
  %lt = tg.mul %l, %t : (tensor<8x10xf32>, tensor<8x10xf32>) -> tensor<8x10xf32>
  %r = tg.reduce_mean %lt {axes = array<i64: 0, 1>, keepdims = false} : (tensor<8x10xf32>) -> tensor<f32>
  %n = tg.neg %r : tensor<f32>
  return %n : tensor<f32>
}
}
