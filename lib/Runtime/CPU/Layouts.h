//===- Layouts.h - The CPU device's layout vocabulary -----------*- C++ -*-===//
//
// Part of Loom. Layer 1 of lib/Runtime/CPU's library steps (above Cpu.h):
// the words every other layer speaks about where a tensor's floats lie:
// oneDNN's descriptors of Loom's plain buffers (NCHW, row-major), the
// channels-last and blocked layouts the plan gives, a layout's name as
// oneDNN's verbose log writes it, and a layout plan as data (which buffer
// holds which layout). How a plan is made is Plan.h's; who runs a step in
// those layouts, the forms' (Forms.h).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNTIME_CPU_LAYOUTS_H
#define LOOM_LIB_RUNTIME_CPU_LAYOUTS_H

#include "CPU/Cpu.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace loom::rt::cpu {

using dnnl::memory;

memory::dims dims(const std::vector<int64_t> &v);

/// The elements of a tensor of \p shape.
int64_t elements(const std::vector<int64_t> &shape);

/// A dense row-major f32 descriptor of \p shape.
memory::desc rowMajor(const memory::dims &shape);

/// \p md's dimensions and type, its layout left to the primitive.
memory::desc anyLayout(const memory::desc &md);

/// The plain layout of a convolution's activations of \p rank dimensions:
/// NCHW, or NCDHW for 3-D convolutions (the layout of Loom's buffers).
memory::format_tag plainTag(size_t rank);

/// The channels-last layout of \p rank dimensions: NHWC or NDHWC.
memory::format_tag channelsLastTag(size_t rank);

/// A plain f32 NCHW descriptor of \p shape.
memory::desc plainNCHW(const memory::dims &shape);

/// \p md's dimensions channels-last: NHWC (NDHWC for 5 dimensions).
memory::desc nhwcOf(const memory::desc &md);

/// oneDNN's name of a layout, as its verbose log writes it: one letter a
/// dimension from the outermost stride in, upper case where the dimension
/// is blocked, then the blocks ("abcd", "acdb", "aBcd16b", "ABcd16b16a");
/// the activations' usual ones by their names (nchw, nhwc, nChw16c,
/// nChw8c, ncdhw, ndhwc, nCdhw16c, nCdhw8c).
std::string layoutName(const memory::desc &md);

/// The tag of a layout the plan gives (channels-last or channel blocks of
/// 16 or 8), nullopt for any other. A tag names its rank: a neighbour of
/// another rank (a reshape's buffer seen by both) takes none.
std::optional<memory::format_tag> plannedTagOf(const memory::desc &md);

/// The layout each activation buffer holds: blocked (oneDNN's preferred
/// layout: nChw16c, nChw8c or NHWC by ISA and shape) where only oneDNN
/// convolutions, pools, concatenations and binary steps touch the buffer, so
/// a run of them passes blocked tensors on and reorders only at its edges;
/// plain NCHW (absent from the map) everywhere else. Kernels, copies,
/// matmuls and the entry's inputs and outputs see plain tensors.
using LayoutPlan = std::map<int64_t, memory::desc>;

/// The layout \p plan gives buffer \p id, or \p plainMd.
memory::desc layoutOf(const LayoutPlan &plan, int64_t id,
                      const memory::desc &plainMd);

/// Whether buffer \p id of \p shape (NCHW) holds its floats channels-last
/// under \p plan: planned NHWC, or one pixel a channel plane and NCHW, or
/// nChw16c / nChw8c in whole blocks (the same bytes as NHWC then).
bool channelsLastBytes(const LayoutPlan &plan, int64_t id,
                       const std::vector<int64_t> &shape);

/// The channel block of buffer \p id of 4-D \p shape where the plan holds it
/// in oneDNN's blocked layout (nChw16c: 16, nChw8c, AVX2's: 8), else 0.
int64_t channelBlockOf(const LayoutPlan &plan, int64_t id,
                       const std::vector<int64_t> &shape);

/// Whether \p plan holds buffer \p id of \p shape (NCHW) as NHWC.
bool plannedNhwc(const LayoutPlan &plan, int64_t id,
                 const std::vector<int64_t> &shape);

} // namespace loom::rt::cpu

#endif // LOOM_LIB_RUNTIME_CPU_LAYOUTS_H
