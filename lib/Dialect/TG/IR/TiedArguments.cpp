//===- TiedArguments.cpp - Arguments a function updates in place ----------===//
//
// Part of Loom. See TiedArguments.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/TG/IR/TiedArguments.h"
#include "loom/Dialect/TG/IR/BoundedResults.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace loom;

std::optional<unsigned> tg::getTiedResult(FunctionOpInterface fn, unsigned i) {
  if (auto tied = fn.getArgAttrOfType<IntegerAttr>(i, kTiedResultAttr))
    return unsigned(tied.getInt());
  return std::nullopt;
}

std::optional<unsigned> tg::getTiedArgument(FunctionOpInterface fn,
                                            unsigned j) {
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    if (getTiedResult(fn, i) == j)
      return i;
  return std::nullopt;
}

void tg::setTiedResult(FunctionOpInterface fn, unsigned i, unsigned j) {
  fn.setArgAttr(i, kTiedResultAttr,
                Builder(fn.getContext()).getI64IntegerAttr(int64_t(j)));
}

LogicalResult tg::verifyTiedResult(Operation *op, unsigned i, Attribute attr) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    return op->emitError() << "'" << kTiedResultAttr
                           << "' is only valid on a function's arguments";
  auto index = dyn_cast<IntegerAttr>(attr);
  if (!index || !index.getType().isInteger(64))
    return op->emitError() << "argument " << i << ": '" << kTiedResultAttr
                           << "' must be an i64 (a result's index), got "
                           << attr;
  int64_t j = index.getInt();
  ArrayRef<Type> results = fn.getResultTypes();
  if (j < 0 || j >= int64_t(results.size()))
    return op->emitError() << "argument " << i << " is tied to result " << j
                           << ", but the function has " << results.size()
                           << " results";
  if (results[j] != fn.getArgumentTypes()[i])
    return op->emitError() << "argument " << i << " (" << fn.getArgumentTypes()[i]
                           << ") is tied to result " << j << " of another type ("
                           << results[j] << ")";
  for (unsigned k = 0; k < i; ++k)
    if (getTiedResult(fn, k) == unsigned(j))
      return op->emitError() << "arguments " << k << " and " << i
                             << " are both tied to result " << j;
  if (getResultBound(fn, unsigned(j)))
    return op->emitError() << "argument " << i << " is tied to result " << j
                           << ", which has a data-dependent length";
  return success();
}
