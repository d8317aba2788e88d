// RUN: loom-opt %s --pass-pipeline="builtin.module(spirv.module(loom-gpu-spirv-barriers))" | FileCheck %s

// A workgroup barrier that orders workgroup memory (what convert-gpu-to-spirv
// makes of gpu.barrier) orders storage buffers too; a barrier of another
// scope, or one that orders no workgroup memory, is left as it is.
// CHECK-LABEL: spirv.func @step
// CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|UniformMemory|WorkgroupMemory>
// CHECK: spirv.ControlBarrier <Subgroup>, <Subgroup>, <AcquireRelease|WorkgroupMemory>
// CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>, <None>
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader], []> {
  spirv.func @step() "None" {
    spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
    spirv.ControlBarrier <Subgroup>, <Subgroup>, <AcquireRelease|WorkgroupMemory>
    spirv.ControlBarrier <Workgroup>, <Workgroup>, <None>
    spirv.Return
  }
}
