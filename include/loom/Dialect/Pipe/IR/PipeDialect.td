//===- PipeDialect.td - Pipeline schedule dialect -----------*- tablegen -*-===//
//
// Part of Loom. The `pipe` dialect: pipeline-parallel schedules as data.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_IR_PIPEDIALECT_TD
#define LOOM_DIALECT_PIPE_IR_PIPEDIALECT_TD

include "mlir/IR/OpBase.td"

def Pipe_Dialect : Dialect {
  let name = "pipe";
  let cppNamespace = "::loom::pipe";
  let summary = "Pipeline-parallel schedules: stages, devices, edges and per-device action lists";
  let description = [{
    The `pipe` dialect holds a pipeline-parallel training step as data: the
    stages (each a `func.func` of `tg` ops for its forward pass, and its
    backward functions), the devices they are placed on, the edges between
    stages (activation bytes sent forward, gradient bytes sent back), and per
    device an ordered list of actions per micro-batch in the vocabulary of
    `torch.distributed.pipelining`: `F`, `B`, `I` (input gradient), `W`
    (weight gradient), `SEND_F`, `RECV_F`, `SEND_B`, `RECV_B`.

    Every cost the simulator needs is an attribute: seconds per action per
    stage, bytes per edge, weight, optimizer-state and activation bytes per
    stage, memory per device, and the links (bandwidth and latency inside a
    node and between nodes). `--pipe-verify-schedule` checks a schedule,
    `--pipe-simulate` times it and draws it. docs/Dialects/Pipe.md is the
    guide, with an example.
  }];
}

#endif // LOOM_DIALECT_PIPE_IR_PIPEDIALECT_TD
