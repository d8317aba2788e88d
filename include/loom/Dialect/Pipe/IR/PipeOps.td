//===- PipeOps.td - Pipeline schedule operations -----------*- tablegen -*-===//
//
// Part of Loom. docs/Dialects/Pipe.md is the guide.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_PIPE_IR_PIPEOPS_TD
#define LOOM_DIALECT_PIPE_IR_PIPEOPS_TD

include "loom/Dialect/Pipe/IR/PipeDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpBase.td"

class Pipe_Op<string mnemonic, list<Trait> traits = []>
    : Op<Pipe_Dialect, mnemonic, traits>;

def Pipe_ScheduleOp : Pipe_Op<"schedule", [
    Symbol, SymbolTable, IsolatedFromAbove, SingleBlock, NoTerminator,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A pipeline schedule: devices, stages, edges and programs";
  let description = [{
    Holds `pipe.device`, `pipe.stage`, `pipe.edge` and `pipe.program` ops,
    and optionally a `pipe.filler` job with its `pipe.fill` placements.
    `micro_batches` is the number of micro-batches per step and
    `micro_batch_size` the samples in each (for samples per second). The
    links: a transfer of `n` bytes between two devices of one node (devices
    `d` and `e` share a node when `node(d) == node(e)`; a device's node is its
    `node` attribute, or its position divided by `devices_per_node`) takes
    `intra_latency + n / intra_bandwidth` seconds, between nodes
    `inter_latency + n / inter_bandwidth` (bandwidths in bytes per second).

    The op verifier checks the structure: every name resolves to an op of the
    right kind, every stage function exists, the stage graph is acyclic, and
    every action names a stage placed on its device, a micro-batch in range
    and, for a send or receive, an edge between its stage and a stage on the
    peer device. The schedule's semantics (deadlock, order, completeness,
    matching sends and receives, memory) are checked by
    `--pipe-verify-schedule`.

    ```mlir
    pipe.schedule @step micro_batches(4) {
      pipe.device @d0 memory(80000000000)
      pipe.device @d1 memory(80000000000)
      pipe.stage @s0 on [@d0] forward @stage0 backward @stage0_bwd
          {forward_time = 1.0e-3, backward_time = 2.0e-3, weight_bytes = 1000000}
      pipe.stage @s1 on [@d1] forward @stage1 backward @stage1_bwd
          {forward_time = 1.0e-3, backward_time = 2.0e-3, weight_bytes = 1000000}
      pipe.edge @s0 -> @s1 bytes(65536)
      pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, RECV_B @s0 0 from @s1 on @d1, B @s0 0, ...]
      pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, B @s1 0, SEND_B @s1 0 to @s0 on @d0, ...]
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$micro_batches,
    DefaultValuedAttr<I64Attr, "1">:$micro_batch_size,
    DefaultValuedAttr<F64Attr, "450e9">:$intra_bandwidth,
    DefaultValuedAttr<F64Attr, "2e-6">:$intra_latency,
    DefaultValuedAttr<F64Attr, "50e9">:$inter_bandwidth,
    DefaultValuedAttr<F64Attr, "10e-6">:$inter_latency,
    DefaultValuedAttr<I64Attr, "8">:$devices_per_node
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `micro_batches` `(` $micro_batches `)` attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "int64_t":$microBatches)>
  ];
}

def Pipe_DeviceOp : Pipe_Op<"device", [Symbol, HasParent<"ScheduleOp">]> {
  let summary = "A device of the schedule";
  let description = [{
    `memory` is the device's capacity in bytes (0: unlimited); `node` the
    node it is in (default: its position among the devices divided by the
    schedule's `devices_per_node`).

    ```mlir
    pipe.device @gpu3 node(0) memory(85899345920)
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$node,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$memory
  );
  let assemblyFormat = [{
    $sym_name (`node` `(` $node^ `)`)? `memory` `(` $memory `)` attr-dict
  }];
}

def Pipe_StageOp : Pipe_Op<"stage", [Symbol, HasParent<"ScheduleOp">]> {
  let summary = "A pipeline stage: its functions, its devices and its costs";
  let description = [{
    `forward` names the `func.func` that computes the stage's forward pass
    for one micro-batch; `backward` the full backward (B), or `input_grad` and
    `weight_grad` the split one (I and W, for zero-bubble schedules). A stage
    on several devices is replicated data-parallel: every replica runs every
    micro-batch on its share of the samples, and the costs are per replica.

    Costs (seconds per micro-batch, bytes): `forward_time` (F),
    `backward_time` (B; when 0, `input_time + weight_time`), `input_time` (I)
    and `weight_time` (W; when both are 0, each is half of `backward_time`),
    `weight_bytes` (parameters and their gradients), `optimizer_bytes`
    (optimizer state), `activation_bytes` (kept per micro-batch from its F to
    its B or W).

    ```mlir
    pipe.stage @s1 on [@d2, @d3] forward @layer1 backward @layer1_bwd
        {forward_time = 2.0e-3, backward_time = 4.0e-3, activation_bytes = 1048576}
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    FlatSymbolRefArrayAttr:$devices,
    FlatSymbolRefAttr:$forward,
    OptionalAttr<FlatSymbolRefAttr>:$backward,
    OptionalAttr<FlatSymbolRefAttr>:$input_grad,
    OptionalAttr<FlatSymbolRefAttr>:$weight_grad,
    DefaultValuedAttr<F64Attr, "0.0">:$forward_time,
    DefaultValuedAttr<F64Attr, "0.0">:$backward_time,
    DefaultValuedAttr<F64Attr, "0.0">:$input_time,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_time,
    DefaultValuedAttr<I64Attr, "0">:$weight_bytes,
    DefaultValuedAttr<I64Attr, "0">:$optimizer_bytes,
    DefaultValuedAttr<I64Attr, "0">:$activation_bytes
  );
  let assemblyFormat = [{
    $sym_name `on` $devices `forward` $forward
    (`backward` $backward^)? (`input_grad` $input_grad^)?
    (`weight_grad` $weight_grad^)? attr-dict
  }];
}

def Pipe_EdgeOp : Pipe_Op<"edge", [HasParent<"ScheduleOp">]> {
  let summary = "An edge of the stage graph";
  let description = [{
    Stage `from`'s forward output is an input of stage `to`: `bytes` per
    micro-batch are sent forward, `grad_bytes` (default: `bytes`) of its
    gradient back. Between replicated stages, each replica of `from` sends
    each replica of `to` its share: `bytes / (replicas(from) * replicas(to))`.

    ```mlir
    pipe.edge @s0 -> @s1 bytes(65536)
    ```
  }];
  let arguments = (ins
    FlatSymbolRefAttr:$from,
    FlatSymbolRefAttr:$to,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$bytes,
    OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$grad_bytes
  );
  let assemblyFormat = [{
    $from `->` $to `bytes` `(` $bytes `)` (`grad_bytes` `(` $grad_bytes^ `)`)? attr-dict
  }];
}

def Pipe_ProgramOp : Pipe_Op<"program", [HasParent<"ScheduleOp">]> {
  let summary = "The ordered actions of one device";
  let description = [{
    The actions a device runs, in order. Each names a stage placed on the
    device and a micro-batch; sends and receives name the peer stage and the
    peer device:

    | action | meaning |
    | --- | --- |
    | `F @s m` | forward of stage `s` on micro-batch `m` |
    | `B @s m` | full backward |
    | `I @s m` | input gradient (zero-bubble's B) |
    | `W @s m` | weight gradient |
    | `SEND_F @s m to @t on @d` | send `s`'s activation of `m` to stage `t` on device `d` |
    | `RECV_F @t m from @s on @d` | receive it |
    | `SEND_B @t m to @s on @d` | send the gradient of that activation back |
    | `RECV_B @s m from @t on @d` | receive it |

    Sends do not block; a receive blocks until its send has been issued.
    Stored compactly: `refs` is the table of the names used, `actions` five
    integers per action (kind, stage, micro-batch, peer stage, peer device;
    names as positions in `refs`, -1 for none).

    ```mlir
    pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, B @s1 0, SEND_B @s1 0 to @s0 on @d0]
    ```
  }];
  let arguments = (ins
    FlatSymbolRefAttr:$device,
    FlatSymbolRefArrayAttr:$refs,
    DenseI32ArrayAttr:$actions
  );
  let assemblyFormat = [{
    $device custom<Actions>($refs, $actions) attr-dict
  }];
}

def Pipe_FillerOp : Pipe_Op<"filler", [Symbol, HasParent<"ScheduleOp">]> {
  let summary = "A second job whose steps fill the schedule's bubbles";
  let description = [{
    Hydro's bubble filling: a job of its own (a hyper-parameter tuning
    job's trial steps, e.g. a `--tg-fuse-trials` function) run on the
    schedule's devices in their idle time, without delaying the main job.
    One trial step is `micro_batches` forwards and backwards of
    `forward_time` and `backward_time` seconds each (`F m` then `B m`, one
    after the other on one device); a device that runs any of it holds
    `static_bytes` (the trials' parameters, gradients and optimizer state)
    throughout and `activation_bytes` from each `F` to its `B`. `function`
    says which function the costs were taken from (a name, or a file and a
    name; not resolved). At most one per schedule; `pipe.fill` places its
    actions.

    ```mlir
    pipe.filler @trials function "loss_trials" micro_batches(2)
        {forward_time = 1.0e-4, backward_time = 2.0e-4, static_bytes = 4096}
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    OptionalAttr<StrAttr>:$function,
    ConfinedAttr<I64Attr, [IntPositive]>:$micro_batches,
    DefaultValuedAttr<F64Attr, "0.0">:$forward_time,
    DefaultValuedAttr<F64Attr, "0.0">:$backward_time,
    DefaultValuedAttr<I64Attr, "0">:$static_bytes,
    DefaultValuedAttr<I64Attr, "0">:$activation_bytes
  );
  let assemblyFormat = [{
    $sym_name (`function` $function^)? `micro_batches` `(` $micro_batches `)`
    attr-dict
  }];
}

def Pipe_FillOp : Pipe_Op<"fill", [HasParent<"ScheduleOp">]> {
  let summary = "The filler actions one device runs in its bubbles";
  let description = [{
    `F t m at p` is the forward of the filler's trial step `t` on its
    micro-batch `m` (`B t m at p` its backward), run when the device reaches
    position `p` of its `pipe.program`: before its action `p`, or after its
    last one when `p` is the program's length. Actions at one position run in
    the listed order; positions do not decrease. Stored as four integers per
    action (0 for F or 1 for B, step, micro-batch, position).
    `--pipe-verify-schedule` checks that the main job runs exactly as without
    them (every action at the same time), that each trial step is complete
    and in order, and the device's memory (docs/Pipelines.md).

    ```mlir
    pipe.fill @d3 [F 0 0 at 0, B 0 0 at 0, F 0 1 at 9, B 0 1 at 9]
    ```
  }];
  let arguments = (ins
    FlatSymbolRefAttr:$device,
    DenseI32ArrayAttr:$actions
  );
  let assemblyFormat = [{
    $device custom<FillActions>($actions) attr-dict
  }];
}

#endif // LOOM_DIALECT_PIPE_IR_PIPEOPS_TD
