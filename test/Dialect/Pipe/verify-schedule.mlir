// --pipe-verify-schedule: planted bad schedules, one per kind of mistake.
// Each error names the device, the action and the micro-batch.
// RUN: loom-opt %s -split-input-file -verify-diagnostics --pipe-verify-schedule

func.func private @f()
func.func private @b()

// A correct two-stage schedule passes.
pipe.schedule @ok micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.device @d1 memory(0)
  pipe.stage @s0 on [@d0] forward @f backward @b
  pipe.stage @s1 on [@d1] forward @f backward @b
  pipe.edge @s0 -> @s1 bytes(8)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, RECV_B @s0 0 from @s1 on @d1, B @s0 0]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, B @s1 0, SEND_B @s1 0 to @s0 on @d0]
}

// -----

// Deadlock: @d0 waits for the gradient before it sends the activation that
// @d1 waits for.
func.func private @f()
func.func private @b()
pipe.schedule @deadlock micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.device @d1 memory(0)
  pipe.stage @s0 on [@d0] forward @f backward @b
  pipe.stage @s1 on [@d1] forward @f backward @b
  pipe.edge @s0 -> @s1 bytes(8)
  // expected-error @+1 {{device @d0, action 1 (RECV_B @s0 0 from @s1 on @d1): blocks forever waiting for micro-batch 0 from @d1; deadlock cycle @d0 -> @d1 -> @d0}}
  pipe.program @d0 [F @s0 0, RECV_B @s0 0 from @s1 on @d1, SEND_F @s0 0 to @s1 on @d1, B @s0 0]
  // expected-error @+1 {{device @d1, action 0 (RECV_F @s1 0 from @s0 on @d0): blocks forever waiting for micro-batch 0 from @d0; deadlock cycle @d1 -> @d0 -> @d1}}
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, B @s1 0, SEND_B @s1 0 to @s0 on @d0]
}

// -----

// A backward before its forward.
func.func private @f()
func.func private @b()
pipe.schedule @early micro_batches(2) {
  pipe.device @d0 memory(0)
  pipe.stage @s0 on [@d0] forward @f backward @b
  // expected-error @+1 {{device @d0, action 1 (B @s0 1): backward runs before its forward F @s0 1}}
  pipe.program @d0 [F @s0 0, B @s0 1, F @s0 1, B @s0 0]
}

// -----

// W before I.
func.func private @f()
func.func private @i()
func.func private @w()
pipe.schedule @wfirst micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.stage @s0 on [@d0] forward @f input_grad @i weight_grad @w
  // expected-error @+1 {{device @d0, action 1 (W @s0 0): weight gradient runs before its input gradient I @s0 0}}
  pipe.program @d0 [F @s0 0, W @s0 0, I @s0 0]
}

// -----

// A dropped micro-batch.
func.func private @f()
func.func private @b()
pipe.schedule @dropped micro_batches(3) {
  pipe.device @d0 memory(0)
  pipe.stage @s0 on [@d0] forward @f backward @b
  // expected-error @+1 {{device @d0: drops micro-batch 2: no forward F @s0 2}}
  pipe.program @d0 [F @s0 0, B @s0 0, F @s0 1, B @s0 1]
}

// -----

// A repeated micro-batch.
func.func private @f()
func.func private @b()
pipe.schedule @repeated micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.stage @s0 on [@d0] forward @f backward @b
  // expected-error @+1 {{device @d0, action 2 (F @s0 0): repeats the forward of stage @s0 for micro-batch 0}}
  pipe.program @d0 [F @s0 0, B @s0 0, F @s0 0, B @s0 0]
}

// -----

// A backward whose gradient is never received: both the order error and the
// missing receive on the other side.
func.func private @f()
func.func private @b()
pipe.schedule @unmatched micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.device @d1 memory(0)
  pipe.stage @s0 on [@d0] forward @f backward @b
  pipe.stage @s1 on [@d1] forward @f backward @b
  pipe.edge @s0 -> @s1 bytes(8)
  // expected-error @+1 {{device @d0, action 2 (B @s0 0): backward runs before its output gradient for micro-batch 0 from stage @s1 on @d1 is received}}
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, B @s0 0]
  // expected-error @+1 {{device @d1, action 3 (SEND_B @s1 0 to @s0 on @d0): send without a matching receive on @d0 (micro-batch 0)}}
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, B @s1 0, SEND_B @s1 0 to @s0 on @d0]
}

// -----

// A send nobody receives (the schedule is otherwise complete).
func.func private @f()
func.func private @b()
pipe.schedule @extra micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.device @d1 memory(0)
  pipe.stage @s0 on [@d0] forward @f backward @b
  pipe.stage @s1 on [@d1] forward @f backward @b
  pipe.edge @s0 -> @s1 bytes(8)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, RECV_B @s0 0 from @s1 on @d1, B @s0 0]
  // expected-error @+1 {{device @d1, action 4 (SEND_B @s1 0 to @s0 on @d0): repeats a send of micro-batch 0}}
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, B @s1 0, SEND_B @s1 0 to @s0 on @d0, SEND_B @s1 0 to @s0 on @d0]
}

// -----

// Memory: GPipe keeps all three micro-batches' activations; 1F1B would fit.
func.func private @f()
func.func private @b()
pipe.schedule @memory micro_batches(3) {
  pipe.device @d0 memory(2500)
  pipe.stage @s0 on [@d0] forward @f backward @b {weight_bytes = 300 : i64, optimizer_bytes = 200 : i64, activation_bytes = 1000 : i64}
  // expected-error @+1 {{device @d0, action 2 (F @s0 2): peak memory 3500 bytes (weights and optimizer state 500, activations of 3 micro-batches in flight 3000) exceeds the capacity of 2500 bytes for micro-batch 2}}
  pipe.program @d0 [F @s0 0, F @s0 1, F @s0 2, B @s0 0, B @s0 1, B @s0 2]
}

// -----

func.func private @f()
func.func private @b()
pipe.schedule @memory_ok micro_batches(3) {
  pipe.device @d0 memory(2500)
  pipe.stage @s0 on [@d0] forward @f backward @b {weight_bytes = 300 : i64, optimizer_bytes = 200 : i64, activation_bytes = 1000 : i64}
  pipe.program @d0 [F @s0 0, F @s0 1, B @s0 0, F @s0 2, B @s0 1, B @s0 2]
}

// -----

// A replicated stage: every replica runs every micro-batch, and receives
// from every replica upstream.
func.func private @f()
func.func private @b()
pipe.schedule @replicas micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.device @d1 memory(0)
  pipe.device @d2 memory(0)
  pipe.stage @s0 on [@d0, @d1] forward @f backward @b
  pipe.stage @s1 on [@d2] forward @f backward @b
  pipe.edge @s0 -> @s1 bytes(8)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d2, RECV_B @s0 0 from @s1 on @d2, B @s0 0]
  // expected-error @+1 {{device @d1: drops micro-batch 0: no forward F @s0 0}}
  pipe.program @d1 []
  // expected-error @+1 {{device @d2, action 1 (F @s1 0): runs before its input for micro-batch 0 from stage @s0 on @d1 is received}}
  pipe.program @d2 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, B @s1 0, SEND_B @s1 0 to @s0 on @d0]
}
