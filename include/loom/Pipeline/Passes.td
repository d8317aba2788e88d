//===- Passes.td - Pipeline partitioning passes -------------*- tablegen -*-===//
//
// Part of Loom. docs/Pipelines.md describes the partitioning.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PIPELINE_PASSES_TD
#define LOOM_PIPELINE_PASSES_TD

include "mlir/Pass/PassBase.td"

def PipePartition : Pass<"pipe-partition", "mlir::ModuleOp"> {
  let summary = "Partition a training graph into pipeline stages on devices";
  let description = [{
    Models the forward graph of `function` (every op's forward time on
    `target` from Loom's cost model, its backward time from the cost of the
    op's own VJP, parameter and activation bytes), then partitions it for
    `devices` devices and `micro-batches` micro-batches (the function's
    batch is one micro-batch) under `memory` GiB per device:
    `schedule=graph` (GraphPipe-style: a DAG of stages, parallel branches on
    different devices) or a sequential schedule (`gpipe`, `1f1b`,
    `interleaved` with `chunks` stages per device, `zb-h1`) on PipeDream's
    contiguous partition. Each stage becomes a forward function and a
    backward function (built by --tg-autodiff) beside `function`, and the
    schedule a `pipe.schedule` op at the end of the module: per device the
    actions per micro-batch, checked by the schedule verifier and timed by
    the simulator. Prints the stages and the simulation on stderr and writes
    `report=FILE` as JSON.

    ```
    loom-opt model.mlir --pipe-partition="devices=8 micro-batches=16 target=h100"
    loom-opt model.mlir --pipe-partition="devices=4 schedule=1f1b memory=16 report=plan.json"
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The forward function (default: @main or the only function)">,
    Option<"devices", "devices", "int", /*default=*/"4", "Devices">,
    Option<"microBatches", "micro-batches", "int", /*default=*/"8",
           "Micro-batches per step">,
    Option<"memoryGiB", "memory", "double", /*default=*/"80",
           "Memory per device in GiB (0: unlimited)">,
    Option<"target", "target", "std::string", /*default=*/"\"h100\"",
           "Cost model target: h100, h200, cpu">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"graph\"",
           "graph, gpipe, 1f1b, interleaved, zb-h1">,
    Option<"chunks", "chunks", "int", /*default=*/"2",
           "Stages per device of the interleaved schedule">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adam\"",
           "Optimizer whose state is counted: adam, sgd-momentum, sgd">,
    Option<"simulationBudget", "simulation-budget", "double",
           /*default=*/"3.0",
           "Seconds for simulating candidate plans (the first is always "
           "simulated)">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the plan as JSON to this file">,
  ];
}

#endif // LOOM_PIPELINE_PASSES_TD
