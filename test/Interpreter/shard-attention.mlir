// tg.shard_attention on the reference interpreter, on cases whose answers are
// known: zero keys make every softmax uniform, so a shard's output is the mean
// of the values it sees and its log-sum-exp the log of their count. A cache of
// 5 positions holding 1, 2, 4, 8, 16, split round-robin over 2 shards (shard 0:
// positions 0, 2, 4; shard 1: 1, 3; the slots past them hold 99, never read);
// merged by the log-sum-exp it is tg.attention over the whole cache. Then
// random operands compiled (libloomrt's attention step, its shard read at run
// time) against the interpreter.
//
// RUN: loom-run %s --entry shards --print-values 64 | FileCheck %s --check-prefix=S
// RUN: loom-run %s --entry shards --print-values 64 --domain f64 | FileCheck %s --check-prefix=S
// RUN: loom-opt %s | loom-opt | FileCheck %s --check-prefix=RT
// RUN: loom-compile %s -o %t.so
// RUN: loom-run %t.so --entry random --check --seed 3 | FileCheck %s --check-prefix=C
// RUN: loom-run %t.so --entry shards --check | FileCheck %s --check-prefix=C

// RT-LABEL: func.func @shards
// RT: tg.shard_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.000000e+00 : f64, shards = 2 : i64}

// Decode over L = 5: shard 0 sees 1, 4, 16 (mean 7, log 3), shard 1 sees 2, 8
// (mean 5, log 2); merged (3 * 7 + 2 * 5) / 5 = 6.2, the mean of all five.
// S: out0: tensor<1x1x1x1xf32>
// S-NEXT: values: 7{{$}}
// S: lse0: tensor<1x1x1xf32>
// S-NEXT: values: 1.09861{{[0-9]*}}{{$}}
// S: out1: tensor<1x1x1x1xf32>
// S-NEXT: values: 5{{$}}
// S: lse1: tensor<1x1x1xf32>
// S-NEXT: values: 0.693147{{[0-9]*}}{{$}}
// S: merged: tensor<1x1x1x1xf32>
// S-NEXT: values: 6.2{{0*[0-9]?}}{{$}}
// S: whole: tensor<1x1x1x1xf32>
// S-NEXT: values: 6.2{{0*[0-9]?}}{{$}}
// Causal, 2 queries at positions 2 and 3 (L = 4): shard 0 holds 0 and 2 for
// both (mean 2.5, log 2); shard 1 holds 1 for the first (2, log 1 = 0) and 1,
// 3 for the second (5, log 2).
// S: causal0: tensor<1x1x2x1xf32>
// S-NEXT: values: 2.5 2.5{{$}}
// S: causal1: tensor<1x1x2x1xf32>
// S-NEXT: values: 2 5{{$}}
// S: causal-lse1: tensor<1x1x2xf32>
// S-NEXT: values: 0 0.693147{{[0-9]*}}{{$}}
// A live length of 0: no key, output 0, log-sum-exp -inf. A shard index out
// of range is clamped (7 is shard 1).
// S: empty-lse: tensor<1x1x1xf32>
// S-NEXT: values: -inf{{$}}
// S: clamped: tensor<1x1x1x1xf32>
// S-NEXT: values: 5{{$}}
func.func @shards() -> (tensor<1x1x1x1xf32> {tg.name = "out0"}, tensor<1x1x1xf32> {tg.name = "lse0"},
                        tensor<1x1x1x1xf32> {tg.name = "out1"}, tensor<1x1x1xf32> {tg.name = "lse1"},
                        tensor<1x1x1x1xf32> {tg.name = "merged"}, tensor<1x1x1x1xf32> {tg.name = "whole"},
                        tensor<1x1x2x1xf32> {tg.name = "causal0"}, tensor<1x1x2x1xf32> {tg.name = "causal1"},
                        tensor<1x1x2xf32> {tg.name = "causal-lse1"}, tensor<1x1x1xf32> {tg.name = "empty-lse"},
                        tensor<1x1x1x1xf32> {tg.name = "clamped"}) {
  %k = tg.constant dense<0.0> : tensor<1x1x4x1xf32>
  %v0 = tg.constant dense<[[[[1.0], [4.0], [16.0], [99.0]]]]> : tensor<1x1x4x1xf32>
  %v1 = tg.constant dense<[[[[2.0], [8.0], [99.0], [99.0]]]]> : tensor<1x1x4x1xf32>
  %kw = tg.constant dense<0.0> : tensor<1x1x5x1xf32>
  %vw = tg.constant dense<[[[[1.0], [2.0], [4.0], [8.0], [16.0]]]]> : tensor<1x1x5x1xf32>
  %q = tg.constant dense<1.0> : tensor<1x1x1x1xf32>
  %q2 = tg.constant dense<1.0> : tensor<1x1x2x1xf32>
  %five = tg.constant dense<5> : tensor<1xi64>
  %four = tg.constant dense<4> : tensor<i64>
  %zero = tg.constant dense<0> : tensor<1xi64>
  %s0 = tg.constant dense<0> : tensor<i64>
  %s1 = tg.constant dense<1> : tensor<i64>
  %s7 = tg.constant dense<7> : tensor<i64>
  %o0, %l0 = tg.shard_attention %q, %k, %v0, %five, %s0 {scale = 1.0 : f64, shards = 2 : i64} : (tensor<1x1x1x1xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>, tensor<1xi64>, tensor<i64>) -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
  %o1, %l1 = tg.shard_attention %q, %k, %v1, %five, %s1 {scale = 1.0 : f64, shards = 2 : i64} : (tensor<1x1x1x1xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>, tensor<1xi64>, tensor<i64>) -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
  // The merge: sum_p exp(lse_p - m) out_p / sum_p exp(lse_p - m).
  %m = tg.max %l0, %l1 : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %d0 = tg.sub %l0, %m : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %d1 = tg.sub %l1, %m : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %w0 = tg.exp %d0 : tensor<1x1x1xf32>
  %w1 = tg.exp %d1 : tensor<1x1x1xf32>
  %w0r = tg.reshape %w0 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %w1r = tg.reshape %w1 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %a0 = tg.mul %w0r, %o0 : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %a1 = tg.mul %w1r, %o1 : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %num = tg.add %a0, %a1 : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %den = tg.add %w0r, %w1r : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %merged = tg.div %num, %den : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %whole = tg.attention %q, %kw, %vw, %five {scale = 1.0 : f64} : (tensor<1x1x1x1xf32>, tensor<1x1x5x1xf32>, tensor<1x1x5x1xf32>, tensor<1xi64>) -> tensor<1x1x1x1xf32>
  %c0, %cl0 = tg.shard_attention %q2, %k, %v0, %four, %s0 {scale = 1.0 : f64, causal = true, shards = 2 : i64} : (tensor<1x1x2x1xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>, tensor<i64>, tensor<i64>) -> (tensor<1x1x2x1xf32>, tensor<1x1x2xf32>)
  %c1, %cl1 = tg.shard_attention %q2, %k, %v1, %four, %s1 {scale = 1.0 : f64, causal = true, shards = 2 : i64} : (tensor<1x1x2x1xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>, tensor<i64>, tensor<i64>) -> (tensor<1x1x2x1xf32>, tensor<1x1x2xf32>)
  %e, %el = tg.shard_attention %q, %k, %v0, %zero, %s0 {scale = 1.0 : f64, shards = 2 : i64} : (tensor<1x1x1x1xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>, tensor<1xi64>, tensor<i64>) -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
  %x, %xl = tg.shard_attention %q, %k, %v1, %five, %s7 {scale = 1.0 : f64, shards = 2 : i64} : (tensor<1x1x1x1xf32>, tensor<1x1x4x1xf32>, tensor<1x1x4x1xf32>, tensor<1xi64>, tensor<i64>) -> (tensor<1x1x1x1xf32>, tensor<1x1x1xf32>)
  return %o0, %l0, %o1, %l1, %merged, %whole, %c0, %c1, %cl1, %el, %x : tensor<1x1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2xf32>, tensor<1x1x1xf32>, tensor<1x1x1x1xf32>
}

// Random operands: shard 2 of 4 of a cache of 40 positions (11 each), grouped
// heads, causal prefill of 5 queries per sequence at live lengths 37 and 12,
// compiled against the interpreter.
// C: check: largest error
func.func @random(%q: tensor<2x4x5x16xf32>, %k: tensor<2x2x11x16xf32>, %v: tensor<2x2x11x16xf32>)
    -> (tensor<2x4x5x16xf32> {tg.name = "out"}, tensor<2x4x5xf32> {tg.name = "lse"}) {
  %len = tg.constant dense<[37, 12]> : tensor<2xi64>
  %shard = tg.constant dense<2> : tensor<i64>
  %o, %l = tg.shard_attention %q, %k, %v, %len, %shard {scale = 0.25 : f64, causal = true, shards = 4 : i64} : (tensor<2x4x5x16xf32>, tensor<2x2x11x16xf32>, tensor<2x2x11x16xf32>, tensor<2xi64>, tensor<i64>) -> (tensor<2x4x5x16xf32>, tensor<2x4x5xf32>)
  return %o, %l : tensor<2x4x5x16xf32>, tensor<2x4x5xf32>
}
