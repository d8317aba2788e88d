// RUN: loom-opt %s --tg-pet="parts=2 min-extent=16 report=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file %t.json --check-prefix=REPORT
//
// The corrected program computes what the original does: both run on the
// interpreter on the same random inputs.
// RUN: loom-opt %s --tg-pet="parts=4 min-extent=16 fold=reshape-transpose" -o %t.pet.mlir
// RUN: loom-run %s --entry layer --seed 3 --outputs %t.before.safetensors > /dev/null
// RUN: loom-run %t.pet.mlir --entry layer --seed 3 --compare %t.before.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// SAME: compare: largest error {{.*}} (tolerance 1e-05)
// RUN: loom-run %s --entry strided --seed 4 --outputs %t.before2.safetensors > /dev/null
// RUN: loom-run %t.pet.mlir --entry strided --seed 4 --compare %t.before2.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
//
// PET's canonical example: a convolution whose 32 input rows are cut in two
// and folded into the batch; output rows 15 and 16 read padding instead of
// the other half and are recomputed by one correction kernel on input rows
// 14..17. The right rows are read where they lie in the batched result
// (batch 0 rows 0..14, batch 1 rows 1..15) and joined with the correction
// by one concat: the result is never unfolded as a whole.

// CHECK-LABEL: func.func @layer
// CHECK-SAME:    (%[[X:.*]]: tensor<1x4x32x16xf32>, %[[W:.*]]: tensor<8x4x3x3xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK:         %[[P:.*]]:2 = tg.split %[[X]] {axis = 2 : i64, sizes = array<i64: 16, 16>}
// CHECK:         %[[F:.*]] = tg.concat %[[P]]#0, %[[P]]#1 {axis = 0 : i64}
// CHECK:         %[[C:.*]] = tg.conv %[[F]], %[[W]], %[[B]] {activation = #tg<activation relu>, pads = array<i64: 1, 1, 1, 1>} : {{.*}} -> tensor<2x8x16x16xf32>
// CHECK:         %[[WIN:.*]] = tg.slice %[[X]] {limits = array<i64: 1, 4, 18, 16>, starts = array<i64: 0, 0, 14, 0>}
// CHECK:         %[[FIX:.*]] = tg.conv %[[WIN]], %[[W]], %[[B]] {activation = #tg<activation relu>, pads = array<i64: 0, 1, 0, 1>} : {{.*}} -> tensor<1x8x2x16xf32>
// CHECK:         %[[TOP:.*]] = tg.slice %[[C]] {limits = array<i64: 1, 8, 15, 16>, starts = array<i64: 0, 0, 0, 0>}
// CHECK:         %[[BOT:.*]] = tg.slice %[[C]] {limits = array<i64: 2, 8, 16, 16>, starts = array<i64: 1, 0, 1, 0>}
// CHECK:         %[[R:.*]] = tg.concat %[[TOP]], %[[FIX]], %[[BOT]] {axis = 2 : i64}
// CHECK:         return %[[R]]
func.func @layer(%x: tensor<1x4x32x16xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x32x16xf32> {
  %y = tg.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>} : (tensor<1x4x32x16xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x32x16xf32>
  return %y : tensor<1x8x32x16xf32>
}

// A strided 5x5 convolution and an average pool that counts only real
// elements: the correction windows and their pads follow the stride.
// CHECK-LABEL: func.func @strided
// CHECK:         tg.conv {{.*}} -> tensor<2x4x8x8xf32>
// CHECK:         tg.slice {{.*}} {limits = array<i64: 1, 2, 19, 16>, starts = array<i64: 0, 0, 12, 0>}
// CHECK:         tg.conv {{.*}} {pads = array<i64: 0, 2, 0, 2>, strides = array<i64: 2, 2>} {{.*}} -> tensor<1x4x2x8xf32>
// CHECK:         tg.avgpool {{.*}} -> tensor<2x4x4x8xf32>
// CHECK:         tg.slice {{.*}} {limits = array<i64: 1, 4, 10, 8>, starts = array<i64: 0, 0, 7, 0>}
// CHECK:         tg.avgpool {{.*}}pads = array<i64: 0, 1, 0, 1>{{.*}} -> tensor<1x4x1x8xf32>
func.func @strided(%x: tensor<1x2x32x16xf32>, %w: tensor<4x2x5x5xf32>) -> tensor<1x4x8x8xf32> {
  %y = tg.conv %x, %w {pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x32x16xf32>, tensor<4x2x5x5xf32>) -> tensor<1x4x16x8xf32>
  %p = tg.avgpool %y {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
  return %p : tensor<1x4x8x8xf32>
}

// REPORT:      "applied": true,
// REPORT-NEXT: "checked": true,
// REPORT-NEXT: "corrected": [
// REPORT-NEXT:   "[0:1, 0:8, 15:17, 0:16]"
// REPORT:      "equal": [
// REPORT-NEXT:   "[0:1, 0:8, 0:15, 0:16]",
// REPORT-NEXT:   "[0:1, 0:8, 17:32, 0:16]"
// REPORT:      "method": "multilinear",
// REPORT-NEXT: "proved": true

// A 1-D convolution, and a grouped, dilated one on a batch of 2: the
// pieces go to the batch piece-major, the correction windows follow the
// dilation (rows 28..35 for the cut at 32).
// CHECK-LABEL: func.func @conv1d
// CHECK:         tg.conv {{.*}} -> tensor<2x8x32xf32>
// CHECK:         tg.conv {{.*}} {dilations = array<i64: 1>, pads = array<i64: 0, 0>, strides = array<i64: 1>} {{.*}} -> tensor<1x8x2xf32>
// CHECK-LABEL: func.func @grouped
// CHECK:         tg.conv {{.*}} -> tensor<4x8x32x8xf32>
// CHECK:         tg.slice {{.*}} {limits = array<i64: 2, 8, 36, 8>, starts = array<i64: 0, 0, 28, 0>}
// CHECK:         tg.conv {{.*}}groups = 4 : i64, pads = array<i64: 0, 1, 0, 1>{{.*}} -> tensor<2x8x4x8xf32>
// RUN: loom-run %s --entry conv1d --seed 5 --outputs %t.before3.safetensors > /dev/null
// RUN: loom-run %t.pet.mlir --entry conv1d --seed 5 --compare %t.before3.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
// RUN: loom-run %s --entry grouped --seed 6 --outputs %t.before4.safetensors > /dev/null
// RUN: loom-run %t.pet.mlir --entry grouped --seed 6 --compare %t.before4.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
func.func @conv1d(%x: tensor<1x4x64xf32>, %w: tensor<8x4x3xf32>) -> tensor<1x8x64xf32> {
  %y = tg.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 1, 1>, dilations = array<i64: 1>} : (tensor<1x4x64xf32>, tensor<8x4x3xf32>) -> tensor<1x8x64xf32>
  return %y : tensor<1x8x64xf32>
}
func.func @grouped(%x: tensor<2x8x64x8xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<2x8x64x8xf32> {
  %y = tg.conv %x, %w {pads = array<i64: 2, 1, 2, 1>, groups = 4 : i64, dilations = array<i64: 2, 1>} : (tensor<2x8x64x8xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x64x8xf32>
  return %y : tensor<2x8x64x8xf32>
}

// PET's padding to a friendly shape: 31 rows are padded by one row of zeros
// to two pieces of 16. The convolution's last row reads that zero row where
// the original reads its padding (zero too): equal. The average pool counts
// only real elements, so its last row (30) differs and is corrected on input
// rows 29..30 with one row of padding below.
// CHECK-LABEL: func.func @padded
// CHECK:         tg.pad %arg0 {high = array<i64: 0, 0, 1, 0>, low = array<i64: 0, 0, 0, 0>} : (tensor<1x2x31x8xf32>) -> tensor<1x2x32x8xf32>
// CHECK:         tg.conv {{.*}} -> tensor<2x4x16x8xf32>
// CHECK:         %[[ROWS:.*]] = tg.concat {{.*}} -> tensor<1x4x31x8xf32>
// CHECK:         tg.avgpool {{.*}} -> tensor<2x4x16x8xf32>
// CHECK:         %[[TAIL:.*]] = tg.slice %[[ROWS]] {limits = array<i64: 1, 4, 31, 8>, starts = array<i64: 0, 0, 29, 0>}
// CHECK:         tg.avgpool %[[TAIL]] {kernel_size = array<i64: 3, 3>, pads = array<i64: 0, 1, 1, 1>}
// RUN: loom-run %s --entry padded --seed 7 --outputs %t.before5.safetensors > /dev/null
// RUN: loom-run %t.pet.mlir --entry padded --seed 7 --compare %t.before5.safetensors --tolerance 1e-5 | FileCheck %s --check-prefix=SAME
func.func @padded(%x: tensor<1x2x31x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x31x8xf32> {
  %y = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x31x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x31x8xf32>
  %p = tg.avgpool %y {kernel_size = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x31x8xf32>) -> tensor<1x4x31x8xf32>
  return %p : tensor<1x4x31x8xf32>
}
