// The schedule builders against the closed forms, with equal stages
// (F 1 ms, B 2 ms, I = W = 1 ms) and free links. --pipe-simulate verifies
// every schedule first, so each RUN also checks that the builder's output
// passes --pipe-verify-schedule.
//
// GPipe and one-forward-one-backward: bubble (p-1)/(m+p-1) of the makespan: 3/11 = 0.2727 at
// p=4, m=8; 7/39 = 0.1795 at p=8, m=32. GPipe holds m activations on every
// device, 1F1B p-r on rank r.
// RUN: loom-opt /dev/null --pipe-synthesize="kind=gpipe devices=4 micro-batches=8 latency=0" --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPIPE
// GPIPE: @d0 0.024 0.033 0.2727 0.000 unlimited 8
// GPIPE: @d3 0.024 0.027 0.2727 0.000 unlimited 8
// GPIPE: makespan 0.033 s, {{.*}} mean bubble 0.2727
// RUN: loom-opt /dev/null --pipe-synthesize="kind=1f1b devices=4 micro-batches=8 latency=0" --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEF
// ONEF: @d0 0.024 0.033 0.2727 0.000 unlimited 4
// ONEF: @d3 0.024 0.027 0.2727 0.000 unlimited 1
// ONEF: makespan 0.033 s, {{.*}} mean bubble 0.2727
// RUN: loom-opt /dev/null --pipe-synthesize="kind=1f1b devices=8 micro-batches=32 latency=0" --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEF8
// ONEF8: makespan 0.117 s, {{.*}} mean bubble 0.1795
//
// Interleaved with v chunks: bubble (p-1)/(v m) of the ideal compute, so
// x/(1+x) of the makespan: p=4 v=2 m=8: 3/16 -> 0.1579; p=8 v=4 m=32:
// 7/128 -> 0.0519 (stages of F 1 ms, B 2 ms each: v times the work).
// RUN: loom-opt /dev/null --pipe-synthesize="kind=interleaved devices=4 chunks=2 micro-batches=8 latency=0" --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=INTER
// INTER: makespan 0.057 s, {{.*}} mean bubble 0.1579
// RUN: loom-opt /dev/null --pipe-synthesize="kind=interleaved devices=8 chunks=4 micro-batches=32 latency=0" --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=INTERV4
// INTERV4: makespan 0.405 s, {{.*}} mean bubble 0.0519
// RUN: not loom-opt /dev/null --pipe-synthesize="kind=interleaved devices=4 chunks=2 micro-batches=6" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADM
// BADM: error: pipe-synthesize: interleaved: 6 micro-batches is not a multiple of the 4 devices
//
// Zero bubble H1: bubble (p-1)(F+I-W) = 3 ms against 1F1B's (p-1)(F+B) = 9 ms, a
// third: makespan 24 + 3 = 27 ms; every device holds at most p = 4.
// RUN: loom-opt /dev/null --pipe-synthesize="kind=zb-h1 devices=4 micro-batches=8 latency=0" --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZBH
// ZBH: @d0 0.024 0.027 0.1111 0.000 unlimited 4
// ZBH: @d3 0.024 0.027 0.1111 0.000 unlimited 4
// ZBH: makespan 0.027 s, {{.*}} mean bubble 0.1111
// RUN: loom-opt /dev/null --pipe-synthesize="kind=zb-h1 devices=8 micro-batches=32 latency=0" --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZBH8
// ZBH8: makespan 0.103 s, {{.*}} mean bubble 0.0680
//
// A DAG of stages with a replicated stage: every builder's output verifies.
// RUN: loom-opt %s --pipe-build-schedule=kind=gpipe --pipe-verify-schedule --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=DAG
// RUN: loom-opt %s --pipe-build-schedule=kind=1f1b --pipe-verify-schedule --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=DAG
// RUN: loom-opt %s --pipe-build-schedule=kind=zb-h1 --pipe-verify-schedule --pipe-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=DAG
// DAG: pipe.schedule @diamond: 5 devices, 4 stages, 4 micro-batches
// DAG: makespan
// RUN: loom-opt %s --pipe-build-schedule=kind=1f1b | FileCheck %s --check-prefix=DAG-IR
// DAG-IR: pipe.program @d0 [
// DAG-IR-NEXT: F @embed 0,
// DAG-IR-NEXT: SEND_F @embed 0 to @text on @d1,
// DAG-IR-NEXT: SEND_F @embed 0 to @image on @d2,
// DAG-IR-NEXT: SEND_F @embed 0 to @image on @d3,
// DAG-IR: pipe.program @d4 [
// DAG-IR-NEXT: RECV_F @head 0 from @text on @d1,
// DAG-IR-NEXT: RECV_F @head 0 from @image on @d2,
// DAG-IR-NEXT: RECV_F @head 0 from @image on @d3,
// DAG-IR-NEXT: F @head 0,
// DAG-IR-NEXT: B @head 0,

func.func private @f()
func.func private @b()

// embed -> {text, image (two replicas)} -> head
pipe.schedule @diamond micro_batches(4) {
  pipe.device @d0 memory(0)
  pipe.device @d1 memory(0)
  pipe.device @d2 memory(0)
  pipe.device @d3 memory(0)
  pipe.device @d4 memory(0)
  pipe.stage @embed on [@d0] forward @f backward @b {forward_time = 1.0e-3 : f64, backward_time = 2.0e-3 : f64}
  pipe.stage @text on [@d1] forward @f backward @b {forward_time = 3.0e-3 : f64, backward_time = 6.0e-3 : f64}
  pipe.stage @image on [@d2, @d3] forward @f backward @b {forward_time = 2.0e-3 : f64, backward_time = 4.0e-3 : f64}
  pipe.stage @head on [@d4] forward @f backward @b {forward_time = 1.0e-3 : f64, backward_time = 2.0e-3 : f64}
  pipe.edge @embed -> @text bytes(1048576)
  pipe.edge @embed -> @image bytes(1048576)
  pipe.edge @text -> @head bytes(65536)
  pipe.edge @image -> @head bytes(65536)
}
