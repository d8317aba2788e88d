//===- Recurrent.cpp - LSTM, GRU and RNN ----------------------------------===//
//
// Part of Loom. Each direction of a recurrent layer becomes one tg.scan
// (TGLoopOps.td) over the sequence, written as ONNX nodes that the other
// handlers import (Expander.h): the input projection of every step is one
// Gemm over the whole sequence, outside the scan (its result is the scan's
// sequence); the scan's body is one time step, the recurrent MatMul and the
// gates, with the recurrent weights, biases and peepholes as its
// invariants. The recurrence then stays one loop through the compiler
// (one scf.for in the generated kernel) instead of seq_length copies of the
// step (docs/ONNX/Import.md says why).
//
// Every attribute of ONNX is read: direction (forward, reverse,
// bidirectional), activations (with activation_alpha/beta, consumed in order
// by the activations that take them; a list of one direction's length
// serves both directions), clip (applied to the inputs of the gate
// activations f and g), layout 0 and 1, input_forget (LSTM),
// linear_before_reset (GRU), hidden_size (checked against W). The optional
// inputs B, initial_h, initial_c and P (peepholes) default to zeros;
// batch entries shorter than sequence_lens are masked, two more sequences
// of the scan ([seq, batch, 1]: 1 while the entry runs, and its
// complement), constants when the lengths are known (a constant, or a bound
// graph input) and computed from them otherwise (PyTorch's packed
// sequences): past its length an entry keeps its state (so
// Y_h and Y_c are its last valid ones, and a reverse direction starts at its
// own last element) and its Y is zero, as ONNX Runtime computes them.
//
//===----------------------------------------------------------------------===//

#include "Expander.h"

#include "loom/Dialect/TG/IR/TGOps.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace loom;
using namespace loom::onnx_to_tg;
using llvm::SmallVector;
using llvm::StringRef;

namespace {

enum class Kind { LSTM, GRU, RNN };

/// One activation function with its alpha and beta.
struct Activation {
  std::string name;
  std::optional<double> alpha, beta;
};

/// What one recurrent node computes, read from its attributes and inputs.
struct Recurrence {
  Kind kind;
  int64_t numGates;       // 4 (LSTM), 3 (GRU), 1 (RNN)
  int64_t numActivations; // per direction: 3, 2, 1
  int64_t seqLength, batch, inputSize, hidden, numDirections;
  bool reverse = false, layoutBatchFirst = false;
  std::optional<double> clip;
  bool inputForget = false, linearBeforeReset = false;
  int32_t dataType;
  SmallVector<Activation> activations; // numActivations * numDirections
  /// sequence_lens when known and some entry is shorter than seqLength;
  /// else empty.
  SmallVector<int64_t> lens;
  /// sequence_lens computed at run time (a packed sequence's lengths): its
  /// name; else empty.
  std::string runTimeLens;
};

/// The values every time step of one direction reads, emitted once per
/// direction.
struct DirectionValues {
  const Activation *acts = nullptr; // this direction's activations
  bool reverse = false;
  std::string xw;         // [seq, batch, gates * hidden]: X W^T + biases
  std::string rw, rBias;  // R and the recurrent bias (or "") of the direction
  std::string rT;         // R^T (LSTM, RNN)
  std::string rzrT, rhT;  // GRU: R^T of the update/reset and candidate gates
  std::string rbzr, rbh;  // GRU: their recurrent biases (or "")
  std::string pi, po, pf; // LSTM: peepholes (or "")
};

/// The recurrent state between time steps (c: LSTM only).
struct State {
  std::string h, c;
};

/// The fields of \p v that the step reads unchanged at every step (the
/// scan's invariants), in a fixed order; the absent ones ("") are left out.
SmallVector<std::string *> invariantFields(DirectionValues &v) {
  SmallVector<std::string *> fields;
  for (std::string *f :
       {&v.rT, &v.rzrT, &v.rhT, &v.rbzr, &v.rbh, &v.pi, &v.po, &v.pf})
    if (!f->empty())
      fields.push_back(f);
  return fields;
}

/// The masks of the batch entries still running at each step (sequence_lens).
struct Masks {
  std::string running, ended; // [seq, batch, 1] outside, [batch, 1] inside
};

class RecurrentExpander {
public:
  RecurrentExpander(NodeContext &ctx, Kind kind) : ctx(ctx), ex(ctx) {
    r.kind = kind;
  }
  LogicalResult run();

private:
  LogicalResult readAttributes();
  FailureOr<std::string> activate(const Activation &a, const std::string &x);
  FailureOr<std::string> clipped(const std::string &x);
  /// Element `d` of the leading (direction) axis of input `i`.
  FailureOr<std::string> direction(unsigned i, int64_t d);
  /// Runs direction `d` as one tg.scan (a one-step sequence: runOneStep);
  /// sets `y` ([seq, batch, hidden], in time order; only when the node has
  /// output Y), `lastH` and `lastC`.
  LogicalResult runDirection(int64_t d, std::string &y, std::string &lastH,
                             std::string &lastC);
  /// The masks of sequence_lens, as sequences of the scan.
  Masks sequenceMasks();
  /// Runs one time step of the layer's kind on the step's projected input
  /// \p xt ([batch, gates * hidden]), from \p state to the next state.
  LogicalResult step(const DirectionValues &v, const std::string &xt,
                     State &state);
  /// Runs a direction of a one-step sequence without a scan, from \p init:
  /// the step's ops are imported in place (the results as runDirection's).
  LogicalResult runOneStep(const DirectionValues &v, const State &init,
                           std::string &y, std::string &lastH,
                           std::string &lastC);
  /// Imports one time step into the body of \p scan: binds its arguments
  /// (the state, the step's slices, the invariants of `v`), runs the step
  /// of the layer's kind and yields the next state and the step's output.
  LogicalResult importStep(tg::ScanOp scan, const DirectionValues &v,
                           bool masked);
  /// The input projection of every step of direction `d` (one Gemm over the
  /// whole sequence); also reads R and the recurrent bias.
  LogicalResult projectInputs(int64_t d, DirectionValues &v);
  /// R^T, split for GRU into the update/reset part and the candidate part.
  LogicalResult transposeRecurrentWeights(DirectionValues &v);
  /// Peepholes (LSTM): P [3H] as pi, po, pf.
  LogicalResult splitPeepholes(int64_t d, DirectionValues &v);
  /// The initial state of direction `d` from `all` ([dirs, batch, hidden]),
  /// or zeros when `all` is "".
  LogicalResult initialState(const std::string &all, int64_t d,
                             std::string &out);
  /// One time step: `xt` is the step's input projection; updates `state`.
  LogicalResult stepRNN(const DirectionValues &v, const std::string &xt,
                        State &state);
  LogicalResult stepLSTM(const DirectionValues &v, const std::string &xt,
                         State &state);
  LogicalResult stepGRU(const DirectionValues &v, const std::string &xt,
                        State &state);
  /// `gate` += `p` * `state` when there is a peephole `p`.
  LogicalResult addPeephole(std::string &gate, const std::string &p,
                            const std::string &state);
  /// The LSTM forget gate (1 - input gate with input_forget).
  FailureOr<std::string> forgetGate(const DirectionValues &v,
                                    const std::string &it, std::string gf,
                                    const std::string &c);
  /// GRU's h~ before the candidate's input term: (r * H) R_h^T + Rbh, or
  /// r * (H R_h^T + Rbh) with linear_before_reset.
  FailureOr<std::string> gruRecurrentCandidate(const DirectionValues &v,
                                               const std::string &rt,
                                               const std::string &h);
  /// Past their sequence_lens (`masks` of the step), batch entries keep
  /// `prev` and output zeros; sets `y` to the step's output.
  LogicalResult maskEndedSequences(const Masks &masks, const State &prev,
                                   State &state, std::string &y);
  FailureOr<std::string> add(const std::string &a, const std::string &b) {
    return ex.emit("Add", {a, b});
  }
  FailureOr<std::string> mul(const std::string &a, const std::string &b) {
    return ex.emit("Mul", {a, b});
  }

  NodeContext &ctx;
  Expander ex;
  Recurrence r;
  std::string x;                  // [seq, batch, input], layout 0
  std::string initialH, initialC; // [dirs, batch, hidden] or ""
};

} // namespace

/// The default activations of each kind, per direction.
static SmallVector<StringRef> defaultActivations(Kind kind) {
  switch (kind) {
  case Kind::LSTM:
    return {"Sigmoid", "Tanh", "Tanh"};
  case Kind::GRU:
    return {"Sigmoid", "Tanh"};
  case Kind::RNN:
    return {"Tanh"};
  }
  return {};
}

static bool takesAlpha(StringRef f) {
  return llvm::is_contained({"Affine", "LeakyRelu", "ThresholdedRelu",
                             "ScaledTanh", "HardSigmoid", "Elu"},
                            f);
}
static bool takesBeta(StringRef f) {
  return llvm::is_contained({"Affine", "ScaledTanh", "HardSigmoid"}, f);
}

LogicalResult RecurrentExpander::readAttributes() {
  r.numGates = r.kind == Kind::LSTM ? 4 : r.kind == Kind::GRU ? 3 : 1;
  r.numActivations = defaultActivations(r.kind).size();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(ctx.requireFloatInput(i)))
      return failure();
  if (!ctx.hasInput(0) || !ctx.hasInput(1) || !ctx.hasInput(2))
    return ctx.fail("X, W and R (inputs 0-2) are required");
  r.dataType = ctx.inputDataType(0);
  std::string dir = ctx.getString("direction", "forward");
  if (dir == "forward" || dir == "reverse") {
    r.numDirections = 1;
    r.reverse = dir == "reverse";
  } else if (dir == "bidirectional") {
    r.numDirections = 2;
  } else {
    return ctx.fail("direction '" + dir +
                    "' is not one of forward, reverse, bidirectional");
  }
  int64_t layout = ctx.getInt("layout", 0);
  if (layout != 0 && layout != 1)
    return ctx.fail("layout " + Twine(layout) + " is not 0 or 1");
  r.layoutBatchFirst = layout == 1;
  if (ctx.hasAttr("clip")) {
    r.clip = ctx.getFloat("clip", 0);
    if (*r.clip <= 0)
      return ctx.fail("clip must be positive");
  }
  r.inputForget = ctx.getInt("input_forget", 0) != 0;
  r.linearBeforeReset = ctx.getInt("linear_before_reset", 0) != 0;

  ArrayRef<int64_t> xs = ctx.inputShape(0), ws = ctx.inputShape(1),
                    rs = ctx.inputShape(2);
  if (xs.size() != 3 || ws.size() != 3 || rs.size() != 3)
    return ctx.fail("X, W and R must have rank 3");
  r.seqLength = r.layoutBatchFirst ? xs[1] : xs[0];
  r.batch = r.layoutBatchFirst ? xs[0] : xs[1];
  r.inputSize = xs[2];
  if (ws[1] % r.numGates != 0)
    return ctx.fail("W has " + Twine(ws[1]) + " rows, not a multiple of " +
                    Twine(r.numGates));
  r.hidden = ws[1] / r.numGates;
  if (ctx.hasAttr("hidden_size") && ctx.getInt("hidden_size", 0) != r.hidden)
    return ctx.fail("hidden_size " + Twine(ctx.getInt("hidden_size", 0)) +
                    " does not match W (" + Twine(r.hidden) + ")");
  if (ws[0] != r.numDirections || ws[2] != r.inputSize)
    return ctx.fail("W must have shape [" + Twine(r.numDirections) + ", " +
                    Twine(r.numGates * r.hidden) + ", " + Twine(r.inputSize) +
                    "]");
  if (rs[0] != r.numDirections || rs[1] != r.numGates * r.hidden ||
      rs[2] != r.hidden)
    return ctx.fail("R must have shape [" + Twine(r.numDirections) + ", " +
                    Twine(r.numGates * r.hidden) + ", " + Twine(r.hidden) +
                    "]");
  if (r.seqLength < 1 || r.batch < 1 || r.inputSize < 1 || r.hidden < 1)
    return ctx.fail("empty sequences, batches, inputs or hidden states are "
                    "not supported");
  // The optional inputs' shapes (broadcasting would hide a wrong one).
  auto expectShape = [&](unsigned i, StringRef name,
                         ArrayRef<int64_t> shape) -> LogicalResult {
    if (!ctx.hasInput(i) || ctx.inputShape(i) == shape)
      return success();
    return ctx.fail(name + " has shape " +
                    safetensors::formatShape(ctx.inputShape(i)) +
                    "; expected " + safetensors::formatShape(shape));
  };
  SmallVector<int64_t> stateShape =
      r.layoutBatchFirst
          ? SmallVector<int64_t>{r.batch, r.numDirections, r.hidden}
          : SmallVector<int64_t>{r.numDirections, r.batch, r.hidden};
  if (failed(
          expectShape(3, "B", {r.numDirections, 2 * r.numGates * r.hidden})) ||
      failed(expectShape(5, "initial_h", stateShape)) ||
      (r.kind == Kind::LSTM &&
       (failed(expectShape(6, "initial_c", stateShape)) ||
        failed(expectShape(7, "P", {r.numDirections, 3 * r.hidden})))))
    return failure();

  // Activations, with their alphas and betas consumed in order.
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *a = ctx.getAttr("activations")) {
    for (const std::string &s : a->strings())
      names.push_back(s);
    if (static_cast<int64_t>(names.size()) == r.numActivations &&
        r.numDirections == 2)
      names.append(SmallVector<std::string>(names));
    if (static_cast<int64_t>(names.size()) !=
        r.numActivations * r.numDirections)
      return ctx.fail("activations lists " + Twine(a->strings_size()) +
                      " functions; expected " +
                      Twine(r.numActivations * r.numDirections));
  } else {
    for (int64_t d = 0; d < r.numDirections; ++d)
      for (StringRef f : defaultActivations(r.kind))
        names.push_back(f.str());
  }
  SmallVector<double> alphas =
      ctx.getFloats("activation_alpha").value_or(SmallVector<double>());
  SmallVector<double> betas =
      ctx.getFloats("activation_beta").value_or(SmallVector<double>());
  size_t nextAlpha = 0, nextBeta = 0;
  for (const std::string &name : names) {
    Activation act;
    act.name = name;
    if (takesAlpha(name) && nextAlpha < alphas.size())
      act.alpha = alphas[nextAlpha++];
    if (takesBeta(name) && nextBeta < betas.size())
      act.beta = betas[nextBeta++];
    r.activations.push_back(std::move(act));
  }

  // sequence_lens: shorter entries are masked, by constant masks when the
  // lengths are known, else by masks computed from them.
  if (ctx.hasInput(4) && !ctx.constant(4)) {
    if (ctx.inputShape(4) != ArrayRef<int64_t>{r.batch})
      return ctx.fail("sequence_lens must have shape [" + Twine(r.batch) +
                      "]");
    r.runTimeLens = ctx.node().input(4);
  } else if (ctx.hasInput(4)) {
    auto lens = ctx.constantInts(4, "sequence_lens");
    if (failed(lens))
      return failure();
    if (static_cast<int64_t>(lens->size()) != r.batch)
      return ctx.fail("sequence_lens has " + Twine(lens->size()) +
                      " entries for a batch of " + Twine(r.batch));
    for (int64_t len : *lens) {
      if (len < 1 || len > r.seqLength)
        return ctx.fail("sequence_lens gives a batch entry length " +
                        Twine(len) + ", outside [1, " + Twine(r.seqLength) +
                        "]");
      if (len != r.seqLength)
        r.lens.assign(lens->begin(), lens->end());
    }
  }
  return success();
}

FailureOr<std::string> RecurrentExpander::clipped(const std::string &v) {
  if (!r.clip)
    return v;
  return ex.emit("Clip", {v, ex.splat(r.dataType, {}, -*r.clip),
                          ex.splat(r.dataType, {}, *r.clip)});
}

FailureOr<std::string> RecurrentExpander::activate(const Activation &a,
                                                   const std::string &v) {
  auto scalar = [&](double value) { return ex.splat(r.dataType, {}, value); };
  StringRef f = a.name;
  if (f == "Sigmoid" || f == "Tanh" || f == "Relu" || f == "Softsign" ||
      f == "Softplus")
    return ex.emit(f, {v});
  if (f == "LeakyRelu" || f == "ThresholdedRelu" || f == "Elu")
    return ex.emit(f, {v}, [&](onnx::NodeProto &n) {
      if (a.alpha)
        Expander::setFloat(n, "alpha", *a.alpha);
    });
  if (f == "HardSigmoid")
    return ex.emit(f, {v}, [&](onnx::NodeProto &n) {
      if (a.alpha)
        Expander::setFloat(n, "alpha", *a.alpha);
      if (a.beta)
        Expander::setFloat(n, "beta", *a.beta);
    });
  if (f == "Affine") {
    // alpha * x + beta (ONNX-1 Affine; defaults 1 and 0).
    auto scaled = mul(v, scalar(a.alpha.value_or(1.0)));
    if (failed(scaled))
      return failure();
    return add(*scaled, scalar(a.beta.value_or(0.0)));
  }
  if (f == "ScaledTanh") {
    // alpha * tanh(beta * x) (defaults 1 and 1).
    auto inner = mul(v, scalar(a.beta.value_or(1.0)));
    if (failed(inner))
      return failure();
    auto t = ex.emit("Tanh", {*inner});
    if (failed(t))
      return failure();
    return mul(*t, scalar(a.alpha.value_or(1.0)));
  }
  return ctx.fail("activation '" + f + "' is not supported");
}

FailureOr<std::string> RecurrentExpander::direction(unsigned i, int64_t d) {
  return ex.emit("Gather", {ctx.node().input(i), ex.scalarInt(d)},
                 [](onnx::NodeProto &n) { Expander::setInt(n, "axis", 0); });
}

LogicalResult RecurrentExpander::projectInputs(int64_t d, DirectionValues &v) {
  const int64_t H = r.hidden, G = r.numGates;
  auto transB = [](onnx::NodeProto &n) { Expander::setInt(n, "transB", 1); };
  // X [seq*batch, input] times W^T, plus the input bias (and, except for
  // GRU's candidate gate, the recurrent one, which ONNX always adds to it).
  auto w = direction(1, d);
  auto rw = direction(2, d);
  if (failed(w) || failed(rw))
    return failure();
  v.rw = *rw;
  std::string xBias;
  if (ctx.hasInput(3)) {
    auto b = direction(3, d);
    if (failed(b))
      return failure();
    auto halves = ex.emitMulti("Split", {*b, ex.ints({G * H, G * H})}, 2);
    if (failed(halves))
      return failure();
    xBias = (*halves)[0];
    v.rBias = (*halves)[1];
  }
  auto x2 =
      ex.emit("Reshape", {x, ex.ints({r.seqLength * r.batch, r.inputSize})});
  if (failed(x2))
    return failure();
  std::string gemmBias;
  if (!xBias.empty()) {
    if (r.kind == Kind::GRU) {
      gemmBias = xBias; // Rbh may not be added before the reset gate.
    } else {
      auto sum = add(xBias, v.rBias);
      if (failed(sum))
        return failure();
      gemmBias = *sum;
    }
  }
  SmallVector<std::string> gemmIn = {*x2, *w};
  if (!gemmBias.empty())
    gemmIn.push_back(gemmBias);
  auto xw = ex.emit("Gemm", gemmIn, transB);
  if (failed(xw))
    return failure();
  auto xw3 = ex.emit("Reshape", {*xw, ex.ints({r.seqLength, r.batch, G * H})});
  if (failed(xw3))
    return failure();
  v.xw = *xw3;
  return success();
}

LogicalResult RecurrentExpander::transposeRecurrentWeights(DirectionValues &v) {
  const int64_t H = r.hidden;
  switch (r.kind) {
  case Kind::LSTM:
  case Kind::RNN: {
    auto t = ex.emit("Transpose", {v.rw});
    if (failed(t))
      return failure();
    v.rT = *t;
    return success();
  }
  case Kind::GRU: {
    auto parts = ex.emitMulti("Split", {v.rw, ex.ints({2 * H, H})}, 2);
    if (failed(parts))
      return failure();
    auto a = ex.emit("Transpose", {(*parts)[0]});
    auto b = ex.emit("Transpose", {(*parts)[1]});
    if (failed(a) || failed(b))
      return failure();
    v.rzrT = *a;
    v.rhT = *b;
    if (v.rBias.empty())
      return success();
    auto bs = ex.emitMulti("Split", {v.rBias, ex.ints({2 * H, H})}, 2);
    if (failed(bs))
      return failure();
    v.rbzr = (*bs)[0];
    v.rbh = (*bs)[1];
    return success();
  }
  }
  llvm_unreachable("unknown recurrent kind");
}

LogicalResult RecurrentExpander::splitPeepholes(int64_t d, DirectionValues &v) {
  if (r.kind != Kind::LSTM || !ctx.hasInput(7))
    return success();
  const int64_t H = r.hidden;
  auto p = direction(7, d);
  if (failed(p))
    return failure();
  auto parts = ex.emitMulti("Split", {*p, ex.ints({H, H, H})}, 3);
  if (failed(parts))
    return failure();
  v.pi = (*parts)[0];
  v.po = (*parts)[1];
  v.pf = (*parts)[2];
  return success();
}

LogicalResult RecurrentExpander::initialState(const std::string &all, int64_t d,
                                              std::string &out) {
  if (all.empty()) {
    out = ex.splat(r.dataType, {r.batch, r.hidden}, 0.0);
    return success();
  }
  auto v = ex.emit("Gather", {all, ex.scalarInt(d)},
                   [](onnx::NodeProto &n) { Expander::setInt(n, "axis", 0); });
  if (failed(v))
    return failure();
  out = *v;
  return success();
}

LogicalResult RecurrentExpander::stepRNN(const DirectionValues &v,
                                         const std::string &xt, State &state) {
  auto hr = ex.emit("MatMul", {state.h, v.rT});
  if (failed(hr))
    return failure();
  auto pre = add(xt, *hr);
  if (failed(pre) || failed(pre = clipped(*pre)))
    return failure();
  auto next = activate(v.acts[0], *pre);
  if (failed(next))
    return failure();
  state.h = *next;
  return success();
}

LogicalResult RecurrentExpander::addPeephole(std::string &gate,
                                             const std::string &p,
                                             const std::string &state) {
  if (p.empty())
    return success();
  auto m = mul(p, state);
  if (failed(m))
    return failure();
  auto s = add(gate, *m);
  if (failed(s))
    return failure();
  gate = *s;
  return success();
}

FailureOr<std::string> RecurrentExpander::forgetGate(const DirectionValues &v,
                                                     const std::string &it,
                                                     std::string gf,
                                                     const std::string &c) {
  if (r.inputForget) {
    auto one = ex.splat(r.dataType, {}, 1.0);
    return ex.emit("Sub", {one, it});
  }
  if (failed(addPeephole(gf, v.pf, c)))
    return failure();
  auto cgf = clipped(gf);
  if (failed(cgf))
    return failure();
  return activate(v.acts[0], *cgf);
}

LogicalResult RecurrentExpander::stepLSTM(const DirectionValues &v,
                                          const std::string &xt, State &state) {
  const int64_t H = r.hidden;
  auto hr = ex.emit("MatMul", {state.h, v.rT});
  if (failed(hr))
    return failure();
  auto pre = add(xt, *hr);
  if (failed(pre))
    return failure();
  auto g =
      ex.emitMulti("Split", {*pre, ex.ints({H, H, H, H})}, 4,
                   [](onnx::NodeProto &n) { Expander::setInt(n, "axis", 1); });
  if (failed(g))
    return failure();
  std::string gi = (*g)[0], go = (*g)[1], gf = (*g)[2], gc = (*g)[3];
  if (failed(addPeephole(gi, v.pi, state.c)))
    return failure();
  auto cgi = clipped(gi);
  if (failed(cgi))
    return failure();
  auto it = activate(v.acts[0], *cgi);
  if (failed(it))
    return failure();
  auto ft = forgetGate(v, *it, gf, state.c);
  if (failed(ft))
    return failure();
  auto cgc = clipped(gc);
  if (failed(cgc))
    return failure();
  auto ct = activate(v.acts[1], *cgc);
  if (failed(ct))
    return failure();
  auto keep = mul(*ft, state.c);
  auto write = mul(*it, *ct);
  if (failed(keep) || failed(write))
    return failure();
  auto nextC = add(*keep, *write);
  if (failed(nextC))
    return failure();
  state.c = *nextC;
  if (failed(addPeephole(go, v.po, state.c)))
    return failure();
  auto cgo = clipped(go);
  if (failed(cgo))
    return failure();
  auto ot = activate(v.acts[0], *cgo);
  if (failed(ot))
    return failure();
  auto hc = activate(v.acts[2], state.c);
  if (failed(hc))
    return failure();
  auto nextH = mul(*ot, *hc);
  if (failed(nextH))
    return failure();
  state.h = *nextH;
  return success();
}

FailureOr<std::string> RecurrentExpander::gruRecurrentCandidate(
    const DirectionValues &v, const std::string &rt, const std::string &h) {
  FailureOr<std::string> hh;
  if (r.linearBeforeReset) {
    hh = ex.emit("MatMul", {h, v.rhT});
    if (failed(hh) || (!v.rbh.empty() && failed(hh = add(*hh, v.rbh))) ||
        failed(hh = mul(rt, *hh)))
      return failure();
    return hh;
  }
  auto rh = mul(rt, h);
  if (failed(rh))
    return failure();
  hh = ex.emit("MatMul", {*rh, v.rhT});
  if (failed(hh) || (!v.rbh.empty() && failed(hh = add(*hh, v.rbh))))
    return failure();
  return hh;
}

LogicalResult RecurrentExpander::stepGRU(const DirectionValues &v,
                                         const std::string &xt, State &state) {
  const int64_t H = r.hidden;
  auto xg =
      ex.emitMulti("Split", {xt, ex.ints({H, H, H})}, 3,
                   [](onnx::NodeProto &n) { Expander::setInt(n, "axis", 1); });
  if (failed(xg))
    return failure();
  auto hzr = ex.emit("MatMul", {state.h, v.rzrT});
  if (failed(hzr))
    return failure();
  if (!v.rbzr.empty() && failed(hzr = add(*hzr, v.rbzr)))
    return failure();
  auto hg =
      ex.emitMulti("Split", {*hzr, ex.ints({H, H})}, 2,
                   [](onnx::NodeProto &n) { Expander::setInt(n, "axis", 1); });
  if (failed(hg))
    return failure();
  auto gate = [&](const std::string &a,
                  const std::string &b) -> FailureOr<std::string> {
    auto s = add(a, b);
    if (failed(s) || failed(s = clipped(*s)))
      return failure();
    return activate(v.acts[0], *s);
  };
  auto zt = gate((*xg)[0], (*hg)[0]);
  auto rt = gate((*xg)[1], (*hg)[1]);
  if (failed(zt) || failed(rt))
    return failure();
  auto hh = gruRecurrentCandidate(v, *rt, state.h);
  if (failed(hh))
    return failure();
  auto pre = add((*xg)[2], *hh);
  if (failed(pre) || failed(pre = clipped(*pre)))
    return failure();
  auto cand = activate(v.acts[1], *pre);
  if (failed(cand))
    return failure();
  // H = (1 - z) * cand + z * H = cand + z * (H - cand).
  auto diff = ex.emit("Sub", {state.h, *cand});
  if (failed(diff))
    return failure();
  auto zd = mul(*zt, *diff);
  if (failed(zd))
    return failure();
  auto nextH = add(*cand, *zd);
  if (failed(nextH))
    return failure();
  state.h = *nextH;
  return success();
}

Masks RecurrentExpander::sequenceMasks() {
  if (!r.runTimeLens.empty()) {
    // running[t, b] = t < sequence_lens[b], computed in the element type.
    HostTensor steps;
    steps.dataType = r.dataType;
    steps.shape = {r.seqLength, 1, 1};
    for (int64_t t = 0; t < r.seqLength; ++t)
      steps.floats.push_back(double(t));
    auto toData = [&](onnx::NodeProto &n) {
      Expander::setInt(n, "to", r.dataType);
    };
    auto lens = ex.emit("Cast", {r.runTimeLens}, toData);
    if (failed(lens))
      return {};
    auto column = ex.emit("Reshape", {*lens, ex.ints({1, r.batch, 1})});
    if (failed(column))
      return {};
    auto less = ex.emit("Less", {ex.constant(std::move(steps)), *column});
    if (failed(less))
      return {};
    auto running = ex.emit("Cast", {*less}, toData);
    if (failed(running))
      return {};
    auto ended = ex.emit("Sub", {ex.splat(r.dataType, {}, 1.0), *running});
    if (failed(ended))
      return {};
    return {*running, *ended};
  }
  HostTensor m, inv;
  m.dataType = inv.dataType = r.dataType;
  m.shape = inv.shape = {r.seqLength, r.batch, 1};
  for (int64_t t = 0; t < r.seqLength; ++t)
    for (int64_t len : r.lens) {
      m.floats.push_back(t < len ? 1.0 : 0.0);
      inv.floats.push_back(t < len ? 0.0 : 1.0);
    }
  return {ex.constant(std::move(m)), ex.constant(std::move(inv))};
}

LogicalResult RecurrentExpander::maskEndedSequences(const Masks &masks,
                                                    const State &prev,
                                                    State &state,
                                                    std::string &y) {
  y = state.h;
  if (masks.running.empty())
    return success();
  auto select = [&](const std::string &now,
                    const std::string &before) -> FailureOr<std::string> {
    auto a = mul(masks.running, now);
    auto b = mul(masks.ended, before);
    if (failed(a) || failed(b))
      return failure();
    return add(*a, *b);
  };
  auto masked = mul(masks.running, state.h);
  auto nextH = select(state.h, prev.h);
  if (failed(masked) || failed(nextH))
    return failure();
  y = *masked;
  state.h = *nextH;
  if (r.kind == Kind::LSTM) {
    auto nextC = select(state.c, prev.c);
    if (failed(nextC))
      return failure();
    state.c = *nextC;
  }
  return success();
}

LogicalResult RecurrentExpander::step(const DirectionValues &v,
                                      const std::string &xt, State &state) {
  switch (r.kind) {
  case Kind::RNN:
    return stepRNN(v, xt, state);
  case Kind::LSTM:
    return stepLSTM(v, xt, state);
  case Kind::GRU:
    return stepGRU(v, xt, state);
  }
  llvm_unreachable("every recurrent kind has a step");
}

LogicalResult RecurrentExpander::runOneStep(const DirectionValues &v,
                                            const State &init, std::string &y,
                                            std::string &lastH,
                                            std::string &lastC) {
  auto xt = ex.emit("Reshape",
                    {v.xw, ex.ints({r.batch, r.numGates * r.hidden})});
  if (failed(xt))
    return failure();
  State state = init;
  if (failed(step(v, *xt, state)))
    return failure();
  lastH = state.h;
  lastC = state.c;
  if (!ctx.hasOutput(0))
    return success();
  auto stacked =
      ex.emit("Reshape", {state.h, ex.ints({1, r.batch, r.hidden})});
  if (failed(stacked))
    return failure();
  y = *stacked;
  return success();
}

LogicalResult RecurrentExpander::importStep(tg::ScanOp scan,
                                            const DirectionValues &v,
                                            bool masked) {
  // The step's names are the body's: forgotten after it (ONNX scoping, as
  // for the branches of If), and the body sees only its arguments.
  GraphImporter &gi = ctx.importer();
  llvm::StringMap<ImportedValue> saved = gi.values;
  llvm::scope_exit restore([&] { gi.values = std::move(saved); });
  OpBuilder::InsertionGuard guard(gi.builder);
  Block &body = scan.getBodyBlock();
  gi.builder.setInsertionPointToEnd(&body);
  unsigned arg = 0;
  auto next = [&] { return ex.bind(body.getArgument(arg++)); };
  State state;
  state.h = next();
  if (r.kind == Kind::LSTM)
    state.c = next();
  std::string xt = next();
  Masks masks;
  if (masked) {
    masks.running = next();
    masks.ended = next();
  }
  DirectionValues inner = v;
  for (std::string *field : invariantFields(inner))
    *field = next();

  const State prev = state;
  std::string y;
  if (failed(step(inner, xt, state)) ||
      failed(maskEndedSequences(masks, prev, state, y)))
    return failure();
  SmallVector<std::string> results = {state.h};
  if (r.kind == Kind::LSTM)
    results.push_back(state.c);
  if (ctx.hasOutput(0))
    results.push_back(y);
  SmallVector<Value> yielded;
  for (const std::string &name : results) {
    auto value = ex.valueOf(name);
    if (failed(value))
      return failure();
    yielded.push_back(*value);
  }
  tg::YieldOp::create(gi.builder, ctx.loc(), yielded);
  return success();
}

LogicalResult RecurrentExpander::runDirection(int64_t d, std::string &y,
                                              std::string &lastH,
                                              std::string &lastC) {
  DirectionValues v;
  v.acts = &r.activations[d * r.numActivations];
  v.reverse = r.reverse || d == 1;
  State init;
  if (failed(projectInputs(d, v)) || failed(transposeRecurrentWeights(v)) ||
      failed(splitPeepholes(d, v)) ||
      failed(initialState(initialH, d, init.h)))
    return failure();
  if (r.kind == Kind::LSTM && failed(initialState(initialC, d, init.c)))
    return failure();

  // The scan's operands, materialised before it (its body is isolated).
  SmallVector<std::string> inits = {init.h}, sequences = {v.xw}, invariants;
  if (r.kind == Kind::LSTM)
    inits.push_back(init.c);
  bool masked = !r.lens.empty() || !r.runTimeLens.empty();
  // A sequence of one step (streaming inference feeds one at a time) needs
  // no loop: the step's ops go into the graph, where its products may run
  // on a library and over every thread like any other. (Every batch entry
  // then has length 1, so nothing is masked.)
  if (r.seqLength == 1 && !masked)
    return runOneStep(v, init, y, lastH, lastC);
  if (masked) {
    Masks m = sequenceMasks();
    if (m.running.empty())
      return failure();
    sequences.append({m.running, m.ended});
  }
  for (std::string *field : invariantFields(v))
    invariants.push_back(*field);
  SmallVector<Value> operands[3];
  for (auto [names, values] :
       llvm::zip(std::array{&inits, &sequences, &invariants}, operands))
    for (const std::string &name : *names) {
      auto value = ex.valueOf(name);
      if (failed(value))
        return failure();
      values.push_back(*value);
    }
  SmallVector<Type> types(ValueRange(operands[0]).getTypes());
  if (ctx.hasOutput(0))
    types.push_back(RankedTensorType::get(
        {r.seqLength, r.batch, r.hidden},
        cast<RankedTensorType>(operands[0].front().getType())
            .getElementType()));
  auto scan = tg::ScanOp::create(ctx.builder(), ctx.loc(), types, operands[0],
                                 operands[1], operands[2], v.reverse);
  if (failed(importStep(scan, v, masked)))
    return failure();
  lastH = ex.bind(scan.getResult(0));
  if (r.kind == Kind::LSTM)
    lastC = ex.bind(scan.getResult(1));
  if (ctx.hasOutput(0))
    y = ex.bind(scan.getStacked().front());
  return success();
}

LogicalResult RecurrentExpander::run() {
  if (failed(readAttributes()))
    return failure();
  // X and the initial states in layout 0.
  x = ctx.node().input(0);
  auto toLayout0 = [&](unsigned i, ArrayRef<int64_t> perm, std::string &out) {
    if (!ctx.hasInput(i))
      return success();
    out = ctx.node().input(i);
    if (!r.layoutBatchFirst)
      return success();
    auto t = ex.emit("Transpose", {out}, [&](onnx::NodeProto &n) {
      Expander::setInts(n, "perm", perm);
    });
    if (failed(t))
      return failure();
    out = *t;
    return success();
  };
  if (failed(toLayout0(0, {1, 0, 2}, x)) ||
      failed(toLayout0(5, {1, 0, 2}, initialH)) ||
      (r.kind == Kind::LSTM && failed(toLayout0(6, {1, 0, 2}, initialC))))
    return failure();

  SmallVector<std::string> yPerDir, hPerDir, cPerDir;
  for (int64_t d = 0; d < r.numDirections; ++d) {
    std::string y, lastH, lastC;
    if (failed(runDirection(d, y, lastH, lastC)))
      return failure();
    hPerDir.push_back(lastH);
    cPerDir.push_back(lastC);
    if (ctx.hasOutput(0))
      yPerDir.push_back(y); // [seq, batch, hidden]
  }

  // Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]);
  // Y_h and Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
  auto finish = [&](unsigned i, ArrayRef<std::string> parts, int64_t axis,
                    ArrayRef<int64_t> perm) -> LogicalResult {
    if (!ctx.hasOutput(i))
      return success();
    auto v = ex.stack(parts, axis);
    if (failed(v))
      return failure();
    if (r.layoutBatchFirst) {
      v = ex.emit("Transpose", {*v}, [&](onnx::NodeProto &n) {
        Expander::setInts(n, "perm", perm);
      });
      if (failed(v))
        return failure();
    }
    return ex.setOutput(i, *v);
  };
  if (failed(finish(0, yPerDir, 1, {2, 0, 1, 3})) ||
      failed(finish(1, hPerDir, 0, {1, 0, 2})))
    return failure();
  if (r.kind == Kind::LSTM && failed(finish(2, cPerDir, 0, {1, 0, 2})))
    return failure();
  return success();
}

static LogicalResult importLSTM(NodeContext &ctx) {
  return RecurrentExpander(ctx, Kind::LSTM).run();
}
static LogicalResult importGRU(NodeContext &ctx) {
  return RecurrentExpander(ctx, Kind::GRU).run();
}
static LogicalResult importRNN(NodeContext &ctx) {
  return RecurrentExpander(ctx, Kind::RNN).run();
}

void onnx_to_tg::populateRecurrentHandlers(HandlerTable &table) {
  table["LSTM"] = importLSTM;
  table["GRU"] = importGRU;
  table["RNN"] = importRNN;
}
