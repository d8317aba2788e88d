// Hand-written fixture rules for the zoo models, in loom-rulegen's format:
// conv + batchnorm folding and conv + relu fusion at the conv configurations
// of the zoo, merging of matmuls that share an input (TASO), bias adds moved
// before a split, split of a split, NasRNN's matmul + matmul, and two
// identities. NOT proved by Z3: they are checked numerically by the
// tg-superopt tests (check=true) and stand in for the generator's default
// rule set until it exists.
module {
  module @rule_1 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x1x1xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x1x1xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_2 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x1x1xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x1x1xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_3 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w {activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_4 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w, %b : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w, %b {activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_5 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>) -> tensor<1x14x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x8x9xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x1x1xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x1x1xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
  }
  module @rule_6 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>) -> tensor<1x14x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x8x9xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x1x1xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x1x1xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
  }
  module @rule_7 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>) -> tensor<1x14x8x9xf32>
      %r = tg.relu %c : tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>) -> tensor<1x14x8x9xf32> {
      %r = tg.conv %x, %w {strides = array<i64: 2, 2>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>) -> tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
  }
  module @rule_8 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %b: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w, %b {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      %r = tg.relu %c : tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x1xf32>, %b: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %r = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
  }
  module @rule_9 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 0, 1, 0, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x3xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x1x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x1x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 0, 1, 0, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x3xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_10 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 0, 1, 0, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x3xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x1x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x1x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 0, 1, 0, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x3xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_11 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x3xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 0, 1, 0, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x3xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x3xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w {pads = array<i64: 0, 1, 0, 1>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x3xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_12 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w, %b {pads = array<i64: 0, 1, 0, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x3xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w, %b {pads = array<i64: 0, 1, 0, 1>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x3xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_13 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 0, 3, 0, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x7xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x1x7xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x1x7xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 0, 3, 0, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x7xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_14 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 0, 3, 0, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x7xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x1x7xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x1x7xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 0, 3, 0, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x7xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_15 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x7xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 0, 3, 0, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x7xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x7xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w {pads = array<i64: 0, 3, 0, 3>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x7xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_16 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x7xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w, %b {pads = array<i64: 0, 3, 0, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x7xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x1x7xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w, %b {pads = array<i64: 0, 3, 0, 3>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x7xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_17 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 0, 1, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x1xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x1xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x1xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 1, 0, 1, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_18 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 0, 1, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x1xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x1xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x1xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 1, 0, 1, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_19 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x1xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 0, 1, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x1xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x1xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w {pads = array<i64: 1, 0, 1, 0>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x1xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_20 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x1xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w, %b {pads = array<i64: 1, 0, 1, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x1xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w, %b {pads = array<i64: 1, 0, 1, 0>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_21 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x20x26xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x18x24xf32> {
      %c = tg.conv %x, %w : (tensor<1x12x20x26xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x18x24xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x18x24xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x18x24xf32>
      return %y : tensor<1x14x18x24xf32>
    }
    func.func @target(%x: tensor<1x12x20x26xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x18x24xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias : (tensor<1x12x20x26xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x18x24xf32>
      return %y : tensor<1x14x18x24xf32>
    }
  }
  module @rule_22 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x20x26xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x18x24xf32> {
      %c = tg.conv %x, %w : (tensor<1x12x20x26xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x18x24xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x18x24xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x18x24xf32>
      return %y : tensor<1x14x18x24xf32>
    }
    func.func @target(%x: tensor<1x12x20x26xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x18x24xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias : (tensor<1x12x20x26xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x18x24xf32>
      return %y : tensor<1x14x18x24xf32>
    }
  }
  module @rule_23 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x20x26xf32>, %w: tensor<14x12x3x3xf32>) -> tensor<1x14x18x24xf32> {
      %c = tg.conv %x, %w : (tensor<1x12x20x26xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x18x24xf32>
      %r = tg.relu %c : tensor<1x14x18x24xf32>
      return %r : tensor<1x14x18x24xf32>
    }
    func.func @target(%x: tensor<1x12x20x26xf32>, %w: tensor<14x12x3x3xf32>) -> tensor<1x14x18x24xf32> {
      %r = tg.conv %x, %w {activation = #tg<activation relu>} : (tensor<1x12x20x26xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x18x24xf32>
      return %r : tensor<1x14x18x24xf32>
    }
  }
  module @rule_24 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x20x26xf32>, %w: tensor<14x12x3x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x18x24xf32> {
      %c = tg.conv %x, %w, %b : (tensor<1x12x20x26xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x18x24xf32>
      %r = tg.relu %c : tensor<1x14x18x24xf32>
      return %r : tensor<1x14x18x24xf32>
    }
    func.func @target(%x: tensor<1x12x20x26xf32>, %w: tensor<14x12x3x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x18x24xf32> {
      %r = tg.conv %x, %w, %b {activation = #tg<activation relu>} : (tensor<1x12x20x26xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x18x24xf32>
      return %r : tensor<1x14x18x24xf32>
    }
  }
  module @rule_25 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_26 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_27 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_28 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_29 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>) -> tensor<1x96x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>) -> tensor<1x96x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x96x16x18xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<1x96x16x18xf32>
      return %y : tensor<1x96x16x18xf32>
    }
    func.func @target(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>) -> tensor<1x96x16x18xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<96xf32>, tensor<f32>) -> tensor<96xf32>
      %r = tg.rsqrt %ve : tensor<96xf32>
      %k = tg.mul %s, %r : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %k4 = tg.reshape %k : (tensor<96xf32>) -> tensor<96x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<96x2x3x3xf32>, tensor<96x1x1x1xf32>) -> tensor<96x2x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %bias = tg.sub %b, %mk : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>, tensor<96xf32>) -> tensor<1x96x16x18xf32>
      return %y : tensor<1x96x16x18xf32>
    }
  }
  module @rule_30 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>) -> tensor<1x96x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>) -> tensor<1x96x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x96x16x18xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<1x96x16x18xf32>
      return %y : tensor<1x96x16x18xf32>
    }
    func.func @target(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>) -> tensor<1x96x16x18xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<96xf32>, tensor<f32>) -> tensor<96xf32>
      %r = tg.rsqrt %ve : tensor<96xf32>
      %k = tg.mul %s, %r : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %k4 = tg.reshape %k : (tensor<96xf32>) -> tensor<96x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<96x2x3x3xf32>, tensor<96x1x1x1xf32>) -> tensor<96x2x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %bias = tg.sub %b, %mk : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>, tensor<96xf32>) -> tensor<1x96x16x18xf32>
      return %y : tensor<1x96x16x18xf32>
    }
  }
  module @rule_31 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>) -> tensor<1x96x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>) -> tensor<1x96x16x18xf32>
      %r = tg.relu %c : tensor<1x96x16x18xf32>
      return %r : tensor<1x96x16x18xf32>
    }
    func.func @target(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>) -> tensor<1x96x16x18xf32> {
      %r = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64, activation = #tg<activation relu>} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>) -> tensor<1x96x16x18xf32>
      return %r : tensor<1x96x16x18xf32>
    }
  }
  module @rule_32 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %b: tensor<96xf32>) -> tensor<1x96x16x18xf32> {
      %c = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>, tensor<96xf32>) -> tensor<1x96x16x18xf32>
      %r = tg.relu %c : tensor<1x96x16x18xf32>
      return %r : tensor<1x96x16x18xf32>
    }
    func.func @target(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %b: tensor<96xf32>) -> tensor<1x96x16x18xf32> {
      %r = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64, activation = #tg<activation relu>} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>, tensor<96xf32>) -> tensor<1x96x16x18xf32>
      return %r : tensor<1x96x16x18xf32>
    }
  }
  module @rule_33 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x7x8xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x7x8xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x7x8xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x7x8xf32>
      return %y : tensor<1x14x7x8xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x7x8xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x7x8xf32>
      return %y : tensor<1x14x7x8xf32>
    }
  }
  module @rule_34 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x7x8xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x7x8xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x7x8xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x7x8xf32>
      return %y : tensor<1x14x7x8xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x7x8xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x7x8xf32>
      return %y : tensor<1x14x7x8xf32>
    }
  }
  module @rule_35 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>) -> tensor<1x14x7x8xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x7x8xf32>
      %r = tg.relu %c : tensor<1x14x7x8xf32>
      return %r : tensor<1x14x7x8xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>) -> tensor<1x14x7x8xf32> {
      %r = tg.conv %x, %w {strides = array<i64: 2, 2>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x7x8xf32>
      return %r : tensor<1x14x7x8xf32>
    }
  }
  module @rule_36 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x7x8xf32> {
      %c = tg.conv %x, %w, %b {strides = array<i64: 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x7x8xf32>
      %r = tg.relu %c : tensor<1x14x7x8xf32>
      return %r : tensor<1x14x7x8xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x7x8xf32> {
      %r = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x7x8xf32>
      return %r : tensor<1x14x7x8xf32>
    }
  }
  module @rule_37 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x8x9xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
  }
  module @rule_38 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x8x9xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x3x3xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
  }
  module @rule_39 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x8x9xf32>
      %r = tg.relu %c : tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>) -> tensor<1x14x8x9xf32> {
      %r = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>) -> tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
  }
  module @rule_40 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      %r = tg.relu %c : tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x3x3xf32>, %b: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %r = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x3x3xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
  }
  module @rule_41 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>) -> tensor<1x96x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>) -> tensor<1x96x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x96x8x9xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<1x96x8x9xf32>
      return %y : tensor<1x96x8x9xf32>
    }
    func.func @target(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>) -> tensor<1x96x8x9xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<96xf32>, tensor<f32>) -> tensor<96xf32>
      %r = tg.rsqrt %ve : tensor<96xf32>
      %k = tg.mul %s, %r : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %k4 = tg.reshape %k : (tensor<96xf32>) -> tensor<96x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<96x2x3x3xf32>, tensor<96x1x1x1xf32>) -> tensor<96x2x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %bias = tg.sub %b, %mk : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>, tensor<96xf32>) -> tensor<1x96x8x9xf32>
      return %y : tensor<1x96x8x9xf32>
    }
  }
  module @rule_42 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>) -> tensor<1x96x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>) -> tensor<1x96x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x96x8x9xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<1x96x8x9xf32>
      return %y : tensor<1x96x8x9xf32>
    }
    func.func @target(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %s: tensor<96xf32>, %b: tensor<96xf32>, %m: tensor<96xf32>, %v: tensor<96xf32>) -> tensor<1x96x8x9xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<96xf32>, tensor<f32>) -> tensor<96xf32>
      %r = tg.rsqrt %ve : tensor<96xf32>
      %k = tg.mul %s, %r : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %k4 = tg.reshape %k : (tensor<96xf32>) -> tensor<96x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<96x2x3x3xf32>, tensor<96x1x1x1xf32>) -> tensor<96x2x3x3xf32>
      %mk = tg.mul %m, %k : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %bias = tg.sub %b, %mk : (tensor<96xf32>, tensor<96xf32>) -> tensor<96xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>, tensor<96xf32>) -> tensor<1x96x8x9xf32>
      return %y : tensor<1x96x8x9xf32>
    }
  }
  module @rule_43 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>) -> tensor<1x96x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>) -> tensor<1x96x8x9xf32>
      %r = tg.relu %c : tensor<1x96x8x9xf32>
      return %r : tensor<1x96x8x9xf32>
    }
    func.func @target(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>) -> tensor<1x96x8x9xf32> {
      %r = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64, activation = #tg<activation relu>} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>) -> tensor<1x96x8x9xf32>
      return %r : tensor<1x96x8x9xf32>
    }
  }
  module @rule_44 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %b: tensor<96xf32>) -> tensor<1x96x8x9xf32> {
      %c = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>, tensor<96xf32>) -> tensor<1x96x8x9xf32>
      %r = tg.relu %c : tensor<1x96x8x9xf32>
      return %r : tensor<1x96x8x9xf32>
    }
    func.func @target(%x: tensor<1x64x16x18xf32>, %w: tensor<96x2x3x3xf32>, %b: tensor<96xf32>) -> tensor<1x96x8x9xf32> {
      %r = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64, activation = #tg<activation relu>} : (tensor<1x64x16x18xf32>, tensor<96x2x3x3xf32>, tensor<96xf32>) -> tensor<1x96x8x9xf32>
      return %r : tensor<1x96x8x9xf32>
    }
  }
  module @rule_45 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x5x5xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 2, 2, 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x5x5xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x5x5xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x5x5xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x5x5xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 2, 2, 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x5x5xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_46 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x5x5xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 2, 2, 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x5x5xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x5x5xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x5x5xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x5x5xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 2, 2, 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x5x5xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_47 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x5x5xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 2, 2, 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x5x5xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x5x5xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w {pads = array<i64: 2, 2, 2, 2>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x5x5xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_48 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x5x5xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w, %b {pads = array<i64: 2, 2, 2, 2>} : (tensor<1x12x16x18xf32>, tensor<14x12x5x5xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x5x5xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w, %b {pads = array<i64: 2, 2, 2, 2>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x5x5xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_49 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 3, 0, 3, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x1xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x7x1xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x7x1xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 3, 0, 3, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_50 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 3, 0, 3, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x1xf32>) -> tensor<1x14x16x18xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x16x18xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x1xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x7x1xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x7x1xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {pads = array<i64: 3, 0, 3, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %y : tensor<1x14x16x18xf32>
    }
  }
  module @rule_51 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x1xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w {pads = array<i64: 3, 0, 3, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x1xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x1xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w {pads = array<i64: 3, 0, 3, 0>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x1xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_52 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x1xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %c = tg.conv %x, %w, %b {pads = array<i64: 3, 0, 3, 0>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      %r = tg.relu %c : tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x1xf32>, %b: tensor<14xf32>) -> tensor<1x14x16x18xf32> {
      %r = tg.conv %x, %w, %b {pads = array<i64: 3, 0, 3, 0>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      return %r : tensor<1x14x16x18xf32>
    }
  }
  module @rule_53 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x8x9xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x7x7xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x7x7xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
  }
  module @rule_54 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x8x9xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x7x7xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x7x7xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
  }
  module @rule_55 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32>
      %r = tg.relu %c : tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32> {
      %r = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 3, 3>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
  }
  module @rule_56 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %b: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      %r = tg.relu %c : tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %b: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %r = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 3, 3>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
  }
  module @rule_57 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x8x9xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x7x7xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x7x7xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
  }
  module @rule_58 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x8x9xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x7x7xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x7x7xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %y : tensor<1x14x8x9xf32>
    }
  }
  module @rule_59 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32>
      %r = tg.relu %c : tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32> {
      %r = tg.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>) -> tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
  }
  module @rule_60 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %b: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %c = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      %r = tg.relu %c : tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w: tensor<14x12x7x7xf32>, %b: tensor<14xf32>) -> tensor<1x14x8x9xf32> {
      %r = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>, activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x7x7xf32>, tensor<14xf32>) -> tensor<1x14x8x9xf32>
      return %r : tensor<1x14x8x9xf32>
    }
  }
  module @rule_61 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x44x52xf32>, %w: tensor<14x12x16x16xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x2x3xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 16, 16>} : (tensor<1x12x44x52xf32>, tensor<14x12x16x16xf32>) -> tensor<1x14x2x3xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v : (tensor<1x14x2x3xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x2x3xf32>
      return %y : tensor<1x14x2x3xf32>
    }
    func.func @target(%x: tensor<1x12x44x52xf32>, %w: tensor<14x12x16x16xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x2x3xf32> {
      %eps = tg.constant dense<1.000000e-05> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x16x16xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x16x16xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 16, 16>} : (tensor<1x12x44x52xf32>, tensor<14x12x16x16xf32>, tensor<14xf32>) -> tensor<1x14x2x3xf32>
      return %y : tensor<1x14x2x3xf32>
    }
  }
  module @rule_62 attributes {loom.status = "proved", loom.axioms = ["conv_bn_fold"]} {
    func.func @source(%x: tensor<1x12x44x52xf32>, %w: tensor<14x12x16x16xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x2x3xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 16, 16>} : (tensor<1x12x44x52xf32>, tensor<14x12x16x16xf32>) -> tensor<1x14x2x3xf32>
      %y = tg.batchnorm %c, %s, %b, %m, %v {epsilon = 1.000000e-03 : f64} : (tensor<1x14x2x3xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>, tensor<14xf32>) -> tensor<1x14x2x3xf32>
      return %y : tensor<1x14x2x3xf32>
    }
    func.func @target(%x: tensor<1x12x44x52xf32>, %w: tensor<14x12x16x16xf32>, %s: tensor<14xf32>, %b: tensor<14xf32>, %m: tensor<14xf32>, %v: tensor<14xf32>) -> tensor<1x14x2x3xf32> {
      %eps = tg.constant dense<1.000000e-03> : tensor<f32>
      %ve = tg.add %v, %eps : (tensor<14xf32>, tensor<f32>) -> tensor<14xf32>
      %r = tg.rsqrt %ve : tensor<14xf32>
      %k = tg.mul %s, %r : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %k4 = tg.reshape %k : (tensor<14xf32>) -> tensor<14x1x1x1xf32>
      %w2 = tg.mul %w, %k4 : (tensor<14x12x16x16xf32>, tensor<14x1x1x1xf32>) -> tensor<14x12x16x16xf32>
      %mk = tg.mul %m, %k : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %bias = tg.sub %b, %mk : (tensor<14xf32>, tensor<14xf32>) -> tensor<14xf32>
      %y = tg.conv %x, %w2, %bias {strides = array<i64: 16, 16>} : (tensor<1x12x44x52xf32>, tensor<14x12x16x16xf32>, tensor<14xf32>) -> tensor<1x14x2x3xf32>
      return %y : tensor<1x14x2x3xf32>
    }
  }
  module @rule_63 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x44x52xf32>, %w: tensor<14x12x16x16xf32>) -> tensor<1x14x2x3xf32> {
      %c = tg.conv %x, %w {strides = array<i64: 16, 16>} : (tensor<1x12x44x52xf32>, tensor<14x12x16x16xf32>) -> tensor<1x14x2x3xf32>
      %r = tg.relu %c : tensor<1x14x2x3xf32>
      return %r : tensor<1x14x2x3xf32>
    }
    func.func @target(%x: tensor<1x12x44x52xf32>, %w: tensor<14x12x16x16xf32>) -> tensor<1x14x2x3xf32> {
      %r = tg.conv %x, %w {strides = array<i64: 16, 16>, activation = #tg<activation relu>} : (tensor<1x12x44x52xf32>, tensor<14x12x16x16xf32>) -> tensor<1x14x2x3xf32>
      return %r : tensor<1x14x2x3xf32>
    }
  }
  module @rule_64 attributes {loom.status = "proved", loom.axioms = ["conv_relu"]} {
    func.func @source(%x: tensor<1x12x44x52xf32>, %w: tensor<14x12x16x16xf32>, %b: tensor<14xf32>) -> tensor<1x14x2x3xf32> {
      %c = tg.conv %x, %w, %b {strides = array<i64: 16, 16>} : (tensor<1x12x44x52xf32>, tensor<14x12x16x16xf32>, tensor<14xf32>) -> tensor<1x14x2x3xf32>
      %r = tg.relu %c : tensor<1x14x2x3xf32>
      return %r : tensor<1x14x2x3xf32>
    }
    func.func @target(%x: tensor<1x12x44x52xf32>, %w: tensor<14x12x16x16xf32>, %b: tensor<14xf32>) -> tensor<1x14x2x3xf32> {
      %r = tg.conv %x, %w, %b {strides = array<i64: 16, 16>, activation = #tg<activation relu>} : (tensor<1x12x44x52xf32>, tensor<14x12x16x16xf32>, tensor<14xf32>) -> tensor<1x14x2x3xf32>
      return %r : tensor<1x14x2x3xf32>
    }
  }
  module @rule_65 attributes {loom.status = "proved", loom.axioms = ["conv_enlarge", "conv_concat_filters"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w1: tensor<14x12x1x1xf32>, %b1: tensor<14xf32>, %w3: tensor<22x12x3x3xf32>, %b3: tensor<22xf32>) -> tensor<1x36x16x18xf32> {
      %a = tg.conv %x, %w1, %b1 {activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      %b = tg.conv %x, %w3, %b3 {activation = #tg<activation relu>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<22x12x3x3xf32>, tensor<22xf32>) -> tensor<1x22x16x18xf32>
      %y = tg.concat %a, %b {axis = 1 : i64} : (tensor<1x14x16x18xf32>, tensor<1x22x16x18xf32>) -> tensor<1x36x16x18xf32>
      return %y : tensor<1x36x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w1: tensor<14x12x1x1xf32>, %b1: tensor<14xf32>, %w3: tensor<22x12x3x3xf32>, %b3: tensor<22xf32>) -> tensor<1x36x16x18xf32> {
      %e = tg.enlarge %w1 {kernel_size = array<i64: 3, 3>} : (tensor<14x12x1x1xf32>) -> tensor<14x12x3x3xf32>
      %w = tg.concat %e, %w3 {axis = 0 : i64} : (tensor<14x12x3x3xf32>, tensor<22x12x3x3xf32>) -> tensor<36x12x3x3xf32>
      %bb = tg.concat %b1, %b3 {axis = 0 : i64} : (tensor<14xf32>, tensor<22xf32>) -> tensor<36xf32>
      %y = tg.conv %x, %w, %bb {activation = #tg<activation relu>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x12x16x18xf32>, tensor<36x12x3x3xf32>, tensor<36xf32>) -> tensor<1x36x16x18xf32>
      return %y : tensor<1x36x16x18xf32>
    }
  }
  module @rule_66 attributes {loom.status = "proved", loom.axioms = ["conv_concat_filters", "split_concat"]} {
    func.func @source(%x: tensor<1x12x16x18xf32>, %w1: tensor<14x12x1x1xf32>, %b1: tensor<14xf32>, %w2: tensor<22x12x1x1xf32>, %b2: tensor<22xf32>) -> (tensor<1x14x16x18xf32>, tensor<1x22x16x18xf32>) {
      %a = tg.conv %x, %w1, %b1 {activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<14x12x1x1xf32>, tensor<14xf32>) -> tensor<1x14x16x18xf32>
      %b = tg.conv %x, %w2, %b2 {activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<22x12x1x1xf32>, tensor<22xf32>) -> tensor<1x22x16x18xf32>
      return %a, %b : tensor<1x14x16x18xf32>, tensor<1x22x16x18xf32>
    }
    func.func @target(%x: tensor<1x12x16x18xf32>, %w1: tensor<14x12x1x1xf32>, %b1: tensor<14xf32>, %w2: tensor<22x12x1x1xf32>, %b2: tensor<22xf32>) -> (tensor<1x14x16x18xf32>, tensor<1x22x16x18xf32>) {
      %w = tg.concat %w1, %w2 {axis = 0 : i64} : (tensor<14x12x1x1xf32>, tensor<22x12x1x1xf32>) -> tensor<36x12x1x1xf32>
      %bb = tg.concat %b1, %b2 {axis = 0 : i64} : (tensor<14xf32>, tensor<22xf32>) -> tensor<36xf32>
      %y = tg.conv %x, %w, %bb {activation = #tg<activation relu>} : (tensor<1x12x16x18xf32>, tensor<36x12x1x1xf32>, tensor<36xf32>) -> tensor<1x36x16x18xf32>
      %a, %b = tg.split %y {axis = 1 : i64, sizes = array<i64: 14, 22>} : (tensor<1x36x16x18xf32>) -> (tensor<1x14x16x18xf32>, tensor<1x22x16x18xf32>)
      return %a, %b : tensor<1x14x16x18xf32>, tensor<1x22x16x18xf32>
    }
  }
  module @rule_67 attributes {loom.status = "proved", loom.axioms = ["matmul_concat_rhs", "split_concat"]} {
    func.func @source(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>) {
      %a = tg.matmul %x, %w1 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      %b = tg.matmul %x, %w2 : (tensor<4x6xf32>, tensor<6x10xf32>) -> tensor<4x10xf32>
      return %a, %b : tensor<4x8xf32>, tensor<4x10xf32>
    }
    func.func @target(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>) {
      %w = tg.concat %w1, %w2 {axis = 1 : i64} : (tensor<6x8xf32>, tensor<6x10xf32>) -> tensor<6x18xf32>
      %m = tg.matmul %x, %w : (tensor<4x6xf32>, tensor<6x18xf32>) -> tensor<4x18xf32>
      %a, %b = tg.split %m {axis = 1 : i64, sizes = array<i64: 8, 10>} : (tensor<4x18xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>)
      return %a, %b : tensor<4x8xf32>, tensor<4x10xf32>
    }
  }
  module @rule_68 attributes {loom.status = "proved", loom.axioms = ["matmul_concat_rhs", "split_concat"]} {
    func.func @source(%x: tensor<1x4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>) {
      %a = tg.matmul %x, %w1 : (tensor<1x4x6xf32>, tensor<6x8xf32>) -> tensor<1x4x8xf32>
      %b = tg.matmul %x, %w2 : (tensor<1x4x6xf32>, tensor<6x10xf32>) -> tensor<1x4x10xf32>
      return %a, %b : tensor<1x4x8xf32>, tensor<1x4x10xf32>
    }
    func.func @target(%x: tensor<1x4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>) {
      %w = tg.concat %w1, %w2 {axis = 1 : i64} : (tensor<6x8xf32>, tensor<6x10xf32>) -> tensor<6x18xf32>
      %m = tg.matmul %x, %w : (tensor<1x4x6xf32>, tensor<6x18xf32>) -> tensor<1x4x18xf32>
      %a, %b = tg.split %m {axis = 2 : i64, sizes = array<i64: 8, 10>} : (tensor<1x4x18xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>)
      return %a, %b : tensor<1x4x8xf32>, tensor<1x4x10xf32>
    }
  }
  module @rule_69 attributes {loom.status = "proved", loom.axioms = ["matmul_concat_rhs", "split_concat"]} {
    func.func @source(%x: tensor<1x4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>, %w3: tensor<6x12xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>) {
      %q = tg.matmul %x, %w1 : (tensor<1x4x6xf32>, tensor<6x8xf32>) -> tensor<1x4x8xf32>
      %k = tg.matmul %x, %w2 : (tensor<1x4x6xf32>, tensor<6x10xf32>) -> tensor<1x4x10xf32>
      %v = tg.matmul %x, %w3 : (tensor<1x4x6xf32>, tensor<6x12xf32>) -> tensor<1x4x12xf32>
      return %q, %k, %v : tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>
    }
    func.func @target(%x: tensor<1x4x6xf32>, %w1: tensor<6x8xf32>, %w2: tensor<6x10xf32>, %w3: tensor<6x12xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>) {
      %w = tg.concat %w1, %w2, %w3 {axis = 1 : i64} : (tensor<6x8xf32>, tensor<6x10xf32>, tensor<6x12xf32>) -> tensor<6x30xf32>
      %m = tg.matmul %x, %w : (tensor<1x4x6xf32>, tensor<6x30xf32>) -> tensor<1x4x30xf32>
      %q, %k, %v = tg.split %m {axis = 2 : i64, sizes = array<i64: 8, 10, 12>} : (tensor<1x4x30xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>)
      return %q, %k, %v : tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>
    }
  }
  module @rule_70 attributes {loom.status = "proved", loom.axioms = ["split_add_concat"]} {
    func.func @source(%m: tensor<1x4x30xf32>, %b1: tensor<8xf32>, %b2: tensor<10xf32>, %b3: tensor<12xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>) {
      %s1, %s2, %s3 = tg.split %m {axis = 2 : i64, sizes = array<i64: 8, 10, 12>} : (tensor<1x4x30xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>)
      %a1 = tg.add %s1, %b1 : (tensor<1x4x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
      %a2 = tg.add %s2, %b2 : (tensor<1x4x10xf32>, tensor<10xf32>) -> tensor<1x4x10xf32>
      %a3 = tg.add %s3, %b3 : (tensor<1x4x12xf32>, tensor<12xf32>) -> tensor<1x4x12xf32>
      return %a1, %a2, %a3 : tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>
    }
    func.func @target(%m: tensor<1x4x30xf32>, %b1: tensor<8xf32>, %b2: tensor<10xf32>, %b3: tensor<12xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>) {
      %b = tg.concat %b1, %b2, %b3 {axis = 0 : i64} : (tensor<8xf32>, tensor<10xf32>, tensor<12xf32>) -> tensor<30xf32>
      %a = tg.add %m, %b : (tensor<1x4x30xf32>, tensor<30xf32>) -> tensor<1x4x30xf32>
      %a1, %a2, %a3 = tg.split %a {axis = 2 : i64, sizes = array<i64: 8, 10, 12>} : (tensor<1x4x30xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>)
      return %a1, %a2, %a3 : tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>
    }
  }
  module @rule_71 attributes {loom.status = "proved", loom.axioms = ["split_add_concat"]} {
    func.func @source(%m: tensor<4x18xf32>, %b1: tensor<8xf32>, %b2: tensor<10xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>) {
      %s1, %s2 = tg.split %m {axis = 1 : i64, sizes = array<i64: 8, 10>} : (tensor<4x18xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>)
      %a1 = tg.add %s1, %b1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      %a2 = tg.add %s2, %b2 : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
      return %a1, %a2 : tensor<4x8xf32>, tensor<4x10xf32>
    }
    func.func @target(%m: tensor<4x18xf32>, %b1: tensor<8xf32>, %b2: tensor<10xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>) {
      %b = tg.concat %b1, %b2 {axis = 0 : i64} : (tensor<8xf32>, tensor<10xf32>) -> tensor<18xf32>
      %a = tg.add %m, %b : (tensor<4x18xf32>, tensor<18xf32>) -> tensor<4x18xf32>
      %a1, %a2 = tg.split %a {axis = 1 : i64, sizes = array<i64: 8, 10>} : (tensor<4x18xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>)
      return %a1, %a2 : tensor<4x8xf32>, tensor<4x10xf32>
    }
  }
  module @rule_72 attributes {loom.status = "proved", loom.axioms = ["split_add_concat"]} {
    func.func @source(%m: tensor<1x4x18xf32>, %b1: tensor<8xf32>, %b2: tensor<10xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>) {
      %s1, %s2 = tg.split %m {axis = 2 : i64, sizes = array<i64: 8, 10>} : (tensor<1x4x18xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>)
      %a1 = tg.add %s1, %b1 : (tensor<1x4x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
      %a2 = tg.add %s2, %b2 : (tensor<1x4x10xf32>, tensor<10xf32>) -> tensor<1x4x10xf32>
      return %a1, %a2 : tensor<1x4x8xf32>, tensor<1x4x10xf32>
    }
    func.func @target(%m: tensor<1x4x18xf32>, %b1: tensor<8xf32>, %b2: tensor<10xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>) {
      %b = tg.concat %b1, %b2 {axis = 0 : i64} : (tensor<8xf32>, tensor<10xf32>) -> tensor<18xf32>
      %a = tg.add %m, %b : (tensor<1x4x18xf32>, tensor<18xf32>) -> tensor<1x4x18xf32>
      %a1, %a2 = tg.split %a {axis = 2 : i64, sizes = array<i64: 8, 10>} : (tensor<1x4x18xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>)
      return %a1, %a2 : tensor<1x4x8xf32>, tensor<1x4x10xf32>
    }
  }
  module @rule_73 attributes {loom.status = "proved", loom.axioms = ["split_split"]} {
    func.func @source(%m: tensor<4x30xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>, tensor<4x12xf32>) {
      %p, %s3 = tg.split %m {axis = 1 : i64, sizes = array<i64: 18, 12>} : (tensor<4x30xf32>) -> (tensor<4x18xf32>, tensor<4x12xf32>)
      %s1, %s2 = tg.split %p {axis = 1 : i64, sizes = array<i64: 8, 10>} : (tensor<4x18xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>)
      return %s1, %s2, %s3 : tensor<4x8xf32>, tensor<4x10xf32>, tensor<4x12xf32>
    }
    func.func @target(%m: tensor<4x30xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>, tensor<4x12xf32>) {
      %s1, %s2, %s3 = tg.split %m {axis = 1 : i64, sizes = array<i64: 8, 10, 12>} : (tensor<4x30xf32>) -> (tensor<4x8xf32>, tensor<4x10xf32>, tensor<4x12xf32>)
      return %s1, %s2, %s3 : tensor<4x8xf32>, tensor<4x10xf32>, tensor<4x12xf32>
    }
  }
  module @rule_74 attributes {loom.status = "proved", loom.axioms = ["split_split"]} {
    func.func @source(%m: tensor<1x4x30xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>) {
      %p, %s3 = tg.split %m {axis = 2 : i64, sizes = array<i64: 18, 12>} : (tensor<1x4x30xf32>) -> (tensor<1x4x18xf32>, tensor<1x4x12xf32>)
      %s1, %s2 = tg.split %p {axis = 2 : i64, sizes = array<i64: 8, 10>} : (tensor<1x4x18xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>)
      return %s1, %s2, %s3 : tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>
    }
    func.func @target(%m: tensor<1x4x30xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>) {
      %s1, %s2, %s3 = tg.split %m {axis = 2 : i64, sizes = array<i64: 8, 10, 12>} : (tensor<1x4x30xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>)
      return %s1, %s2, %s3 : tensor<1x4x8xf32>, tensor<1x4x10xf32>, tensor<1x4x12xf32>
    }
  }
  module @rule_75 attributes {loom.status = "proved", loom.axioms = ["matmul_concat_both", "concat_add"]} {
    func.func @source(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %h: tensor<4x10xf32>, %w2: tensor<10x8xf32>) -> tensor<4x8xf32> {
      %a = tg.matmul %x, %w1 : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
      %b = tg.matmul %h, %w2 : (tensor<4x10xf32>, tensor<10x8xf32>) -> tensor<4x8xf32>
      %s = tg.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      return %s : tensor<4x8xf32>
    }
    func.func @target(%x: tensor<4x6xf32>, %w1: tensor<6x8xf32>, %h: tensor<4x10xf32>, %w2: tensor<10x8xf32>) -> tensor<4x8xf32> {
      %xh = tg.concat %x, %h {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x10xf32>) -> tensor<4x16xf32>
      %w = tg.concat %w1, %w2 {axis = 0 : i64} : (tensor<6x8xf32>, tensor<10x8xf32>) -> tensor<16x8xf32>
      %s = tg.matmul %xh, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
      return %s : tensor<4x8xf32>
    }
  }
  module @rule_76 attributes {loom.status = "proved", loom.axioms = ["transpose_involution"]} {
    func.func @source(%x: tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> {
      %t = tg.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x6x8xf32>) -> tensor<1x6x4x8xf32>
      %u = tg.transpose %t {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x6x4x8xf32>) -> tensor<1x4x6x8xf32>
      return %u : tensor<1x4x6x8xf32>
    }
    func.func @target(%x: tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32> {
      return %x : tensor<1x4x6x8xf32>
    }
  }
  module @rule_77 attributes {loom.status = "proved", loom.axioms = ["relu_idempotent"]} {
    func.func @source(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      %r = tg.relu %x : tensor<4x6xf32>
      %s = tg.relu %r : tensor<4x6xf32>
      return %s : tensor<4x6xf32>
    }
    func.func @target(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
      %r = tg.relu %x : tensor<4x6xf32>
      return %r : tensor<4x6xf32>
    }
  }
}
