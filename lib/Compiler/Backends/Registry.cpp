//===- Registry.cpp - The backend registry and shared pattern helpers -----===//
//
// Part of Loom. See Backend.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Backend.h"
#include "loom/Dialect/TG/IR/TGActivation.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

Backend::~Backend() = default;

void Backend::candidates(Operation *anchor, Available available,
                         SmallVectorImpl<LibraryCall> &out) const {
  size_t first = out.size();
  collectCandidates(anchor, available, out);
  for (LibraryCall &call : llvm::drop_begin(out, first))
    call.backend = this;
}

std::string LibraryCall::pattern() const {
  std::string name;
  for (Operation *op : ops) {
    if (!name.empty())
      name += "+";
    StringRef opName = op->getName().stripDialect();
    if (op != anchor && op->getName().getStringRef() == "tg.add")
      name += sum ? "sum" : bias ? "bias" : "add";
    else
      name += opName;
  }
  if (auto conv = dyn_cast<tg::ConvOp>(anchor);
      conv && conv.getActivation() != tg::Activation::None)
    name += "(" + tg::stringifyActivation(conv.getActivation()).str() + ")";
  return name;
}

//===----------------------------------------------------------------------===//
// BackendRegistry
//===----------------------------------------------------------------------===//

const BackendRegistry &BackendRegistry::builtin() {
  static const BackendRegistry registry = [] {
    BackendRegistry r;
    r.add(createCodegenBackend());
    r.add(createOneDNNBackend());
    r.add(createOpenBLASBackend());
    r.add(createLoomrtBackend());
    r.setDefaultList("conv:onednn,matmul:onednn,loomrt");
    return r;
  }();
  return registry;
}

const BackendRegistry *BackendRegistry::forDevice(StringRef kind) {
  if (kind == "cpu")
    return &builtin();
  // A GPU's default list is generated code and the runtime's world steps
  // (loomrt: tg.world_rank, tg.all_gather); its library backends are chosen
  // by --backends (a list, or auto: placement on a roofline).
  static const BackendRegistry cuda = [] {
    BackendRegistry r;
    r.add(createCodegenBackend("cuda"));
    r.add(createCuBLASBackend());
    r.add(createCuDNNBackend());
    r.add(createLoomrtBackend("cuda"));
    r.setDefaultList("loomrt,codegen");
    return r;
  }();
  static const BackendRegistry vulkan = [] {
    BackendRegistry r;
    r.add(createCodegenBackend("vulkan"));
    r.add(createLoomrtBackend("vulkan"));
    r.setDefaultList("loomrt,codegen");
    return r;
  }();
  if (kind == "cuda")
    return &cuda;
  if (kind == "vulkan")
    return &vulkan;
  return nullptr;
}

void BackendRegistry::add(std::unique_ptr<Backend> backend) {
  if (lookup(backend->name()))
    llvm::report_fatal_error("backend '" + backend->name() +
                             "' registered twice");
  if (backend->generatesCode() && codeGenerator())
    llvm::report_fatal_error("backend '" + backend->name() +
                             "' generates code, and '" +
                             codeGenerator()->name() + "' already does");
  backends.push_back(std::move(backend));
}

void BackendRegistry::replace(std::unique_ptr<Backend> backend) {
  for (auto &b : backends)
    if (b->name() == backend->name()) {
      b = std::move(backend);
      return;
    }
  add(std::move(backend));
}

const Backend *BackendRegistry::lookup(StringRef name) const {
  for (const auto &b : backends)
    if (b->name() == name)
      return b.get();
  return nullptr;
}

const Backend *BackendRegistry::codeGenerator() const {
  for (const auto &b : backends)
    if (b->generatesCode())
      return b.get();
  return nullptr;
}

/// "unknown backend 'x' (registered: a, b, c)".
static llvm::Error unknownBackend(const BackendRegistry &registry,
                                  StringRef name) {
  std::string known;
  for (const auto &b : registry.all())
    known += (known.empty() ? "" : ", ") + b->name().str();
  return llvm::createStringError("unknown backend '" + name +
                                 "' (registered: " + known + ")");
}

llvm::Expected<std::vector<const Backend *>>
BackendRegistry::parseList(StringRef list) const {
  std::vector<const Backend *> out;
  SmallVector<StringRef> names;
  list.split(names, ',', -1, /*KeepEmpty=*/false);
  for (StringRef name : names) {
    const Backend *backend = lookup(name.trim());
    if (!backend)
      return unknownBackend(*this, name.trim());
    out.push_back(backend);
  }
  return out;
}

/// The ops of a class (the anchors a class entry gives to its backend);
/// empty for every op.
static ArrayRef<StringRef> opsOf(OpClass ops) {
  static const StringRef kConv[] = {
      tg::ConvOp::getOperationName(), tg::MaxPoolOp::getOperationName(),
      tg::AvgPoolOp::getOperationName(),
      tg::GlobalAvgPoolOp::getOperationName(),
      tg::ConcatOp::getOperationName(), tg::AddOp::getOperationName(),
      tg::MulOp::getOperationName()};
  static const StringRef kMatmul[] = {tg::MatmulOp::getOperationName()};
  switch (ops) {
  case OpClass::Any:
    return {};
  case OpClass::Conv:
    return kConv;
  case OpClass::Matmul:
    return kMatmul;
  }
  llvm_unreachable("unknown op class");
}

bool BackendChoice::covers(Operation *op) const {
  ArrayRef<StringRef> names = opsOf(ops);
  return names.empty() || llvm::is_contained(names, op->getName().getStringRef());
}

llvm::Expected<std::vector<BackendChoice>>
BackendRegistry::parseChoices(StringRef list) const {
  std::vector<BackendChoice> out;
  SmallVector<StringRef> entries;
  list.split(entries, ',', -1, /*KeepEmpty=*/false);
  for (StringRef entry : entries) {
    auto [head, tail] = entry.trim().split(':');
    BackendChoice choice;
    StringRef name = head.trim();
    if (!tail.empty() || entry.contains(':')) {
      std::optional<OpClass> ops =
          llvm::StringSwitch<std::optional<OpClass>>(head.trim())
              .Case("conv", OpClass::Conv)
              .Case("matmul", OpClass::Matmul)
              .Default(std::nullopt);
      if (!ops)
        return llvm::createStringError(
            "unknown op class '" + head.trim() + "' in '" + entry.trim() +
            "' (classes: conv, matmul)");
      choice.ops = *ops;
      name = tail.trim();
    }
    choice.backend = lookup(name);
    if (!choice.backend)
      return unknownBackend(*this, name);
    std::vector<StringRef> anchors = choice.backend->anchorOps();
    if (choice.ops != OpClass::Any && !choice.backend->generatesCode() &&
        llvm::none_of(opsOf(choice.ops), [&](StringRef op) {
          return llvm::is_contained(anchors, op);
        }))
      return llvm::createStringError("'" + entry.trim() + "': " + name +
                                     " runs no " + head.trim() + " op");
    out.push_back(choice);
  }
  return out;
}

std::string BackendRegistry::spellList(StringRef conv,
                                       StringRef matmul) const {
  std::string list;
  if (!conv.empty())
    list += ("conv:" + conv + ",").str();
  if (!matmul.empty())
    list += ("matmul:" + matmul + ",").str();
  return list + defaults;
}

std::optional<LibraryCall> BackendRegistry::match(Operation *anchor,
                                                  const Backend &backend,
                                                  Available available) const {
  SmallVector<LibraryCall> calls;
  backend.candidates(anchor, available, calls);
  if (calls.empty())
    return std::nullopt;
  return calls.front();
}

std::optional<LibraryCall>
BackendRegistry::matchFragment(tg::FragmentOp fragment) const {
  const Backend *backend = lookup(fragment.getBackend());
  Block &body = fragment.getBody().front();
  if (!backend || body.empty() || &body.front() == body.getTerminator())
    return std::nullopt;
  auto ops = llvm::map_to_vector(body.without_terminator(),
                                 [](Operation &op) { return &op; });
  SmallVector<LibraryCall> calls;
  backend->candidates(&body.front(), nullptr, calls);
  for (LibraryCall &call : calls)
    if (ops == ArrayRef<Operation *>(call.ops) &&
        body.getTerminator()->getOperands() == call.ops.back()->getResults())
      return call;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Shared pattern helpers
//===----------------------------------------------------------------------===//

bool patterns::isF32(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

bool patterns::allF32(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), isF32) &&
         llvm::all_of(op->getResultTypes(), isF32);
}

bool patterns::isElementwise(Operation *op) {
  return op->hasTrait<tg::Elementwise>();
}

Operation *patterns::soleUser(Value v, Available available) {
  if (!v.hasOneUse())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  return !available || available(user) ? user : nullptr;
}

std::optional<double> patterns::splatOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto fragment =
            dyn_cast_or_null<tg::FragmentOp>(arg.getOwner()->getParentOp()))
      v = fragment.getInputs()[arg.getArgNumber()];
  auto c = v.getDefiningOp<tg::ConstantOp>();
  auto dense = c ? dyn_cast<DenseFPElementsAttr>(c.getValue()) : nullptr;
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// The leaky ReLU the importer spells (lib/Conversion/ONNXToTG/
/// Elementwise.cpp, leakyRelu): sub(relu(x), mul(alpha, relu(neg(x)))) with
/// a finite splat alpha, ending at \p sub.
struct LeakyRelu {
  SmallVector<Operation *, 5> ops; ///< in block order
  double alpha;
};
static std::optional<LeakyRelu> leakyReluOf(tg::SubOp sub) {
  auto pos = sub.getLhs().getDefiningOp<tg::ReluOp>();
  auto mul = sub.getRhs().getDefiningOp<tg::MulOp>();
  if (!pos || !mul || !pos->hasOneUse() || !mul->hasOneUse())
    return std::nullopt;
  for (Value o : {mul.getLhs(), mul.getRhs()}) {
    auto alpha = patterns::splatOf(o == mul.getLhs() ? mul.getRhs() : mul.getLhs());
    auto negRelu = o.getDefiningOp<tg::ReluOp>();
    auto neg = negRelu ? negRelu.getInput().getDefiningOp<tg::NegOp>()
                       : tg::NegOp();
    if (!neg || !negRelu->hasOneUse() || !neg->hasOneUse() ||
        neg.getInput() != pos.getInput() || !alpha || !std::isfinite(*alpha))
      continue;
    LeakyRelu leaky{{pos, neg, negRelu, mul, sub}, *alpha};
    llvm::sort(leaky.ops, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return leaky;
  }
  return std::nullopt;
}

std::optional<patterns::PostOpActivation> patterns::activationOf(Operation *op) {
  if (!op || !allF32(op))
    return std::nullopt;
  if (isa<tg::ReluOp>(op))
    return PostOpActivation{Activation::Relu};
  if (isa<tg::SigmoidOp>(op))
    return PostOpActivation{Activation::Sigmoid};
  if (isa<tg::TanhOp>(op))
    return PostOpActivation{Activation::Tanh};
  if (auto gelu = dyn_cast<tg::GeluOp>(op))
    return PostOpActivation{gelu.getTanhApproximation() ? Activation::GeluTanh
                                                         : Activation::GeluErf};
  if (isa<tg::HardSwishOp>(op))
    return PostOpActivation{Activation::HardSwish};
  // Finite parameters only: the manifest is JSON, which has no infinities
  // (a one-sided clip, max(x, lo), stays a generated kernel).
  if (auto clip = dyn_cast<tg::ClipOp>(op);
      clip && std::isfinite(clip.getMin().convertToDouble()) &&
      std::isfinite(clip.getMax().convertToDouble()))
    return PostOpActivation{Activation::Clip, clip.getMin().convertToDouble(),
                            clip.getMax().convertToDouble()};
  if (auto hs = dyn_cast<tg::HardSigmoidOp>(op);
      hs && std::isfinite(hs.getAlpha().convertToDouble()) &&
      std::isfinite(hs.getBeta().convertToDouble()))
    return PostOpActivation{Activation::HardSigmoid, hs.getAlpha().convertToDouble(),
                            hs.getBeta().convertToDouble()};
  if (auto mul = dyn_cast<tg::MulOp>(op)) {
    Value a = mul.getLhs(), b = mul.getRhs();
    auto isSigmoidOf = [](Value s, Value x) {
      auto sigmoid = s.getDefiningOp<tg::SigmoidOp>();
      return sigmoid && sigmoid.getInput() == x;
    };
    if (a.getType() == b.getType() && (isSigmoidOf(a, b) || isSigmoidOf(b, a)))
      return PostOpActivation{Activation::Swish};
  }
  if (auto sub = dyn_cast<tg::SubOp>(op))
    if (auto leaky = leakyReluOf(sub))
      return PostOpActivation{Activation::LeakyRelu, leaky->alpha};
  return std::nullopt;
}

std::optional<patterns::ActivationChain>
patterns::compoundActivationOf(Value v, Available available) {
  SmallVector<Operation *> users(v.getUsers());
  if (users.size() != 2 || users[0] == users[1])
    return std::nullopt;
  auto joins = [&](ArrayRef<Operation *> ops) {
    return !available || llvm::all_of(ops, available);
  };
  for (int i = 0; i < 2; ++i) {
    // swish: sigmoid(v) used only by mul(v, sigmoid(v)).
    if (Operation *sigmoid = users[i]; isa<tg::SigmoidOp>(sigmoid)) {
      Operation *mul = users[1 - i];
      auto act = activationOf(mul);
      if (sigmoid->hasOneUse() && *sigmoid->getUsers().begin() == mul &&
          act && act->kind == Activation::Swish && joins({sigmoid, mul}))
        return ActivationChain{{sigmoid, mul}, *act};
    }
    // leaky ReLU: relu(v) and neg(v), meeting in one sub.
    if (auto relu = dyn_cast<tg::ReluOp>(users[i]);
        relu && relu->hasOneUse() && isa<tg::NegOp>(users[1 - i])) {
      auto sub = dyn_cast<tg::SubOp>(*relu->getUsers().begin());
      auto leaky = sub ? leakyReluOf(sub) : std::nullopt;
      if (leaky && llvm::is_contained(leaky->ops, users[1 - i]) &&
          joins(leaky->ops))
        return ActivationChain{leaky->ops, {Activation::LeakyRelu, leaky->alpha}};
    }
  }
  return std::nullopt;
}

void patterns::growActivation(LibraryCall &call, Available available,
                              llvm::function_ref<bool(Activation)> takes) {
  Value out = call.ops.back()->getResult(0);
  Operation *user = soleUser(out, available);
  auto set = [&](const PostOpActivation &act) {
    call.activation = act.kind;
    call.alpha = act.alpha;
    call.beta = act.beta;
  };
  auto taken = [&](Activation kind) { return !takes || takes(kind); };
  if (auto act = activationOf(user);
      act && act->kind != Activation::Swish &&
      act->kind != Activation::LeakyRelu) {
    if (!taken(act->kind))
      return;
    set(*act);
    call.ops.push_back(user);
  } else if (auto chain = compoundActivationOf(out, available);
             chain && taken(chain->activation.kind)) {
    set(chain->activation);
    call.ops.append(chain->ops.begin(), chain->ops.end());
  }
}

Value patterns::addendOf(Operation *op, Value v) {
  auto add = dyn_cast_or_null<tg::AddOp>(op);
  if (!add || add.getType() != v.getType() || add.getLhs() == add.getRhs())
    return {};
  return add.getLhs() == v ? add.getRhs() : add.getLhs();
}

bool patterns::isRowBias(Value bias, RankedTensorType result) {
  auto type = dyn_cast<RankedTensorType>(bias.getType());
  if (!type || !isF32(type) || type.getRank() < 1 ||
      type.getRank() > result.getRank() ||
      type.getShape().back() != result.getShape().back())
    return false;
  return llvm::all_of(type.getShape().drop_back(),
                      [](int64_t d) { return d == 1; });
}

std::string patterns::libraryElementType(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  return "";
}

bool patterns::appendWidening(LibraryCall &call, Available available) {
  Value out = call.ops.back()->getResult(0);
  Type elem = cast<ShapedType>(out.getType()).getElementType();
  auto widen = dyn_cast_or_null<tg::CastOp>(soleUser(out, available));
  if (!widen || !(elem.isBF16() || elem.isF16()) ||
      !widen.getType().getElementType().isF32())
    return false;
  call.ops.push_back(widen);
  return true;
}

LibraryCall patterns::matmulWithBias(tg::MatmulOp matmul, Available available,
                                     bool widen) {
  LibraryCall call;
  call.anchor = matmul;
  call.ops.push_back(matmul);
  if (widen)
    appendWidening(call, available);
  Value out = call.ops.back()->getResult(0);
  Operation *add = soleUser(out, available);
  if (Value other = addendOf(add, out);
      other && isRowBias(other, cast<RankedTensorType>(out.getType()))) {
    call.bias = other;
    call.ops.push_back(add);
  }
  return call;
}

void patterns::addPrefixes(const LibraryCall &longest,
                           SmallVectorImpl<LibraryCall> &out) {
  Activation ownActivation = Activation::None;
  if (auto conv = dyn_cast<tg::ConvOp>(longest.anchor))
    ownActivation = tg::toActivation(conv.getActivation());
  for (size_t n = longest.ops.size(); n >= 1; --n) {
    LibraryCall call = longest;
    call.ops.resize(n);
    bool hasAdd =
        llvm::any_of(ArrayRef(call.ops).drop_front(),
                     [](Operation *op) { return isa<tg::AddOp>(op); });
    if (!hasAdd) {
      call.sum = {};
      if (!isa<tg::ConvOp>(call.anchor))
        call.bias = {};
    }
    if (!llvm::any_of(ArrayRef(call.ops).drop_front(), [](Operation *op) {
          return isa<tg::DivOp, tg::MulOp>(op);
        }))
      call.scale = 1;
    // Every op but the last is used inside the prefix only (swish's
    // sigmoid without its mul leaves the op before it used outside).
    bool escapes = llvm::any_of(
        ArrayRef(call.ops).drop_back(), [&](Operation *op) {
          return llvm::any_of(op->getUsers(), [&](Operation *user) {
            return !llvm::is_contained(call.ops, user);
          });
        });
    if (escapes)
      continue;
    Operation *last = call.ops.back();
    auto act = last != call.anchor ? activationOf(last) : std::nullopt;
    call.activation = act ? act->kind : ownActivation;
    call.alpha = act ? act->alpha : 0;
    call.beta = act ? act->beta : 0;
    out.push_back(std::move(call));
  }
}

double patterns::rooflineSeconds(ArrayRef<Operation *> ops,
                                 const cost::RooflineTarget &target,
                                 double efficiency, bool tensorCores) {
  llvm::SmallPtrSet<Operation *, 8> inside(ops.begin(), ops.end());
  double compute = 0, bytes = 0;
  llvm::SetVector<Value> inputs;
  for (Operation *op : ops) {
    double peak = cost::peakFlopsOf(op, target, tensorCores);
    if (peak > 0)
      compute += cost::workOf(op).flops / (peak * efficiency);
    for (Value v : op->getOperands())
      if (!inside.count(v.getDefiningOp()))
        inputs.insert(v);
  }
  auto sizeOf = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape())
      return 0.0;
    return double(type.getNumElements()) *
           std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  };
  for (Value v : inputs)
    bytes += sizeOf(v);
  for (Value v : ops.back()->getResults())
    bytes += sizeOf(v);
  double memory = target.memBandwidth > 0 ? bytes / target.memBandwidth : 0;
  return std::max(compute, memory) + target.launchOverhead;
}
