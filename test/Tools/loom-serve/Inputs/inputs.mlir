// The inputs of the comparison with loom-run, as a safetensors file
// (loom-run --outputs): the rows endpoints.test sends.
func.func @main() -> (tensor<4x3xf32> {tg.name = "x"}) {
  %c = tg.constant dense<[[1.0, -2.0, 3.0], [0.5, 0.25, 1.0], [-4.0, 0.0, 2.0], [7.0, 1.0, 3.0]]> : tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}
