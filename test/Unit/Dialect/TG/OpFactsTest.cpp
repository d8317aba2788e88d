//===- OpFactsTest.cpp - Every tg op has every fact -----------------------===//
//
// Part of Loom. Walks every op the tg dialect registers and checks that it
// provides each fact the toolchain needs (TGInterfaces.td): a shape rule,
// its evaluation by the interpreter, its work for the cost models, its ONNX
// export, its lowering to linalg for generated code, its gradient (or a
// reason it has none, in lib/Autodiff's autodiff::opsWithoutGradient(), the
// list --tg-autodiff reports from) and exactly one computation class
// (TGTraits.td). A new op that lacks one fails here, naming the op and the
// fact, instead of being half-supported.
//
//===----------------------------------------------------------------------===//

#include "loom/Autodiff/Autodiff.h"
#include "loom/Conversion/TGToLinalg/TGToLinalg.h"
#include "loom/Dialect/TG/IR/TGOps.h"

#include "mlir/IR/DialectRegistry.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace loom::tg;

namespace {

/// One fact: its name and whether a registered op provides it.
struct Fact {
  const char *name;
  bool (*has)(RegisteredOperationName);
};

/// Whether lib/Autodiff lists \p op as having no VJP (with its reason).
bool listedWithoutGradient(RegisteredOperationName op) {
  return loom::tg::autodiff::noGradientReason(op.getStringRef()).has_value();
}

/// The computation classes of TGTraits.td: an op has exactly one.
unsigned computationClasses(RegisteredOperationName op) {
  return unsigned(op.hasTrait<Elementwise>()) +
         unsigned(op.hasTrait<Structured>()) +
         unsigned(op.hasTrait<ComputesNothing>()) +
         unsigned(op.hasTrait<ComputesInRegions>());
}

const Fact kFacts[] = {
    {"exactly one computation class (Elementwise, Structured, "
     "ComputesNothing or ComputesInRegions: TGTraits.td)",
     [](RegisteredOperationName op) { return computationClasses(op) == 1; }},
    {"TG_Elementwise, which its TG_CheapToRecompute requires",
     [](RegisteredOperationName op) {
       return !op.hasTrait<CheapToRecompute>() || op.hasTrait<Elementwise>();
     }},
    {"a gradient (GradientOpInterface, lib/Autodiff) or an entry, with its "
     "reason, in autodiff::opsWithoutGradient()",
     [](RegisteredOperationName op) {
       return op.hasInterface<GradientOpInterface>() ||
              listedWithoutGradient(op);
     }},
    {"agreement with autodiff::opsWithoutGradient(), which lists it as "
     "having no VJP",
     [](RegisteredOperationName op) {
       return !listedWithoutGradient(op) ||
              !op.hasInterface<GradientOpInterface>();
     }},
    {"a shape rule (InferTypeOpInterface, or ResultTypeGiven and a verifier)",
     [](RegisteredOperationName op) {
       // ResultTypeGiven ops (constants, casts, reshapes, fragments) carry
       // their result types and check them in their verifier.
       return op.hasInterface<InferTypeOpInterface>() ||
              op.hasTrait<ResultTypeGiven>();
     }},
    {"evaluation (EvaluableOpInterface)",
     [](RegisteredOperationName op) {
       return op.hasInterface<EvaluableOpInterface>();
     }},
    {"work (WorkOpInterface)",
     [](RegisteredOperationName op) {
       return op.hasInterface<WorkOpInterface>();
     }},
    {"ONNX export (ONNXExportOpInterface)",
     [](RegisteredOperationName op) {
       return op.hasInterface<ONNXExportOpInterface>();
     }},
    {"a lowering to linalg (LinalgLoweringOpInterface)",
     [](RegisteredOperationName op) {
       // tg.weight never enters generated code (weights are kernel
       // arguments), tg.fragment is outlined before the lowering and tg.if
       // becomes a branch between steps of the schedule.
       static const char *const kNotLowered[] = {"tg.weight", "tg.fragment",
                                                 "tg.if"};
       return op.hasInterface<LinalgLoweringOpInterface>() ||
              llvm::is_contained(kNotLowered, op.getStringRef());
     }},
};

TEST(OpFactsTest, EveryRegisteredTGOpHasEveryFact) {
  DialectRegistry registry;
  registerTGToLinalgInterfaceModels(registry);
  registerTGGradientInterfaceModels(registry);
  MLIRContext context(registry);
  auto *dialect = context.getOrLoadDialect<TGDialect>();
  unsigned ops = 0;
  std::vector<std::string> missing;
  for (RegisteredOperationName op : context.getRegisteredOperations()) {
    if (&op.getDialect() != dialect)
      continue;
    // A terminator computes nothing: the op owning its region has the other
    // facts.
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      if (!op.hasTrait<ComputesNothing>() || computationClasses(op) != 1)
        missing.push_back(op.getStringRef().str() +
                          " lacks exactly one computation class "
                          "(ComputesNothing)");
      continue;
    }
    ++ops;
    for (const Fact &fact : kFacts)
      if (!fact.has(op))
        missing.push_back(op.getStringRef().str() + " lacks " + fact.name);
  }
  // The walk saw the dialect (44 ops when this test was written).
  EXPECT_GE(ops, 44u);
  EXPECT_TRUE(missing.empty()) << llvm::join(missing, "\n");
}

TEST(OpFactsTest, DirectONNXNamesAreUnique) {
  // The importer maps a node type to the one tg op that names it.
  MLIRContext context;
  auto *dialect = context.getOrLoadDialect<TGDialect>();
  llvm::StringMap<std::string> owner;
  for (RegisteredOperationName op : context.getRegisteredOperations()) {
    if (&op.getDialect() != dialect)
      continue;
    auto *exportable = op.getInterface<ONNXExportOpInterface>();
    if (!exportable)
      continue;
    StringRef onnx = exportable->getONNXOpType();
    if (onnx.empty())
      continue;
    auto [it, inserted] = owner.try_emplace(onnx, op.getStringRef().str());
    EXPECT_TRUE(inserted) << onnx.str() << " is claimed by " << it->second
                          << " and " << op.getStringRef().str();
  }
  EXPECT_EQ(owner.lookup("Relu"), "tg.relu");
  EXPECT_EQ(owner.lookup("Add"), "tg.add");
  EXPECT_FALSE(owner.count("Sqrt") && owner.lookup("Sqrt") == "tg.rsqrt");
}

} // namespace
