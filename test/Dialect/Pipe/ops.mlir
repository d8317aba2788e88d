// The pipe dialect's textual form: parse, print, parse again, same IR.
// RUN: loom-opt %s | loom-opt | FileCheck %s
// RUN: loom-opt %s --pipe-verify-schedule -o /dev/null

// CHECK-LABEL: pipe.schedule @step micro_batches(2) attributes {devices_per_node = 4 : i64, intra_bandwidth = 1.000000e+11 : f64} {
// CHECK-NEXT:    pipe.device @d0 memory(1000000)
// CHECK-NEXT:    pipe.device @d1 node(1) memory(0)
// CHECK-NEXT:    pipe.stage @s0 on [@d0] forward @f0 backward @b0 {activation_bytes = 1000 : i64, backward_time = 2.000000e-03 : f64, forward_time = 1.000000e-03 : f64, weight_bytes = 4000 : i64}
// CHECK-NEXT:    pipe.stage @s1 on [@d1] forward @f1 input_grad @i1 weight_grad @w1 {forward_time = 1.000000e-03 : f64, input_time = 1.000000e-03 : f64, weight_time = 1.000000e-03 : f64}
// CHECK-NEXT:    pipe.edge @s0 -> @s1 bytes(4096) grad_bytes(2048)
// CHECK-NEXT:    pipe.program @d0 [
// CHECK-NEXT:      F @s0 0,
// CHECK-NEXT:      SEND_F @s0 0 to @s1 on @d1,
// CHECK-NEXT:      F @s0 1,
// CHECK-NEXT:      SEND_F @s0 1 to @s1 on @d1,
// CHECK-NEXT:      RECV_B @s0 0 from @s1 on @d1,
// CHECK-NEXT:      B @s0 0,
// CHECK-NEXT:      RECV_B @s0 1 from @s1 on @d1,
// CHECK-NEXT:      B @s0 1
// CHECK-NEXT:    ]
// CHECK-NEXT:    pipe.program @d1 [
// CHECK-NEXT:      RECV_F @s1 0 from @s0 on @d0,
// CHECK-NEXT:      F @s1 0,
// CHECK-NEXT:      I @s1 0,
// CHECK-NEXT:      SEND_B @s1 0 to @s0 on @d0,
// CHECK:           W @s1 1
// CHECK-NEXT:    ]
// CHECK-NEXT:  }

func.func private @f0()
func.func private @b0()
func.func private @f1()
func.func private @i1()
func.func private @w1()

pipe.schedule @step micro_batches(2) attributes {devices_per_node = 4 : i64, intra_bandwidth = 1.0e11 : f64} {
  pipe.device @d0 memory(1000000)
  pipe.device @d1 node(1) memory(0)
  pipe.stage @s0 on [@d0] forward @f0 backward @b0
      {forward_time = 1.0e-3 : f64, backward_time = 2.0e-3 : f64, weight_bytes = 4000 : i64, activation_bytes = 1000 : i64}
  pipe.stage @s1 on [@d1] forward @f1 input_grad @i1 weight_grad @w1
      {forward_time = 1.0e-3 : f64, input_time = 1.0e-3 : f64, weight_time = 1.0e-3 : f64}
  pipe.edge @s0 -> @s1 bytes(4096) grad_bytes(2048)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, F @s0 1, SEND_F @s0 1 to @s1 on @d1,
                    RECV_B @s0 0 from @s1 on @d1, B @s0 0, RECV_B @s0 1 from @s1 on @d1, B @s0 1]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, I @s1 0, SEND_B @s1 0 to @s0 on @d0,
                    RECV_F @s1 1 from @s0 on @d0, F @s1 1, I @s1 1, SEND_B @s1 1 to @s0 on @d0,
                    W @s1 0, W @s1 1]
}
