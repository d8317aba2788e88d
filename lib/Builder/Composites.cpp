//===- Composites.cpp - Layers built from tg ops --------------------------===//
//
// Part of Loom. The GraphBuilder's composites (GraphBuilder.h): linear
// layers and MLPs, convolutions, normalisations, embeddings, attention,
// transformer layers and recurrent cells, each a named scope whose
// parameters are tg.weight ops named as PyTorch names them, built from the
// op methods of GraphBuilder.cpp.
//
//===----------------------------------------------------------------------===//

#include "loom/Builder/GraphBuilder.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace loom;

/// The shape of `x`, a statically shaped ranked tensor (GraphBuilder::ready).
static ArrayRef<int64_t> shapeOf(Value x) {
  return mlir::cast<RankedTensorType>(x.getType()).getShape();
}

/// The gates of a recurrent cell before their activations, `width` wide in
/// all: x W_ih + h W_hh + b, for the input `x` of `in` features and the
/// state `h` of `hidden`. The parameters (weight_ih, weight_hh, bias in the
/// current scope) come first, then the ops, one per statement so that the
/// IR order does not depend on the compiler's order of evaluating
/// arguments.
static Value recurrentGates(GraphBuilder &b, Value x, Value h, int64_t in,
                            int64_t hidden, int64_t width) {
  Value wih = b.weight("weight_ih", {in, width});
  Value whh = b.weight("weight_hh", {hidden, width});
  Value bias = b.weight("bias", {width});
  Value xw = b.matmul(x, wih);
  Value hw = b.matmul(h, whh);
  Value sum = b.add(xw, hw);
  return b.add(sum, bias);
}

Value GraphBuilder::linear(Value x, int64_t in, int64_t out, StringRef name,
                           Act act, bool bias) {
  Scope s = scope(name);
  if (!ready({x}, "linear"))
    return {};
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.empty() || shape.back() != in)
    return failInputShape("linear", shape,
                          Twine(in) + " features on its last dimension");
  if (out < 1)
    return failComposite("linear", "bad output width " + Twine(out));
  // Both parameters first, then the ops (as HuggingFace and torchvision
  // list them).
  Value w = weight("weight", {in, out});
  Value b = bias ? weight("bias", {out}) : Value();
  Value y = matmul(x, w);
  if (bias)
    y = add(y, b);
  return activation(y, act);
}

Value GraphBuilder::linear(Value x, int64_t out, StringRef name, Act act,
                           bool bias) {
  if (!ready({x}, "linear"))
    return {};
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.empty()) {
    Scope s = scope(name);
    return failComposite("linear", "the input is a scalar");
  }
  return linear(x, shape.back(), out, name, act, bias);
}

Value GraphBuilder::mlp(Value x, ArrayRef<int64_t> widths, StringRef name,
                        const MlpOptions &options) {
  Scope s = scope(name);
  for (auto [i, width] : llvm::enumerate(widths)) {
    bool last = i + 1 == widths.size();
    x = linear(x, width, std::to_string(i),
               last ? options.last : options.hidden, options.bias);
  }
  return x;
}

Value GraphBuilder::conv(Value x, int64_t outChannels, Window kernel,
                         StringRef name, Conv2dOptions options, bool bias) {
  Scope s = scope(name);
  if (!ready({x}, "conv"))
    return {};
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() != 4)
    return failInputShape("conv", shape, "NCHW (rank 4)");
  if (options.groups < 1 || shape[1] % options.groups != 0 ||
      outChannels % options.groups != 0)
    return failComposite("conv", Twine(options.groups) +
                                     " groups do not divide " +
                                     Twine(shape[1]) + " input and " +
                                     Twine(outChannels) + " output channels");
  Value filter = weight(
      "weight", {outChannels, shape[1] / options.groups, kernel.h, kernel.w});
  if (bias)
    options.bias = weight("bias", {outChannels});
  return conv2d(x, filter, options);
}

Value GraphBuilder::batchNorm(Value x, StringRef name, double epsilon) {
  Scope s = scope(name);
  if (!ready({x}, "batchNorm"))
    return {};
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() < 2)
    return failInputShape("batchNorm", shape, "a channel dimension 1");
  int64_t c = shape[1];
  Value g = weight("weight", {c}), b = weight("bias", {c}),
        m = weight("running_mean", {c}), v = weight("running_var", {c});
  return batchnorm(x, g, b, m, v, epsilon);
}

Value GraphBuilder::layerNorm(Value x, StringRef name, double epsilon) {
  Scope s = scope(name);
  if (!ready({x}, "layerNorm"))
    return {};
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.empty())
    return failComposite("layerNorm", "the input is a scalar");
  Value g = weight("weight", {shape.back()});
  Value b = weight("bias", {shape.back()});
  return layernorm(x, g, b, -1, epsilon);
}

Value GraphBuilder::convBnRelu(Value x, int64_t outChannels, Window kernel,
                               StringRef convName, StringRef bnName,
                               Conv2dOptions options, bool relu,
                               double epsilon) {
  Value y = conv(x, outChannels, kernel, convName, options);
  y = batchNorm(y, bnName, epsilon);
  return relu ? this->relu(y) : y;
}

Value GraphBuilder::embedding(Value ids, int64_t vocab, int64_t dim,
                              StringRef name) {
  Scope s = scope(name);
  if (!ready({ids}, "embedding"))
    return {};
  Type element = mlir::cast<RankedTensorType>(ids.getType()).getElementType();
  if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64))
    return failComposite("embedding", "the ids must be i32 or i64 tensors");
  return gather(weight("weight", {vocab, dim}), ids, 0);
}

Value GraphBuilder::attention(Value x, StringRef name,
                              const AttentionOptions &o) {
  Scope s = scope(name);
  if (!ready({x}, "attention"))
    return {};
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() != 3)
    return failInputShape("attention", shape, "[batch, seq, hidden]");
  int64_t batch = shape[0], seq = shape[1], hidden = shape[2];
  if (o.numHeads < 1 || hidden % o.numHeads != 0)
    return failComposite("attention", Twine(o.numHeads) +
                                          " heads do not divide the hidden "
                                          "size " +
                                          Twine(hidden));
  int64_t heads = o.numHeads, dim = hidden / heads;
  auto project = [&](StringRef which) {
    Value p = linear(x, hidden, hidden, which, Act::None, o.bias);
    return reshape(p, {batch, seq, heads, dim});
  };
  // [batch, heads, seq, dim] for Q and V, [batch, heads, dim, seq] for K.
  Value q = transpose(project(o.names.query), {0, 2, 1, 3});
  Value k = transpose(project(o.names.key), {0, 2, 3, 1});
  Value v = transpose(project(o.names.value), {0, 2, 1, 3});
  Value scores = scale(matmul(q, k), 1.0 / std::sqrt(double(dim)));
  if (o.mask)
    scores = add(scores, o.mask);
  Value context = matmul(softmax(scores, -1), v);
  context = reshape(transpose(context, {0, 2, 1, 3}), {batch, seq, hidden});
  return linear(context, hidden, hidden, o.names.output, Act::None, o.bias);
}

Value GraphBuilder::transformerLayer(Value x, StringRef name,
                                     const TransformerLayerOptions &o) {
  Scope s = scope(name);
  if (!ready({x}, "transformerLayer"))
    return {};
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.size() != 3)
    return failInputShape("transformer layer", shape, "[batch, seq, hidden]");
  int64_t hidden = shape[2];
  AttentionOptions attn;
  attn.numHeads = o.numHeads;
  attn.bias = o.bias;
  attn.mask = o.mask;
  auto ffn = [&](Value h) {
    h = linear(h, hidden, o.ffnDim, "intermediate.dense", o.activation, o.bias);
    return linear(h, o.ffnDim, hidden, "output.dense", Act::None, o.bias);
  };
  if (o.preNorm) {
    Value h = layerNorm(x, "attention.output.LayerNorm", o.epsilon);
    x = add(x, attention(h, "attention", attn));
    h = layerNorm(x, "output.LayerNorm", o.epsilon);
    return add(x, ffn(h));
  }
  Value h = add(attention(x, "attention", attn), x);
  h = layerNorm(h, "attention.output.LayerNorm", o.epsilon);
  Value y = add(ffn(h), h);
  return layerNorm(y, "output.LayerNorm", o.epsilon);
}

LstmState GraphBuilder::lstmCell(Value x, LstmState state, int64_t hidden,
                                 StringRef name) {
  Scope s = scope(name);
  if (!ready({x, state.h, state.c}, "lstmCell"))
    return {};
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.empty()) {
    failComposite("lstm cell", "the input is a scalar");
    return {};
  }
  Value gates =
      recurrentGates(*this, x, state.h, shape.back(), hidden, 4 * hidden);
  // One op per statement, here as in recurrentGates, so that the IR order
  // does not depend on the compiler's order of evaluating arguments.
  SmallVector<Value> g = split(gates, -1, {hidden, hidden, hidden, hidden});
  if (g.size() != 4)
    return {};
  Value i = sigmoid(g[0]), f = sigmoid(g[1]), cand = tanh(g[2]),
        o = sigmoid(g[3]);
  Value keep = mul(f, state.c);
  Value write = mul(i, cand);
  Value c = add(keep, write);
  Value h = mul(o, tanh(c));
  return {h, c};
}

Value GraphBuilder::rnnCell(Value x, Value h, int64_t hidden, StringRef name,
                            Act act) {
  Scope s = scope(name);
  if (!ready({x, h}, "rnnCell"))
    return {};
  ArrayRef<int64_t> shape = shapeOf(x);
  if (shape.empty())
    return failComposite("rnn cell", "the input is a scalar");
  Value gates = recurrentGates(*this, x, h, shape.back(), hidden, hidden);
  return activation(gates, act);
}
