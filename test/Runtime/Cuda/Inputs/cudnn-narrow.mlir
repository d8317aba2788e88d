// Narrow convolutions cuDNN runs (--backends=cudnn; --precision=bf16's
// convolutions, written out): a strided one with its bias and its own ReLU,
// cast back to f32 (one step: cuDNN writes its f32 result, the cast taken
// in); one with a bias cast back to f32 and a tanh after the cast (fused
// after the bias, in f32); a grouped, dilated one kept in bf16 (its dst of
// the operands' type). cudnn-narrow.test runs it with every bf16 spelled
// f16 as well.
module {
  func.func @main(%x: tensor<2x5x11x13xbf16> {tg.name = "x"}, %w: tensor<7x5x3x3xbf16> {tg.name = "w"}, %b: tensor<7xbf16> {tg.name = "b"},
                  %g: tensor<1x6x9x10xbf16> {tg.name = "g"}, %gw: tensor<4x3x3x2xbf16> {tg.name = "gw"})
      -> (tensor<2x7x6x6xf32> {tg.name = "y"}, tensor<2x7x11x13xf32> {tg.name = "u"}, tensor<1x4x5x9xbf16> {tg.name = "z"}) {
    %c = tg.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 2, 1>, activation = #tg<activation relu>}
        : (tensor<2x5x11x13xbf16>, tensor<7x5x3x3xbf16>, tensor<7xbf16>) -> tensor<2x7x6x6xbf16>
    %y = tg.cast %c : tensor<2x7x6x6xbf16> to tensor<2x7x6x6xf32>
    %e = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>}
        : (tensor<2x5x11x13xbf16>, tensor<7x5x3x3xbf16>, tensor<7xbf16>) -> tensor<2x7x11x13xbf16>
    %f = tg.cast %e : tensor<2x7x11x13xbf16> to tensor<2x7x11x13xf32>
    %u = tg.tanh %f : tensor<2x7x11x13xf32>
    %z = tg.conv %g, %gw {groups = 2 : i64, dilations = array<i64: 2, 1>, pads = array<i64: 0, 0, 0, 0>}
        : (tensor<1x6x9x10xbf16>, tensor<4x3x3x2xbf16>) -> tensor<1x4x5x9xbf16>
    return %y, %u, %z : tensor<2x7x6x6xf32>, tensor<2x7x11x13xf32>, tensor<1x4x5x9xbf16>
  }
}
