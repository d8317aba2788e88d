// The module of ops.test: one function per lowered op kind.
module {
  func.func @relu(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.relu %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @sigmoid(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.sigmoid %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @tanh(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.tanh %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @exp(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.exp %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @log(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.log %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @sqrt(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.sqrt %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @rsqrt(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.rsqrt %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @neg(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.neg %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @erf(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.erf %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @hardswish(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.hardswish %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @softplus(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.softplus %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @gelu_tanh(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.gelu %x {tanh_approximation = true} : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @gelu_erf(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.gelu %x : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @clip(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.clip %x {min = -0.25 : f64, max = 0.5 : f64} : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @hardsigmoid(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.hardsigmoid %x {alpha = 0.3 : f64, beta = 0.4 : f64} : tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @add(%x: tensor<2x3x4xf32> {tg.name = "x"}, %c: tensor<3x1xf32> {tg.name = "c"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.add %x, %c : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @sub(%x: tensor<2x3x4xf32> {tg.name = "x"}, %c: tensor<3x1xf32> {tg.name = "c"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.sub %x, %c : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @mul(%x: tensor<2x3x4xf32> {tg.name = "x"}, %c: tensor<3x1xf32> {tg.name = "c"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.mul %x, %c : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @div(%x: tensor<2x3x4xf32> {tg.name = "x"}, %c: tensor<3x1xf32> {tg.name = "c"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.div %x, %c : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @max(%x: tensor<2x3x4xf32> {tg.name = "x"}, %c: tensor<3x1xf32> {tg.name = "c"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.max %x, %c : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @min(%x: tensor<2x3x4xf32> {tg.name = "x"}, %c: tensor<3x1xf32> {tg.name = "c"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.min %x, %c : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @pow(%x: tensor<2x3x4xf32> {tg.name = "x"}, %c: tensor<3x1xf32> {tg.name = "c"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.pow %x, %c : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @mod_f32(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %four = tg.constant dense<4.0> : tensor<f32>
    %x4 = tg.mul %x, %four : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
    %c = tg.constant dense<[0.75, -1.25, 2.0, -0.5]> : tensor<4xf32>
    %y = tg.mod %x4, %c {fmod = true} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @mod_int(%x: tensor<2x5xf32> {tg.name = "x"}) -> (tensor<2x5xf32> {tg.name = "y"}) {
    %nine = tg.constant dense<9.0> : tensor<f32>
    %x9 = tg.mul %x, %nine : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
    %i = tg.cast %x9 : tensor<2x5xf32> to tensor<2x5xi64>
    %k = tg.constant dense<[3, -2, 5, -4, -1]> : tensor<5xi64>
    %floor = tg.mod %i, %k : (tensor<2x5xi64>, tensor<5xi64>) -> tensor<2x5xi64>
    %trunc = tg.mod %i, %k {fmod = true} : (tensor<2x5xi64>, tensor<5xi64>) -> tensor<2x5xi64>
    %ff = tg.cast %floor : tensor<2x5xi64> to tensor<2x5xf32>
    %tf = tg.cast %trunc : tensor<2x5xi64> to tensor<2x5xf32>
    %ten = tg.constant dense<10.0> : tensor<f32>
    %f10 = tg.mul %ff, %ten : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
    %y = tg.add %f10, %tf : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
    return %y : tensor<2x5xf32>
  }
  func.func @mod_int_traps(%x: tensor<2xf32> {tg.name = "x"}) -> (tensor<2xf32> {tg.name = "y"}) {
    %zero = tg.constant dense<0.0> : tensor<f32>
    %x0 = tg.mul %x, %zero : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    %z = tg.cast %x0 : tensor<2xf32> to tensor<2xi64>
    %m1 = tg.constant dense<-1> : tensor<i64>
    %first = tg.constant dense<[true, false]> : tensor<2xi1>
    %k = tg.select %first, %m1, %z : (tensor<2xi1>, tensor<i64>, tensor<2xi64>) -> tensor<2xi64>
    %a = tg.constant dense<[-9223372036854775808, 7]> : tensor<2xi64>
    %r = tg.mod %a, %k : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
    %y = tg.cast %r : tensor<2xi64> to tensor<2xf32>
    return %y : tensor<2xf32>
  }
  func.func @compare_f32(%x: tensor<2x3x4xf32> {tg.name = "x"}, %w: tensor<3x1xf32> {tg.name = "w"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %nan = tg.constant dense<0x7FC00000> : tensor<4xf32>
    %xn = tg.max %x, %nan : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
    %t = tg.constant dense<[[[0.0, 0.0, 0.0, 1.0]]]> : tensor<1x1x4xf32>
    %half = tg.constant dense<0.5> : tensor<f32>
    %m = tg.greater %t, %half : (tensor<1x1x4xf32>, tensor<f32>) -> tensor<1x1x4xi1>
    %xs = tg.select %m, %xn, %x : (tensor<1x1x4xi1>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %gt = tg.greater %xs, %w : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
    %ge = tg.greater_equal %xs, %w : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
    %lt = tg.less %xs, %w : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
    %le = tg.less_equal %xs, %w : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
    %eq = tg.equal %xs, %xs : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xi1>
    %a = tg.cast %gt : tensor<2x3x4xi1> to tensor<2x3x4xf32>
    %b = tg.cast %ge : tensor<2x3x4xi1> to tensor<2x3x4xf32>
    %c = tg.cast %lt : tensor<2x3x4xi1> to tensor<2x3x4xf32>
    %d = tg.cast %le : tensor<2x3x4xi1> to tensor<2x3x4xf32>
    %e = tg.cast %eq : tensor<2x3x4xi1> to tensor<2x3x4xf32>
    %two = tg.constant dense<2.0> : tensor<f32>
    %four = tg.constant dense<4.0> : tensor<f32>
    %eight = tg.constant dense<8.0> : tensor<f32>
    %sixteen = tg.constant dense<16.0> : tensor<f32>
    %b2 = tg.mul %b, %two : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
    %c4 = tg.mul %c, %four : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
    %d8 = tg.mul %d, %eight : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
    %e16 = tg.mul %e, %sixteen : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
    %s1 = tg.add %a, %b2 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %s2 = tg.add %s1, %c4 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %s3 = tg.add %s2, %d8 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %y = tg.add %s3, %e16 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @compare_int_select(%x: tensor<2x5xf32> {tg.name = "x"}, %g: tensor<2x5xf32> {tg.name = "g"}) -> (tensor<2x5xf32> {tg.name = "y"}) {
    %three = tg.constant dense<3.0> : tensor<f32>
    %x3 = tg.mul %x, %three : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
    %i = tg.cast %x3 : tensor<2x5xf32> to tensor<2x5xi64>
    %k = tg.constant dense<[0, 1, -1, 2, 0]> : tensor<5xi64>
    %eq = tg.equal %i, %k : (tensor<2x5xi64>, tensor<5xi64>) -> tensor<2x5xi1>
    %lt = tg.less %i, %k : (tensor<2x5xi64>, tensor<5xi64>) -> tensor<2x5xi1>
    %bl = tg.greater %eq, %lt : (tensor<2x5xi1>, tensor<2x5xi1>) -> tensor<2x5xi1>
    %zero = tg.constant dense<0.0> : tensor<f32>
    %sel = tg.select %bl, %g, %zero : (tensor<2x5xi1>, tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
    %isel = tg.select %lt, %i, %k : (tensor<2x5xi1>, tensor<2x5xi64>, tensor<5xi64>) -> tensor<2x5xi64>
    %f = tg.cast %isel : tensor<2x5xi64> to tensor<2x5xf32>
    %y = tg.add %sel, %f : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
    return %y : tensor<2x5xf32>
  }
  func.func @cast_i64(%x: tensor<2x5xi64> {tg.name = "x"}) -> (tensor<2x5xf32> {tg.name = "y"}) {
    %y = tg.cast %x : tensor<2x5xi64> to tensor<2x5xf32>
    return %y : tensor<2x5xf32>
  }
  func.func @cast_trunc(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %s = tg.mul %x, %x : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %i = tg.cast %s : tensor<2x3x4xf32> to tensor<2x3x4xi64>
    %y = tg.cast %i : tensor<2x3x4xi64> to tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @matmul_bcast(%x: tensor<2x5x7xf32> {tg.name = "x"}, %w: tensor<7x3xf32> {tg.name = "w"}) -> (tensor<2x5x3xf32> {tg.name = "y"}) {
    %y = tg.matmul %x, %w : (tensor<2x5x7xf32>, tensor<7x3xf32>) -> tensor<2x5x3xf32>
    return %y : tensor<2x5x3xf32>
  }
  func.func @matmul_batch(%x: tensor<1x5x7xf32> {tg.name = "x"}, %w: tensor<2x7x3xf32> {tg.name = "w"}) -> (tensor<2x5x3xf32> {tg.name = "y"}) {
    %y = tg.matmul %x, %w : (tensor<1x5x7xf32>, tensor<2x7x3xf32>) -> tensor<2x5x3xf32>
    return %y : tensor<2x5x3xf32>
  }
  func.func @matmul_tiles(%x: tensor<12x40xf32> {tg.name = "x"}, %w: tensor<40x48xf32> {tg.name = "w"}) -> (tensor<12x48xf32> {tg.name = "y"}) {
    %y = tg.matmul %x, %w : (tensor<12x40xf32>, tensor<40x48xf32>) -> tensor<12x48xf32>
    return %y : tensor<12x48xf32>
  }
  func.func @matmul_packed_bias_relu(%x: tensor<1024x24xf32> {tg.name = "x"}, %w: tensor<24x96xf32> {tg.name = "w"}, %b: tensor<96xf32> {tg.name = "b"}) -> (tensor<1024x96xf32> {tg.name = "y"}) {
    %m = tg.matmul %x, %w : (tensor<1024x24xf32>, tensor<24x96xf32>) -> tensor<1024x96xf32>
    %a = tg.add %m, %b : (tensor<1024x96xf32>, tensor<96xf32>) -> tensor<1024x96xf32>
    %y = tg.relu %a : tensor<1024x96xf32>
    return %y : tensor<1024x96xf32>
  }
  func.func @matmul_packed_cache(%x: tensor<1024x512xf32> {tg.name = "x"}, %w: tensor<512x1024xf32> {tg.name = "w"}) -> (tensor<1024x1024xf32> {tg.name = "y"}) {
    %y = tg.matmul %x, %w : (tensor<1024x512xf32>, tensor<512x1024xf32>) -> tensor<1024x1024xf32>
    return %y : tensor<1024x1024xf32>
  }
  func.func @matmul_batch_tiles(%x: tensor<4x64x16xf32> {tg.name = "x"}, %w: tensor<4x16x32xf32> {tg.name = "w"}) -> (tensor<4x64x32xf32> {tg.name = "y"}) {
    %y = tg.matmul %x, %w : (tensor<4x64x16xf32>, tensor<4x16x32xf32>) -> tensor<4x64x32xf32>
    return %y : tensor<4x64x32xf32>
  }
  func.func @conv_bias_relu(%x: tensor<1x4x7x7xf32> {tg.name = "x"}, %w: tensor<6x4x3x3xf32> {tg.name = "w"}, %b: tensor<6xf32> {tg.name = "b"}) -> (tensor<1x6x4x6xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w, %b {pads = array<i64: 1, 0, 2, 1>, strides = array<i64: 2, 1>, activation = #tg<activation relu>} : (tensor<1x4x7x7xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x6xf32>
    return %y : tensor<1x6x4x6xf32>
  }
  func.func @conv_dilated_sigmoid(%x: tensor<1x4x7x7xf32> {tg.name = "x"}, %w: tensor<2x4x2x2xf32> {tg.name = "w"}) -> (tensor<1x2x5x4xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w {dilations = array<i64: 2, 3>, activation = #tg<activation sigmoid>} : (tensor<1x4x7x7xf32>, tensor<2x4x2x2xf32>) -> tensor<1x2x5x4xf32>
    return %y : tensor<1x2x5x4xf32>
  }
  func.func @conv_grouped(%x: tensor<1x4x7x7xf32> {tg.name = "x"}, %w: tensor<6x2x3x3xf32> {tg.name = "w"}) -> (tensor<1x6x7x7xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64, activation = #tg<activation tanh>} : (tensor<1x4x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x7x7xf32>
    return %y : tensor<1x6x7x7xf32>
  }
  func.func @conv_depthwise(%x: tensor<1x4x7x7xf32> {tg.name = "x"}, %w: tensor<4x1x3x3xf32> {tg.name = "w"}) -> (tensor<1x4x4x4xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, groups = 4 : i64} : (tensor<1x4x7x7xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
    return %y : tensor<1x4x4x4xf32>
  }
  func.func @conv_grouped_bias(%x: tensor<1x24x9x11xf32> {tg.name = "x"}, %w: tensor<36x4x3x2xf32> {tg.name = "w"}, %b: tensor<36xf32> {tg.name = "b"}) -> (tensor<1x36x5x11xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w, %b {pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 1>, groups = 6 : i64, activation = #tg<activation relu>} : (tensor<1x24x9x11xf32>, tensor<36x4x3x2xf32>, tensor<36xf32>) -> tensor<1x36x5x11xf32>
    return %y : tensor<1x36x5x11xf32>
  }
  func.func @conv_depthwise_bias(%x: tensor<2x7x13x5xf32> {tg.name = "x"}, %w: tensor<7x1x5x3xf32> {tg.name = "w"}, %b: tensor<7xf32> {tg.name = "b"}) -> (tensor<2x7x11x5xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, groups = 7 : i64, activation = #tg<activation sigmoid>} : (tensor<2x7x13x5xf32>, tensor<7x1x5x3xf32>, tensor<7xf32>) -> tensor<2x7x11x5xf32>
    return %y : tensor<2x7x11x5xf32>
  }
  func.func @conv_dilated_wide(%x: tensor<1x3x5x70xf32> {tg.name = "x"}, %w: tensor<4x3x2x3xf32> {tg.name = "w"}) -> (tensor<1x4x4x69xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w {pads = array<i64: 0, 1, 0, 2>, dilations = array<i64: 1, 2>} : (tensor<1x3x5x70xf32>, tensor<4x3x2x3xf32>) -> tensor<1x4x4x69xf32>
    return %y : tensor<1x4x4x69xf32>
  }
  func.func @conv_grouped_stride3(%x: tensor<1x6x9x40xf32> {tg.name = "x"}, %w: tensor<6x2x3x3xf32> {tg.name = "w"}) -> (tensor<1x6x9x14xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 3>, groups = 3 : i64} : (tensor<1x6x9x40xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x9x14xf32>
    return %y : tensor<1x6x9x14xf32>
  }
  func.func @conv_pointwise(%x: tensor<1x24x7x9xf32> {tg.name = "x"}, %w: tensor<40x24x1x1xf32> {tg.name = "w"}, %b: tensor<40xf32> {tg.name = "b"}) -> (tensor<1x40x7x9xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w, %b {activation = #tg<activation relu>} : (tensor<1x24x7x9xf32>, tensor<40x24x1x1xf32>, tensor<40xf32>) -> tensor<1x40x7x9xf32>
    return %y : tensor<1x40x7x9xf32>
  }
  func.func @conv_pointwise_grouped(%x: tensor<2x12x5x13xf32> {tg.name = "x"}, %w: tensor<8x3x1x1xf32> {tg.name = "w"}) -> (tensor<2x8x5x13xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w {groups = 4 : i64} : (tensor<2x12x5x13xf32>, tensor<8x3x1x1xf32>) -> tensor<2x8x5x13xf32>
    return %y : tensor<2x8x5x13xf32>
  }
  func.func @conv_column_kernel(%x: tensor<1x6x9x5xf32> {tg.name = "x"}, %w: tensor<10x6x3x1xf32> {tg.name = "w"}, %b: tensor<10xf32> {tg.name = "b"}) -> (tensor<1x10x5x5xf32> {tg.name = "y"}) {
    %y = tg.conv %x, %w, %b {dilations = array<i64: 2, 1>, activation = #tg<activation tanh>} : (tensor<1x6x9x5xf32>, tensor<10x6x3x1xf32>, tensor<10xf32>) -> tensor<1x10x5x5xf32>
    return %y : tensor<1x10x5x5xf32>
  }
  func.func @maxpool(%x: tensor<1x4x7x7xf32> {tg.name = "x"}) -> (tensor<1x4x4x4xf32> {tg.name = "y"}) {
    %y = tg.maxpool %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
    return %y : tensor<1x4x4x4xf32>
  }
  func.func @maxpool_grad(%x: tensor<2x3x7x6xf32> {tg.name = "x"}, %g: tensor<2x3x4x3xf32> {tg.name = "g"}) -> (tensor<2x3x7x6xf32> {tg.name = "dx"}) {
    %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>} : (tensor<2x3x7x6xf32>, tensor<2x3x4x3xf32>) -> tensor<2x3x7x6xf32>
    return %dx : tensor<2x3x7x6xf32>
  }
  func.func @maxpool_grad_disjoint(%x: tensor<2x3x7x6xf32> {tg.name = "x"}, %g: tensor<2x3x3x3xf32> {tg.name = "g"}) -> (tensor<2x3x7x6xf32> {tg.name = "dx"}) {
    %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x7x6xf32>, tensor<2x3x3x3xf32>) -> tensor<2x3x7x6xf32>
    return %dx : tensor<2x3x7x6xf32>
  }
  func.func @maxpool_grad_exact(%x: tensor<2x3x6x8xf32> {tg.name = "x"}, %g: tensor<2x3x3x4xf32> {tg.name = "g"}) -> (tensor<2x3x6x8xf32> {tg.name = "dx"}) {
    %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x6x8xf32>, tensor<2x3x3x4xf32>) -> tensor<2x3x6x8xf32>
    return %dx : tensor<2x3x6x8xf32>
  }
  func.func @maxpool_grad_gaps_pads(%x: tensor<1x2x8x7xf32> {tg.name = "x"}, %g: tensor<1x2x3x3xf32> {tg.name = "g"}) -> (tensor<1x2x8x7xf32> {tg.name = "dx"}) {
    %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2>, strides = array<i64: 3, 3>, pads = array<i64: 1, 1, 0, 1>} : (tensor<1x2x8x7xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x8x7xf32>
    return %dx : tensor<1x2x8x7xf32>
  }
  func.func @maxpool_grad_ties(%g: tensor<1x2x3x4xf32> {tg.name = "g"}) -> (tensor<1x2x3x3xf32> {tg.name = "dx"}) {
    %x = tg.constant dense<[[[[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]],
                             [[0xFF800000, 0xFF800000, 0xFF800000], [0xFF800000, 2.0, 0xFF800000], [0xFF800000, 0xFF800000, 2.0]]]]> : tensor<1x2x3x3xf32>
    %dx = tg.maxpool_grad %x, %g {kernel_size = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 1>} : (tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x3xf32>
    return %dx : tensor<1x2x3x3xf32>
  }
  func.func @avgpool(%x: tensor<1x4x7x7xf32> {tg.name = "x"}) -> (tensor<1x4x4x4xf32> {tg.name = "y"}) {
    %y = tg.avgpool %x {kernel_size = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 0>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
    return %y : tensor<1x4x4x4xf32>
  }
  func.func @avgpool_incl(%x: tensor<1x4x7x7xf32> {tg.name = "x"}) -> (tensor<1x4x4x4xf32> {tg.name = "y"}) {
    %y = tg.avgpool %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
    return %y : tensor<1x4x4x4xf32>
  }
  func.func @global_avgpool(%x: tensor<1x4x7x7xf32> {tg.name = "x"}) -> (tensor<1x4x1x1xf32> {tg.name = "y"}) {
    %y = tg.global_avgpool %x : (tensor<1x4x7x7xf32>) -> tensor<1x4x1x1xf32>
    return %y : tensor<1x4x1x1xf32>
  }
  func.func @reduce_sum(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<1x3x1xf32> {tg.name = "y"}) {
    %y = tg.reduce_sum %x {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
    return %y : tensor<1x3x1xf32>
  }
  func.func @reduce_mean(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3xf32> {tg.name = "y"}) {
    %y = tg.reduce_mean %x {axes = array<i64: -1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
    return %y : tensor<2x3xf32>
  }
  func.func @reduce_max(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x1x4xf32> {tg.name = "y"}) {
    %y = tg.reduce_max %x {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
    return %y : tensor<2x1x4xf32>
  }
  func.func @softmax_last(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.softmax %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @softmax_mid(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.softmax %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @softmax_cross_entropy(%x: tensor<5x7xf32> {tg.name = "x"}) -> (tensor<f32> {tg.name = "loss"}) {
    %l = tg.constant dense<[0, 6, 3, 3, 1]> : tensor<5xi64>
    %y = tg.softmax_cross_entropy %x, %l : (tensor<5x7xf32>, tensor<5xi64>) -> tensor<f32>
    return %y : tensor<f32>
  }
  func.func @softmax_cross_entropy_i32(%x: tensor<3x4xf32> {tg.name = "x"}) -> (tensor<f32> {tg.name = "loss"}) {
    %big = tg.constant dense<[[100.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]> : tensor<3x4xf32>
    %s = tg.add %x, %big : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %l = tg.constant dense<[3, 2, 0]> : tensor<3xi32>
    %y = tg.softmax_cross_entropy %s, %l : (tensor<3x4xf32>, tensor<3xi32>) -> tensor<f32>
    return %y : tensor<f32>
  }
  func.func @mse_loss(%a: tensor<2x3x4xf32> {tg.name = "a"}, %b: tensor<2x3x4xf32> {tg.name = "b"}) -> (tensor<f32> {tg.name = "loss"}) {
    %y = tg.mse_loss %a, %b : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<f32>
    return %y : tensor<f32>
  }
  func.func @layernorm(%x: tensor<2x3x4xf32> {tg.name = "x"}, %g: tensor<4xf32> {tg.name = "g"}, %b: tensor<4xf32> {tg.name = "b"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.layernorm %x, %g, %b : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @layernorm_axis1(%x: tensor<2x3x4xf32> {tg.name = "x"}, %g: tensor<3x4xf32> {tg.name = "g"}, %b: tensor<3x4xf32> {tg.name = "b"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.layernorm %x, %g, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @batchnorm(%x: tensor<1x4x7x7xf32> {tg.name = "x"}, %s: tensor<4xf32> {tg.name = "s"}, %b: tensor<4xf32> {tg.name = "b"}, %m: tensor<4xf32> {tg.name = "m"}, %v: tensor<4xf32> {tg.name = "v"}) -> (tensor<1x4x7x7xf32> {tg.name = "y"}) {
    %v2 = tg.mul %v, %v : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %y = tg.batchnorm %x, %s, %b, %m, %v2 : (tensor<1x4x7x7xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x7x7xf32>
    return %y : tensor<1x4x7x7xf32>
  }
  func.func @transpose(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<4x2x3xf32> {tg.name = "y"}) {
    %y = tg.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    return %y : tensor<4x2x3xf32>
  }
  func.func @reshape(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<6x4xf32> {tg.name = "y"}) {
    %r = tg.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    %y = tg.neg %r : tensor<6x4xf32>
    return %y : tensor<6x4xf32>
  }
  func.func @broadcast_to(%x: tensor<3x1xf32> {tg.name = "x"}) -> (tensor<2x3x4xf32> {tg.name = "y"}) {
    %y = tg.broadcast_to %x : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
    return %y : tensor<2x3x4xf32>
  }
  func.func @concat(%x: tensor<2x3x4xf32> {tg.name = "x"}, %z: tensor<2x1x4xf32> {tg.name = "z"}) -> (tensor<2x7x4xf32> {tg.name = "y"}) {
    %y = tg.concat %x, %z, %x {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1x4xf32>, tensor<2x3x4xf32>) -> tensor<2x7x4xf32>
    return %y : tensor<2x7x4xf32>
  }
  func.func @split(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<2x3x3xf32> {tg.name = "y"}) {
    %a, %b = tg.split %x {axis = 2 : i64, sizes = array<i64: 1, 3>} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x3xf32>)
    %y = tg.mul %b, %a : (tensor<2x3x3xf32>, tensor<2x3x1xf32>) -> tensor<2x3x3xf32>
    return %y : tensor<2x3x3xf32>
  }
  func.func @slice(%x: tensor<6x5xf32> {tg.name = "x"}) -> (tensor<2x4xf32> {tg.name = "y"}) {
    %y = tg.slice %x {starts = array<i64: 1, 0>, limits = array<i64: 5, 4>, strides = array<i64: 2, 1>} : (tensor<6x5xf32>) -> tensor<2x4xf32>
    return %y : tensor<2x4xf32>
  }
  func.func @pad(%x: tensor<2x3x4xf32> {tg.name = "x"}) -> (tensor<3x4x6xf32> {tg.name = "y"}) {
    %y = tg.pad %x {low = array<i64: 0, 1, 0>, high = array<i64: 1, 0, 2>, value = 1.5 : f64} : (tensor<2x3x4xf32>) -> tensor<3x4x6xf32>
    return %y : tensor<3x4x6xf32>
  }
  func.func @constant(%x: tensor<2x2xf32> {tg.name = "x"}) -> (tensor<2x2xf32> {tg.name = "y"}) {
    %c = tg.constant dense<[[1.0, -2.0], [0.5, 3.0]]> : tensor<2x2xf32>
    %y = tg.mul %x, %c : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    return %y : tensor<2x2xf32>
  }
  func.func @gather_rows(%x: tensor<5x3xf32> {tg.name = "x"}, %i: tensor<2x4xi64> {tg.name = "i"}) -> (tensor<2x4x3xf32> {tg.name = "y"}) {
    %y = tg.gather %x, %i : (tensor<5x3xf32>, tensor<2x4xi64>) -> tensor<2x4x3xf32>
    return %y : tensor<2x4x3xf32>
  }
  func.func @scatter_add_rows(%u: tensor<2x4x3xf32> {tg.name = "u"}) -> (tensor<5x3xf32> {tg.name = "y"}) {
    %i = tg.constant dense<[[0, 4, -1, 2], [2, 2, -5, 1]]> : tensor<2x4xi64>
    %y = tg.scatter_add %u, %i {dim_size = 5 : i64} : (tensor<2x4x3xf32>, tensor<2x4xi64>) -> tensor<5x3xf32>
    return %y : tensor<5x3xf32>
  }
  func.func @scatter_add_axis1(%u: tensor<2x4x3xf32> {tg.name = "u"}) -> (tensor<2x6x3xf32> {tg.name = "y"}) {
    %i = tg.constant dense<[3, -6, 3, 5]> : tensor<4xi32>
    %y = tg.scatter_add %u, %i {axis = -2 : i64, dim_size = 6 : i64} : (tensor<2x4x3xf32>, tensor<4xi32>) -> tensor<2x6x3xf32>
    return %y : tensor<2x6x3xf32>
  }
  func.func @gather_axis1(%x: tensor<2x5x3xf32> {tg.name = "x"}, %i: tensor<4xi64> {tg.name = "i"}) -> (tensor<2x4x3xf32> {tg.name = "y"}) {
    %n = tg.constant dense<[0, -1, 2, -5]> : tensor<4xi64>
    %a = tg.gather %x, %i {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<4xi64>) -> tensor<2x4x3xf32>
    %b = tg.gather %x, %n {axis = -2 : i64} : (tensor<2x5x3xf32>, tensor<4xi64>) -> tensor<2x4x3xf32>
    %y = tg.sub %a, %b : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    return %y : tensor<2x4x3xf32>
  }
  func.func @enlarge(%x: tensor<1x2x5x5xf32> {tg.name = "x"}, %w: tensor<3x2x1x1xf32> {tg.name = "w"}) -> (tensor<1x3x5x5xf32> {tg.name = "y"}) {
    %e = tg.enlarge %w {kernel_size = array<i64: 3, 3>} : (tensor<3x2x1x1xf32>) -> tensor<3x2x3x3xf32>
    %y = tg.conv %x, %e {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
    return %y : tensor<1x3x5x5xf32>
  }
  func.func @resize_nearest(%x: tensor<1x3x4x5xf32> {tg.name = "x"}) -> (tensor<1x3x8x10xf32> {tg.name = "y"}) {
    %y = tg.resize %x {sizes = array<i64: 1, 3, 8, 10>} : (tensor<1x3x4x5xf32>) -> tensor<1x3x8x10xf32>
    return %y : tensor<1x3x8x10xf32>
  }
  func.func @resize_nearest_ceil_asym(%x: tensor<2x7x3xf32> {tg.name = "x"}) -> (tensor<2x3x7xf32> {tg.name = "y"}) {
    %y = tg.resize %x {sizes = array<i64: 2, 3, 7>, coordinate_transformation_mode = #tg<coordinate_mode asymmetric>, nearest_mode = #tg<nearest_mode ceil>} : (tensor<2x7x3xf32>) -> tensor<2x3x7xf32>
    return %y : tensor<2x3x7xf32>
  }
  func.func @resize_linear(%x: tensor<1x2x5x3xf32> {tg.name = "x"}) -> (tensor<1x2x11x7xf32> {tg.name = "y"}) {
    %y = tg.resize %x {sizes = array<i64: 1, 2, 11, 7>, mode = #tg<resize_mode linear>} : (tensor<1x2x5x3xf32>) -> tensor<1x2x11x7xf32>
    return %y : tensor<1x2x11x7xf32>
  }
  func.func @resize_linear_align_scales(%x: tensor<1x1x6x6xf32> {tg.name = "x"}) -> (tensor<1x1x3x13xf32> {tg.name = "y"}) {
    %y = tg.resize %x {sizes = array<i64: 1, 1, 3, 13>, scales = array<f64: 1.0, 1.0, 0.5, 2.2>, mode = #tg<resize_mode linear>, coordinate_transformation_mode = #tg<coordinate_mode align_corners>} : (tensor<1x1x6x6xf32>) -> tensor<1x1x3x13xf32>
    return %y : tensor<1x1x3x13xf32>
  }
  func.func @resize_cubic_exclude(%x: tensor<1x2x4x4xf32> {tg.name = "x"}) -> (tensor<1x2x9x5xf32> {tg.name = "y"}) {
    %y = tg.resize %x {sizes = array<i64: 1, 2, 9, 5>, mode = #tg<resize_mode cubic>, exclude_outside = true, cubic_coeff_a = -5.000000e-01 : f64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x9x5xf32>
    return %y : tensor<1x2x9x5xf32>
  }
  func.func @slice_empty(%x: tensor<4x3xf32> {tg.name = "x"}) -> (tensor<4x0xf32> {tg.name = "y"}) {
    %y = tg.slice %x {limits = array<i64: 4, 0>, starts = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<4x3xf32>) -> tensor<4x0xf32>
    return %y : tensor<4x0xf32>
  }
}
