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
    `report=FILE` as JSON. `fill-bubbles=FN` fills the chosen schedule's
    bubbles with trial steps of the forward function `FN` (of this module,
    or of `fill-module=FILE`), `fill-micro-batches` forwards and backwards
    per trial step, priced as `--pipe-fill-bubbles` prices them.
    `profile=FILE[,FILE...]` feeds the choice with a measured run of any
    partition of `function` on the same kind of ranks: every candidate plan
    and schedule is simulated with the run's message costs, and every op's
    times scaled by the run's measured compute over the model's.

    ```
    loom-opt model.mlir --pipe-partition="devices=8 micro-batches=16 target=h100"
    loom-opt model.mlir --pipe-partition="devices=4 schedule=1f1b memory=16 report=plan.json"
    loom-opt model.mlir --pipe-partition="devices=4 schedule=gpipe fill-bubbles=loss_trials fill-module=mlp-8.mlir"
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
    Option<"fillBubbles", "fill-bubbles", "std::string", /*default=*/"\"\"",
           "Fill the schedule's bubbles with trial steps of this forward "
           "function">,
    Option<"fillModule", "fill-module", "std::string", /*default=*/"\"\"",
           "The file holding the fill-bubbles function (default: this "
           "module)">,
    Option<"fillMicroBatches", "fill-micro-batches", "int", /*default=*/"1",
           "Forwards and backwards of the fill-bubbles function per trial "
           "step">,
    ListOption<"profiles", "profile", "std::string",
               "Step profiles of a run of any partition of the function "
               "(loom-run --step-profile): every candidate is simulated "
               "with the messages' measured costs and the ops' times "
               "scaled to the measured compute">,
  ];
}

def PipeFillBubbles : Pass<"pipe-fill-bubbles", "mlir::ModuleOp"> {
  let summary = "Fill the bubbles of every pipe.schedule with a second job's "
                "trial steps";
  let description = [{
    Hydro's bubble filling: places a second job's trial steps (for example a
    `--tg-fuse-trials` function: N fused hyper-parameter trials) in the idle
    time of every `pipe.schedule`'s devices, where the main job runs exactly
    as it does alone (include/loom/Dialect/Pipe/Schedule/Fill.h), and writes
    them as the schedule's `pipe.filler` and `pipe.fill` ops. The job is the
    forward function `function` (of this module, or of `module=FILE`), one
    trial step `micro-batches` forwards and backwards of it priced by the
    cost model of `target` as `--pipe-partition` prices a stage (static
    bytes: its parameters times the state factor of `optimizer`), or given
    directly by `forward-time` and `backward-time` (seconds per micro-batch)
    with `static-bytes` and `activation-bytes`. The result is verified (the
    main job's actions, order and times unchanged, the trial steps complete
    and in order, memory); prints per schedule the mean idle fraction before
    and after and the trial steps per main step on stderr.

    ```
    loom-opt partitioned.mlir --pipe-fill-bubbles="function=loss_trials module=mlp-8.mlir" \
        --pipe-simulate="svg=filled.svg"
    loom-opt step.mlir --pipe-fill-bubbles="forward-time=1e-4 backward-time=2e-4 micro-batches=2"
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The filler's forward function, priced by the cost model">,
    Option<"module", "module", "std::string", /*default=*/"\"\"",
           "The file holding the function (default: this module)">,
    Option<"target", "target", "std::string", /*default=*/"\"h100\"",
           "Cost model target: h100, h200, cpu">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adam\"",
           "Optimizer whose state is counted: adam, sgd-momentum, sgd">,
    Option<"microBatches", "micro-batches", "int", /*default=*/"1",
           "Forwards and backwards per trial step">,
    Option<"forwardTime", "forward-time", "double", /*default=*/"0",
           "Seconds per forward (without function)">,
    Option<"backwardTime", "backward-time", "double", /*default=*/"0",
           "Seconds per backward (without function)">,
    Option<"staticBytes", "static-bytes", "int64_t", /*default=*/"0",
           "Bytes the trials keep on a device (without function)">,
    Option<"activationBytes", "activation-bytes", "int64_t", /*default=*/"0",
           "Bytes kept from a forward to its backward (without function)">,
    Option<"maxActions", "max-actions", "int64_t", /*default=*/"200000",
           "Place at most this many filler actions per schedule">,
  ];
}

#endif // LOOM_PIPELINE_PASSES_TD
