// tg.round_tf32 on values that exercise each branch of the rounding
// (precision-tf32.test): random inputs; ties at the 13th bit that go down
// (an even 13th bit) and up (an odd one), a tie that carries into the
// exponent, subnormal ties, the largest subnormal rounding up to the
// smallest normal, negatives; then values that round to or stay infinite
// and NaN, compared with what they must give (`eq`, 1 each: inf, -inf,
// FLT_MAX and the tie just under it to inf, the largest value under the
// tie to TF32's largest) and NaN by itself (`nan`: 1 for every entry but
// the NaN's).
func.func @main(%x: tensor<64xf32> {tg.name = "x"}) -> (tensor<64xf32> {tg.name = "random"}, tensor<12xf32> {tg.name = "ties"}, tensor<6xi1> {tg.name = "eq"}, tensor<6xi1> {tg.name = "nan"}) {
  %r = tg.round_tf32 %x : tensor<64xf32>
  %t = tg.constant dense<[0x3F801000, 0x3F803000, 0x3FFFF000, 0x3F801001, 0x3F802FFF, 0x00001000, 0x00003000, 0x00001001, 0x007FF000, 0x80003000, 0xBF803000, 0xC2F6F000]> : tensor<12xf32>
  %rt = tg.round_tf32 %t : tensor<12xf32>
  %s = tg.constant dense<[0x7F800000, 0xFF800000, 0x7F7FFFFF, 0x7F7FF000, 0x7F7FEFFF, 0x7FC00000]> : tensor<6xf32>
  %want = tg.constant dense<[0x7F800000, 0xFF800000, 0x7F800000, 0x7F800000, 0x7F7FE000, 0x7FC00000]> : tensor<6xf32>
  %rs = tg.round_tf32 %s : tensor<6xf32>
  %eq = tg.equal %rs, %want : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>
  %nan = tg.equal %rs, %rs : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>
  return %r, %rt, %eq, %nan : tensor<64xf32>, tensor<12xf32>, tensor<6xi1>, tensor<6xi1>
}
