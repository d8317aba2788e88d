//===- EstimateCost.cpp - Report the cost of tg functions -------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/CostModel.h"
#include "loom/Dialect/TG/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace loom::tg {
#define GEN_PASS_DEF_TGESTIMATECOST
#include "loom/Dialect/TG/Transforms/Passes.h.inc"
} // namespace loom::tg

using namespace mlir;
using namespace loom;

namespace {

struct Row {
  int64_t count = 0;
  double flops = 0, bytes = 0, seconds = 0;
};

struct EstimateCostPass
    : loom::tg::impl::TGEstimateCostBase<EstimateCostPass> {
  using TGEstimateCostBase::TGEstimateCostBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    markAllAnalysesPreserved();

    auto handle = cost::createCostModel(target, costDb);
    if (!handle) {
      module.emitError() << "tg-estimate-cost: "
                         << llvm::toString(handle.takeError());
      return signalPassFailure();
    }
    cost::CostModel *model = handle->model.get();

    llvm::json::Array functions;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      std::map<std::string, Row> rows;
      Row total;
      // An op with regions (tg.if, tg.fragment) accounts for its body.
      fn.walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
        if (op == fn.getOperation())
          return WalkResult::advance();
        cost::OpWork w = cost::workOf(op);
        double s = model->opCost(op);
        Row &r = rows[op->getName().getStringRef().str()];
        for (Row *x : {&r, &total}) {
          ++x->count;
          x->flops += w.flops;
          x->bytes += w.bytes();
          x->seconds += s;
        }
        return op->getNumRegions() ? WalkResult::skip()
                                   : WalkResult::advance();
      });
      llvm::json::Object perOp;
      for (auto &[name, r] : rows)
        perOp[name] = llvm::json::Object{{"count", r.count},
                                         {"flops", r.flops},
                                         {"bytes", r.bytes},
                                         {"seconds", r.seconds}};
      functions.push_back(llvm::json::Object{{"function", fn.getSymName()},
                                             {"flops", total.flops},
                                             {"bytes", total.bytes},
                                             {"seconds", total.seconds},
                                             {"ops", std::move(perOp)}});
      if (print) {
        llvm::errs() << "cost of @" << fn.getSymName() << " ("
                     << model->name() << "):\n";
        llvm::errs() << llvm::format("  %-20s %6s %12s %12s %12s\n", "op",
                                     "count", "GFLOP", "MB", "ms");
        for (auto &[name, r] : rows)
          llvm::errs() << llvm::format("  %-20s %6lld %12.4f %12.4f %12.4f\n",
                                       name.c_str(), (long long)r.count,
                                       r.flops / 1e9, r.bytes / 1e6,
                                       r.seconds * 1e3);
        llvm::errs() << llvm::format("  %-20s %6lld %12.4f %12.4f %12.4f\n",
                                     "total", (long long)total.count,
                                     total.flops / 1e9, total.bytes / 1e6,
                                     total.seconds * 1e3);
      }
    }

    if (llvm::Error err = handle->saveDatabase()) {
      module.emitError() << llvm::toString(std::move(err));
      return signalPassFailure();
    }
    if (!report.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(report, ec);
      if (ec) {
        module.emitError() << "tg-estimate-cost: cannot write '" << report
                           << "': " << ec.message();
        return signalPassFailure();
      }
      llvm::json::Object root{{"model", model->name()},
                              {"functions", std::move(functions)}};
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    }
  }
};

} // namespace
