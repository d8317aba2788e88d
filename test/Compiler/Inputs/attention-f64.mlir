// An f64 tg.attention for test/Compiler/attention-codegen.test: no library
// step computes it, so it is generated code on every target (Vulkan's SPIR-V
// has no f64 exp: the GPU tests' cases are f32).
func.func @decode_f64(%q: tensor<2x4x1x16xf64>, %k: tensor<2x2x24x16xf64>, %v: tensor<2x2x24x16xf64>) -> tensor<2x4x1x16xf64> {
  %len = tg.constant dense<[24, 5]> : tensor<2xi64>
  %o = tg.attention %q, %k, %v, %len {scale = 0.25 : f64, causal = true} : (tensor<2x4x1x16xf64>, tensor<2x2x24x16xf64>, tensor<2x2x24x16xf64>, tensor<2xi64>) -> tensor<2x4x1x16xf64>
  return %o : tensor<2x4x1x16xf64>
}
