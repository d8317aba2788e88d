//===- GraphBuilder.h - A C++ API for building tg graphs --------*- C++ -*-===//
//
// Part of Loom. GraphBuilder writes a module with one entry function in the
// `tg` dialect: graph inputs become function arguments, parameters become
// `tg.weight` ops read from the safetensors file named by the module
// attribute `tg.weights`, and every tg operator is a method that infers its
// result type. Composite helpers (linear layers, conv + batchnorm + relu,
// multi-head attention, transformer encoder layers, recurrent cells, MLPs)
// create their own parameters under a dotted name scope, so a model written
// with them gets framework-style weight names (`layer1.0.conv1.weight`).
//
// Errors never crash. A bad operand (a shape mismatch, a weight declared
// twice with different types, a null value) emits a diagnostic at a NameLoc
// that spells the current scope, and the method returns a null Value; later
// methods given that null Value return null silently, so a model can be
// written without checking every step, and `finish` reports failure:
//
//   mlir::MLIRContext context;
//   loom::GraphBuilder b(context, "mlp.safetensors");
//   mlir::Value x = b.input("x", {1, 784});
//   mlir::Value h = b.linear(x, 784, 256, "fc1", loom::Act::Relu);
//   mlir::Value y = b.softmax(b.linear(h, 256, 10, "fc2"));
//   auto module = b.finish({y}, {"probs"});
//   if (mlir::failed(module)) return 1;
//   loom::writeModule(**module, "mlp.mlir");
//   loom::writeRandomWeights(**module, "mlp.safetensors", /*seed=*/0);
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_BUILDER_GRAPHBUILDER_H
#define LOOM_BUILDER_GRAPHBUILDER_H

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Support/Activation.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace loom {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

/// An elementwise activation applied by a composite helper: Loom's one
/// activation vocabulary (loom/Support/Activations.def), under a short name.
using Act = Activation;

/// A 2-D window (kernel) size; `3` means 3x3, `{1, 7}` means 1 high, 7 wide.
struct Window {
  Window(int64_t size) : h(size), w(size) {}
  Window(int64_t h, int64_t w) : h(h), w(w) {}
  int64_t h, w;
};

/// How a convolution or pooling window is padded.
enum class Padding {
  /// The explicit `pads` ([top, left, bottom, right]).
  Explicit,
  /// TensorFlow "SAME": output size ceil(in / stride); the total padding is
  /// split with the smaller half first (TASO's and TENSAT's models use it).
  Same,
};

/// Attributes of GraphBuilder::conv2d. Defaults: stride 1, no padding,
/// dilation 1, one group, no activation, no bias. Setters chain:
///   Conv2dOptions().stride(2).pad(3).relu()
struct Conv2dOptions {
  llvm::SmallVector<int64_t, 2> strides{1, 1};
  llvm::SmallVector<int64_t, 4> pads{0, 0, 0, 0};
  llvm::SmallVector<int64_t, 2> dilations{1, 1};
  int64_t groups = 1;
  tg::Activation activation = tg::Activation::None;
  Padding padding = Padding::Explicit;
  /// Optional bias operand of shape [O].
  mlir::Value bias;

  Conv2dOptions &stride(int64_t s) { return stride(s, s); }
  Conv2dOptions &stride(int64_t sh, int64_t sw) {
    strides = {sh, sw};
    return *this;
  }
  /// The same padding on all four sides.
  Conv2dOptions &pad(int64_t p) { return pad(p, p, p, p); }
  /// `ph` above and below, `pw` left and right.
  Conv2dOptions &pad(int64_t ph, int64_t pw) { return pad(ph, pw, ph, pw); }
  Conv2dOptions &pad(int64_t top, int64_t left, int64_t bottom, int64_t right) {
    pads = {top, left, bottom, right};
    padding = Padding::Explicit;
    return *this;
  }
  Conv2dOptions &same() {
    padding = Padding::Same;
    return *this;
  }
  Conv2dOptions &dilation(int64_t d) {
    dilations = {d, d};
    return *this;
  }
  Conv2dOptions &group(int64_t g) {
    groups = g;
    return *this;
  }
  Conv2dOptions &act(tg::Activation a) {
    activation = a;
    return *this;
  }
  Conv2dOptions &relu() { return act(tg::Activation::Relu); }
  Conv2dOptions &withBias(mlir::Value b) {
    bias = b;
    return *this;
  }
};

/// Attributes of GraphBuilder::maxpool2d and avgpool. Defaults: stride 1
/// (as tg and ONNX; PyTorch's default is the kernel size), no padding,
/// average pooling excludes the padding from its divisor (ONNX, TensorFlow).
struct Pool2dOptions {
  Pool2dOptions(Window kernel) : kernel(kernel) {}
  Window kernel;
  llvm::SmallVector<int64_t, 2> strides{1, 1};
  llvm::SmallVector<int64_t, 4> pads{0, 0, 0, 0};
  Padding padding = Padding::Explicit;
  /// PyTorch's ceil_mode: extra padding at the end so that a partial last
  /// window is kept (it must start inside the input or the begin padding).
  bool ceilMode = false;
  /// Average pooling only: count padded positions in the divisor (PyTorch's
  /// F.avg_pool2d default).
  bool countIncludePad = false;

  Pool2dOptions &stride(int64_t s) { return stride(s, s); }
  Pool2dOptions &stride(int64_t sh, int64_t sw) {
    strides = {sh, sw};
    return *this;
  }
  Pool2dOptions &pad(int64_t p) { return pad(p, p, p, p); }
  Pool2dOptions &pad(int64_t ph, int64_t pw) { return pad(ph, pw, ph, pw); }
  Pool2dOptions &pad(int64_t top, int64_t left, int64_t bottom, int64_t right) {
    pads = {top, left, bottom, right};
    padding = Padding::Explicit;
    return *this;
  }
  Pool2dOptions &same() {
    padding = Padding::Same;
    return *this;
  }
  Pool2dOptions &ceil() {
    ceilMode = true;
    return *this;
  }
  Pool2dOptions &includePad() {
    countIncludePad = true;
    return *this;
  }
};

/// Parameter names of a multi-head attention block, relative to the name
/// given to GraphBuilder::attention. The defaults are HuggingFace BERT's
/// (`attention.self.query`, ..., `attention.output.dense`) when the block is
/// called `attention`.
struct AttentionNames {
  std::string query = "self.query";
  std::string key = "self.key";
  std::string value = "self.value";
  std::string output = "output.dense";
};

/// Multi-head self-attention: `numHeads` heads of `hidden / numHeads`.
struct AttentionOptions {
  int64_t numHeads = 1;
  /// Bias on the four projections.
  bool bias = true;
  /// Optional additive mask broadcastable to [batch, heads, seq, seq].
  mlir::Value mask;
  AttentionNames names;
};

/// A transformer encoder layer. Post-norm (BERT: x = LN(x + attn(x)),
/// x = LN(x + ffn(x))) or pre-norm (GPT-2, ViT, CLIP: x = x + attn(LN(x)),
/// x = x + ffn(LN(x))). Parameter names follow HuggingFace's BertLayer
/// (`attention.self.query`, `attention.output.dense`,
/// `attention.output.LayerNorm`, `intermediate.dense`, `output.dense`,
/// `output.LayerNorm`) in both forms.
struct TransformerLayerOptions {
  int64_t numHeads = 12;
  /// Width of the feed-forward hidden layer (BERT: 4 x hidden).
  int64_t ffnDim = 3072;
  Act activation = Act::GeluErf;
  double epsilon = 1e-12;
  bool preNorm = false;
  bool bias = true;
  mlir::Value mask;
};

/// Options of GraphBuilder::mlp: an activation after every layer but the
/// last, `last` after the last one.
struct MlpOptions {
  Act hidden = Act::Relu;
  Act last = Act::None;
  bool bias = true;
};

/// The state of an LSTM cell after one step.
struct LstmState {
  mlir::Value h, c;
};

//===----------------------------------------------------------------------===//
// GraphBuilder
//===----------------------------------------------------------------------===//

/// Builds one module holding a function (`@main` unless named otherwise)
/// of tg ops, or several (nextFunction). Values are ranked, statically shaped tensors; the element type
/// of inputs, weights and constants defaults to f32.
class GraphBuilder {
public:
  /// A builder whose module names `weightsFile` in its `tg.weights`
  /// attribute (no attribute when empty) and whose entry function is
  /// `entryName`. Loads the tg and func dialects into `context`.
  explicit GraphBuilder(mlir::MLIRContext &context,
                        llvm::StringRef weightsFile = "",
                        llvm::StringRef entryName = "main");
  ~GraphBuilder();
  GraphBuilder(const GraphBuilder &) = delete;
  GraphBuilder &operator=(const GraphBuilder &) = delete;

  mlir::MLIRContext *getContext() const { return context; }
  /// The underlying OpBuilder, positioned at the end of the entry function,
  /// for ops this class does not wrap.
  mlir::OpBuilder &getBuilder() { return builder; }
  /// The element type of new inputs, weights and constants (f32 by default).
  mlir::Type getElementType() const { return elementType; }
  void setElementType(mlir::Type type) { elementType = type; }
  /// Sets (or, when empty, removes) the module's `tg.weights` attribute.
  void setWeightsFile(llvm::StringRef weightsFile);

  /// True once any method reported an error.
  bool hadError() const { return hasFailed; }
  /// Emits `message` as an error at the current location, marks the build
  /// failed and returns a null Value, so that model code can say
  ///   if (heads < 1) return b.fail("bad head count");
  mlir::Value fail(const llvm::Twine &message);
  /// The location of ops built now: a NameLoc spelling the current scope.
  mlir::Location loc();

  //===--------------------------------------------------------------------===//
  // Name scopes
  //===--------------------------------------------------------------------===//

  /// Pops its scope when destroyed.
  class [[nodiscard]] Scope {
  public:
    Scope(Scope &&other) : b(other.b) { other.b = nullptr; }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;
    Scope &operator=(Scope &&) = delete;
    ~Scope();

  private:
    friend class GraphBuilder;
    explicit Scope(GraphBuilder *b) : b(b) {}
    GraphBuilder *b;
  };
  /// Pushes `name` (which may contain dots; empty: no change) onto the name
  /// scope until the returned object goes out of scope.
  Scope scope(llvm::StringRef name);
  /// `name` prefixed by the current scope: `layer1.0` + `conv1.weight`.
  std::string qualify(llvm::StringRef name) const;

  //===--------------------------------------------------------------------===//
  // Inputs, parameters and constants
  //===--------------------------------------------------------------------===//

  /// A new function argument named `name` (argument attribute `tg.name`;
  /// not scoped). Names must be unique.
  mlir::Value input(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                    mlir::Type elementType = {});
  /// The parameter `qualify(name)`: a `tg.weight` op, created at its first
  /// use and reused after. Declaring one name with two types is an error.
  mlir::Value weight(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                     mlir::Type elementType = {});
  /// The names of the weights created so far, in creation order.
  llvm::ArrayRef<std::string> getWeightNames() const { return weightOrder; }

  /// A rank-0 constant of the default element type.
  mlir::Value scalar(double value);
  /// A constant of the default (float) element type.
  mlir::Value constant(llvm::ArrayRef<float> values,
                       llvm::ArrayRef<int64_t> shape);
  /// An i64 constant (indices for gather).
  mlir::Value constantI64(llvm::ArrayRef<int64_t> values,
                          llvm::ArrayRef<int64_t> shape);
  /// A constant from an elements attribute.
  mlir::Value constant(mlir::DenseElementsAttr value);

  //===--------------------------------------------------------------------===//
  // Elementwise ops
  //===--------------------------------------------------------------------===//

  mlir::Value add(mlir::Value lhs, mlir::Value rhs);
  mlir::Value sub(mlir::Value lhs, mlir::Value rhs);
  mlir::Value mul(mlir::Value lhs, mlir::Value rhs);
  mlir::Value div(mlir::Value lhs, mlir::Value rhs);
  mlir::Value max(mlir::Value lhs, mlir::Value rhs);
  mlir::Value min(mlir::Value lhs, mlir::Value rhs);
  mlir::Value pow(mlir::Value lhs, mlir::Value rhs);
  /// `x * factor` with a scalar constant.
  mlir::Value scale(mlir::Value x, double factor);

  mlir::Value relu(mlir::Value x);
  mlir::Value sigmoid(mlir::Value x);
  mlir::Value tanh(mlir::Value x);
  mlir::Value exp(mlir::Value x);
  mlir::Value log(mlir::Value x);
  mlir::Value sqrt(mlir::Value x);
  mlir::Value rsqrt(mlir::Value x);
  mlir::Value neg(mlir::Value x);
  mlir::Value erf(mlir::Value x);
  mlir::Value hardswish(mlir::Value x);
  mlir::Value gelu(mlir::Value x, bool tanhApproximation = false);
  mlir::Value clip(mlir::Value x, double min, double max);
  mlir::Value hardsigmoid(mlir::Value x, double alpha = 0.2, double beta = 0.5);
  /// Applies `act` (Act::None: `x` itself) with its parameters
  /// (Activations.def): clip clamps to [alpha, beta], hardsigmoid is
  /// clip(alpha * x + beta, 0, 1), leaky_relu's slope below 0 is alpha.
  mlir::Value activation(mlir::Value x, Act act, double alpha = 0,
                         double beta = 0);
  /// Elementwise conversion to `elementType`.
  mlir::Value cast(mlir::Value x, mlir::Type elementType);

  //===--------------------------------------------------------------------===//
  // Linear algebra, convolution, pooling
  //===--------------------------------------------------------------------===//

  /// Batched matmul with broadcast batch dimensions.
  mlir::Value matmul(mlir::Value lhs, mlir::Value rhs);
  /// NCHW input, OIHW filter.
  mlir::Value conv2d(mlir::Value input, mlir::Value filter,
                     const Conv2dOptions &options = {});
  mlir::Value maxpool2d(mlir::Value input, const Pool2dOptions &options);
  mlir::Value avgpool2d(mlir::Value input, const Pool2dOptions &options);
  /// [N, C, H, W] -> [N, C, 1, 1].
  mlir::Value globalAvgPool(mlir::Value input);

  //===--------------------------------------------------------------------===//
  // Data movement
  //===--------------------------------------------------------------------===//

  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  /// Keeps dims [0, axis) and merges the rest: [N, C, H, W] -> [N, C*H*W].
  mlir::Value flatten(mlir::Value x, int64_t axis = 1);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  mlir::Value concat(mlir::ValueRange inputs, int64_t axis);
  /// One value per size; empty on error.
  llvm::SmallVector<mlir::Value> split(mlir::Value x, int64_t axis,
                                       llvm::ArrayRef<int64_t> sizes);
  /// `strides` empty: all 1.
  mlir::Value slice(mlir::Value x, llvm::ArrayRef<int64_t> starts,
                    llvm::ArrayRef<int64_t> limits,
                    llvm::ArrayRef<int64_t> strides = {});
  /// [start, limit) along one axis, everything along the others.
  mlir::Value sliceAxis(mlir::Value x, int64_t axis, int64_t start,
                        int64_t limit);
  mlir::Value pad(mlir::Value x, llvm::ArrayRef<int64_t> low,
                  llvm::ArrayRef<int64_t> high, double value = 0.0);
  mlir::Value broadcastTo(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value gather(mlir::Value data, mlir::Value indices, int64_t axis = 0);
  /// tg.update_slice: `base` with `update` written along `axis` at the
  /// run-time `offsets` (i64, rank 0 or one per batch row; clamped as the op
  /// defines it). The in-place append of a decoder's cache.
  mlir::Value updateSlice(mlir::Value base, mlir::Value update,
                          mlir::Value offsets, int64_t axis);
  mlir::Value enlarge(mlir::Value filter, Window kernel);

  //===--------------------------------------------------------------------===//
  // Reductions and normalisations
  //===--------------------------------------------------------------------===//

  mlir::Value reduceSum(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                        bool keepDims = true);
  mlir::Value reduceMean(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                         bool keepDims = true);
  mlir::Value reduceMax(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                        bool keepDims = true);
  mlir::Value softmax(mlir::Value x, int64_t axis = -1);
  mlir::Value layernorm(mlir::Value x, mlir::Value scale, mlir::Value bias,
                        int64_t axis = -1, double epsilon = 1e-5);
  /// tg.attention: q [B, Hq, Sq, D] over k, v [B, Hkv, Skv, D] (Hq a
  /// multiple of Hkv), each sequence's live length in \p length (i64 [B] or
  /// rank 0; null: Skv), `scale` (default 1 / sqrt(D)), `causal` as the op
  /// defines it (TGOps.td): the attention of decoder programs, prefill and
  /// decode alike.
  mlir::Value fusedAttention(mlir::Value q, mlir::Value k, mlir::Value v,
                             mlir::Value length = {},
                             std::optional<double> scale = std::nullopt,
                             bool causal = false);
  mlir::Value batchnorm(mlir::Value x, mlir::Value scale, mlir::Value bias,
                        mlir::Value mean, mlir::Value variance,
                        double epsilon = 1e-5);

  //===--------------------------------------------------------------------===//
  // Composites. Each creates its parameters under `name` (in the current
  // scope) and checks its input shape first.
  //===--------------------------------------------------------------------===//

  /// `x @ W + b` on the last dimension: `name.weight` [in, out] (PyTorch's
  /// [out, in] transposed, so that it feeds tg.matmul) and `name.bias`
  /// [out], then `act`.
  mlir::Value linear(mlir::Value x, int64_t in, int64_t out,
                     llvm::StringRef name, Act act = Act::None,
                     bool bias = true);
  /// As above, `in` taken from the last dimension of `x`.
  mlir::Value linear(mlir::Value x, int64_t out, llvm::StringRef name,
                     Act act = Act::None, bool bias = true);
  /// A sequence of linear layers `name.0`, `name.1`, ... of the given
  /// output widths.
  mlir::Value mlp(mlir::Value x, llvm::ArrayRef<int64_t> widths,
                  llvm::StringRef name, const MlpOptions &options = {});
  /// A convolution with its filter `name.weight` [out, C / groups, kh, kw]
  /// (and `name.bias` [out] when `bias`).
  mlir::Value conv(mlir::Value x, int64_t outChannels, Window kernel,
                   llvm::StringRef name, Conv2dOptions options = {},
                   bool bias = false);
  /// Inference batchnorm with `name.{weight,bias,running_mean,running_var}`
  /// (torchvision's names).
  mlir::Value batchNorm(mlir::Value x, llvm::StringRef name,
                        double epsilon = 1e-5);
  /// Layer normalisation over the last dimension with `name.weight` and
  /// `name.bias`.
  mlir::Value layerNorm(mlir::Value x, llvm::StringRef name,
                        double epsilon = 1e-5);
  /// conv (no bias) + batchNorm + relu (when `relu`), torchvision-style:
  /// the convolution is `convName`, the batchnorm `bnName`.
  mlir::Value convBnRelu(mlir::Value x, int64_t outChannels, Window kernel,
                         llvm::StringRef convName, llvm::StringRef bnName,
                         Conv2dOptions options = {}, bool relu = true,
                         double epsilon = 1e-5);
  /// Looks up rows of `name.weight` [vocab, dim] by the integer `ids`.
  mlir::Value embedding(mlir::Value ids, int64_t vocab, int64_t dim,
                        llvm::StringRef name);
  /// Multi-head self-attention on x [batch, seq, hidden], with the output
  /// projection: softmax(Q K^T / sqrt(d) + mask) V, heads merged, projected.
  mlir::Value attention(mlir::Value x, llvm::StringRef name,
                        const AttentionOptions &options);
  /// A transformer encoder layer on x [batch, seq, hidden].
  mlir::Value transformerLayer(mlir::Value x, llvm::StringRef name,
                               const TransformerLayerOptions &options);
  /// One LSTM step (PyTorch's gate order i, f, g, o): `name.weight_ih`
  /// [in, 4H], `name.weight_hh` [H, 4H], `name.bias` [4H].
  LstmState lstmCell(mlir::Value x, LstmState state, int64_t hidden,
                     llvm::StringRef name);
  /// One Elman RNN step h' = act(x W_ih + h W_hh + b) with `name.weight_ih`
  /// [in, H], `name.weight_hh` [H, H], `name.bias` [H].
  mlir::Value rnnCell(mlir::Value x, mlir::Value h, int64_t hidden,
                      llvm::StringRef name, Act act = Act::Tanh);

  //===--------------------------------------------------------------------===//
  // Finishing
  //===--------------------------------------------------------------------===//

  /// Ties `input`, an input of the current function, to its output named
  /// `outputName`: the argument attribute `tg.tied_result` (the artifact
  /// updates the input in place and keeps it as state), set when the
  /// function is ended. An output of that name must be returned.
  void tie(mlir::Value input, llvm::StringRef outputName);
  /// Ends the current function as `finish` does, without handing the module
  /// over, and starts a new one named `name` in the same module, where the
  /// next ops are built: a module of several entries (a decoder's `prefill`
  /// and `decode`). Inputs, ties and the cache of weights are per function;
  /// a weight name read in two functions is one weight of the module.
  /// Returns false when the build has failed.
  bool nextFunction(llvm::StringRef name, mlir::ValueRange outputs,
                    llvm::ArrayRef<llvm::StringRef> names = {});

  /// Returns `outputs` from the entry function (result attribute `tg.name`
  /// from `names` when given, one per output), verifies the module and hands
  /// it over. Fails, with the diagnostics already emitted, when any method
  /// reported an error or the module does not verify. The builder cannot be
  /// used afterwards.
  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
  finish(mlir::ValueRange outputs, llvm::ArrayRef<llvm::StringRef> names = {});

private:
  /// Checks that no operand is null and each is a static ranked tensor;
  /// reports the first problem (unless an error was reported before).
  bool ready(llvm::ArrayRef<mlir::Value> operands, llvm::StringRef op);
  /// Reports that composite `what` cannot be built: "what 'scope':
  /// message", the scope being the composite's. Returns null.
  mlir::Value failComposite(llvm::StringRef what, const llvm::Twine &message);
  /// failComposite for a bad input: "the input is <shape>, expected
  /// <expected>".
  mlir::Value failInputShape(llvm::StringRef what,
                             llvm::ArrayRef<int64_t> shape,
                             const llvm::Twine &expected);
  /// Whether an op's shape rule accepted its operands (`inference` is its
  /// result); a rejection, which the rule has reported, fails the builder.
  bool ruleAccepts(mlir::LogicalResult inference);
  /// Verifies a just-built op; erases it and fails on error.
  mlir::Value check(mlir::Operation *op);
  template <typename OpTy> mlir::Value unary(mlir::Value x);
  template <typename OpTy> mlir::Value binary(mlir::Value lhs, mlir::Value rhs);
  template <typename OpTy>
  mlir::Value reduce(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                     bool keepDims);
  template <typename OpTy>
  mlir::Value pool(mlir::Value input, const Pool2dOptions &options);
  /// The padding that `padding` asks for on an [N, C, H, W] input.
  llvm::SmallVector<int64_t, 4>
  resolvePads(mlir::Value input, Window kernel, llvm::ArrayRef<int64_t> strides,
              llvm::ArrayRef<int64_t> dilations, Padding padding,
              llvm::ArrayRef<int64_t> pads, bool ceilMode);
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type elementType = {});
  void popScope();
  /// Returns `outputs` from the current function and sets its type and
  /// argument and result attributes (names, ties). False on error.
  bool endFunction(mlir::ValueRange outputs, llvm::ArrayRef<llvm::StringRef> names);

  mlir::MLIRContext *context;
  mlir::OpBuilder builder;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp entry;
  mlir::Type elementType;
  llvm::SmallVector<std::string> scopes;
  llvm::StringMap<mlir::Value> weights;
  std::vector<std::string> weightOrder;
  llvm::StringMap<unsigned> inputNames;
  /// Inputs of the current function tied to outputs (by output name).
  llvm::SmallVector<std::pair<unsigned, std::string>> ties;
  std::string entryName;
  bool hasFailed = false;
  bool finished = false;
};

//===----------------------------------------------------------------------===//
// Writers
//===----------------------------------------------------------------------===//

/// Prints `module` as MLIR text to `path` ("-": standard output), after the
/// `header` lines (each written as a `//` comment).
mlir::LogicalResult writeModule(mlir::ModuleOp module, llvm::StringRef path,
                                llvm::StringRef header = "");

/// Writes a random tensor for every tg.weight of `module` to the safetensors
/// file `path` (see tg::writeRandomWeights: fan-in scaled, deterministic for
/// a seed).
mlir::LogicalResult writeRandomWeights(mlir::ModuleOp module,
                                       llvm::StringRef path, uint64_t seed);

/// Counts the ops of `module` by name (`tg.conv` -> 53), for statistics.
llvm::StringMap<unsigned> countOps(mlir::ModuleOp module);

} // namespace loom

#endif // LOOM_BUILDER_GRAPHBUILDER_H
