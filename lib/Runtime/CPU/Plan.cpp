//===- Plan.cpp - The CPU device's layout plan ----------------------------===//
//
// Part of Loom. See Plan.h. Layer 5 of lib/Runtime/CPU's library steps.
//
//===----------------------------------------------------------------------===//

#include "CPU/Plan.h"
#include "CPU/Forms.h"

#include <algorithm>
#include <optional>
#include <set>

using namespace loom;
using namespace loom::rt;
using namespace loom::rt::cpu;
namespace art = loom::artifact;

namespace {

/// The buffers a step reads and writes with their NCHW dims when it is
/// layout-free (pools, concatenations and binary steps run in whatever
/// layout their buffers get), nullopt for the other kinds.
std::optional<std::vector<std::pair<int64_t, memory::dims>>>
layoutFreeBuffers(const art::Step &step) {
  std::vector<std::pair<int64_t, memory::dims>> out;
  switch (step.kind()) {
  case art::StepKind::Pool2d: {
    const auto &s = *step.getIf<art::Pool2dStep>();
    out.push_back({s.src, dims(s.srcShape)});
    out.push_back({s.dst, dims(s.dstShape)});
    return out;
  }
  case art::StepKind::Binary: {
    const auto &s = *step.getIf<art::BinaryStep>();
    out.push_back({s.src0, dims(s.dstShape)});
    out.push_back({s.src1, dims(s.src1Shape)});
    out.push_back({s.dst, dims(s.dstShape)});
    return out;
  }
  case art::StepKind::Concat: {
    const auto &s = *step.getIf<art::ConcatStep>();
    memory::dims shape = dims(s.dstShape);
    for (size_t i = 0; i < s.srcs.size(); ++i) {
      shape[1] = s.srcChannels[i];
      out.push_back({s.srcs[i], shape});
    }
    out.push_back({s.dst, dims(s.dstShape)});
    return out;
  }
  case art::StepKind::Kernel:
  case art::StepKind::Copy:
  case art::StepKind::Branch:
  case art::StepKind::Jump:
  case art::StepKind::Conv2d:
  case art::StepKind::Conv2dFilterGrad:
  case art::StepKind::Matmul:
  case art::StepKind::Sgemm:
  case art::StepKind::Dispatch:
  case art::StepKind::CublasMatmul:
  case art::StepKind::CudnnConv:
  case art::StepKind::TopK:
  case art::StepKind::NonMaxSuppression:
  case art::StepKind::NonZero:
  case art::StepKind::UpdateSlice:
  case art::StepKind::Attention:
  case art::StepKind::WorldRank:
  case art::StepKind::AllGather:
    return std::nullopt;
  }
  return std::nullopt;
}

/// The arguments of elementwise kernel step \p step (art::KernelStep::
/// elementwise) that hold its full shape: those of the most bytes (the
/// others hold one element, the same bytes in every layout). Empty for any
/// other step.
std::vector<int64_t> elementwiseBuffers(const art::Step &step,
                                        const std::vector<int64_t> &bytes) {
  const auto *k = step.getIf<art::KernelStep>();
  if (!k || !k->elementwise)
    return {};
  int64_t most = 0;
  for (int64_t id : k->args)
    most = std::max(most, bytes[id]);
  std::vector<int64_t> out;
  for (int64_t id : k->args)
    if (bytes[id] == most && std::find(out.begin(), out.end(), id) == out.end())
      out.push_back(id);
  return out;
}

/// What the layout planner knows of a program: the layouts its convolutions
/// want per buffer, the convolutions touching each buffer, and the buffers
/// that must stay plain (weights, biases, anything another step reads).
struct LayoutWants {
  std::map<int64_t, std::vector<memory::desc>> wanted;
  std::map<int64_t, std::vector<const art::Conv2dStep *>> touching;
  std::vector<bool> excluded;
};

/// Whether \p plan may give buffer \p id a layout of \p md.
bool mayPlan(const art::Entry &entry, const std::vector<int64_t> &bufferBytes,
             const LayoutWants &w, int64_t id, const memory::desc &md) {
  return !w.excluded[id] && entry.buffers[id].kind == art::BufferKind::Arena &&
         md.get_size() <= size_t(bufferBytes[id]);
}

/// The full arguments (elementwiseBuffers) of elementwise kernel step \p s
/// that no convolution wants a layout for take the layout of one of them
/// that \p plan gives one (the same dimensions: the kernel reads and writes
/// them alike). True when it planned any.
bool adoptForElementwiseKernel(const art::Entry &entry, const art::Step &s,
                               const std::vector<int64_t> &bufferBytes,
                               const LayoutWants &w, LayoutPlan &plan) {
  std::vector<int64_t> full = elementwiseBuffers(s, bufferBytes);
  auto planned = std::find_if(full.begin(), full.end(),
                              [&](int64_t id) { return plan.count(id); });
  if (planned == full.end() || !plannedTagOf(plan.at(*planned)))
    return false;
  memory::desc md = plan.at(*planned);
  bool changed = false;
  for (int64_t id : full) {
    if (plan.count(id) || w.wanted.count(id) ||
        !mayPlan(entry, bufferBytes, w, id, md))
      continue;
    plan.emplace(id, md);
    changed = true;
  }
  return changed;
}

/// Buffers that only pools, concatenations and binary steps touch (no
/// convolution wants a layout for them) take the layout of a planned buffer
/// of the same step, repeated until nothing changes: SqueezeNet's
/// concatenation feeding a max pool feeding convolutions stays in their
/// layout throughout.
void adoptNeighbourLayouts(const art::Entry &entry, const art::Program &program,
                           const std::vector<int64_t> &bufferBytes,
                           const LayoutWants &w, LayoutPlan &plan) {
  using tag = memory::format_tag;
  for (bool changed = true; changed;) {
    changed = false;
    for (const art::Step &s : program.steps) {
      changed |= adoptForElementwiseKernel(entry, s, bufferBytes, w, plan);
      auto buffers = layoutFreeBuffers(s);
      if (!buffers)
        continue;
      std::optional<tag> t;
      size_t rank = 0;
      for (auto &[id, shape] : *buffers)
        if (auto it = plan.find(id); it != plan.end() && !t) {
          t = plannedTagOf(it->second);
          rank = it->second.dims().size();
        }
      if (!t)
        continue;
      for (auto &[id, shape] : *buffers) {
        if (shape.size() != rank)
          continue;
        memory::desc md(shape, memory::data_type::f32, *t);
        if (plan.count(id) || w.wanted.count(id) ||
            !mayPlan(entry, bufferBytes, w, id, md))
          continue;
        plan.emplace(id, md);
        changed = true;
      }
    }
  }
}

/// The layouts the convolutions of \p program want for their buffers.
LayoutWants collectWants(const PrepareContext &ctx, const art::Entry &entry,
                         const art::Program &program,
                         const std::vector<int64_t> &bufferBytes,
                         const std::vector<void *> &constants) {
  LayoutWants w;
  w.excluded.assign(entry.buffers.size(), false);
  // A buffer sharing bytes with others (a concatenation in place) is read
  // through each of them: it stays plain.
  for (size_t id = 0; id < entry.buffers.size(); ++id)
    w.excluded[id] = entry.buffers[id].shared;
  auto exclude = [&](int64_t id) {
    if (id >= 0 && id < int64_t(w.excluded.size()))
      w.excluded[id] = true;
  };
  for (const art::Step &step : program.steps) {
    // Pools, concatenations, binary steps and elementwise kernels have no
    // preference.
    if (layoutFreeBuffers(step) ||
        !elementwiseBuffers(step, bufferBytes).empty())
      continue;
    // What the forms of a convolution want (Forms.h: oneDNN's).
    std::optional<WantedLayouts> pd;
    const auto *s = step.getIf<art::Conv2dStep>();
    if (s) {
      try {
        pd = wantedLayouts(convForms(), ctx, *s, constants[s->weights]);
      } catch (const dnnl::error &) {
        // Left to the forms, which report it when they make the step.
      }
    }
    if (!pd) {
      for (const art::Operand &o : art::operands(step))
        exclude(o.buffer);
      continue;
    }
    w.wanted[s->src].push_back(pd->src);
    w.wanted[s->dst].push_back(pd->dst);
    if (s->sum != -1)
      w.wanted[s->sum].push_back(pd->dst);
    for (int64_t id : {s->src, s->dst, s->sum})
      if (id != -1)
        w.touching[id].push_back(s);
    exclude(s->weights);
    exclude(s->bias);
  }
  return w;
}

/// \p plan with the buffers of \p s that it gives a blocked layout (not
/// NHWC) moved to NHWC.
LayoutPlan withNhwc(const LayoutPlan &plan, const art::Conv2dStep &s) {
  LayoutPlan out = plan;
  for (int64_t id : {s.src, s.dst, s.sum})
    if (auto it = out.find(id); it != out.end())
      it->second = nhwcOf(it->second);
  return out;
}

/// Resolves the convolutions that fall back to oneDNN's reference
/// implementation under \p plan (a planned layout beside an unplanned or
/// differently planned neighbour can leave a pair oneDNN has no kernel for:
/// an NCHW entry input into an NHWC destination; RegNet-Y's 8-channel
/// groups reading the NHWC of the dense convolutions before them and asking
/// for aBcd8b after), until none does: such a convolution's blocked buffers
/// move to NHWC where oneDNN has a kernel for that, else its buffers stay
/// plain and it reorders at its edges. A buffer moves to NHWC at most once
/// and is dropped at most once, so this ends.
void dropReferenceLayouts(const PrepareContext &ctx, const LayoutWants &w,
                          const std::vector<void *> &constants,
                          LayoutPlan &plan) {
  for (bool changed = true; changed;) {
    changed = false;
    std::set<const art::Conv2dStep *> convs;
    for (const auto &[id, md] : plan)
      if (auto it = w.touching.find(id); it != w.touching.end())
        convs.insert(it->second.begin(), it->second.end());
    // Judged against the same plan, then changed: the result does not
    // depend on the order of the set. A drop wins over a move.
    std::set<int64_t> dropped, moved;
    for (const art::Conv2dStep *s : convs) {
      ConvProblem conv(ctx, *s, constants[s->weights]);
      if (!isReference(conv.planned(*s, plan)))
        continue;
      LayoutPlan nhwc = withNhwc(plan, *s);
      bool moves = false;
      for (int64_t id : {s->src, s->dst, s->sum})
        moves |= plan.count(id) && !(plan.at(id) == nhwc.at(id));
      std::set<int64_t> &into =
          moves && !isReference(conv.planned(*s, nhwc)) ? moved : dropped;
      into.insert({s->src, s->dst, s->sum});
    }
    for (int64_t id : dropped)
      changed |= plan.erase(id) > 0;
    for (int64_t id : moved) {
      auto it = plan.find(id);
      if (it == plan.end())
        continue;
      memory::desc md = nhwcOf(it->second);
      changed |= !(it->second == md);
      it->second = md;
    }
  }
}

/// Drops from \p plan the full arguments (elementwiseBuffers) of every
/// elementwise kernel step whose full arguments do not all hold one layout
/// without padding (plain counts as one): a kernel reads and writes them
/// alike, element for element. True when it dropped any. Dropping only
/// shrinks the plan (planLayouts alternates it with dropReferenceLayouts,
/// which may move a buffer to NHWC once), so the alternation ends.
bool dropMixedKernelLayouts(const art::Program &program,
                            const std::vector<int64_t> &bufferBytes,
                            LayoutPlan &plan) {
  bool changed = false;
  for (const art::Step &s : program.steps) {
    std::vector<int64_t> full = elementwiseBuffers(s, bufferBytes);
    if (full.empty())
      continue;
    auto layout = [&](int64_t id) -> std::optional<memory::desc> {
      auto it = plan.find(id);
      if (it == plan.end())
        return std::nullopt;
      return it->second;
    };
    std::optional<memory::desc> first = layout(full.front());
    bool alike = std::all_of(full.begin(), full.end(), [&](int64_t id) {
      std::optional<memory::desc> md = layout(id);
      return md == first && (!md || md->get_size() == size_t(bufferBytes[id]));
    });
    if (alike)
      continue;
    for (int64_t id : full)
      changed |= plan.erase(id) > 0;
  }
  return changed;
}

/// The buffers that stay plain although a convolution wants a layout for
/// them: the result of a layout-free step (a pool, a binary step, a
/// concatenation) whose sources all stay plain, read only by convolutions
/// that are matrix products over the pixels (isPixelProduct), which read a
/// plain source in place. Planned, the step would compute in its sources'
/// plain layout and reorder its result; left plain, nothing is reordered
/// (DenseNet's transitions at batch 1, their batchnorm reading a
/// concatenation in place, their average pool moved before the 1x1
/// convolution: docs/Runtime.md, "1x1 convolutions on plain sources are
/// matrix products"). A source stays plain when it must (a weight, an
/// entry input, a buffer another kind of step reads, a concatenation in
/// place) or when it is such a result or the result of a layout-free step
/// with plain sources that no convolution touches (the transition's
/// batchnorm, which only its pool reads). Where the product is refused at
/// preparation, the convolution reorders its source instead of the step
/// its result: the same reorder.
std::set<int64_t> plainForPixelProducts(const art::Entry &entry,
                                        const art::Program &program,
                                        const LayoutWants &w) {
  std::set<int64_t> out, plainResults;
  auto staysPlain = [&](int64_t id) {
    return id >= 0 && id < int64_t(w.excluded.size()) &&
           (w.excluded[id] ||
            entry.buffers[id].kind != art::BufferKind::Arena ||
            plainResults.count(id));
  };
  for (const art::Step &step : program.steps) {
    auto buffers = layoutFreeBuffers(step);
    if (!buffers || buffers->empty())
      continue;
    // The destination is the last buffer of every layout-free step.
    int64_t dst = buffers->back().first;
    bool sourcesPlain =
        std::all_of(buffers->begin(), buffers->end() - 1,
                    [&](const auto &b) { return staysPlain(b.first); });
    if (!sourcesPlain)
      continue;
    auto touching = w.touching.find(dst);
    if (touching == w.touching.end()) {
      plainResults.insert(dst);
      continue;
    }
    if (std::all_of(touching->second.begin(), touching->second.end(),
                    [&](const art::Conv2dStep *s) {
                      return s->src == dst && s->sum == -1 &&
                             s->srcShape[1] > 1 && isPixelProduct(*s);
                    })) {
      out.insert(dst);
      plainResults.insert(dst);
    }
  }
  return out;
}

} // namespace

LayoutPlan cpu::planLayouts(const PrepareContext &ctx, const art::Entry &entry,
                            const art::Program &program,
                            const std::vector<int64_t> &bufferBytes,
                            const std::vector<void *> &constants) {
  LayoutPlan plan;
  if (ctx.policy.layout == LayoutChoice::Plain)
    return plan;
  LayoutWants w = collectWants(ctx, entry, program, bufferBytes, constants);
  std::set<int64_t> keepPlain = plainForPixelProducts(entry, program, w);
  // Where the convolutions touching a buffer prefer different layouts
  // (ResNeXt-50: its narrow groups want aBcd4b or aBcd8b, the dense
  // convolutions around them NHWC), the buffer takes NHWC if one of them
  // prefers it, and the others compute in it too: one layout through the
  // run of convolutions instead of reorders to and from NCHW on both sides
  // of every grouped one (ResNeXt-50: 35.0 -> 28.3 ms).
  for (auto &[id, layouts] : w.wanted) {
    const memory::desc &first = layouts.front();
    memory::desc md = first;
    if (!std::all_of(layouts.begin(), layouts.end(),
                     [&](const memory::desc &l) { return l == first; })) {
      md = nhwcOf(first);
      if (std::find(layouts.begin(), layouts.end(), md) == layouts.end())
        continue;
    }
    memory::desc plainMd(md.dims(), md.data_type(), plainTag(md.dims().size()));
    if (md == plainMd || keepPlain.count(id) ||
        !mayPlan(entry, bufferBytes, w, id, md))
      continue;
    plan.emplace(id, md);
  }
  adoptNeighbourLayouts(entry, program, bufferBytes, w, plan);
  do
    dropReferenceLayouts(ctx, w, constants, plan);
  while (dropMixedKernelLayouts(program, bufferBytes, plan));
  return plan;
}

std::string cpu::plainKernelViolation(const art::Program &program,
                                      const LayoutPlan &plan) {
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const auto *k = program.steps[i].getIf<art::KernelStep>();
    if (!k || k->elementwise)
      continue;
    for (int64_t id : k->args)
      if (auto it = plan.find(id); it != plan.end())
        return "step " + std::to_string(i) + ", kernel " + k->name +
               " (not elementwise): buffer " + std::to_string(id) +
               " planned " + layoutName(it->second);
  }
  return "";
}
