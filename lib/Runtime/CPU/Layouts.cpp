//===- Layouts.cpp - The CPU device's layout vocabulary -------------------===//
//
// Part of Loom. See Layouts.h. Layer 1 of lib/Runtime/CPU's library steps.
//
//===----------------------------------------------------------------------===//

#include "CPU/Layouts.h"

#include <algorithm>
#include <array>

using namespace loom::rt;
using namespace loom::rt::cpu;

memory::dims cpu::dims(const std::vector<int64_t> &v) {
  return memory::dims(v.begin(), v.end());
}

int64_t cpu::elements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

memory::desc cpu::rowMajor(const memory::dims &shape) {
  memory::dims strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return memory::desc(shape, memory::data_type::f32, strides);
}

memory::desc cpu::anyLayout(const memory::desc &md) {
  return memory::desc(md.dims(), md.data_type(), memory::format_tag::any);
}

memory::format_tag cpu::plainTag(size_t rank) {
  return rank == 5 ? memory::format_tag::ncdhw : memory::format_tag::nchw;
}

memory::format_tag cpu::channelsLastTag(size_t rank) {
  return rank == 5 ? memory::format_tag::ndhwc : memory::format_tag::nhwc;
}

memory::desc cpu::plainNCHW(const memory::dims &shape) {
  return memory::desc(shape, memory::data_type::f32, memory::format_tag::nchw);
}

memory::desc cpu::nhwcOf(const memory::desc &md) {
  return memory::desc(md.dims(), md.data_type(),
                      channelsLastTag(md.dims().size()));
}

std::string cpu::layoutName(const memory::desc &md) {
  const dnnl_memory_desc_t &d = md.data;
  if (d.format_kind != dnnl_blocked)
    return d.format_kind == dnnl_format_kind_any ? "any" : "opaque";
  const dnnl_blocking_desc_t &b = d.format_desc.blocking;
  std::vector<int> order(size_t(d.ndims));
  for (int i = 0; i < d.ndims; ++i)
    order[size_t(i)] = i;
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    return b.strides[x] != b.strides[y] ? b.strides[x] > b.strides[y] : x < y;
  });
  std::string name;
  for (int i : order) {
    bool blocked = false;
    for (int k = 0; k < b.inner_nblks; ++k)
      blocked |= b.inner_idxs[k] == i;
    name += char((blocked ? 'A' : 'a') + i);
  }
  for (int k = 0; k < b.inner_nblks; ++k)
    name += std::to_string(b.inner_blks[k]) + char('a' + b.inner_idxs[k]);
  static const std::map<std::string, std::string> usual = {
      {"abcd", "nchw"},        {"acdb", "nhwc"},   {"aBcd16b", "nChw16c"},
      {"aBcd8b", "nChw8c"},    {"abcde", "ncdhw"}, {"acdeb", "ndhwc"},
      {"aBcde16b", "nCdhw16c"}, {"aBcde8b", "nCdhw8c"}};
  auto it = usual.find(name);
  return it == usual.end() ? name : it->second;
}

std::optional<memory::format_tag> cpu::plannedTagOf(const memory::desc &md) {
  using tag = memory::format_tag;
  std::array<tag, 3> tags = {tag::nhwc, tag::nChw16c, tag::nChw8c};
  if (md.dims().size() == 5)
    tags = {tag::ndhwc, tag::nCdhw16c, tag::nCdhw8c};
  for (tag t : tags)
    if (md == memory::desc(md.dims(), md.data_type(), t))
      return t;
  return std::nullopt;
}

memory::desc cpu::layoutOf(const LayoutPlan &plan, int64_t id,
                           const memory::desc &plainMd) {
  auto it = plan.find(id);
  return it == plan.end() ? plainMd : it->second;
}

bool cpu::channelsLastBytes(const LayoutPlan &plan, int64_t id,
                            const std::vector<int64_t> &shape) {
  if (shape.size() != 4)
    return false;
  memory::desc plain = plainNCHW(dims(shape));
  memory::desc md = layoutOf(plan, id, plain);
  if (md == nhwcOf(plain))
    return true;
  if (shape[2] * shape[3] != 1)
    return false;
  auto blocked = [&](int64_t block, memory::format_tag tag) {
    return shape[1] % block == 0 &&
           md == memory::desc(plain.dims(), memory::data_type::f32, tag);
  };
  return md == plain || blocked(16, memory::format_tag::aBcd16b) ||
         blocked(8, memory::format_tag::aBcd8b);
}

int64_t cpu::channelBlockOf(const LayoutPlan &plan, int64_t id,
                            const std::vector<int64_t> &shape) {
  auto it = plan.find(id);
  if (it == plan.end())
    return 0;
  for (auto [block, tag] : {std::pair{int64_t(16), memory::format_tag::aBcd16b},
                            std::pair{int64_t(8), memory::format_tag::aBcd8b}})
    if (shape[1] % block == 0 &&
        it->second == memory::desc(dims(shape), memory::data_type::f32, tag))
      return block;
  return 0;
}

bool cpu::plannedNhwc(const LayoutPlan &plan, int64_t id,
                      const std::vector<int64_t> &shape) {
  auto it = plan.find(id);
  return it != plan.end() && it->second == nhwcOf(plainNCHW(dims(shape)));
}
