// An elementwise chain past one grid dimension (families-vulkan.test):
// 8,388,609 elements are 65,537 blocks of 128, a grid of 65,535 x 2 whose
// last block holds one element.
func.func @main(%x: tensor<8388609xf32>, %y: tensor<8388609xf32>) -> tensor<8388609xf32> {
  %a = tg.mul %x, %y : (tensor<8388609xf32>, tensor<8388609xf32>) -> tensor<8388609xf32>
  %t = tg.tanh %a : tensor<8388609xf32>
  return %t : tensor<8388609xf32>
}
