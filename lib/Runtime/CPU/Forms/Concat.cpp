//===- Concat.cpp - The forms of a concatenation on the CPU
//----------------===//
//
// Part of Loom. Layer 4 of lib/Runtime/CPU's library steps (Forms.h): the
// table of the ways an onednn.concat step runs: oneDNN's concat primitive
// alone, in the layouts the plan gives its buffers (it wants none).
//
//===----------------------------------------------------------------------===//

#include "CPU/Forms.h"

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

StepPtr makeOneDnn(const PrepareContext &ctx, const art::ConcatStep &s, void *,
                   const LayoutPlan &plan) {
  return dnnlConcat(ctx, s, plan);
}

} // namespace

const FormTable<art::ConcatStep> &cpu::concatForms() {
  static const FormTable<art::ConcatStep> forms = {
      // name, fits, pays, wants, make
      {"onednn", nullptr, nullptr, nullptr, makeOneDnn},
  };
  return forms;
}
