//===- LoopOps.cpp - Facts of tg.scan -------------------------------------===//
//
// Part of Loom. tg.scan runs its body once per element of the leading axis
// of its sequences (TGLoopOps.td). Its facts: the interpreter runs the body
// N times, slicing the sequences and stacking the per-step outputs; its work
// is N times its body's; ONNX export writes a Scan node whose body is the
// region (the invariants are read from the enclosing graph by name).
//
//===----------------------------------------------------------------------===//

#include "OpFacts.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace loom;
using namespace loom::tg;

void ScanOp::build(OpBuilder &builder, OperationState &state,
                   TypeRange resultTypes, ValueRange inits,
                   ValueRange sequences, ValueRange invariants, bool reverse) {
  state.addOperands(inits);
  state.addOperands(sequences);
  state.addOperands(invariants);
  state.addAttribute(getOperandSegmentSizesAttrName(state.name),
                     builder.getDenseI32ArrayAttr(
                         {static_cast<int32_t>(inits.size()),
                          static_cast<int32_t>(sequences.size()),
                          static_cast<int32_t>(invariants.size())}));
  if (reverse)
    state.addAttribute(getReverseAttrName(state.name), builder.getUnitAttr());
  state.addTypes(resultTypes);
  Block *body = new Block();
  Location loc = state.location;
  for (Value v : inits)
    body->addArgument(v.getType(), loc);
  for (Value v : sequences) {
    auto type = cast<RankedTensorType>(v.getType());
    body->addArgument(
        RankedTensorType::get(type.getShape().drop_front(),
                              type.getElementType()),
        loc);
  }
  for (Value v : invariants)
    body->addArgument(v.getType(), loc);
  state.addRegion()->push_back(body);
}

/// \p type with a leading axis of length \p n.
static RankedTensorType stackedType(Type type, int64_t n) {
  auto t = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape = {n};
  llvm::append_range(shape, t.getShape());
  return RankedTensorType::get(shape, t.getElementType());
}

LogicalResult ScanOp::verify() {
  if (getSequences().empty())
    return emitOpError("needs at least one sequence (its leading axis is the "
                       "trip count)");
  int64_t n = -1;
  for (Value s : getSequences()) {
    auto type = cast<RankedTensorType>(s.getType());
    if (type.getRank() < 1 || type.getDimSize(0) < 1)
      return emitOpError("sequence of type ")
             << type << " has no leading axis of length at least 1";
    if (n >= 0 && type.getDimSize(0) != n)
      return emitOpError("sequences have different lengths (")
             << n << " and " << type.getDimSize(0) << ")";
    n = type.getDimSize(0);
  }
  Block &body = getBodyBlock();
  SmallVector<Type> expectedArgs(getInits().getTypes());
  for (Value s : getSequences()) {
    auto type = cast<RankedTensorType>(s.getType());
    expectedArgs.push_back(RankedTensorType::get(type.getShape().drop_front(),
                                                 type.getElementType()));
  }
  llvm::append_range(expectedArgs, getInvariants().getTypes());
  if (TypeRange(body.getArgumentTypes()) != TypeRange(expectedArgs))
    return emitOpError("body arguments have types ")
           << body.getArgumentTypes() << "; expected " << expectedArgs
           << " (the inits, a slice of each sequence, the invariants)";
  auto yield = cast<YieldOp>(body.getTerminator());
  unsigned numCarried = getInits().size();
  if (yield.getResults().size() < numCarried ||
      TypeRange(yield.getResults().take_front(numCarried)) !=
          getInits().getTypes())
    return emitOpError("body yields ")
           << yield.getResults().getTypes()
           << "; it must yield the carried values first, of types "
           << getInits().getTypes();
  SmallVector<Type> expectedResults(getInits().getTypes());
  for (Value v : yield.getResults().drop_front(numCarried))
    expectedResults.push_back(stackedType(v.getType(), n));
  if (getResultTypes() != TypeRange(expectedResults))
    return emitOpError("has results of types ")
           << getResultTypes() << "; expected " << expectedResults
           << " (the carried values, then each per-step output stacked)";
  for (Operation &op : body.without_terminator()) {
    if (!isa<TGDialect>(op.getDialect()))
      return op.emitOpError("cannot be inside a tg.scan (only tg ops can)");
    if (isa<WeightOp, FragmentOp, IfOp>(op))
      return op.emitOpError("cannot be inside a tg.scan (weights enter as "
                            "invariants; fragments form around the scan; "
                            "run-time branches are not supported in a "
                            "step)");
  }
  return success();
}

LogicalResult ScanOp::evaluate(interp::EvalFrame &frame) {
  return frame.visit([&](auto &f) -> LogicalResult {
    using D = typename std::remove_reference_t<decltype(f)>::Domain;
    using TensorPtr = std::shared_ptr<const interp::Tensor<D>>;
    const int64_t n = getTripCount();
    const unsigned numCarried = getInits().size(),
                   numSeq = getSequences().size();
    auto borrow = [](const interp::Tensor<D> &t) {
      return TensorPtr(std::shared_ptr<void>(), &t);
    };
    std::vector<TensorPtr> carried;
    for (unsigned i = 0; i < numCarried; ++i)
      carried.push_back(borrow(f.in(i)));
    std::vector<interp::Tensor<D>> stacked;
    for (int64_t step = 0; step < n; ++step) {
      int64_t t = getReverse() ? n - 1 - step : step;
      std::vector<TensorPtr> args = carried;
      for (unsigned j = 0; j < numSeq; ++j) {
        const interp::Tensor<D> &seq = f.in(numCarried + j);
        int64_t chunk = seq.numElements() / n;
        std::vector<int64_t> shape(seq.shape.begin() + 1, seq.shape.end());
        auto begin = seq.data.begin() + t * chunk;
        args.push_back(std::make_shared<const interp::Tensor<D>>(
            std::move(shape), std::vector<typename D::T>(begin, begin + chunk)));
      }
      for (unsigned k = numCarried + numSeq; k < f.numOperands(); ++k)
        args.push_back(borrow(f.in(k)));
      auto yielded = f.runBody(getBodyBlock(), args);
      if (failed(yielded))
        return failure();
      carried.assign(yielded->begin(), yielded->begin() + numCarried);
      for (size_t k = numCarried; k < yielded->size(); ++k) {
        const interp::Tensor<D> &y = *(*yielded)[k];
        if (stacked.size() < k - numCarried + 1) {
          std::vector<int64_t> shape = {n};
          shape.insert(shape.end(), y.shape.begin(), y.shape.end());
          stacked.emplace_back(std::move(shape));
        }
        std::copy(y.data.begin(), y.data.end(),
                  stacked[k - numCarried].data.begin() + t * y.numElements());
      }
    }
    // The results may outlive the operands the carried values borrow.
    for (const TensorPtr &c : carried)
      (void)f.push(interp::Tensor<D>(*c));
    return f.push(std::move(stacked));
  });
}

OpWork ScanOp::getWork() {
  // One kernel: N steps of the body, plus reading the operands and writing
  // the results once.
  OpWork step = blockWork(getBodyBlock());
  OpWork work = streamingWork(*this, 0);
  double n = static_cast<double>(getTripCount());
  work.flops = n * step.flops;
  work.bytesRead = std::max(work.bytesRead, n * step.bytesRead);
  work.bytesWritten = std::max(work.bytesWritten, n * step.bytesWritten);
  return work;
}

LogicalResult ScanOp::exportONNX(ONNXEmitter &e) {
  SmallVector<std::string> inputs, outputs, outer;
  unsigned numScanned = getInits().size() + getSequences().size();
  for (unsigned i = 0; i < getNumOperands(); ++i)
    (i < numScanned ? inputs : outer).push_back(e.input(i));
  for (unsigned i = 0; i < getNumResults(); ++i)
    outputs.push_back(e.output(i));
  ONNXNode node = e.node("Scan", inputs, outputs);
  node.attr("num_scan_inputs", static_cast<int64_t>(getSequences().size()));
  // The directions default to 0 (forward); the ONNX checker refuses an
  // empty list, so a scan without per-step outputs has none.
  if (getReverse()) {
    node.attr("scan_input_directions",
              SmallVector<int64_t>(getSequences().size(), 1));
    if (!getStacked().empty())
      node.attr("scan_output_directions",
                SmallVector<int64_t>(getStacked().size(), 1));
  }
  return node.graph("body", getBodyBlock(), outer);
}
