// The op verifier: the structure of a pipe.schedule.
// RUN: loom-opt %s -split-input-file -verify-diagnostics

func.func private @f()
pipe.schedule @s micro_batches(1) {
  pipe.device @d0 memory(0)
  // expected-error @+1 {{is placed on @d9, which is not a pipe.device of the schedule}}
  pipe.stage @s0 on [@d9] forward @f
}

// -----

pipe.schedule @s micro_batches(1) {
  pipe.device @d0 memory(0)
  // expected-error @+1 {{names function @missing, which is not a func.func of the module}}
  pipe.stage @s0 on [@d0] forward @missing
}

// -----

func.func private @f()
// expected-error @+1 {{stage graph has a cycle through @s0}}
pipe.schedule @s micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.stage @s0 on [@d0] forward @f
  pipe.stage @s1 on [@d0] forward @f
  pipe.edge @s0 -> @s1 bytes(1)
  pipe.edge @s1 -> @s0 bytes(1)
}

// -----

func.func private @f()
pipe.schedule @s micro_batches(2) {
  pipe.device @d0 memory(0)
  pipe.device @d1 memory(0)
  pipe.stage @s0 on [@d0] forward @f
  pipe.stage @s1 on [@d1] forward @f
  // expected-error @+1 {{device @d0, action 1 (F @s1 0): stage @s1 is not placed on @d0}}
  pipe.program @d0 [F @s0 0, F @s1 0]
}

// -----

func.func private @f()
pipe.schedule @s micro_batches(2) {
  pipe.device @d0 memory(0)
  pipe.stage @s0 on [@d0] forward @f
  // expected-error @+1 {{device @d0, action 0 (F @s0 2): micro-batch 2 is out of range [0, 2)}}
  pipe.program @d0 [F @s0 2]
}

// -----

func.func private @f()
pipe.schedule @s micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.device @d1 memory(0)
  pipe.stage @s0 on [@d0] forward @f
  pipe.stage @s1 on [@d1] forward @f
  // expected-error @+1 {{device @d0, action 1 (SEND_F @s0 0 to @s1 on @d1): there is no edge @s0 -> @s1}}
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1]
}

// -----

func.func private @f()
pipe.schedule @s micro_batches(1) {
  pipe.device @d0 memory(0)
  pipe.stage @s0 on [@d0] forward @f
  // expected-error @+1 {{unknown pipeline action 'FWD'}}
  pipe.program @d0 [FWD @s0 0]
}
