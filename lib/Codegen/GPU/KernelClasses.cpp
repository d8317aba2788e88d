//===- KernelClasses.cpp - Which class maps each kernel op ----------------===//
//
// Part of Loom. See KernelClasses.h and docs/Codegen/GPU.md ("Kernel
// classes").
//
//===----------------------------------------------------------------------===//

#include "KernelClasses.h"

#include "../CPU/ViewBase.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace loom::codegen::gpu {

StringRef nameOf(KernelClass kind) {
  switch (kind) {
#define LOOM_GPU_KERNEL_CLASS_NAME(name, text)                                 \
  case KernelClass::name:                                                      \
    return text;
    LOOM_GPU_KERNEL_CLASSES(LOOM_GPU_KERNEL_CLASS_NAME)
#undef LOOM_GPU_KERNEL_CLASS_NAME
  }
  llvm_unreachable("unknown kernel class");
}

std::optional<KernelClass> kernelClassNamed(StringRef name) {
#define LOOM_GPU_KERNEL_CLASS_NAMED(kind, text)                                \
  if (name == text)                                                            \
    return KernelClass::kind;
  LOOM_GPU_KERNEL_CLASSES(LOOM_GPU_KERNEL_CLASS_NAMED)
#undef LOOM_GPU_KERNEL_CLASS_NAMED
  return std::nullopt;
}

std::string kernelClassNames() {
  std::string names;
#define LOOM_GPU_KERNEL_CLASS_LIST(kind, text)                                 \
  names += (names.empty() ? "" : ", ") + std::string(text);
  LOOM_GPU_KERNEL_CLASSES(LOOM_GPU_KERNEL_CLASS_LIST)
#undef LOOM_GPU_KERNEL_CLASS_LIST
  return names;
}

FailureOr<std::optional<KernelClass>> recordedClass(Operation *op) {
  Attribute attr = op->getAttr(kKernelClassAttrName);
  if (!attr)
    return std::optional<KernelClass>();
  auto name = dyn_cast<StringAttr>(attr);
  std::optional<KernelClass> kind =
      name ? kernelClassNamed(name.getValue()) : std::nullopt;
  if (!kind)
    return op->emitOpError("has ") << kKernelClassAttrName << " = " << attr
                                   << ", which names no kernel class (one of "
                                   << kernelClassNames() << ")";
  return kind;
}

void recordClass(Operation *op, KernelClass kind) {
  op->setAttr(kKernelClassAttrName,
              StringAttr::get(op->getContext(), nameOf(kind)));
}

bool recordsClass(Operation *op, KernelClass kind) {
  auto name = op->getAttrOfType<StringAttr>(kKernelClassAttrName);
  return name && name.getValue() == nameOf(kind);
}

bool recordsNoClass(linalg::LinalgOp op) {
  return !op->hasAttr(kKernelClassAttrName);
}

/// The structured op next to \p op in its block (after it or before it),
/// pure ops that are not structured ops between them; else null.
static linalg::LinalgOp structuredNeighbour(Operation *op, bool after) {
  for (Operation *o = after ? op->getNextNode() : op->getPrevNode(); o;
       o = after ? o->getNextNode() : o->getPrevNode()) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(o))
      return linalgOp;
    if (!isBetweenStructuredOps(o))
      return {};
  }
  return {};
}

bool isBetweenStructuredOps(Operation *op) {
  return !isa<linalg::LinalgOp>(op) && isPure(op) && op->getNumRegions() == 0;
}

linalg::LinalgOp nextStructuredOp(Operation *op) {
  return structuredNeighbour(op, /*after=*/true);
}

linalg::LinalgOp previousStructuredOp(Operation *op) {
  return structuredNeighbour(op, /*after=*/false);
}

linalg::LinalgOp epilogueOf(linalg::LinalgOp op) {
  linalg::LinalgOp next = nextStructuredOp(op);
  if (!next || op.getNumDpsInits() != 1 || !next.hasPureBufferSemantics() ||
      next.getNumDpsInits() != 1 || next->getNumRegions() != 1 ||
      next.getNumParallelLoops() != next.getNumLoops())
    return {};
  Value out = op.getDpsInits().front();
  auto type = dyn_cast<MemRefType>(out.getType());
  if (!type || next.getNumLoops() != unsigned(type.getRank()) ||
      next.getDpsInits().front() != out)
    return {};
  for (Operation &o : next.getBlock()->without_terminator())
    if (o.getNumRegions() != 0 || !isPure(&o))
      return {};
  // The output read (it is the product's epilogue, not an overwrite) and
  // written at the element's own position only.
  bool readsOutput = false;
  for (OpOperand &operand : next->getOpOperands())
    if (operand.get() == out) {
      if (!next.getMatchingIndexingMap(&operand).isIdentity())
        return {};
      readsOutput |= !next.getMatchingBlockArgument(&operand).use_empty();
    } else if (isa<MemRefType>(operand.get().getType()) &&
               cpu::baseOf(operand.get()) == cpu::baseOf(out)) {
      return {};
    }
  return readsOutput ? next : linalg::LinalgOp();
}

linalg::LinalgOp recordedEpilogue(linalg::LinalgOp op, KernelClass kind) {
  linalg::LinalgOp next = epilogueOf(op);
  return next && recordsClass(next, kind) ? next : linalg::LinalgOp();
}

bool isRecordedCompanion(linalg::LinalgOp op, KernelClass kind) {
  if (kind != KernelClass::MatmulTiles && kind != KernelClass::ConvTiles)
    return false;
  if (linalg::LinalgOp next = nextStructuredOp(op);
      next && recordsClass(next, kind) &&
      recordedPrologue(next, kind).getOperation() == op.getOperation())
    return true;
  linalg::LinalgOp previous = previousStructuredOp(op);
  return previous && recordsClass(previous, kind) &&
         recordedEpilogue(previous, kind) == op;
}

linalg::FillOp prologueOf(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return {};
  auto fill = dyn_cast_or_null<linalg::FillOp>(
      structuredNeighbour(op, /*after=*/false).getOperation());
  if (!fill || fill.getOutputs().front() != op.getDpsInits().front() ||
      !fill.getInputs().front().getDefiningOp<arith::ConstantOp>())
    return {};
  return fill;
}

linalg::FillOp recordedPrologue(linalg::LinalgOp op, KernelClass kind) {
  linalg::FillOp fill = prologueOf(op);
  return fill && recordsClass(fill, kind) ? fill : linalg::FillOp();
}

LogicalResult forEachOpOfClass(
    ModuleOp module, KernelClass kind,
    function_ref<LogicalResult(linalg::LinalgOp, bool recorded)> visit) {
  SmallVector<std::pair<linalg::LinalgOp, bool>> ops;
  WalkResult walked = module.walk([&](linalg::LinalgOp op) {
    if (op->getParentOfType<mlir::gpu::LaunchOp>())
      return WalkResult::advance();
    FailureOr<std::optional<KernelClass>> recorded = recordedClass(op);
    if (failed(recorded))
      return WalkResult::interrupt();
    if (*recorded && **recorded == kind && isRecordedCompanion(op, kind))
      return WalkResult::advance();
    if (!*recorded || **recorded == kind)
      ops.push_back({op, recorded->has_value()});
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  for (auto [op, recorded] : ops)
    if (failed(visit(op, recorded)))
      return failure();
  return success();
}

LogicalResult forEachTopLevelLoop(
    ModuleOp module,
    function_ref<LogicalResult(scf::ForOp, std::optional<KernelClass>)> visit) {
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    for (auto loop : fn.getBody().front().getOps<scf::ForOp>()) {
      FailureOr<std::optional<KernelClass>> recorded = recordedClass(loop);
      if (failed(recorded) || failed(visit(loop, *recorded)))
        return failure();
    }
  }
  return success();
}

LogicalResult emitNotOfClass(Operation *op, KernelClass kind) {
  InFlightDiagnostic diag = op->emitOpError("records kernel class '")
                            << nameOf(kind) << "' but ";
  switch (kind) {
  case KernelClass::Recurrence:
    diag << "is not a recurrence (a top-level scf.for of a kernel function "
            "with a structured op inside)";
    break;
  case KernelClass::MatmulTiles:
    diag << "is not a matrix product of the class (a contraction whose "
            "inputs are indexed by loops only, with one k loop)";
    break;
  case KernelClass::ConvTiles:
    diag << "is not a convolution of the class (a contraction that linalg's "
            "convolution interface takes)";
    break;
  case KernelClass::RowGroup:
    diag << "is neither a row reduction nor an op whose loops are all "
            "parallel and static with a pure payload";
    break;
  case KernelClass::RowReduction:
    diag << "is not a row reduction (parallel loops then reductions, one f32 "
            "output indexed by the parallel loops, a combiner the class "
            "takes)";
    break;
  case KernelClass::Generic:
    diag << "the generic class takes every op";
    break;
  }
  return diag;
}

} // namespace loom::codegen::gpu
