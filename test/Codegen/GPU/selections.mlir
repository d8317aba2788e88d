// RUN: loom-opt %s --loom-gpu-map-selections --split-input-file | FileCheck %s
// RUN: not loom-opt %s --loom-gpu-map-selections=block-size=0 --split-input-file 2>&1 | FileCheck %s --check-prefix=SIZE

// The selection class's form (lavapipe runs it in selections-vulkan.test):
// a top-k of 37 sorts a permutation of 64 positions in workgroup memory, a
// barrier after each stage of the bitonic sort; the results are buffers
// made tensors.
// CHECK-LABEL: func.func @topk_shared
// CHECK: bufferization.to_buffer %{{.*}} read_only : tensor<37xf32> to memref<37xf32>
// CHECK: %[[V:.*]] = memref.alloc() : memref<5xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128
// CHECK: memref.alloc() : memref<64xi32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: bufferization.to_tensor %[[V]] restrict writable
// CHECK-NOT: tg.topk
func.func @topk_shared(%x: tensor<37xf32>) -> (tensor<5xf32>, tensor<5xi64>, tensor<i64>) {
  %v, %i, %n = tg.topk %x {axis = 0 : i64, k = 5 : i64}
      : (tensor<37xf32>) -> (tensor<5xf32>, tensor<5xi64>, tensor<i64>)
  return %v, %i, %n : tensor<5xf32>, tensor<5xi64>, tensor<i64>
}

// -----

// Past 4,096 positions (16 KiB) the permutation is a scratch buffer of a
// row per line (loom-gpu-hoist-scratch makes it a parameter), two lines
// here: two workgroups.
// CHECK-LABEL: func.func @topk_scratch
// CHECK: memref.alloc() : memref<2x8192xi32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2
// CHECK-NOT: address_space<workgroup>
// CHECK: return
func.func @topk_scratch(%x: tensor<5003x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>, tensor<i64>) {
  %v, %i, %n = tg.topk %x {axis = 0 : i64, k = 3 : i64}
      : (tensor<5003x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>, tensor<i64>)
  return %v, %i, %n : tensor<3x2xf32>, tensor<3x2xi64>, tensor<i64>
}

// -----

// A line of 100,000 (a sort of 131,072 positions: 79,530 loop iterations per
// thread, past the budget of 60,000) is cut into 196 chunks of 512, each
// sorted by a workgroup in workgroup memory, whose 3 candidates each (588)
// one workgroup sorts (a launch per line) in 1,024 positions.
// CHECK-LABEL: func.func @topk_past_budget
// CHECK: %[[CAND:.*]] = memref.alloc() : memref<1x588xi32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c196{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128
// CHECK: memref.alloc() : memref<512xi32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %[[CAND]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128
// CHECK: memref.alloc() : memref<1024xi32, #gpu.address_space<workgroup>>
// CHECK: memref.load %[[CAND]]
// CHECK-NOT: tg.topk
// CHECK: return
func.func @topk_past_budget(%x: tensor<100000xf32>) -> (tensor<3xf32>, tensor<3xi64>, tensor<i64>) {
  %v, %i, %n = tg.topk %x {axis = 0 : i64, k = 3 : i64}
      : (tensor<100000xf32>) -> (tensor<3xf32>, tensor<3xi64>, tensor<i64>)
  return %v, %i, %n : tensor<3xf32>, tensor<3xi64>, tensor<i64>
}

// -----

// All 100,000 of a line: the candidates are the whole line, whose sort is
// past the budget however it is cut: the scf lowering stays.
// CHECK-LABEL: func.func @topk_past_budget_chunked
// CHECK-NOT: gpu.launch
// CHECK: tg.topk
func.func @topk_past_budget_chunked(%x: tensor<100000xf32>) -> (tensor<100000xf32>, tensor<100000xi64>, tensor<i64>) {
  %v, %i, %n = tg.topk %x {axis = 0 : i64, k = 100000 : i64}
      : (tensor<100000xf32>) -> (tensor<100000xf32>, tensor<100000xi64>, tensor<i64>)
  return %v, %i, %n : tensor<100000xf32>, tensor<100000xi64>, tensor<i64>
}

// -----

// Nonzero: one workgroup, a scan of one i32 per thread in workgroup memory,
// unrolled: a barrier after the store, two per step of 7, one at the end.
// CHECK-LABEL: func.func @nonzero
// CHECK: gpu.launch
// CHECK: memref.alloc() : memref<128xi32, #gpu.address_space<workgroup>>
// CHECK-COUNT-16: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
func.func @nonzero(%z: tensor<5x7xi1>) -> (tensor<2x35xi64>, tensor<i64>) {
  %idx, %n = tg.nonzero %z : (tensor<5x7xi1>) -> (tensor<2x35xi64>, tensor<i64>)
  return %idx, %n : tensor<2x35xi64>, tensor<i64>
}

// -----

// NMS: the sort, then for each launch of the sweep (400 words of 32 boxes,
// at most 170 loop iterations per word and thread: 352 words per launch,
// so two) the masks of its words' candidates (a tile of 352 x 32 rows),
// then the sweep; the rows.
// CHECK-LABEL: func.func @nms
// CHECK: memref.alloc() : memref<1x16384xi32>
// CHECK: memref.alloc() : memref<1x11264x400xi32>
// CHECK-COUNT-6: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @nms(%b: tensor<1x12800x4xf32>, %s: tensor<1x1x12800xf32>) -> (tensor<12800x3xi64>, tensor<i64>) {
  %sel, %n = tg.non_max_suppression %b, %s {iou_threshold = 0.5 : f64,
      max_output_boxes_per_class = 9223372036854775807 : i64}
      : (tensor<1x12800x4xf32>, tensor<1x1x12800xf32>) -> (tensor<12800x3xi64>, tensor<i64>)
  return %sel, %n : tensor<12800x3xi64>, tensor<i64>
}

// -----

// Mask R-CNN's NMS: 90,000 boxes of one class. The sort of 131,072
// positions passes one launch's budget (153 stages of 513 iterations per
// thread): launch 1 counts and runs 113 of them, a second launch the other
// 40. The sweep's 2,813 words, 76 per launch (782 iterations each), are 38
// launches, each after the masks of its 2,432 rows (27 MB at a time; the
// whole mask would be 1 GB); then the rows: 79 launches.
// CHECK-LABEL: func.func @nms_mask_rcnn
// CHECK: memref.alloc() : memref<1x131072xi32>
// CHECK: memref.alloc() : memref<1x2432x2813xi32>
// CHECK-COUNT-79: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @nms_mask_rcnn(%b: tensor<1x90000x4xf32>, %s: tensor<1x1x90000xf32>, %valid: tensor<i64>)
    -> (tensor<90000x3xi64>, tensor<i64>) {
  %sel, %n = tg.non_max_suppression %b, %s, %valid {iou_threshold = 0.5 : f64,
      max_output_boxes_per_class = 9223372036854775807 : i64}
      : (tensor<1x90000x4xf32>, tensor<1x1x90000xf32>, tensor<i64>) -> (tensor<90000x3xi64>, tensor<i64>)
  return %sel, %n : tensor<90000x3xi64>, tensor<i64>
}

// -----

// 2 x 40 classes of 12,800 boxes: a tile of 352 words would be 1.4 GiB, so
// the sweep's launches take 131 words (4,192 rows: 512 MiB at most), 4 of
// them, each after its masks.
// CHECK-LABEL: func.func @nms_classes
// CHECK: memref.alloc() : memref<80x4192x400xi32>
// CHECK-COUNT-10: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @nms_classes(%b: tensor<2x12800x4xf32>, %s: tensor<2x40x12800xf32>) -> (tensor<8000x3xi64>, tensor<i64>) {
  %sel, %n = tg.non_max_suppression %b, %s {iou_threshold = 0.5 : f64,
      max_output_boxes_per_class = 100 : i64}
      : (tensor<2x12800x4xf32>, tensor<2x40x12800xf32>) -> (tensor<8000x3xi64>, tensor<i64>)
  return %sel, %n : tensor<8000x3xi64>, tensor<i64>
}

// SIZE: loom-gpu-map-selections: block-size must be in [1, 1024], got 0
