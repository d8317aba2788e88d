// RUN: loom-opt %s --loom-gpu-merge-modules | FileCheck %s

// Every outlined kernel in the one gpu.module @loom_kernels, each named
// after its module, the launches pointed at it. The constant globals the
// kernels read come with them: two equal globals of the same name are one,
// a different one of the same name is renamed and its kernel reads it under
// the new name. A kernel equal to one merged before it (@f_kernel_0, the
// same as @f_kernel with the same table) is dropped and its launch points at
// @f_kernel; one that reads another table (@f_kernel_1) or differs in its
// body (@f_kernel_2) stays.
// CHECK: gpu.launch_func @loom_kernels::@f_kernel blocks
// CHECK-NEXT: gpu.launch_func @loom_kernels::@f_kernel blocks
// CHECK-NEXT: gpu.launch_func @loom_kernels::@f_kernel_1 blocks
// CHECK-NEXT: gpu.launch_func @loom_kernels::@f_kernel_2 blocks
// CHECK: gpu.module @loom_kernels
// CHECK-NEXT: memref.global "private" constant @table : memref<2xi32> = dense<[0, 1]>
// CHECK-NEXT: gpu.func @f_kernel(
// CHECK: memref.get_global @table :
// CHECK-NOT: memref.global
// CHECK-NOT: gpu.func @f_kernel_0(
// CHECK: memref.global "private" constant @[[OTHER:table_[0-9]+]] : memref<2xi32> = dense<1>
// CHECK-NEXT: gpu.func @f_kernel_1(
// CHECK: memref.get_global @[[OTHER]] :
// CHECK: gpu.func @f_kernel_2(
// CHECK: memref.get_global @table :
// CHECK: gpu.thread_id y
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @f(%x: memref<2xi32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c2, %c1, %c1) args(%x : memref<2xi32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c2, %c1, %c1) args(%x : memref<2xi32>)
    gpu.launch_func @f_kernel_1::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c2, %c1, %c1) args(%x : memref<2xi32>)
    gpu.launch_func @f_kernel_2::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c2, %c1, %c1) args(%x : memref<2xi32>)
    return
  }
  gpu.module @f_kernel {
    memref.global "private" constant @table : memref<2xi32> = dense<[0, 1]>
    gpu.func @f_kernel(%x: memref<2xi32>) kernel {
      %t = memref.get_global @table : memref<2xi32>
      %tid = gpu.thread_id x
      %v = memref.load %t[%tid] : memref<2xi32>
      memref.store %v, %x[%tid] : memref<2xi32>
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    memref.global "private" constant @table : memref<2xi32> = dense<[0, 1]>
    gpu.func @f_kernel(%x: memref<2xi32>) kernel {
      %t = memref.get_global @table : memref<2xi32>
      %tid = gpu.thread_id x
      %v = memref.load %t[%tid] : memref<2xi32>
      memref.store %v, %x[%tid] : memref<2xi32>
      gpu.return
    }
  }
  gpu.module @f_kernel_1 {
    memref.global "private" constant @table : memref<2xi32> = dense<[1, 1]>
    gpu.func @f_kernel(%x: memref<2xi32>) kernel {
      %t = memref.get_global @table : memref<2xi32>
      %tid = gpu.thread_id x
      %v = memref.load %t[%tid] : memref<2xi32>
      memref.store %v, %x[%tid] : memref<2xi32>
      gpu.return
    }
  }
  gpu.module @f_kernel_2 {
    memref.global "private" constant @table : memref<2xi32> = dense<[0, 1]>
    gpu.func @f_kernel(%x: memref<2xi32>) kernel {
      %t = memref.get_global @table : memref<2xi32>
      %tid = gpu.thread_id y
      %v = memref.load %t[%tid] : memref<2xi32>
      memref.store %v, %x[%tid] : memref<2xi32>
      gpu.return
    }
  }
}
