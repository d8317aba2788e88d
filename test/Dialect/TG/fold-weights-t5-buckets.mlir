// --tg-fold-weights computes each op in its own element type
// (docs/Interpreter.md, "Compile-time evaluation"). T5's relative-position
// buckets as PyTorch exports them: log(distance / 8) / log(16) * 8, cast to
// an integer, plus 8, capped at 15; distances below 8 are their own bucket.
// log(16) is an f32 constant. In f32 log(2) / log(16) is exactly 0.25 and
// distance 16 is bucket 10; in f64 on the same f32 constant the quotient is
// 0.2499999993 and the cast made it bucket 9 (and 32 and 64 one less too):
// a folded T5 encoder was 1.3% off.
//
// The folded function (distances as a constant) must give, bit for bit,
// what the same function gives on the distances as a run-time input.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-opt %s --tg-fold-weights --canonicalize -o %t/folded.mlir
// RUN: FileCheck %s --check-prefix=FOLDED < %t/folded.mlir
// RUN: loom-run %s --entry values --outputs %t/in.safetensors > /dev/null
// RUN: loom-run %s --entry runtime --inputs %t/in.safetensors --outputs %t/want.safetensors --print-values 128 | FileCheck %s --check-prefix=BUCKETS
// RUN: loom-run %t/folded.mlir --entry folded --compare %t/want.safetensors --tolerance 0 --print-values 128 | FileCheck %s --check-prefixes=BUCKETS,SAME

// FOLDED-LABEL: func.func @folded
// FOLDED-NEXT: %[[B:.*]] = tg.constant dense<{{.*}}> : tensor<128xi64>
// FOLDED-NEXT: return %[[B]]

// BUCKETS: values: 1 2 3 4 5 6 7 8 8 8 8 9 9 9 9 10 10 10 10 10 10 10 11 11 11 11 11 11 11 11 11 12 12 12 12 12 12 12 12 12 12 12 12 12 12 13 13 13 13 13 13 13 13 13 13 13 13 13 13 13 13 13 13 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 14 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15{{$}}
// SAME: compare: largest error 0 (tolerance 0)

// The distances 1..128, the run-time input.
func.func @values() -> (tensor<128xf32> {tg.name = "distance"}) {
  %d = tg.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0]> : tensor<128xf32>
  return %d : tensor<128xf32>
}

func.func @folded() -> tensor<128xi64> {
  %d = tg.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0]> : tensor<128xf32>
  %eight = tg.constant dense<8.0> : tensor<f32>
  %log16 = tg.constant dense<2.77258873> : tensor<f32>
  %q = tg.div %d, %eight : (tensor<128xf32>, tensor<f32>) -> tensor<128xf32>
  %l = tg.log %q : tensor<128xf32>
  %r = tg.div %l, %log16 : (tensor<128xf32>, tensor<f32>) -> tensor<128xf32>
  %s = tg.mul %r, %eight : (tensor<128xf32>, tensor<f32>) -> tensor<128xf32>
  %t = tg.cast %s : tensor<128xf32> to tensor<128xi64>
  // int64 + 8 as the importer writes it: through f64.
  %tw = tg.cast %t : tensor<128xi64> to tensor<128xf64>
  %eight64 = tg.constant dense<8.0> : tensor<f64>
  %bw = tg.add %tw, %eight64 : (tensor<128xf64>, tensor<f64>) -> tensor<128xf64>
  %big = tg.cast %bw : tensor<128xf64> to tensor<128xi64>
  // min(big, 15) as the importer writes it: a comparison and a select.
  %fifteen = tg.constant dense<15> : tensor<i64>
  %under = tg.less %big, %fifteen : (tensor<128xi64>, tensor<i64>) -> tensor<128xi1>
  %capped = tg.select %under, %big, %fifteen : (tensor<128xi1>, tensor<128xi64>, tensor<i64>) -> tensor<128xi64>
  %small = tg.less %d, %eight : (tensor<128xf32>, tensor<f32>) -> tensor<128xi1>
  %exact = tg.cast %d : tensor<128xf32> to tensor<128xi64>
  %bucket = tg.select %small, %exact, %capped : (tensor<128xi1>, tensor<128xi64>, tensor<128xi64>) -> tensor<128xi64>
  return %bucket : tensor<128xi64>
}

func.func @runtime(%d: tensor<128xf32> {tg.name = "distance"}) -> tensor<128xi64> {
  %eight = tg.constant dense<8.0> : tensor<f32>
  %log16 = tg.constant dense<2.77258873> : tensor<f32>
  %q = tg.div %d, %eight : (tensor<128xf32>, tensor<f32>) -> tensor<128xf32>
  %l = tg.log %q : tensor<128xf32>
  %r = tg.div %l, %log16 : (tensor<128xf32>, tensor<f32>) -> tensor<128xf32>
  %s = tg.mul %r, %eight : (tensor<128xf32>, tensor<f32>) -> tensor<128xf32>
  %t = tg.cast %s : tensor<128xf32> to tensor<128xi64>
  // int64 + 8 as the importer writes it: through f64.
  %tw = tg.cast %t : tensor<128xi64> to tensor<128xf64>
  %eight64 = tg.constant dense<8.0> : tensor<f64>
  %bw = tg.add %tw, %eight64 : (tensor<128xf64>, tensor<f64>) -> tensor<128xf64>
  %big = tg.cast %bw : tensor<128xf64> to tensor<128xi64>
  // min(big, 15) as the importer writes it: a comparison and a select.
  %fifteen = tg.constant dense<15> : tensor<i64>
  %under = tg.less %big, %fifteen : (tensor<128xi64>, tensor<i64>) -> tensor<128xi1>
  %capped = tg.select %under, %big, %fifteen : (tensor<128xi1>, tensor<128xi64>, tensor<i64>) -> tensor<128xi64>
  %small = tg.less %d, %eight : (tensor<128xf32>, tensor<f32>) -> tensor<128xi1>
  %exact = tg.cast %d : tensor<128xf32> to tensor<128xi64>
  %bucket = tg.select %small, %exact, %capped : (tensor<128xi1>, tensor<128xi64>, tensor<128xi64>) -> tensor<128xi64>
  return %bucket : tensor<128xi64>
}
