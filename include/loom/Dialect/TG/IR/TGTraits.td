//===- TGTraits.td - What kind of computation a tg op is ---*- tablegen -*-===//
//
// Part of Loom. Every tg op declares exactly one computation class below
// (test/Unit/Dialect/TG/OpFactsTest.cpp fails naming an op that declares
// none or two), and the clients ask the trait instead of keeping lists of
// ops: the backends' fusion of elementwise epilogues (patterns::isElementwise),
// generated code's "computes something" (Codegen.cpp), the recomputation of
// cheap ops in training (lib/Autodiff). The C++ classes are in TGTraits.h.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_TG_IR_TGTRAITS_TD
#define LOOM_DIALECT_TG_IR_TGTRAITS_TD

include "mlir/IR/OpBase.td"

class TG_Trait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::loom::tg";
}

//===----------------------------------------------------------------------===//
// Computation classes: each op has exactly one
//===----------------------------------------------------------------------===//

// Every result element is computed from the operand elements at the same
// (numpy-broadcast) index: arithmetic, comparisons, select, unary functions,
// casts. A kernel of such ops fuses into the epilogue of another.
def TG_Elementwise : TG_Trait<"Elementwise">;

// Computes its results in a kernel where a result element depends on other
// operand elements: contractions, windows, reductions, normalisations, data
// movement.
def TG_Structured : TG_Trait<"Structured">;

// Computes nothing at run time: its value is already there (a constant, a
// weight), is a view of its operand (reshape), or it ends a region (yield).
def TG_ComputesNothing : TG_Trait<"ComputesNothing">;

// Computes nothing itself; the ops of its regions do (fragment, if).
def TG_ComputesInRegions : TG_Trait<"ComputesInRegions">;

//===----------------------------------------------------------------------===//
// Further facts
//===----------------------------------------------------------------------===//

// Elementwise and cheaper to compute again from its operands than to keep
// its result in memory until the backward pass uses it (one streaming pass,
// no reduction): `--tg-autodiff="recompute=elementwise"` recomputes it.
// Only TG_Elementwise ops may declare it (OpFactsTest).
def TG_CheapToRecompute : TG_Trait<"CheapToRecompute">;

// Its result depends on the other ranks of a world (the rank's index, a
// gather of every rank's operand): never folded at compile time, even of
// constant operands; the interpreter evaluates it only in a world of 1.
def TG_ReadsWorld : TG_Trait<"ReadsWorld">;

// A rounding that the kernel of the op reading its result carries out as it
// loads its operand (tg.round_tf32: a tensor core's operand format): not
// folded at compile time, even of constant operands, so that the reader's
// kernel sees the rounding; folded (into a constant marked
// tg.tf32_values) only where library steps alone read it
// (docs/Precision.md, "TF32").
def TG_KeptUnfolded : TG_Trait<"KeptUnfolded">;

// The op's result type is written in the IR (not inferred); its verifier
// checks it against the operands. The op's shape rule is that verifier.
def TG_ResultTypeGiven : TG_Trait<"ResultTypeGiven">;

// Verifies the operands and attributes with the op's own inference rules, so
// that a bad op gets the rule's diagnostic at its location (the interface's
// own check only says that inference failed).
def TG_VerifyByInference : TG_Trait<"VerifyByInference">;

#endif // LOOM_DIALECT_TG_IR_TGTRAITS_TD
