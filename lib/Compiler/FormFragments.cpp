//===- FormFragments.cpp - Group tg ops into backend fragments ------------===//
//
// Part of Loom. See the description of TGFormFragments in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/Fragments.h"
#include "loom/Compiler/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"

namespace loom::compiler {
#define GEN_PASS_DEF_TGFORMFRAGMENTS
#include "loom/Compiler/Passes.h.inc"
} // namespace loom::compiler

using namespace mlir;
using namespace loom;
using namespace loom::compiler;

bool compiler::staysOutside(Operation *op) {
  // Ops with regions (fragments, tg.if) and ops that compute nothing
  // (weights, reshapes: metadata), by their computation class
  // (TGTraits.td); constants compute nothing too but are placed (small
  // ones copied into the fragments that use them, large ones stored).
  bool computesNothing = op->hasTrait<tg::ComputesNothing>() &&
                         !isa<tg::ConstantOp>(op);
  return op->hasTrait<tg::ComputesInRegions>() || computesNothing ||
         op->hasTrait<OpTrait::IsTerminator>() ||
         !isa<tg::TGDialect>(op->getDialect()) ||
         op->getParentOfType<tg::FragmentOp>();
}

namespace {

/// Constants up to this many elements are copied into the fragments that
/// use them (a kernel then sees a compile-time constant); larger ones stay
/// outside and are stored with the weights.
constexpr int64_t kInlineConstantElements = 1024;

bool isSmallConstant(Operation *op) {
  auto constant = dyn_cast_or_null<tg::ConstantOp>(op);
  return constant &&
         constant.getType().getNumElements() <= kInlineConstantElements;
}

using patterns::isElementwise;

/// Ops fused like elementwise ones: every result element is computed on its
/// own, at its own index. A gather reads its data anywhere but computes
/// each element from the index at the same position, so the loop over its
/// result takes elementwise consumers and feeds a reduction (RoiAlign's
/// taps, weighted, summed and averaged in one kernel rather than one
/// kernel and one stored tensor per tap). A group with a gather takes no
/// other heavy op than a reduction of what it computes (see tryFuse).
bool fusesLikeElementwise(Operation *op) {
  return isElementwise(op) || isa<tg::GatherOp>(op);
}

bool isReduction(Operation *op) {
  return isa<tg::ReduceSumOp, tg::ReduceMeanOp, tg::ReduceMaxOp>(op);
}

/// Groups the ops of one block (see formFragments).
class FragmentFormer {
public:
  void run(Block &block, FragmentChooser choose);

private:
  /// The groups being formed: ops of one class go into one fragment.
  llvm::EquivalenceClasses<Operation *> groups;
  /// The backend generated groups go to.
  const Backend &codeGenerator;
  /// Library groups, keyed by their leader, with their backend.
  llvm::DenseMap<Operation *, const Backend *> libraryLeader;
  /// Number of non-elementwise ops per generated group leader.
  llvm::DenseMap<Operation *, unsigned> heavyOps;
  /// The leaders of generated groups whose values other than the last
  /// member's have users outside (a narrowing cast joined them: tryFuse's
  /// sharedProducer): any later join must still be placeable before them.
  llvm::DenseSet<Operation *> sharedLeaders;

  void formChosenGroups(Block &block, FragmentChooser choose);
  void formCodegenGroups(Block &block);
  void groupIndependentScans(Block &block);
  /// The ops of \p leader's group, in block order.
  SmallVector<Operation *> membersOf(Block &block, Operation *leader);
  bool tryFuse(Operation *producer, Operation *consumer,
               bool sharedProducer = false);
  /// Whether \p consumer's and \p leader's groups join as a product and a
  /// transpose it takes in place (the code generator's
  /// Backend::productsTakeTransposes): \p consumer a tg.matmul and
  /// \p leader's group transposes with elementwise ops between (an operand
  /// read through the permutation, a --precision cast on the way), or
  /// \p consumer a tg.transpose of \p leader's group's result, one product
  /// with elementwise ops (a result written through it).
  bool takesTranspose(Operation *consumer, Operation *leader);
  /// Whether every user of \p members' results that is not one of them
  /// comes after the last of them in \p block (the fragment is placed
  /// there).
  bool placeableTogether(Block &block, ArrayRef<Operation *> members);
  void outline(ArrayRef<Operation *> ops, const Backend &backend);

public:
  explicit FragmentFormer(const Backend &codeGenerator)
      : codeGenerator(codeGenerator) {}
};

void FragmentFormer::formChosenGroups(Block &block, FragmentChooser choose) {
  for (Operation &op : block) {
    if (staysOutside(&op) || groups.contains(&op))
      continue;
    auto unclaimed = [&](Operation *user) {
      return user->getBlock() == &block && !groups.contains(user) &&
             !staysOutside(user);
    };
    std::optional<LibraryCall> call = choose(&op, unclaimed);
    if (!call)
      continue;
    groups.insert(call->ops.front());
    for (Operation *member : call->ops)
      groups.unionSets(call->ops.front(), member);
    Operation *leader = groups.getLeaderValue(call->ops.front());
    if (!call->backend->generatesCode())
      libraryLeader[leader] = call->backend;
    else
      heavyOps[leader] = llvm::count_if(
          call->ops, [](Operation *member) { return !isElementwise(member); });
  }
}

/// Whether \p op rounds an f32 tensor to bf16 or f16 (the cast before a
/// --precision product, docs/Precision.md).
bool isNarrowingCast(Operation *op) {
  auto cast = dyn_cast<tg::CastOp>(op);
  if (!cast)
    return false;
  Type from = getElementTypeOrSelf(cast->getOperand(0).getType());
  Type to = getElementTypeOrSelf(cast->getResult(0).getType());
  return from.isF32() && (to.isBF16() || to.isF16());
}

bool FragmentFormer::placeableTogether(Block &block,
                                       ArrayRef<Operation *> members) {
  llvm::SmallPtrSet<Operation *, 16> own(members.begin(), members.end());
  Operation *last = members.front();
  for (Operation *member : members)
    if (last->isBeforeInBlock(member))
      last = member;
  for (Operation *member : members)
    for (Operation *user : member->getUsers()) {
      Operation *at = block.findAncestorOpInBlock(*user);
      if (at && !own.contains(at) && !last->isBeforeInBlock(at))
        return false;
    }
  return true;
}

bool FragmentFormer::takesTranspose(Operation *consumer, Operation *leader) {
  if (!codeGenerator.productsTakeTransposes())
    return false;
  unsigned transposes = 0, products = 0;
  for (Operation *member : groups.members(leader)) {
    if (isa<tg::TransposeOp>(member))
      ++transposes;
    else if (isa<tg::MatmulOp>(member))
      ++products;
    else if (!isElementwise(member))
      return false;
  }
  if (isa<tg::MatmulOp>(consumer))
    return transposes > 0 && products == 0;
  return isa<tg::TransposeOp>(consumer) && products == 1;
}

/// Fuses the single-use \p producer's group into \p consumer's when the
/// result is a codegen group with at most one op that is not elementwise.
/// With \p sharedProducer the producer's result may have other users: the
/// joined fragment then yields it too, and must still come before them.
bool FragmentFormer::tryFuse(Operation *producer, Operation *consumer,
                             bool sharedProducer) {
  if (!producer || staysOutside(producer) || isSmallConstant(producer) ||
      isa<tg::ConstantOp>(producer) || !groups.contains(producer))
    return false;
  Operation *p = groups.getLeaderValue(producer);
  Operation *c = groups.getLeaderValue(consumer);
  if (p == c || libraryLeader.count(p) || libraryLeader.count(c))
    return false;
  // The producer group's only result must be used only by the consumer,
  // or (shared) the joined group must be placeable before its other users.
  for (Value v : producer->getResults())
    for (Operation *user : v.getUsers())
      if (user != consumer && !sharedProducer)
        return false;
  bool shared = sharedProducer || sharedLeaders.count(p) ||
                sharedLeaders.count(c);
  if (shared) {
    SmallVector<Operation *> joined = membersOf(*consumer->getBlock(), p);
    llvm::append_range(joined, membersOf(*consumer->getBlock(), c));
    if (!placeableTogether(*consumer->getBlock(), joined))
      return false;
  }
  // A transpose a product takes counts for nothing beside it.
  bool view = takesTranspose(consumer, p);
  if (!view && heavyOps.lookup(p) + heavyOps.lookup(c) > 1)
    return false;
  // Gathers join no other heavy op than a reduction they feed (a
  // transpose or a product has loops of its own that a gather would slow).
  auto any = [&](Operation *leader, auto pred) {
    return llvm::any_of(groups.members(leader), pred);
  };
  auto gather = [](Operation *op) { return isa<tg::GatherOp>(op); };
  auto notElementwise = [](Operation *op) {
    return !fusesLikeElementwise(op);
  };
  auto otherHeavy = [](Operation *op) {
    return !fusesLikeElementwise(op) && !isReduction(op);
  };
  if ((any(p, gather) && any(c, otherHeavy)) ||
      (any(c, gather) && any(p, notElementwise)))
    return false;
  unsigned heavy =
      view ? heavyOps.lookup(c) : heavyOps.lookup(p) + heavyOps.lookup(c);
  groups.unionSets(p, c);
  heavyOps[groups.getLeaderValue(c)] = heavy;
  if (shared)
    sharedLeaders.insert(groups.getLeaderValue(c));
  return true;
}

void FragmentFormer::formCodegenGroups(Block &block) {
  for (Operation &op : block) {
    if (staysOutside(&op) || isa<tg::ConstantOp>(op))
      continue;
    if (!groups.contains(&op)) {
      groups.insert(&op);
      heavyOps[&op] = fusesLikeElementwise(&op) ? 0 : 1;
    } else if (libraryLeader.count(groups.getLeaderValue(&op))) {
      continue;
    }
    // Fuse single-use producers: elementwise ones into anything (prologue),
    // anything into an elementwise consumer (epilogue). A TF32 rounding
    // takes no producer: it joins the product reading it, whose kernel
    // rounds the operand as it loads it and so knows it may multiply on
    // tensor cores (docs/Precision.md, "TF32"); a rounded value written
    // by another kernel is an f32 value like any other.
    bool takesProducers = !isa<tg::RoundTF32Op>(op);
    for (Value operand : takesProducers ? op.getOperands() : ValueRange()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || !operand.hasOneUse())
        continue;
      if (fusesLikeElementwise(producer) || isElementwise(&op) ||
          isa<tg::MatmulOp, tg::TransposeOp>(op))
        tryFuse(producer, &op);
    }
    // A cast to a narrow type (a --precision product's input) joins the
    // group computing its operand even where that value has other users (a
    // layer norm's output that the residual sum reads too): one kernel
    // writes both, rather than a launch that reads the value again to
    // round it.
    if (isNarrowingCast(&op))
      tryFuse(op.getOperand(0).getDefiningOp(), &op, /*sharedProducer=*/true);
  }
}

SmallVector<Operation *> FragmentFormer::membersOf(Block &block,
                                                  Operation *leader) {
  SmallVector<Operation *> members;
  for (Operation &op : block)
    if (groups.contains(&op) && groups.getLeaderValue(&op) == leader)
      members.push_back(&op);
  return members;
}

/// Puts recurrences that are independent of each other (tg.scan ops in
/// generated groups, neither reading what the other's group computes: the
/// two directions of a bidirectional layer) into one group, so that their
/// kernel holds both loops and loom-forall-to-range runs each on a thread
/// of its own. Two groups join only where the joined fragment, placed
/// after its last op, still comes before every user of its results.
void FragmentFormer::groupIndependentScans(Block &block) {
  Operation *previous = nullptr; // the last scan's group
  for (Operation &op : block) {
    if (!isa<tg::ScanOp>(op) || !groups.contains(&op))
      continue;
    Operation *leader = groups.getLeaderValue(&op);
    if (libraryLeader.count(leader) || leader == previous)
      continue;
    if (previous) {
      SmallVector<Operation *> a = membersOf(block, previous),
                               b = membersOf(block, leader);
      Operation *last =
          a.back()->isBeforeInBlock(b.back()) ? b.back() : a.back();
      llvm::SmallPtrSet<Operation *, 16> inA(a.begin(), a.end()),
          inB(b.begin(), b.end());
      auto placeable = [&](ArrayRef<Operation *> members,
                           const llvm::SmallPtrSetImpl<Operation *> &own,
                           const llvm::SmallPtrSetImpl<Operation *> &other) {
        for (Operation *member : members)
          for (Operation *user : member->getUsers()) {
            Operation *at = block.findAncestorOpInBlock(*user);
            if (!at || own.contains(at))
              continue;
            if (other.contains(at) || !last->isBeforeInBlock(at))
              return false;
          }
        return true;
      };
      if (placeable(a, inA, inB) && placeable(b, inB, inA)) {
        groups.unionSets(previous, leader);
        leader = groups.getLeaderValue(leader);
      }
    }
    previous = leader;
  }
}

/// Replaces \p ops (in block order, one group) by one tg.fragment.
void FragmentFormer::outline(ArrayRef<Operation *> ops,
                             const Backend &backend) {
  llvm::SmallPtrSet<Operation *, 8> inGroup(ops.begin(), ops.end());
  // A library call takes every tensor as a buffer; a kernel may see small
  // constants as compile-time constants.
  bool codegen = backend.generatesCode();
  auto inlined = [&](Operation *def) {
    return codegen && isSmallConstant(def);
  };
  llvm::SetVector<Value> inputs, outputs;
  // A library step writes every result of its last op (a top-k's values,
  // indices and count), used or not, in order.
  if (!codegen)
    outputs.insert(ops.back()->result_begin(), ops.back()->result_end());
  for (Operation *op : ops) {
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if ((!def || !inGroup.count(def)) && !inlined(def))
        inputs.insert(v);
    }
    for (Value v : op->getResults())
      for (Operation *user : v.getUsers())
        if (!inGroup.count(user))
          outputs.insert(v);
  }
  Operation *last = ops.back();
  OpBuilder b(last);
  b.setInsertionPointAfter(last);
  auto fragment = tg::FragmentOp::create(b, last->getLoc(),
                                         TypeRange(outputs.getArrayRef()),
                                         inputs.getArrayRef(), backend.name());
  Block &body = fragment.getBody().front();
  IRMapping mapping;
  for (auto [v, arg] : llvm::zip(inputs, body.getArguments()))
    mapping.map(v, arg);
  OpBuilder inner = OpBuilder::atBlockEnd(&body);
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          inlined(def) && !mapping.contains(v))
        inner.clone(*def, mapping);
    inner.clone(*op, mapping);
  }
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  tg::YieldOp::create(inner, last->getLoc(), yielded);
  for (auto [v, r] : llvm::zip(outputs, fragment.getResults()))
    Value(v).replaceAllUsesWith(r);
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

void FragmentFormer::run(Block &block, FragmentChooser choose) {
  formChosenGroups(block, choose);
  formCodegenGroups(block);
  groupIndependentScans(block);
  // Collect each group's ops in block order, then outline them.
  llvm::MapVector<Operation *, SmallVector<Operation *>> members;
  for (Operation &op : block)
    if (groups.contains(&op))
      members[groups.getLeaderValue(&op)].push_back(&op);
  for (auto &[leader, ops] : members) {
    auto it = libraryLeader.find(leader);
    outline(ops, it == libraryLeader.end() ? codeGenerator : *it->second);
  }
  // Constants now copied into every fragment that used them.
  for (Operation &op : llvm::make_early_inc_range(block))
    if (isa<tg::ConstantOp>(op) && op.use_empty())
      op.erase();
}

struct FormFragments
    : public compiler::impl::TGFormFragmentsBase<FormFragments> {
  using TGFormFragmentsBase::TGFormFragmentsBase;
  FormFragments(const BackendRegistry &registry,
                const TGFormFragmentsOptions &options)
      : TGFormFragmentsBase(options), registry(&registry) {}

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!backends.empty() && (!convBackend.empty() || !matmulBackend.empty())) {
      fn.emitError("--tg-form-fragments: give backends, or conv-backend and "
                   "matmul-backend (which spell it), not both");
      return signalPassFailure();
    }
    auto choices = registry->parseChoices(backendList());
    if (!choices) {
      fn.emitError("--tg-form-fragments: ")
          << llvm::toString(choices.takeError());
      return signalPassFailure();
    }
    // The first entry whose class holds the op and whose backend runs it;
    // a code generator's entry leaves the op to generated code's grouping.
    auto choose = [&](Operation *op,
                      Available available) -> std::optional<LibraryCall> {
      for (const BackendChoice &choice : *choices) {
        if (!choice.covers(op))
          continue;
        if (choice.backend->generatesCode())
          return std::nullopt;
        if (auto call = registry->match(op, *choice.backend, available))
          return call;
      }
      return std::nullopt;
    };
    if (failed(formFragments(fn, choose, *registry)))
      return signalPassFailure();
  }

private:
  const BackendRegistry *registry = &BackendRegistry::builtin();

  /// The backend list: `backends`, or the one that conv-backend and
  /// matmul-backend spell.
  std::string backendList() const {
    if (!backends.empty())
      return backends;
    return registry->spellList(convBackend, matmulBackend);
  }
};

} // namespace

std::unique_ptr<Pass>
compiler::createTGFormFragments(const BackendRegistry &registry,
                                const TGFormFragmentsOptions &options) {
  return std::make_unique<FormFragments>(registry, options);
}

LogicalResult compiler::formFragments(func::FuncOp fn, FragmentChooser choose,
                                      const BackendRegistry &registry) {
  const Backend *codeGenerator = registry.codeGenerator();
  if (!codeGenerator)
    return fn.emitError("no backend generates code for the ops no library "
                        "runs (the backend registry has no code generator)");
  // The function's blocks and the regions of tg.if, each on its own: a
  // fragment never spans a region boundary. The regions of ops that
  // compute in a kernel of their own (tg.scan's step) stay whole.
  SmallVector<Block *> blocks;
  fn->walk<WalkOrder::PreOrder>([&](Block *block) {
    Operation *parent = block->getParentOp();
    if (isa<func::FuncOp>(parent) ||
        (parent->hasTrait<tg::ComputesInRegions>() &&
         !isa<tg::FragmentOp>(parent)))
      blocks.push_back(block);
  });
  for (Block *block : blocks)
    FragmentFormer(*codeGenerator).run(*block, choose);
  return success();
}
