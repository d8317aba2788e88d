// RUN: loom-opt %s -split-input-file -verify-diagnostics
// Every verifier rule of the tg dialect, one case per split.

// -----
func.func @binary_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes 2x3 and 4 do not broadcast}}
  %0 = tg.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----
func.func @binary_elem_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{operand element types differ: 'f32' vs 'f16'}}
  %0 = tg.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  return
}

// -----
func.func @binary_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'tg.sub' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tg.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return
}

// -----
func.func @binary_int(%a: tensor<2xi32>, %b: tensor<2xi32>) {
  // expected-error @+1 {{'tg.div' op operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = tg.div %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return
}

// -----
func.func @dynamic_shape(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{'tg.relu' op operand #0 must be statically shaped tensor}}
  %0 = tg.relu %a : tensor<?x3xf32>
  return
}

// -----
func.func @unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{'tg.exp' op operand #0 must be statically shaped tensor}}
  %0 = "tg.exp"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----
func.func @unary_int(%a: tensor<3xi64>) {
  // expected-error @+1 {{'tg.sigmoid' op operand #0 must be statically shaped tensor of 16-bit float}}
  %0 = tg.sigmoid %a : tensor<3xi64>
  return
}

// -----
func.func @unary_result_mismatch(%a: tensor<3xf32>) {
  // expected-error @+2 {{'tg.max' op inferred type(s) 'tensor<3xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tg.max %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf16>
  return
}

// -----
func.func @clip_bounds(%a: tensor<3xf32>) {
  // expected-error @+1 {{'tg.clip' op 'min' (6.000000e+00) must not exceed 'max' (0.000000e+00)}}
  %0 = tg.clip %a {min = 6.0 : f64, max = 0.0 : f64} : tensor<3xf32>
  return
}

// -----
func.func @clip_nan(%a: tensor<3xf32>) {
  // expected-error @+1 {{'tg.clip' op bounds must not be NaN}}
  %0 = tg.clip %a {min = 0x7FF8000000000000 : f64, max = 0.0 : f64} : tensor<3xf32>
  return
}

// -----
func.func @clip_missing(%a: tensor<3xf32>) {
  // expected-error @+1 {{'tg.clip' op requires attribute 'max'}}
  %0 = tg.clip %a {min = 0.0 : f64} : tensor<3xf32>
  return
}

// -----
func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{operands must have rank >= 2, got 1 and 2}}
  %0 = tg.matmul %a, %b : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @matmul_k(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{contraction sizes differ: lhs 2x3 has K = 3, rhs 4x5 has K = 4}}
  %0 = tg.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----
func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<3x3x5xf32>) {
  // expected-error @+1 {{batch dimensions 2 and 3 do not broadcast}}
  %0 = tg.matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x3x5xf32>) -> tensor<2x2x5xf32>
  return
}

// -----
func.func @matmul_elem(%a: tensor<2x3xf32>, %b: tensor<3x5xbf16>) {
  // expected-error @+1 {{operand element types differ}}
  %0 = tg.matmul %a, %b : (tensor<2x3xf32>, tensor<3x5xbf16>) -> tensor<2x5xf32>
  return
}

// -----
func.func @conv_rank(%x: tensor<3x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{input must have rank 3, 4 or 5 (NCW, NCHW or NCDHW: 1 to 3 spatial dimensions), got 3x8}}
  %0 = tg.conv %x, %w : (tensor<3x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----
func.func @conv_rank_4d(%x: tensor<1x1x2x2x2x2xf32>, %w: tensor<1x1x1x1x1x1xf32>) {
  // expected-error @+1 {{input must have rank 3, 4 or 5 (NCW, NCHW or NCDHW: 1 to 3 spatial dimensions), got 1x1x2x2x2x2}}
  %0 = tg.conv %x, %w : (tensor<1x1x2x2x2x2xf32>, tensor<1x1x1x1x1x1xf32>) -> tensor<1x1x2x2x2x2xf32>
  return
}

// -----
func.func @conv_filter_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{filter must have rank 4 (O, C / groups and 2 spatial dimensions, as the input), got 4x3x3}}
  %0 = tg.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----
func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{filter expects 2 channels per group but the input has 3 channels in 1 group(s)}}
  %0 = tg.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----
func.func @conv_groups(%x: tensor<1x6x8x8xf32>, %w: tensor<5x2x3x3xf32>) {
  // expected-error @+1 {{input channels 6 and output channels 5 must both be divisible by groups = 3}}
  %0 = tg.conv %x, %w {groups = 3 : i64} : (tensor<1x6x8x8xf32>, tensor<5x2x3x3xf32>) -> tensor<1x5x6x6xf32>
  return
}

// -----
func.func @conv_groups_zero(%x: tensor<1x6x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{'groups' must be >= 1, got 0}}
  %0 = tg.conv %x, %w {groups = 0 : i64} : (tensor<1x6x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----
func.func @conv_strides(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'strides' must have 2 entries (2 spatial dimension(s); the defaults are the 2-D ones), got 1}}
  %0 = tg.conv %x, %w {strides = array<i64: 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  return
}

// -----
func.func @conv_stride_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'strides' entries must be >= 1, got [0, 1]}}
  %0 = tg.conv %x, %w {strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  return
}

// -----
func.func @conv_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'pads' must have 4 entries (2 spatial dimension(s); the defaults are the 2-D ones), got 2}}
  %0 = tg.conv %x, %w {pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----
func.func @conv3d_default_strides(%x: tensor<1x3x4x8x8xf32>, %w: tensor<4x3x3x3x3xf32>) {
  // expected-error @+1 {{'strides' must have 3 entries (3 spatial dimension(s); the defaults are the 2-D ones), got 2}}
  %0 = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1, 1, 1>} : (tensor<1x3x4x8x8xf32>, tensor<4x3x3x3x3xf32>) -> tensor<1x4x4x8x8xf32>
  return
}

// -----
func.func @conv3d_window(%x: tensor<1x3x2x8x8xf32>, %w: tensor<4x3x3x3x3xf32>) {
  // expected-error @+1 {{window of extent 3 (kernel 3, dilation 1) does not fit the padded input extent 2 in dimension D}}
  %0 = tg.conv %x, %w {strides = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>} : (tensor<1x3x2x8x8xf32>, tensor<4x3x3x3x3xf32>) -> tensor<1x4x1x6x6xf32>
  return
}

// -----
func.func @conv1d_pads(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{'pads' must have 2 entries (1 spatial dimension(s); the defaults are the 2-D ones), got 4}}
  %0 = tg.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>} : (tensor<1x3x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6xf32>
  return
}

// -----
func.func @conv_neg_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'pads' entries must be >= 0, got [-1, 0, 0, 0]}}
  %0 = tg.conv %x, %w {pads = array<i64: -1, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x6xf32>
  return
}

// -----
func.func @conv_dilations(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'dilations' entries must be >= 1, got [1, 0]}}
  %0 = tg.conv %x, %w {dilations = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----
func.func @conv_window(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{window of extent 5 (kernel 3, dilation 2) does not fit the padded input extent 4 in dimension H}}
  %0 = tg.conv %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----
func.func @conv_overflow(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{window arithmetic overflows in dimension H}}
  %0 = tg.conv %x, %w {pads = array<i64: 9223372036854775807, 0, 1, 0>} : (tensor<1x3x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----
func.func @conv_empty_filter(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x0x3xf32>) {
  // expected-error @+1 {{filter spatial size must be >= 1, got 4x3x0x3}}
  %0 = tg.conv %x, %w : (tensor<1x3x4x4xf32>, tensor<4x3x0x3xf32>) -> tensor<1x4x5x2xf32>
  return
}

// -----
func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{bias must have shape 4, got 3}}
  %0 = tg.conv %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----
func.func @conv_filter_elem(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{filter element type 'f16' differs from the input element type 'f32'}}
  %0 = tg.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----
func.func @conv_bias_elem(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{bias element type 'bf16' differs from the input element type 'f32'}}
  %0 = tg.conv %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xbf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----
func.func @conv_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'tg.conv' op inferred type(s) 'tensor<1x4x6x6xf32>' are incompatible with return type(s) of operation 'tensor<1x4x8x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tg.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----
func.func @conv_activation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{expected ::loom::tg::Activation to be one of: none, relu, sigmoid, tanh}}
  // expected-error @+1 {{failed to parse TG_ActivationAttr parameter 'value'}}
  %0 = tg.conv %x, %w {activation = #tg<activation gelu>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----
func.func @pool_rank(%x: tensor<3x8xf32>) {
  // expected-error @+1 {{input must have rank 3, 4 or 5 (NCW, NCHW or NCDHW: 1 to 3 spatial dimensions), got 3x8}}
  %0 = tg.maxpool %x {kernel_size = array<i64: 2, 2>} : (tensor<3x8xf32>) -> tensor<3x4xf32>
  return
}

// -----
func.func @pool3d_kernel(%x: tensor<1x3x4x8x8xf32>) {
  // expected-error @+1 {{'kernel_size' must have 3 entries (3 spatial dimension(s); the defaults are the 2-D ones), got 2}}
  %0 = tg.avgpool %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x3x4x8x8xf32>) -> tensor<1x3x2x4x4xf32>
  return
}

// -----
func.func @maxpool3d_grad(%x: tensor<1x3x4x8x8xf32>, %g: tensor<1x3x2x4x4xf32>) {
  // expected-error @+1 {{3-D max pooling has no gradient op: input must have rank 3 or 4, got 1x3x4x8x8}}
  %0 = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>} : (tensor<1x3x4x8x8xf32>, tensor<1x3x2x4x4xf32>) -> tensor<1x3x4x8x8xf32>
  return
}

// -----
func.func @pool_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'kernel_size' entries must be >= 1, got [0, 2]}}
  %0 = tg.maxpool %x {kernel_size = array<i64: 0, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----
func.func @pool_kernel_missing(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'tg.avgpool' op requires attribute 'kernel_size'}}
  %0 = tg.avgpool %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----
func.func @pool_pads(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{pads [2, 0, 0, 0] must be smaller than the kernel [2, 2]}}
  %0 = tg.avgpool %x {kernel_size = array<i64: 2, 2>, pads = array<i64: 2, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x5x4xf32>
  return
}

// -----
func.func @pool_window(%x: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{window of extent 3 (kernel 3, dilation 1) does not fit the padded input extent 2 in dimension H}}
  %0 = tg.maxpool %x {kernel_size = array<i64: 3, 1>} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x2xf32>
  return
}

// -----
func.func @maxpool_grad_shape(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{grad_output shape 1x3x4x4 is not the maxpool result shape 1x3x3x3 of input 1x3x8x8}}
  %0 = tg.maxpool_grad %x, %g {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @maxpool_grad_element_type(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x4x4xf64>) {
  // expected-error @+1 {{grad_output element type 'f64' differs from the input element type 'f32'}}
  %0 = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf64>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @maxpool_grad_pads(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{pads [2, 0, 0, 0] must be smaller than the kernel [2, 2]}}
  %0 = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 2, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @maxpool_grad_result(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x4x4xf32>) {
  // expected-error @+2 {{'tg.maxpool_grad' op inferred type(s) 'tensor<1x3x8x8xf32>' are incompatible with return type(s) of operation 'tensor<1x3x4x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----
func.func @maxpool_grad_no_kernel(%x: tensor<1x3x8x8xf32>, %g: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'tg.maxpool_grad' op requires attribute 'kernel_size'}}
  %0 = tg.maxpool_grad %x, %g : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @gap_rank(%x: tensor<3x8xf32>) {
  // expected-error @+1 {{input must have rank 3, 4 or 5 (NCW, NCHW or NCDHW: 1 to 3 spatial dimensions), got 3x8}}
  %0 = tg.global_avgpool %x : (tensor<3x8xf32>) -> tensor<3x1xf32>
  return
}

// -----
func.func @gap_empty(%x: tensor<1x3x0x8xf32>) {
  // expected-error @+1 {{spatial dimensions must be non-empty}}
  %0 = tg.global_avgpool %x : (tensor<1x3x0x8xf32>) -> tensor<1x3x1x1xf32>
  return
}

// -----
func.func @cast_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tg.cast' op changes the shape from 'tensor<2x3xf32>' to 'tensor<3x2xf16>'; a cast keeps the shape}}
  %0 = tg.cast %x : tensor<2x3xf32> to tensor<3x2xf16>
  return
}

// -----
func.func @cast_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tg.cast' op result #0 must be statically shaped tensor of}}
  %0 = tg.cast %x : tensor<2x3xf32> to tensor<2x3xi8>
  return
}

// -----
func.func @transpose_size(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'perm' has 3 entries but the input has rank 2}}
  %0 = tg.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----
func.func @transpose_perm(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'perm' [1, 1] is not a permutation of [0, 2)}}
  %0 = tg.transpose %x {perm = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  return
}

// -----
func.func @transpose_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'perm' [0, 2] is not a permutation of [0, 2)}}
  %0 = tg.transpose %x {perm = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----
func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tg.reshape' op cannot reshape 'tensor<2x3xf32>' (6 elements) to 'tensor<7xf32>' (7 elements)}}
  %0 = tg.reshape %x : (tensor<2x3xf32>) -> tensor<7xf32>
  return
}

// -----
func.func @reshape_elem(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'tg.reshape' op changes the element type from 'f32' to 'f16'; use tg.cast}}
  %0 = tg.reshape %x : (tensor<2x3xf32>) -> tensor<6xf16>
  return
}

// -----
func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2 (expected [-2, 2))}}
  %0 = tg.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----
func.func @concat_shape(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+1 {{input 1 has shape 3x3, which differs from input 0's 2x3 outside axis 1}}
  %0 = tg.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return
}

// -----
func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+1 {{input 1 has rank 3, input 0 has rank 2}}
  %0 = tg.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<4x3xf32>
  return
}

// -----
func.func @concat_elem(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{input 1 has element type 'f16', input 0 has 'f32'}}
  %0 = tg.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  return
}

// -----
func.func @concat_empty() {
  // expected-error @+1 {{needs at least one input}}
  %0 = tg.concat {axis = 0 : i64} : () -> tensor<4x3xf32>
  return
}

// -----
func.func @split_sum(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'sizes' [2, 3] sum to 5 but axis 1 has size 6}}
  %0:2 = tg.split %x {axis = 1 : i64, sizes = array<i64: 2, 3>} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
  return
}

// -----
func.func @split_zero(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'sizes' entries must be >= 1, got [0, 6]}}
  %0:2 = tg.split %x {axis = 1 : i64, sizes = array<i64: 0, 6>} : (tensor<2x6xf32>) -> (tensor<2x0xf32>, tensor<2x6xf32>)
  return
}

// -----
func.func @split_empty(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'sizes' must not be empty}}
  tg.split %x {axis = 1 : i64, sizes = array<i64>} : (tensor<2x6xf32>) -> ()
  return
}

// -----
func.func @split_axis(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0:2 = tg.split %x {axis = -3 : i64, sizes = array<i64: 3, 3>} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return
}

// -----
func.func @split_results(%x: tensor<2x6xf32>) {
  // expected-error @+2 {{'tg.split' op inferred type(s) 'tensor<2x3xf32>', 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tg.split %x {axis = 1 : i64, sizes = array<i64: 3, 3>} : (tensor<2x6xf32>) -> (tensor<2x3xf32>)
  return
}

// -----
func.func @slice_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'starts' must have 2 entries, got 1}}
  %0 = tg.slice %x {starts = array<i64: 0>, limits = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----
func.func @slice_bounds(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 1: need 0 <= start (2) <= limit (9) <= size (8)}}
  %0 = tg.slice %x {starts = array<i64: 0, 2>, limits = array<i64: 4, 9>} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return
}

// -----
func.func @slice_reversed(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dimension 0: need 0 <= start (3) <= limit (1) <= size (4)}}
  %0 = tg.slice %x {starts = array<i64: 3, 0>, limits = array<i64: 1, 8>} : (tensor<4x8xf32>) -> tensor<0x8xf32>
  return
}

// -----
func.func @slice_stride(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'strides' entries must be >= 1, got [1, -1]}}
  %0 = tg.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, strides = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----
func.func @slice_strides_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'strides' must have 2 entries, got 3}}
  %0 = tg.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, strides = array<i64: 1, 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----
func.func @pad_negative(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'low' entries must be >= 0, got [0, -1]}}
  %0 = tg.pad %x {low = array<i64: 0, -1>, high = array<i64: 0, 0>} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return
}

// -----
func.func @pad_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'high' must have 2 entries, got 1}}
  %0 = tg.pad %x {low = array<i64: 0, 1>, high = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<4x9xf32>
  return
}

// -----
func.func @pad_overflow(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{padded size of dimension 1 overflows}}
  %0 = tg.pad %x {low = array<i64: 0, 9223372036854775800>, high = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<4x9xf32>
  return
}

// -----
func.func @enlarge_rank(%w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{input must be a rank-4 filter (OIHW), got 4x3x3}}
  %0 = tg.enlarge %w {kernel_size = array<i64: 3, 3>} : (tensor<4x3x3xf32>) -> tensor<4x3x3xf32>
  return
}

// -----
func.func @enlarge_odd(%w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{'kernel_size' [2, 3] must be at least the filter's 1x1 and differ from it by an even amount in each dimension}}
  %0 = tg.enlarge %w {kernel_size = array<i64: 2, 3>} : (tensor<4x3x1x1xf32>) -> tensor<4x3x2x3xf32>
  return
}

// -----
func.func @enlarge_shrink(%w: tensor<4x3x5x5xf32>) {
  // expected-error @+1 {{'kernel_size' [3, 3] must be at least the filter's 5x5}}
  %0 = tg.enlarge %w {kernel_size = array<i64: 3, 3>} : (tensor<4x3x5x5xf32>) -> tensor<4x3x3x3xf32>
  return
}

// -----
func.func @enlarge_count(%w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{'kernel_size' must have 2 entries, got 1}}
  %0 = tg.enlarge %w {kernel_size = array<i64: 3>} : (tensor<4x3x1x1xf32>) -> tensor<4x3x3x3xf32>
  return
}

// -----
func.func @broadcast_bad(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{'tg.broadcast_to' op operand type 'tensor<3x2xf32>' does not broadcast to 'tensor<3x4xf32>'}}
  %0 = tg.broadcast_to %x : (tensor<3x2xf32>) -> tensor<3x4xf32>
  return
}

// -----
func.func @broadcast_rank(%x: tensor<1x3x2xf32>) {
  // expected-error @+1 {{'tg.broadcast_to' op operand type 'tensor<1x3x2xf32>' does not broadcast to 'tensor<3x2xf32>'}}
  %0 = tg.broadcast_to %x : (tensor<1x3x2xf32>) -> tensor<3x2xf32>
  return
}

// -----
func.func @broadcast_elem(%x: tensor<3xf32>) {
  // expected-error @+1 {{'tg.broadcast_to' op changes the element type from 'f32' to 'f16'}}
  %0 = tg.broadcast_to %x : (tensor<3xf32>) -> tensor<2x3xf16>
  return
}

// -----
func.func @gather_indices(%t: tensor<30x16xf32>, %i: tensor<5xf32>) {
  // expected-error @+1 {{'tg.gather' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tg.gather %t, %i : (tensor<30x16xf32>, tensor<5xf32>) -> tensor<5x16xf32>
  return
}

// -----
func.func @gather_axis(%t: tensor<30x16xf32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = tg.gather %t, %i {axis = 2 : i64} : (tensor<30x16xf32>, tensor<5xi64>) -> tensor<5x16xf32>
  return
}

// -----
func.func @gather_scalar(%t: tensor<f32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{data must have rank >= 1}}
  %0 = tg.gather %t, %i : (tensor<f32>, tensor<5xi64>) -> tensor<5xf32>
  return
}

// -----
func.func @gather_empty(%t: tensor<0x16xf32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{cannot gather from an empty axis}}
  %0 = tg.gather %t, %i : (tensor<0x16xf32>, tensor<5xi64>) -> tensor<5x16xf32>
  return
}

// -----
func.func @reduce_empty_axes(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'axes' must not be empty}}
  %0 = tg.reduce_sum %x {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----
func.func @reduce_dup(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{reduction axis 1 appears twice in [1, -1]}}
  %0 = tg.reduce_mean %x {axes = array<i64: 1, -1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return
}

// -----
func.func @reduce_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{reduction axis 2 is out of range for rank 2}}
  %0 = tg.reduce_max %x {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----
func.func @reduce_zero(%x: tensor<2x0xf32>) {
  // expected-error @+1 {{cannot reduce the empty axis 1}}
  %0 = tg.reduce_max %x {axes = array<i64: 1>} : (tensor<2x0xf32>) -> tensor<2x1xf32>
  return
}

// -----
func.func @reduce_keepdims(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'tg.reduce_sum' op inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<2x1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tg.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return
}

// -----
func.func @softmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 5 is out of range for rank 2}}
  %0 = tg.softmax %x {axis = 5 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----
func.func @softmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{input must have rank >= 1}}
  %0 = tg.softmax %x : (tensor<f32>) -> tensor<f32>
  return
}

// -----
func.func @layernorm_shape(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{scale must have shape 4 (input dims from axis 2), got 3x4}}
  %0 = tg.layernorm %x, %g, %b : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----
func.func @layernorm_bias(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must have shape 3x4 (input dims from axis 1), got 4}}
  %0 = tg.layernorm %x, %g, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----
func.func @layernorm_elem(%x: tensor<2x4xf32>, %g: tensor<4xf16>) {
  // expected-error @+1 {{scale element type 'f16' differs from the input element type 'f32'}}
  %0 = tg.layernorm %x, %g, %g : (tensor<2x4xf32>, tensor<4xf16>, tensor<4xf16>) -> tensor<2x4xf32>
  return
}

// -----
func.func @layernorm_axis(%x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = tg.layernorm %x, %g, %g {axis = -3 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----
func.func @layernorm_scalar(%x: tensor<f32>, %g: tensor<f32>) {
  // expected-error @+1 {{input must have rank >= 1}}
  %0 = tg.layernorm %x, %g, %g : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----
func.func @batchnorm_param(%x: tensor<1x4x2x2xf32>, %c: tensor<4xf32>, %d: tensor<3xf32>) {
  // expected-error @+1 {{variance must have shape 4 (the channel dimension), got 3}}
  %0 = tg.batchnorm %x, %c, %c, %c, %d : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<1x4x2x2xf32>
  return
}

// -----
func.func @batchnorm_rank(%x: tensor<4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{input must have rank >= 2 (N, C, ...)}}
  %0 = tg.batchnorm %x, %c, %c, %c, %c : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @batchnorm_elem(%x: tensor<1x4xf32>, %c: tensor<4xf32>, %h: tensor<4xbf16>) {
  // expected-error @+1 {{mean element type 'bf16' differs from the input element type 'f32'}}
  %0 = tg.batchnorm %x, %c, %c, %h, %c : (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>) -> tensor<1x4xf32>
  return
}

// -----
func.func @weight_empty() {
  // expected-error @+1 {{'tg.weight' op needs a non-empty weight name}}
  %0 = tg.weight "" : tensor<4xf32>
  return
}

// -----
func.func @resize_rank(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'sizes' must have 4 entries, got 2}}
  %0 = tg.resize %x {sizes = array<i64: 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<8x8xf32>
  return
}

// -----
func.func @resize_zero_size(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'sizes' entries must be >= 1, got [1, 3, 0, 8]}}
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 0, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x0x8xf32>
  return
}

// -----
func.func @resize_empty_input(%x: tensor<1x3x0x4xf32>) {
  // expected-error @+1 {{cannot resize the empty input 1x3x0x4}}
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 2, 8>} : (tensor<1x3x0x4xf32>) -> tensor<1x3x2x8xf32>
  return
}

// -----
func.func @resize_scales(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'scales' entries must be positive and finite, got 0}}
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 8, 8>, scales = array<f64: 1.0, 1.0, 0.0, 2.0>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @resize_scales_count(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{'scales' must have 4 entries, got 2}}
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 8, 8>, scales = array<f64: 2.0, 2.0>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @resize_mode(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+2 {{expected ::loom::tg::ResizeMode to be one of: nearest, linear, cubic}}
  // expected-error @+1 {{failed to parse TG_ResizeModeAttr parameter 'value'}}
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 8, 8>, mode = #tg<resize_mode bilinear>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @resize_mode_string(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+1 {{attribute 'mode' failed to satisfy constraint: interpolation of tg.resize (ONNX Resize `mode`)}}
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 8, 8>, mode = "linear"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @resize_coordinate_mode(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+2 {{expected ::loom::tg::ResizeCoordinateMode to be one of: half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn}}
  // expected-error @+1 {{failed to parse TG_ResizeCoordinateModeAttr parameter 'value'}}
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 8, 8>, coordinate_transformation_mode = #tg<coordinate_mode tf_crop_and_resize>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @resize_nearest_mode(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+2 {{expected ::loom::tg::ResizeNearestMode to be one of: round_prefer_floor, round_prefer_ceil, floor, ceil}}
  // expected-error @+1 {{failed to parse TG_ResizeNearestModeAttr parameter 'value'}}
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 8, 8>, nearest_mode = #tg<nearest_mode round>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----
func.func @resize_wrong_result(%x: tensor<1x3x4x4xf32>) {
  // expected-error @+2 {{'tg.resize' op inferred type(s) 'tensor<1x3x8x8xf32>' are incompatible with return type(s) of operation 'tensor<1x3x8x9xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tg.resize %x {sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x9xf32>
  return
}

// -----
func.func @resize_int(%x: tensor<4xi64>) {
  // expected-error @+1 {{'tg.resize' op operand #0 must be statically shaped tensor of 16-bit float}}
  %0 = tg.resize %x {sizes = array<i64: 8>} : (tensor<4xi64>) -> tensor<8xi64>
  return
}

// -----
func.func @weight_dynamic() {
  // expected-error @+1 {{'tg.weight' op result #0 must be statically shaped tensor}}
  %0 = tg.weight "w" : tensor<?xf32>
  return
}

// -----
func.func @constant_type() {
  // expected-error @+1 {{'tg.constant' op result #0 must be statically shaped tensor}}
  %0 = tg.constant dense<1> : tensor<2xi8>
  return
}

// -----
// expected-error @+1 {{'tg.weights' must be a string (a path to a safetensors file), got 3 : i64}}
module attributes {tg.weights = 3} {
}

// -----
// expected-error @+1 {{'tg.weights' is only valid on a builtin.module}}
func.func @weights_on_func() attributes {tg.weights = "w.safetensors"} {
  return
}

// -----
// expected-error @+1 {{unknown tg dialect attribute 'tg.bogus'}}
module attributes {tg.bogus = 1} {
}

// -----
func.func @compare_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes 2x3 and 4 do not broadcast}}
  %0 = tg.greater %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xi1>
  return
}

// -----
func.func @compare_elem_mismatch(%a: tensor<2xf32>, %b: tensor<2xi64>) {
  // expected-error @+1 {{operand element types differ: 'f32' vs 'i64'}}
  %0 = tg.equal %a, %b : (tensor<2xf32>, tensor<2xi64>) -> tensor<2xi1>
  return
}

// -----
func.func @compare_result_not_bool(%a: tensor<2xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'tg.less' op result #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = tg.less %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----
func.func @select_cond_not_bool(%c: tensor<2xf32>, %a: tensor<2xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'tg.select' op operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = tg.select %c, %a, %b : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----
func.func @select_elem_mismatch(%c: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{true and false values have different element types: 'f32' vs 'f16'}}
  %0 = tg.select %c, %a, %b : (tensor<2xi1>, tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return
}

// -----
func.func @select_no_broadcast(%c: tensor<3xi1>, %a: tensor<2x1xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{condition, true and false shapes 3, 2x1 and 4 do not broadcast}}
  %0 = tg.select %c, %a, %b : (tensor<3xi1>, tensor<2x1xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----
func.func @scatter_add_index_shape(%u: tensor<4x3xf32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{updates dims 0..1 are 4, not the indices shape 5}}
  %0 = tg.scatter_add %u, %i {dim_size = 7 : i64} : (tensor<4x3xf32>, tensor<5xi64>) -> tensor<7x3xf32>
  return
}

// -----
func.func @scatter_add_axis(%u: tensor<4x3xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = tg.scatter_add %u, %i {axis = 2 : i64, dim_size = 7 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<7x3xf32>
  return
}

// -----
func.func @scatter_add_rank(%u: tensor<4xf32>, %i: tensor<4x1xi64>) {
  // expected-error @+1 {{updates rank 1 is less than the indices rank 2}}
  %0 = tg.scatter_add %u, %i {dim_size = 7 : i64} : (tensor<4xf32>, tensor<4x1xi64>) -> tensor<7xf32>
  return
}

// -----
func.func @scatter_add_dim_size(%u: tensor<4xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{'dim_size' must be >= 0, got -1}}
  %0 = tg.scatter_add %u, %i {dim_size = -1 : i64} : (tensor<4xf32>, tensor<4xi64>) -> tensor<7xf32>
  return
}

// -----
func.func @scatter_add_empty(%u: tensor<4xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{cannot scatter into an empty axis}}
  %0 = tg.scatter_add %u, %i {dim_size = 0 : i64} : (tensor<4xf32>, tensor<4xi64>) -> tensor<0xf32>
  return
}

// -----
func.func @scatter_add_no_dim_size(%u: tensor<4xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{'tg.scatter_add' op requires attribute 'dim_size'}}
  %0 = tg.scatter_add %u, %i : (tensor<4xf32>, tensor<4xi64>) -> tensor<7xf32>
  return
}

// -----
func.func @sce_rank(%x: tensor<2x3x4xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{logits must be rank 2 ([N, C]), got 2x3x4}}
  %0 = tg.softmax_cross_entropy %x, %l : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<f32>
  return
}

// -----
func.func @sce_labels(%x: tensor<2x3xf32>, %l: tensor<3xi64>) {
  // expected-error @+1 {{labels shape 3 is not [N] = 2}}
  %0 = tg.softmax_cross_entropy %x, %l : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<f32>
  return
}

// -----
func.func @sce_empty(%x: tensor<2x0xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{logits 2x0 must have a row and a class}}
  %0 = tg.softmax_cross_entropy %x, %l : (tensor<2x0xf32>, tensor<2xi64>) -> tensor<f32>
  return
}

// -----
func.func @sce_float_labels(%x: tensor<2x3xf32>, %l: tensor<2xf32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tg.softmax_cross_entropy %x, %l : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<f32>
  return
}

// -----
func.func @mse_shapes(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{operand types 'tensor<2x3xf32>' and 'tensor<3xf32>' differ}}
  %0 = tg.mse_loss %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<f32>
  return
}

// -----
func.func @mse_result(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+2 {{'tg.mse_loss' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tg.mse_loss %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<1xf32>
  return
}

// -----
func.func @if_condition_elements(%c: tensor<2xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{condition must have one element, it has type 'tensor<2xi1>'}}
  %y = tg.if %c : tensor<2xi1> -> (tensor<4xf32>) {
    tg.yield %x : tensor<4xf32>
  } else {
    tg.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----
func.func @if_yield_types(%c: tensor<i1>, %x: tensor<4xf32>, %z: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{the else region yields 'tensor<2xf32>' but the op has results of type 'tensor<4xf32>'}}
  %y = tg.if %c : tensor<i1> -> (tensor<4xf32>) {
    tg.yield %x : tensor<4xf32>
  } else {
    tg.yield %z : tensor<2xf32>
  }
  return %y : tensor<4xf32>
}

// -----
func.func @if_condition_type(%c: tensor<f32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %y = tg.if %c : tensor<f32> -> (tensor<4xf32>) {
    tg.yield %x : tensor<4xf32>
  } else {
    tg.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----
func.func @if_in_fragment(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tg.fragment <codegen> (%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%cc: tensor<i1>, %xx: tensor<4xf32>):
    // expected-error @+1 {{cannot be inside a tg.fragment (weights enter as inputs; fragments do not nest; fragments form inside the regions of a tg.if)}}
    %r = tg.if %cc : tensor<i1> -> (tensor<4xf32>) {
      tg.yield %xx : tensor<4xf32>
    } else {
      tg.yield %xx : tensor<4xf32>
    }
    tg.yield %r : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

func.func @mod_float_floored(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{float operands ('f32') need fmod = true: the floored remainder is for integers, as in ONNX Mod}}
  %0 = tg.mod %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @mod_element_types(%a: tensor<3xi64>, %b: tensor<3xi32>) {
  // expected-error @+1 {{operand element types differ: 'i64' vs 'i32'}}
  %0 = tg.mod %a, %b : (tensor<3xi64>, tensor<3xi32>) -> tensor<3xi64>
  return
}

// -----

func.func @mod_bool(%a: tensor<3xi1>, %b: tensor<3xi1>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = tg.mod %a, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return
}

// -----
func.func @bound_no_such_dim(%x: tensor<8x4xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'tg.bound' op dimension 2 does not exist in 'tensor<8x4xf32>' (rank 2)}}
  %0 = tg.bound %x, %n {dim = 2 : i64} : tensor<8x4xf32>, tensor<i64>
  return
}

// -----
func.func @bound_dynamic_dim(%x: tensor<?x4xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{'tg.bound' op dimension 0 of 'tensor<?x4xf32>' is dynamic; a bound pads a static dimension}}
  %0 = tg.bound %x, %n {dim = 0 : i64} : tensor<?x4xf32>, tensor<i64>
  return
}

// -----
func.func @bound_length_not_i64(%x: tensor<8xf32>, %n: tensor<i32>) {
  // expected-error @+1 {{'tg.bound' op length must be a rank-0 i64 tensor (tensor<i64>), not 'tensor<i32>'}}
  %0 = tg.bound %x, %n {dim = 0 : i64} : tensor<8xf32>, tensor<i32>
  return
}

// -----
func.func @bound_length_not_rank0(%x: tensor<8xf32>, %n: tensor<1xi64>) {
  // expected-error @+1 {{'tg.bound' op length must be a rank-0 i64 tensor (tensor<i64>), not 'tensor<1xi64>'}}
  %0 = tg.bound %x, %n {dim = 0 : i64} : tensor<8xf32>, tensor<1xi64>
  return
}

// -----
func.func @update_slice_rows(%b: tensor<4x2xf32>, %u: tensor<5x2xf32>, %o: tensor<i64>) {
  // expected-error @+1 {{update shape 5x2 does not fit base shape 4x2 along axis 0 (equal elsewhere, at most the base's on the axis)}}
  %0 = tg.update_slice %b, %u, %o {axis = 0 : i64} : (tensor<4x2xf32>, tensor<5x2xf32>, tensor<i64>) -> tensor<4x2xf32>
  return
}

// -----
func.func @update_slice_other_dim(%b: tensor<4x2xf32>, %u: tensor<1x3xf32>, %o: tensor<i64>) {
  // expected-error @+1 {{update shape 1x3 does not fit base shape 4x2 along axis 0}}
  %0 = tg.update_slice %b, %u, %o {axis = 0 : i64} : (tensor<4x2xf32>, tensor<1x3xf32>, tensor<i64>) -> tensor<4x2xf32>
  return
}

// -----
func.func @update_slice_type(%b: tensor<4x2xf32>, %u: tensor<1x2xf16>, %o: tensor<i64>) {
  // expected-error @+1 {{update element type 'f16' is not the base's 'f32'}}
  %0 = tg.update_slice %b, %u, %o {axis = 0 : i64} : (tensor<4x2xf32>, tensor<1x2xf16>, tensor<i64>) -> tensor<4x2xf32>
  return
}

// -----
func.func @update_slice_offsets(%b: tensor<2x4xf32>, %u: tensor<2x1xf32>, %o: tensor<3xi64>) {
  // expected-error @+1 {{offsets must be rank 0, or [2] (one per index of dimension 0) for an axis past 0; got 3}}
  %0 = tg.update_slice %b, %u, %o {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x1xf32>, tensor<3xi64>) -> tensor<2x4xf32>
  return
}

// -----
func.func @update_slice_offsets_axis0(%b: tensor<2x4xf32>, %u: tensor<1x4xf32>, %o: tensor<2xi64>) {
  // expected-error @+1 {{offsets must be rank 0, or [2] (one per index of dimension 0) for an axis past 0; got 2}}
  %0 = tg.update_slice %b, %u, %o {axis = 0 : i64} : (tensor<2x4xf32>, tensor<1x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return
}

// -----
func.func @update_slice_offsets_i32(%b: tensor<4xf32>, %u: tensor<1xf32>, %o: tensor<i32>) {
  // expected-error @+1 {{'tg.update_slice' op operand #2 must be statically shaped tensor of 64-bit signless integer values}}
  %0 = tg.update_slice %b, %u, %o {axis = 0 : i64} : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
  return
}

// -----
// expected-error @+1 {{argument 0 ('tensor<4xf32>') is tied to result 0 of another type ('tensor<5xf32>')}}
func.func @tied_type(%c: tensor<4xf32> {tg.tied_result = 0 : i64}) -> tensor<5xf32> {
  %0 = tg.constant dense<0.0> : tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----
// expected-error @+1 {{argument 0 is tied to result 2, but the function has 1 results}}
func.func @tied_range(%c: tensor<4xf32> {tg.tied_result = 2 : i64}) -> tensor<4xf32> {
  return %c : tensor<4xf32>
}

// -----
// expected-error @+1 {{arguments 0 and 1 are both tied to result 0}}
func.func @tied_twice(%a: tensor<4xf32> {tg.tied_result = 0 : i64}, %b: tensor<4xf32> {tg.tied_result = 0 : i64}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----
// expected-error @+1 {{argument 0: 'tg.tied_result' must be an i64 (a result's index), got "cache"}}
func.func @tied_string(%c: tensor<4xf32> {tg.tied_result = "cache"}) -> tensor<4xf32> {
  return %c : tensor<4xf32>
}

// -----
// TF32 is a rounding of f32 values (docs/Precision.md, "TF32").
func.func @round_tf32_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit float values}}
  %y = tg.round_tf32 %x : tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----
// tg.tf32_values marks a constant (what --tg-fold-weights makes of a
// weight's rounding), nothing else.
func.func @tf32_values_not_constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.tf32_values' is a unit attribute of an f32 tg.constant}}
  %y = tg.relu %x {tg.tf32_values} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----
// TF32 values are f32 values.
func.func @tf32_values_f16() -> tensor<2xf16> {
  // expected-error @+1 {{'tg.tf32_values' is a unit attribute of an f32 tg.constant}}
  %c = tg.constant {tg.tf32_values} dense<1.0> : tensor<2xf16>
  return %c : tensor<2xf16>
}
