//===- Forms.h - The ways the CPU device runs a library step ----*- C++ -*-===//
//
// Part of Loom. Layer 4 of lib/Runtime/CPU's library steps (above
// Problems.h and the steps; below Plan.h, which asks it, and Library.cpp):
// the forms of each kind of library step as one table per kind
// (Forms/Conv.cpp, Forms/Pool.cpp, Forms/Binary.cpp, Forms/Matmul.cpp,
// Forms/Concat.cpp, Forms/FilterGrad.cpp), tried in order: Loom's kernels
// where they were measured faster, oneDNN's primitive last. Adding a form
// is adding a row.
//
// The layout plan and the forms used to call each other (the plan asked
// whether a kernel would take a convolution; the forms read the plan). Now
// the dependency runs one way: the planner asks the tables for the layouts
// their forms want (wantedLayouts) and is handed nothing else of them;
// a form is handed the finished plan as data (LayoutPlan, Layouts.h) and
// never asks the planner. What both need of a step whatever the layouts
// (ConvProblem, pointwiseKernelTakes) sits below both, in Problems.h.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_FORMS_H
#define LOOM_LIB_RUNTIME_CPU_FORMS_H

#include "CPU/Problems.h"

#include <optional>
#include <vector>

namespace loom::rt::cpu {

/// The layouts a form wants for a step's source and destination (and its
/// residual addend, which takes the destination's), as the planner
/// collects them.
struct WantedLayouts {
  memory::desc src, dst;
};

/// One way to run a step of kind \p Step: a row of its kind's table.
template <typename Step> struct Form {
  /// What the form is called ("stem", "onednn").
  const char *name;
  /// Whether the form can run the step whatever the plan: its shape,
  /// activation and weights (\p constant: its constant weights or second
  /// source, else null), the kernel table of this CPU, the policy's
  /// switch. Null: every step.
  bool (*fits)(const CpuPolicy &policy, const Step &s, const void *constant);
  /// Whether the form was measured faster than the rows after it, where it
  /// fits (asked only then). Null: always.
  bool (*pays)(const Step &s);
  /// The layouts the form wants for the step's buffers, for the planner.
  /// Null: none (the form takes the layouts the plan gives).
  std::optional<WantedLayouts> (*wants)(const PrepareContext &ctx,
                                        const Step &s, const void *constant);
  /// The prepared step under \p plan, or null where the layouts the plan
  /// gives (or oneDNN) do not suit the form. The last row never answers
  /// null: it throws dnnl::error where oneDNN cannot run the step.
  StepPtr (*make)(const PrepareContext &ctx, const Step &s, void *constant,
                  const LayoutPlan &plan);
};

template <typename Step> using FormTable = std::vector<Form<Step>>;

/// The forms of each kind, in the order they are tried.
const FormTable<artifact::Conv2dStep> &convForms();
const FormTable<artifact::Conv2dFilterGradStep> &filterGradForms();
const FormTable<artifact::Pool2dStep> &poolForms();
const FormTable<artifact::BinaryStep> &binaryForms();
const FormTable<artifact::ConcatStep> &concatForms();
const FormTable<artifact::MatmulStep> &matmulForms();

/// Whether \p form fits step \p s and pays there.
template <typename Step>
bool formTakes(const Form<Step> &form, const CpuPolicy &policy, const Step &s,
               const void *constant) {
  return (!form.fits || form.fits(policy, s, constant)) &&
         (!form.pays || form.pays(s));
}

/// Step \p s prepared by the first form of \p forms that takes it and
/// makes a step under \p plan.
template <typename Step>
StepPtr makeStep(const FormTable<Step> &forms, const PrepareContext &ctx,
                 const Step &s, void *constant, const LayoutPlan &plan) {
  for (const Form<Step> &form : forms)
    if (formTakes(form, ctx.policy, s, constant))
      if (StepPtr step = form.make(ctx, s, constant, plan))
        return step;
  return nullptr;
}

/// The layouts the first form of \p forms that takes step \p s and has
/// wants wants for its buffers; nullopt where none has.
template <typename Step>
std::optional<WantedLayouts>
wantedLayouts(const FormTable<Step> &forms, const PrepareContext &ctx,
              const Step &s, const void *constant) {
  for (const Form<Step> &form : forms)
    if (form.wants && formTakes(form, ctx.policy, s, constant))
      return form.wants(ctx, s, constant);
  return std::nullopt;
}

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_FORMS_H
