// Comparisons to i1 tensors (bytes in storage buffers) and a select over
// them, with a broadcast operand.
module {
  func.func @main(%a: tensor<5x7xf32>, %b: tensor<7xf32>) -> (tensor<5x7xi1>, tensor<5x7xf32>) {
    %gt = tg.greater %a, %b : (tensor<5x7xf32>, tensor<7xf32>) -> tensor<5x7xi1>
    %s = tg.select %gt, %a, %b : (tensor<5x7xi1>, tensor<5x7xf32>, tensor<7xf32>) -> tensor<5x7xf32>
    return %gt, %s: tensor<5x7xi1>, tensor<5x7xf32>
  }
}
