// A generated kernel's grain (docs/Artifact.md, compiler::kernelGrain): the
// iterations of its range that carry kMinWorkPerThread (65536 FLOPs plus
// bytes). A kernel whose whole work is below that runs on the calling
// thread (grain == range); a large one may use every thread.
//
// RUN: loom-compile %s -o %t.so --superopt=none --print-schedule | FileCheck %s
// RUN: loom-run %t.so --entry=small --check --num-threads 2 | FileCheck %s --check-prefix=CHECKED
// RUN: loom-run %t.so --entry=large --check --num-threads 2 | FileCheck %s --check-prefix=CHECKED
// RUN: loom-run %t.so --entry=shuffle --check --num-threads 2 | FileCheck %s --check-prefix=CHECKED
// RUN: loom-run %t.so --entry=big_transpose --check --num-threads 2 | FileCheck %s --check-prefix=CHECKED
//
// 8x64 relu: 2 KiB in, 2 KiB out, 512 FLOPs: grain == range.
// CHECK: kernel small_k0 range [[R:[0-9]+]] grain [[R]] args
// 512x1024 tanh: 2 MiB in, 2 MiB out, 8 FLOPs an element: 8.4 M over 512
// iterations, 16 K each, so a grain of 4.
// CHECK: kernel large_k0 range 512 grain 4 args
// A transpose computes nothing: its bytes count 1/16 (kMovedBytesPerWork),
// so one moving 0.5 MiB (ShuffleNetV2's channel shuffles) runs on the
// calling thread (before: a grain of 8), and one moving 8 MiB still
// splits: 512 K of work over 2048 rows, a grain of 256 (before: 16).
// CHECK: kernel shuffle_k0 range [[S:[0-9]+]] grain [[S]] args
// CHECK: kernel big_transpose_k0 range 2048 grain 256 args
// CHECKED: check: largest error vs the interpreter

func.func @small(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = tg.relu %x : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

func.func @large(%x: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %y = tg.tanh %x : tensor<512x1024xf32>
  return %y : tensor<512x1024xf32>
}

func.func @shuffle(%x: tensor<1x2x64x32x32xf32>) -> tensor<1x64x2x32x32xf32> {
  %y = tg.transpose %x {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x64x32x32xf32>) -> tensor<1x64x2x32x32xf32>
  return %y : tensor<1x64x2x32x32xf32>
}

func.func @big_transpose(%x: tensor<512x2048xf32>) -> tensor<2048x512xf32> {
  %y = tg.transpose %x {perm = array<i64: 1, 0>} : (tensor<512x2048xf32>) -> tensor<2048x512xf32>
  return %y : tensor<2048x512xf32>
}
