// pipe-partition on a two-branch model (two inputs, each through its own
// dense tower, then joined): the graph partition runs the towers on
// different devices; the sequential one cuts the block order into
// contiguous stages. Memory small enough that one device cannot hold all
// parameters, so both must spread them.
// RUN: loom-opt %s --pipe-partition="devices=2 micro-batches=4 memory=0.05 report=%t.graph.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRAPH
// RUN: FileCheck %s --check-prefix=JSON < %t.graph.json
// RUN: loom-opt %s --pipe-partition="devices=2 micro-batches=4 memory=0.05 schedule=1f1b" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SEQ
// RUN: loom-opt %s --pipe-partition="devices=2 micro-batches=4 memory=0.05" 2>/dev/null | loom-opt --pipe-verify-schedule | FileCheck %s --check-prefix=IR
// RUN: loom-opt %s --pipe-partition="devices=4 micro-batches=8 schedule=zb-h1" 2>&1 -o /dev/null | FileCheck %s --check-prefix=ZB
// RUN: not loom-opt %s --pipe-partition="devices=1 memory=0.05" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: not loom-opt %s --pipe-partition="schedule=zigzag" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not loom-opt %s --pipe-partition="devices=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICES

// GRAPH: pipe-partition: @main, 9 ops, on 2 x h100 (0.05 GiB), 4 micro-batches, graph partition
// GRAPH: 2 stages, 1 edges
// JSON: "method": "graph"
// JSON: "devices": [
// JSON-NEXT: 0
// JSON: "ops": 4
// JSON: "devices": [
// JSON-NEXT: 1
// JSON: "ops": 5
// IR-DAG: func.func @main_s0_forward(
// IR-DAG: func.func @main_s0_backward(
// IR-DAG: func.func @main_s1_forward(
// IR-DAG: func.func @main_s1_backward(
// IR: pipe.schedule @main_pipeline micro_batches(4)
// IR: pipe.device @d0 memory(53687091)
// IR: pipe.stage @s0 on [@d0] forward @main_s0_forward backward @main_s0_backward
// IR: pipe.program @d0 [
// IR-NEXT: F @s0 0,
// IR: pipe.program @d1 [
// IR-NEXT: RECV_F @s1 0 from @s0 on @d0,
// ZB: schedule zb-h1 (zb-h1 over the stages, best of
// ZB: makespan
// SEQ: sequential partition
// SEQ: 2 stages
// MEMORY: pipe-partition: no partition of the graph fits on 1 device(s) with 53687091 bytes each
// SCHEDULE: unknown schedule 'zigzag' (graph, gpipe, 1f1b, interleaved, zb-h1)
// DEVICES: devices must be in [1, 65536], not 0

func.func @main(%a: tensor<64x1024xf32>, %b: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %wa1 = tg.weight "a1" : tensor<1024x1024xf32>
  %wa2 = tg.weight "a2" : tensor<1024x1024xf32>
  %wb1 = tg.weight "b1" : tensor<1024x1024xf32>
  %wb2 = tg.weight "b2" : tensor<1024x1024xf32>
  %a1 = tg.matmul %a, %wa1 : (tensor<64x1024xf32>, tensor<1024x1024xf32>) -> tensor<64x1024xf32>
  %a2 = tg.relu %a1 : tensor<64x1024xf32>
  %a3 = tg.matmul %a2, %wa2 : (tensor<64x1024xf32>, tensor<1024x1024xf32>) -> tensor<64x1024xf32>
  %a4 = tg.relu %a3 : tensor<64x1024xf32>
  %b1 = tg.matmul %b, %wb1 : (tensor<64x1024xf32>, tensor<1024x1024xf32>) -> tensor<64x1024xf32>
  %b2 = tg.relu %b1 : tensor<64x1024xf32>
  %b3 = tg.matmul %b2, %wb2 : (tensor<64x1024xf32>, tensor<1024x1024xf32>) -> tensor<64x1024xf32>
  %b4 = tg.relu %b3 : tensor<64x1024xf32>
  %j = tg.add %a4, %b4 : (tensor<64x1024xf32>, tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %j : tensor<64x1024xf32>
}
