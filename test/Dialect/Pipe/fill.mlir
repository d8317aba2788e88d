// Bubble filling (pipe.filler, pipe.fill): --pipe-verify-schedule checks
// that the main job runs exactly as without the filler, that each device's
// trial steps are complete and in order, and the memory with the filler's
// bytes; the reader checks the structure. The first case is correct, every
// other one plants one mistake.
// RUN: loom-opt %s -split-input-file -verify-diagnostics --pipe-verify-schedule

func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
  pipe.fill @d1 [F 0 0 at 0, B 0 0 at 8]
}

// -----

// A filler forward before @d0's first send delays the send and everything
// after it.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  // expected-error @+1 {{device @d0, filler action 0 (F 0 0 at 1): overruns its bubble and delays the main job: it ends at 0.0015 s, but action 1 (SEND_F @s0 0 to @s1 on @d1) needs the device at 0.001 s}}
  pipe.fill @d0 [F 0 0 at 1, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
  pipe.fill @d1 [F 0 0 at 0, B 0 0 at 8]
}

// -----

// A third trial step on @d0 does not fit its 3 ms bubble.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  // expected-error @+1 {{device @d0, filler action 4 (F 2 0 at 4): overruns its bubble and delays the main job: it ends at 0.0055 s, but action 4 (RECV_B @s0 0 from @s1 on @d1) needs the device at 0.005 s}}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4, F 2 0 at 4, B 2 0 at 4]
  pipe.fill @d1 [F 0 0 at 0, B 0 0 at 8]
}

// -----

// After the last action, the filler must end by the step's makespan.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
  // expected-error @+1 {{device @d1, filler action 3 (B 1 0 at 8): overruns its bubble and delays the main job: it ends at 0.0095 s, but the main step ends at 0.009 s}}
  pipe.fill @d1 [F 0 0 at 0, B 0 0 at 8, F 1 0 at 8, B 1 0 at 8]
}

// -----

// A backward before its forward.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
  // expected-error @+1 {{device @d1, filler action 0 (B 0 0 at 0): runs the backward before its forward}}
  pipe.fill @d1 [B 0 0 at 0, F 0 0 at 8]
}

// -----

// A trial step left incomplete (its optimizer step would never run).
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  // expected-error @+1 {{device @d0: trial step 1 is incomplete: 0 of 1 micro-batches done}}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4]
  pipe.fill @d1 [F 0 0 at 0, B 0 0 at 8]
}

// -----

// Trial steps out of order.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  // expected-error @+1 {{device @d0, filler action 2 (F 2 0 at 4): trial steps must run in order 0, 1, ...: expected step 0 or 1}}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 2 0 at 4, B 2 0 at 4]
  pipe.fill @d1 [F 0 0 at 0, B 0 0 at 8]
}

// -----

// The trials' parameters and an activation do not fit beside the stages'
// activations: @d1 holds 100 of its own at F @s1 0, the filler 800 + 200.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 800 : i64}
  // expected-error @+1 {{device @d0, filler action 0 (F 0 0 at 4): with the filler, memory 1200 bytes (stages' weights and optimizer state 0, their activations 200, the filler's static bytes 800 and activations 200) exceeds the capacity of 1000 bytes}}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
  // expected-error @+1 {{device @d1, filler action 0 (F 0 0 at 0): with the filler, memory 1100 bytes (stages' weights and optimizer state 0, their activations 100, the filler's static bytes 800 and activations 200) exceeds the capacity of 1000 bytes}}
  pipe.fill @d1 [F 0 0 at 0, B 0 0 at 8]
}

// -----

// Structure: a position past the end of the program.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
  // expected-error @+1 {{device @d1, filler action 1 (B 0 0 at 9): position out of range [0, 8]}}
  pipe.fill @d1 [F 0 0 at 0, B 0 0 at 9]
}

// -----

// Structure: positions must not decrease.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
  // expected-error @+1 {{device @d1, filler action 1 (B 0 0 at 0): position before the previous action's 8}}
  pipe.fill @d1 [F 0 0 at 8, B 0 0 at 0]
}

// -----

// Structure: a micro-batch the filler does not have.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  // expected-error @+1 {{device @d0, filler action 0 (F 0 1 at 4): micro-batch out of range [0, 1)}}
  pipe.fill @d0 [F 0 1 at 4, B 0 1 at 4]
}

// -----

// Structure: fill ops need a filler, and name a device once.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  
  // expected-error @+1 {{places filler actions, but the schedule has no pipe.filler}}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
}

// -----

// Structure: one pipe.fill per device.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
  // expected-error @+1 {{is the second pipe.fill of device @d0}}
  pipe.fill @d0 [F 0 0 at 4, B 0 0 at 4, F 1 0 at 4, B 1 0 at 4]
}

// -----

// Structure: one filler per schedule.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  // expected-error @+1 {{is the second pipe.filler of the schedule}}
  pipe.filler @more micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
}

// -----

// Syntax: F or B.
func.func private @f()
func.func private @b()
pipe.schedule @chain micro_batches(2) attributes {inter_latency = 0.0 : f64, intra_latency = 0.0 : f64} {
  pipe.device @d0 memory(1000)
  pipe.device @d1 memory(1000)
  pipe.stage @s0 on [@d0] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.stage @s1 on [@d1] forward @f backward @b {activation_bytes = 100 : i64, backward_time = 2.0e-03 : f64, forward_time = 1.0e-03 : f64}
  pipe.edge @s0 -> @s1 bytes(0)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, RECV_F @s1 1 from @s0 on @d0, F @s1 1,
                    B @s1 0, SEND_B @s1 0 to @s0 on @d0, B @s1 1, SEND_B @s1 1 to @s0 on @d0]
  pipe.filler @trials micro_batches(1) {activation_bytes = 200 : i64, backward_time = 1.0e-03 : f64, forward_time = 5.0e-04 : f64, static_bytes = 100 : i64}
  // expected-error @+1 {{unknown filler action 'W' (expected F or B)}}
  pipe.fill @d0 [W 0 0 at 4]
}
