//===- Regions.cpp - Finding and proving PET's equal output regions -------===//
//
// Part of Loom. PET's multi-linear argument: an output element of a program
// built from multi-linear operators is a polynomial of the inputs' elements
// of degree at most one in each input tensor, so of total degree at most the
// number of inputs d. Two such programs that differ on an element differ as
// polynomials there, and by Schwartz-Zippel agree on uniform random inputs
// from a field of P elements with probability at most d / P. Loom evaluates
// in the interpreter's exact field Z/PZ, P = 2^61 - 1 (ModPDomain), so no
// rounding enters: t independent evaluations that agree on every element of
// a box leave an error probability of at most (d / P)^t for the whole box.
//
//===----------------------------------------------------------------------===//

#include "loom/Pet/Pet.h"

#include "loom/Dialect/TG/IR/TGOps.h"
#include "loom/Interpreter/Interpreter.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace loom;
using namespace loom::pet;

bool pet::isMultiLinear(func::FuncOp fn, std::string *why) {
  for (Operation &op : fn.getBody().front()) {
    bool ok = llvm::TypeSwitch<Operation *, bool>(&op)
                  .Case([](tg::ConvOp c) {
                    return c.getActivation() == tg::Activation::None;
                  })
                  .Case<tg::AvgPoolOp, tg::MatmulOp, tg::AddOp, tg::SubOp,
                        tg::ConcatOp, tg::SplitOp, tg::SliceOp, tg::PadOp,
                        tg::ReshapeOp, tg::TransposeOp, func::ReturnOp>(
                      [](Operation *) { return true; })
                  .Default([](Operation *) { return false; });
    if (!ok) {
      if (why)
        *why = op.getName().getStringRef().str();
      return false;
    }
  }
  return true;
}

namespace {

uint64_t trialSeed(uint64_t seed, unsigned trial) {
  return seed * 0x9E3779B97F4A7C15ULL + 1000003ULL * (trial + 1);
}

/// Runs \p source and \p target of one module on the same random inputs and
/// returns whether result 0 differs, per element.
template <class D>
FailureOr<std::vector<bool>> compareOnce(func::FuncOp source,
                                         func::FuncOp target, uint64_t seed) {
  auto module = source->getParentOfType<ModuleOp>();
  interp::Interpreter<D> interp(module);
  std::vector<interp::Tensor<D>> args;
  for (BlockArgument arg : source.getArguments())
    args.push_back(interp::randomArgument<D>(arg, seed));
  auto want = interp.run(source, args);
  if (failed(want))
    return failure();
  auto got = interp.run(target, args);
  if (failed(got))
    return failure();
  const auto &a = want->front(), &b = got->front();
  if (a.shape != b.shape)
    return target.emitError("pet: result 0 of @")
           << target.getSymName() << " has another shape than @"
           << source.getSymName() << "'s";
  std::vector<bool> differs(a.data.size());
  for (size_t i = 0; i < a.data.size(); ++i) {
    if constexpr (D::isExact) {
      differs[i] = a.data[i] != b.data[i];
    } else {
      double x = D::toDouble(a.data[i]), y = D::toDouble(b.data[i]);
      differs[i] = std::fabs(x - y) > 1e-9 * std::max(1.0, std::fabs(x));
    }
  }
  return differs;
}

bool inBox(int64_t flat, ArrayRef<int64_t> shape, const Box &box) {
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    int64_t i = flat % shape[d];
    flat /= shape[d];
    if (i < box.lo[d] || i >= box.hi[d])
      return false;
  }
  return true;
}

ArrayRef<int64_t> resultShape(func::FuncOp fn) {
  return cast<RankedTensorType>(fn.getResultTypes().front()).getShape();
}

} // namespace

FailureOr<std::vector<bool>> pet::differingElements(func::FuncOp source,
                                                    func::FuncOp target,
                                                    uint64_t seed) {
  if (isMultiLinear(source) && isMultiLinear(target))
    return compareOnce<interp::ModPDomain>(source, target, seed);
  return compareOnce<interp::F64Domain>(source, target, seed);
}

std::vector<std::pair<Box, bool>>
pet::boxesOfMask(const std::vector<bool> &mask, ArrayRef<int64_t> shape) {
  unsigned rank = shape.size();
  std::vector<int64_t> strides(rank, 1);
  for (int64_t d = int64_t(rank) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  // Cut dim d before index i when the slice at i differs from the one at
  // i - 1 anywhere; between cuts every slice is the same, so every cell of
  // the grid of cuts is constant.
  std::vector<std::vector<int64_t>> cuts(rank);
  for (unsigned d = 0; d < rank; ++d) {
    cuts[d].push_back(0);
    for (int64_t i = 1; i < shape[d]; ++i) {
      bool same = true;
      for (size_t f = 0; f < mask.size() && same; ++f)
        if ((int64_t(f) / strides[d]) % shape[d] == i)
          same = mask[f] == mask[f - strides[d]];
      if (!same)
        cuts[d].push_back(i);
    }
    cuts[d].push_back(shape[d]);
  }
  std::vector<std::pair<Box, bool>> boxes;
  std::vector<size_t> cell(rank, 0);
  while (true) {
    Box b;
    int64_t first = 0;
    for (unsigned d = 0; d < rank; ++d) {
      b.lo.push_back(cuts[d][cell[d]]);
      b.hi.push_back(cuts[d][cell[d] + 1]);
      first += b.lo[d] * strides[d];
    }
    boxes.push_back({b, bool(mask[first])});
    int64_t d = int64_t(rank) - 1;
    while (d >= 0 && ++cell[d] + 1 == cuts[d].size())
      cell[d--] = 0;
    if (d < 0)
      break;
  }
  return boxes;
}

RegionProof pet::proveBox(func::FuncOp source, func::FuncOp target,
                          const Box &box, unsigned trials, uint64_t seed) {
  RegionProof proof;
  proof.trials = trials;
  proof.degree = source.getNumArguments();
  std::string why;
  bool multiLinear = isMultiLinear(source, &why) && isMultiLinear(target, &why);
  proof.method = multiLinear ? "multilinear" : "tested";
  ArrayRef<int64_t> shape = resultShape(source);
  for (unsigned k = 0; k < trials; ++k) {
    FailureOr<std::vector<bool>> differs =
        differingElements(source, target, trialSeed(seed, k));
    if (failed(differs)) {
      proof.detail = "a program failed to run";
      return proof;
    }
    for (size_t f = 0; f < differs->size(); ++f)
      if ((*differs)[f] && inBox(f, shape, box)) {
        proof.detail =
            llvm::formatv("element {0} differs in trial {1}", f, k).str();
        return proof;
      }
  }
  if (!multiLinear) {
    proof.detail = "'" + why + "' is not multi-linear: tested, not proved";
    return proof;
  }
  proof.proved = true;
  proof.errorBound =
      std::pow(double(proof.degree) / double(interp::ModPDomain::P), trials);
  return proof;
}
