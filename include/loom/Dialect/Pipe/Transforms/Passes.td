//===- Passes.td - pipe passes -----------------------------*- tablegen -*-===//
//
// Part of Loom. Passes are grouped under banners and kept alphabetical.
// docs/Dialects/Pipe.md is the guide.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_PIPE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Checks and analyses
//===----------------------------------------------------------------------===//

def PipeSimulate : Pass<"pipe-simulate", "mlir::ModuleOp"> {
  let summary = "Time every pipe.schedule with its costs; report and draw it";
  let description = [{
    Verifies every `pipe.schedule` of the module (as
    `--pipe-verify-schedule`), then times it: each device runs its actions in
    order, a compute action takes its stage's seconds, a send does not block
    its device and occupies the directed link to its peer for bytes /
    bandwidth (inside a node or between nodes), arriving a latency later, and
    a receive waits for its message. Prints a table on stderr (busy time,
    finish, bubble fraction and peak memory per device; makespan, throughput
    in micro-batches and samples per second, mean bubble), and writes it as
    JSON to `report=FILE` (`-` for stdout). `svg=FILE` draws the timeline,
    `dot=FILE` the stage DAG (Graphviz); with several schedules, the files of
    all but the first get `.<schedule name>` before their extension. The IR
    is not changed.

    `profile=FILE[,FILE...]` feeds it a measured run instead of the cost
    model: step profiles written by `loom-run --step-profile` (one per run
    of the artifact compiled from this module) give each stage's forward
    and backward times (means of the stage functions' computes) and a
    message cost fitted from the ranks' exchanges (a send's and a
    receive's own time, latency + bytes / bandwidth in flight); it prints
    what it was fed before the table (docs/Dialects/Pipe.md "Fed with a
    measured run").

    ```
    loom-opt step.mlir --pipe-simulate="report=sim.json svg=step.svg dot=stages.dot"
    loom-opt step.mlir --pipe-simulate="profile=run1.json,run2.json"
    ```
  }];
  let options = [
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the simulation as JSON to this file (- for stdout)">,
    Option<"svg", "svg", "std::string", /*default=*/"\"\"",
           "Write the timeline as SVG to this file">,
    Option<"dot", "dot", "std::string", /*default=*/"\"\"",
           "Write the stage DAG as Graphviz to this file">,
    Option<"print", "print", "bool", /*default=*/"true",
           "Print the table on stderr">,
    Option<"maxSeconds", "max-seconds", "double", /*default=*/"0",
           "Fail when verifying and simulating one schedule takes longer "
           "(0: no limit)">,
    ListOption<"profiles", "profile", "std::string",
               "Step profiles of runs (loom-run --step-profile) whose "
               "measured times replace the cost model's">,
  ];
}

def PipeVerifySchedule : Pass<"pipe-verify-schedule", "mlir::ModuleOp"> {
  let summary = "Check that every pipe.schedule is correct";
  let description = [{
    Rejects a schedule that can deadlock (run with blocking receives: the
    blocked devices and their waits-for cycle are named), runs a backward
    (B, I or W) before its forward on that stage and micro-batch, W before I,
    a forward before its input is received, or a send before what it sends
    is computed; drops or repeats a micro-batch (every replica of every stage
    runs F and B, or I and W, exactly once per micro-batch); sends without a
    matching receive (or receives without a send); or puts more on a device
    than its memory holds (weights + optimizer state + the activations in
    flight, which an F adds and its B or W frees). Each error is reported at
    the device's `pipe.program` and names the device, the action and the
    micro-batch. The IR is not changed.
  }];
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

def PipeBuildSchedule : Pass<"pipe-build-schedule", "mlir::ModuleOp"> {
  let summary = "Replace the programs of every pipe.schedule by a named schedule";
  let description = [{
    Keeps the devices, stages, edges and costs of every `pipe.schedule` and
    replaces its `pipe.program`s by the actions of `kind`: `gpipe`, `1f1b`,
    `interleaved` (the stages of a chain round-robin on the devices, each
    device holding the same number) or `zb-h1` (B split into I and W). The
    result passes `--pipe-verify-schedule` by construction
    (include/loom/Dialect/Pipe/Schedule/Builders.h).

    ```
    loom-opt stages.mlir --pipe-build-schedule=kind=1f1b --pipe-simulate
    ```
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"1f1b\"",
           "gpipe, 1f1b, interleaved or zb-h1">,
  ];
}

def PipeSynthesize : Pass<"pipe-synthesize", "mlir::ModuleOp"> {
  let summary = "Add a synthetic chain schedule to the module (tests, benchmarks)";
  let description = [{
    Appends a `pipe.schedule @chain` of `devices` x `chunks` equal stages in a
    chain (stage k on device k mod devices), with private declarations of
    their functions, and builds its programs with `kind`. Used to test the
    builders against the closed forms and to time the verifier and the
    simulator on large schedules:

    ```
    loom-opt /dev/null --pipe-synthesize="devices=1024 micro-batches=256" \
        --pipe-simulate --mlir-timing -o /dev/null
    ```
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"1f1b\"",
           "gpipe, 1f1b, interleaved or zb-h1">,
    Option<"devices", "devices", "int", /*default=*/"4", "Devices">,
    Option<"chunks", "chunks", "int", /*default=*/"1",
           "Stages per device (interleaved)">,
    Option<"microBatches", "micro-batches", "int", /*default=*/"8",
           "Micro-batches">,
    Option<"forwardTime", "forward-time", "double", /*default=*/"1e-3",
           "Seconds per F per stage">,
    Option<"backwardTime", "backward-time", "double", /*default=*/"2e-3",
           "Seconds per B per stage (I and W: half each)">,
    Option<"activationBytes", "activation-bytes", "int64_t", /*default=*/"0",
           "Activation bytes per stage and micro-batch">,
    Option<"edgeBytes", "edge-bytes", "int64_t", /*default=*/"0",
           "Bytes sent between consecutive stages per micro-batch">,
    Option<"memory", "memory", "int64_t", /*default=*/"0",
           "Bytes of memory per device (0: unlimited)">,
    Option<"latency", "latency", "double", /*default=*/"2e-6",
           "Link latency in seconds, inside and between nodes">,
  ];
}

#endif // LOOM_DIALECT_PIPE_TRANSFORMS_PASSES_TD
