//===- NasRNN.cpp - The NAS recurrent cell of TASO and TENSAT -------------===//
//
// Part of Loom. NasRNN as TASO (examples/nasrnn.py) and TENSAT
// (src/nasrnn.rs) build it: hidden size 512, a sequence of 5 steps (TENSAT's
// LENGTH), batch 1. Each step is the cell found by neural architecture
// search (Zoph & Le): eight "combine" nodes x W_i + h U_i feed a tree of
// relu / sigmoid / tanh nonlinearities joined by adds and multiplies:
//
//   t_i    = x W_i + h U_i                               (i = 0..7)
//   m0 = relu(t0) + sigmoid(t3)      m1 = sigmoid(t1) + tanh(t2)
//   m2 = sigmoid(t4) * tanh(t5)      m3 = sigmoid(t6) * relu(t7)
//   m4 = sigmoid(m1) + tanh(m2)      m5 = tanh(m0) * tanh(m3)
//   h' = tanh(tanh(m4) * tanh(m5))
//
// Per step: 16 matmuls, 11 adds, 4 muls, 5 sigmoids, 8 tanhs, 2 relus.
// The initial state is a weight [1, 512], as in TASO. The inputs x0 ... x4
// are [batch, 512] (already embedded).
//
// Unlike TASO's script, which creates new weights at every step, the 16
// matrices are shared by all steps, as in a real recurrent network; the op
// counts are the same.
//
//===----------------------------------------------------------------------===//

#include "../Zoo.h"

using namespace mlir;
using namespace loom;
using namespace loom::zoo;

namespace {

Value nasCell(GraphBuilder &b, Value h, Value x, int64_t hidden) {
  GraphBuilder::Scope s = b.scope("cell");
  // One op per statement: the IR order must not depend on the compiler's
  // order of evaluating function arguments.
  Value t[8];
  for (int i = 0; i < 8; ++i) {
    Value w = b.weight("w" + std::to_string(i) + "_x", {hidden, hidden});
    Value u = b.weight("w" + std::to_string(i) + "_h", {hidden, hidden});
    Value xw = b.matmul(x, w);
    Value hu = b.matmul(h, u);
    t[i] = b.add(xw, hu);
  }
  Value a = b.relu(t[0]);
  Value c = b.sigmoid(t[3]);
  Value m0 = b.add(a, c);
  a = b.sigmoid(t[1]);
  c = b.tanh(t[2]);
  Value m1 = b.add(a, c);
  a = b.sigmoid(t[4]);
  c = b.tanh(t[5]);
  Value m2 = b.mul(a, c);
  a = b.sigmoid(t[6]);
  c = b.relu(t[7]);
  Value m3 = b.mul(a, c);
  a = b.sigmoid(m1);
  c = b.tanh(m2);
  Value m4 = b.add(a, c);
  a = b.tanh(m0);
  c = b.tanh(m3);
  Value m5 = b.mul(a, c);
  a = b.tanh(m4);
  c = b.tanh(m5);
  Value m6 = b.mul(a, c);
  return b.tanh(m6);
}

} // namespace

Outputs zoo::buildNasRNN(GraphBuilder &b, const ModelOptions &o) {
  int64_t length = o.seq.value_or(5), hidden = o.hidden.value_or(512);
  if (!checkRange(b, "--seq", length, 1, 4096) ||
      !checkRange(b, "--hidden", hidden, 1, 1 << 16))
    return {};
  SmallVector<Value> xs;
  for (int64_t i = 0; i < length; ++i)
    xs.push_back(b.input("x" + std::to_string(i), {o.batch, hidden}));
  Value h = b.weight("state", {1, hidden});
  for (Value x : xs)
    h = nasCell(b, h, x, hidden);
  return {{"state", h}};
}
