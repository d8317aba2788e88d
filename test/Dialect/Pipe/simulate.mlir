// --pipe-simulate: timings worked out by hand. Two devices on two nodes,
// 1 GB/s and 1 ms between them: 1 MB takes 1 ms + 1 ms.
//   @d0: F 0-1 ms, send leaves at 1 ms and arrives at 3 ms
//   @d1: F 3-4, B 4-6, gradient leaves at 6 and arrives at 8
//   @d0: B 8-10            makespan 10 ms, each device busy 3 ms
// RUN: loom-opt %s --pipe-simulate="report=%t.json svg=%t.svg dot=%t.dot" -o /dev/null 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: FileCheck %s --check-prefix=SVG < %t.svg
// RUN: FileCheck %s --check-prefix=DOT < %t.dot

// CHECK: pipe.schedule @two: 2 devices, 2 stages, 1 micro-batches, 8 actions
// CHECK: @d0 0.003 0.01 0.7000 0.003 0.010 1
// CHECK: @d1 0.003 0.006 0.7000 0.001 unlimited 1
// CHECK: makespan 0.01 s, throughput 100 micro-batches/s (3200 samples/s), mean bubble 0.7000

// JSON: "schedule": "two"
// JSON: "deadlocked": false
// JSON: "makespan_s": 0.01
// JSON: "micro_batches_per_s": 100
// JSON: "samples_per_s": 3200
// JSON: "device": "d0"
// JSON: "busy_s": 0.003
// JSON: "bubble": {{0.7|0.6999}}
// JSON: "static_bytes": 2048
// JSON: "peak_bytes": 3072
// JSON: "device": "d1"
// JSON: "finish_s": 0.006

// Boxes: F blue, B red, with their micro-batch; the sends as lines.
// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: <title>pipe.schedule @two</title>
// SVG: >@d0</text>
// SVG: <rect x="90.00" y="40.0" width="120.00" height="20.0" fill="#4e79a7"{{.*}}<title>F @s0 0 0-0.001 s</title>
// SVG: <line x1="210.00" y1="60.0" x2="450.00" y2="66.0" stroke="#333333"{{.*}}<title>SEND_F @s0 0 to @s1 on @d1</title>
// SVG: <rect x="1050.00" y="40.0" width="240.00" height="20.0" fill="#e15759"
// SVG: >@d1</text>
// SVG: fill="#4e79a7"{{.*}}F @s1 0 0.003-0.004 s
// SVG: </svg>

// DOT: digraph "two" {
// DOT: subgraph "cluster_d0" {
// DOT: "s0" [label="s0\nF 0.001 s, B 0.002 s\non @d0"];
// DOT: "s0" -> "s1" [label="1000000 B"];

func.func private @f()
func.func private @b()

pipe.schedule @two micro_batches(1) attributes {devices_per_node = 1 : i64, inter_bandwidth = 1.0e9 : f64, inter_latency = 1.0e-3 : f64, micro_batch_size = 32 : i64} {
  pipe.device @d0 memory(10485)
  pipe.device @d1 memory(0)
  pipe.stage @s0 on [@d0] forward @f backward @b {forward_time = 1.0e-3 : f64, backward_time = 2.0e-3 : f64, weight_bytes = 1024 : i64, optimizer_bytes = 1024 : i64, activation_bytes = 1024 : i64}
  pipe.stage @s1 on [@d1] forward @f backward @b {forward_time = 1.0e-3 : f64, backward_time = 2.0e-3 : f64, weight_bytes = 1024 : i64}
  pipe.edge @s0 -> @s1 bytes(1000000)
  pipe.program @d0 [F @s0 0, SEND_F @s0 0 to @s1 on @d1, RECV_B @s0 0 from @s1 on @d1, B @s0 0]
  pipe.program @d1 [RECV_F @s1 0 from @s0 on @d0, F @s1 0, B @s1 0, SEND_B @s1 0 to @s0 on @d0]
}
