// Casts between the two 16-bit floats (precision.test): through f32, which
// holds both exactly, so one rounding to the target (f16 -> bf16 rounds to
// 8 significant bits; bf16 -> f16 overflows past 65504 and loses the small
// exponents' bits).
func.func @main(%h: tensor<64xf16> {tg.name = "h"}, %b: tensor<64xbf16> {tg.name = "b"}) -> (tensor<64xbf16> {tg.name = "hb"}, tensor<64xf16> {tg.name = "bh"}) {
  %hb = tg.cast %h : tensor<64xf16> to tensor<64xbf16>
  %bh = tg.cast %b : tensor<64xbf16> to tensor<64xf16>
  return %hb, %bh : tensor<64xbf16>, tensor<64xf16>
}
