// The coordinates of the non-zero elements of x, padded to 2x6, and their
// count: the function result attributes say which result holds the length
// of which (include/loom/Dialect/TG/IR/BoundedResults.h).
func.func @main(%x: tensor<2x3xf32> {tg.name = "x"})
    -> (tensor<2x6xi64> {tg.name = "nz", tg.bounded_dim = 1 : i64, tg.length_result = 1 : i64},
        tensor<i64> {tg.name = "nz_length"}) {
  %idx, %n = tg.nonzero %x : (tensor<2x3xf32>) -> (tensor<2x6xi64>, tensor<i64>)
  return %idx, %n : tensor<2x6xi64>, tensor<i64>
}
