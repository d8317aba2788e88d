// A cache of 6 positions updated in place by two entries that share it by
// name (test/Runtime/tied-state.test): @prefill writes 2 positions at
// `pos`, @decode 1; both return the cache as its tied result and the sum of
// every position of the updated cache.
func.func @prefill(%cache: tensor<1x2x6x3xf32> {tg.name = "cache", tg.tied_result = 0 : i64},
                   %new: tensor<1x2x2x3xf32> {tg.name = "new"},
                   %pos: tensor<i64> {tg.name = "pos"})
    -> (tensor<1x2x6x3xf32> {tg.name = "cache"}, tensor<1x2x1x3xf32> {tg.name = "total"}) {
  %c = tg.update_slice %cache, %new, %pos {axis = 2 : i64} : (tensor<1x2x6x3xf32>, tensor<1x2x2x3xf32>, tensor<i64>) -> tensor<1x2x6x3xf32>
  %t = tg.reduce_sum %c {axes = array<i64: 2>} : (tensor<1x2x6x3xf32>) -> tensor<1x2x1x3xf32>
  return %c, %t : tensor<1x2x6x3xf32>, tensor<1x2x1x3xf32>
}

func.func @decode(%cache: tensor<1x2x6x3xf32> {tg.name = "cache", tg.tied_result = 0 : i64},
                  %new: tensor<1x2x1x3xf32> {tg.name = "new"},
                  %pos: tensor<i64> {tg.name = "pos"})
    -> (tensor<1x2x6x3xf32> {tg.name = "cache"}, tensor<1x2x1x3xf32> {tg.name = "total"}) {
  %c = tg.update_slice %cache, %new, %pos {axis = 2 : i64} : (tensor<1x2x6x3xf32>, tensor<1x2x1x3xf32>, tensor<i64>) -> tensor<1x2x6x3xf32>
  %t = tg.reduce_sum %c {axes = array<i64: 2>} : (tensor<1x2x6x3xf32>) -> tensor<1x2x1x3xf32>
  return %c, %t : tensor<1x2x6x3xf32>, tensor<1x2x1x3xf32>
}
