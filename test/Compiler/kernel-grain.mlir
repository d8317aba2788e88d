// A generated kernel's grain (docs/Artifact.md, compiler::kernelGrain): the
// iterations of its range that carry kMinWorkPerThread (65536 FLOPs plus
// bytes). A kernel whose whole work is below that runs on the calling
// thread (grain == range); a large one may use every thread.
//
// RUN: loom-compile %s -o %t.so --superopt=none --print-schedule | FileCheck %s
// RUN: loom-run %t.so --entry=small --check --num-threads 2 | FileCheck %s --check-prefix=CHECKED
// RUN: loom-run %t.so --entry=large --check --num-threads 2 | FileCheck %s --check-prefix=CHECKED
//
// 8x64 relu: 2 KiB in, 2 KiB out, 512 FLOPs: grain == range.
// CHECK: kernel small_k0 range [[R:[0-9]+]] grain [[R]] elementwise args
// 512x1024 tanh: 2 MiB in, 2 MiB out, 8 FLOPs an element: 8.4 M over 512
// iterations, 16 K each, so a grain of 4.
// CHECK: kernel large_k0 range 512 grain 4 elementwise args
// CHECKED: check: largest error vs the interpreter

func.func @small(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = tg.relu %x : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

func.func @large(%x: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %y = tg.tanh %x : tensor<512x1024xf32>
  return %y : tensor<512x1024xf32>
}
